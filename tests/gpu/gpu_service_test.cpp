// The engine's GPU back end (gpu/service): proofs byte-identical to the CPU
// prover's with the same blinding, made on the back end's own thread, the SRS
// uploaded once across calls; development parameters on the device equal to
// the CPU's; and the engine's partition pipeline running on it. Skips without
// a device.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>

#include "circuits/demo.hpp"
#include "engine/engine.hpp"
#include "engine/pipeline.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/groth16/r1cs_device.hpp"
#include "gpu/service/gpu_backend.hpp"
#include "gpu_test_util.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"

namespace cuzk::gpu_service {
namespace {

using namespace std::chrono_literals;

struct Demo {
  groth16::R1cs r1cs;
  groth16::Parameters params;
  groth16::Witness witness;
};

Demo make_demo(unsigned log_domain, ThreadPool& pool) {
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
  groth16::R1cs r1cs = groth16::compile(circuits::DemoCircuit(rounds, std::nullopt));
  groth16::Parameters params = groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool);
  groth16::Witness w = groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(5)));
  return Demo{std::move(r1cs), std::move(params), std::move(w)};
}

TEST(GpuService, ProvesOnItsThreadLikeTheCpuAndKeepsTheSrs) {
  CUZK_REQUIRE_GPU();
  ThreadPool math(4);
  Demo d = make_demo(12, math);
  GpuBackend gpu(0, math);
  EXPECT_EQ(gpu.ordinal(), 0u);
  EXPECT_GT(gpu.memory().total_bytes, 0u);
  EXPECT_EQ(gpu.srs_device_bytes(d.params), cuzk::gpu::ResidentSrs::bytes_for(d.params));
  groth16::CpuProver cpu(math);
  for (int i = 0; i < 2; ++i) {
    groth16::Blinding b = groth16::random_blinding();
    engine::ProveBreakdown br;
    std::vector<groth16::Proof> proofs;
    // The engine's way: posted to the back end's runner thread.
    std::promise<void> done;
    asio::post(gpu.runner().executor(), [&] {
      proofs = gpu.prove(d.params, d.r1cs, std::span(&d.witness, 1), std::span(&b, 1), &br);
      done.set_value();
    });
    done.get_future().get();
    ASSERT_EQ(proofs.size(), 1u);
    auto expected = cpu.prove(d.params, d.r1cs, std::span(&d.witness, 1), std::span(&b, 1));
    EXPECT_EQ(groth16::encode_proofs(proofs), groth16::encode_proofs(expected));
    EXPECT_EQ(br.srs_uploaded, i == 0);  // resident after the first call
    EXPECT_GT(br.h_msm_ms + br.l_msm_ms + br.a_msm_ms + br.b_msm_ms, 0.0);
  }
  // A small SRS fits the device whole: nothing streamed.
  EXPECT_EQ(gpu.resident_srs_split().device_bytes, cuzk::gpu::ResidentSrs::bytes_for(d.params));
  EXPECT_EQ(gpu.resident_srs_split().pinned_host_bytes, 0u);
}

// With no device budget (srs_device_budget_bytes = 0, the daemon's
// gpu.srs_device_budget = "0") the whole SRS is streamed
// from pinned host memory: srs_device_bytes estimates 0 before the upload,
// the split reports it all pinned after it (until released), and the proof
// still equals the CPU's.
TEST(GpuService, ReportsTheStreamedSrsSplit) {
  CUZK_REQUIRE_GPU();
  ThreadPool math(4);
  Demo d = make_demo(12, math);
  GpuBackendOptions options;
  options.srs_device_budget_bytes = 0;
  GpuBackend gpu(0, math, options);
  const std::uint64_t total_bytes = cuzk::gpu::ResidentSrs::bytes_for(d.params);
  EXPECT_EQ(gpu.srs_device_bytes(d.params), 0u);
  EXPECT_EQ(gpu.resident_srs_split().pinned_host_bytes, 0u);  // nothing resident yet
  groth16::Blinding b = groth16::random_blinding();
  std::vector<groth16::Proof> proofs;
  std::promise<void> proved;
  asio::post(gpu.runner().executor(), [&] {
    proofs = gpu.prove(d.params, d.r1cs, std::span(&d.witness, 1), std::span(&b, 1), nullptr);
    proved.set_value();
  });
  proved.get_future().get();
  groth16::CpuProver cpu(math);
  EXPECT_EQ(groth16::encode_proofs(proofs),
            groth16::encode_proofs(cpu.prove(d.params, d.r1cs, std::span(&d.witness, 1), std::span(&b, 1))));
  engine::ResidentSrsSplit split = gpu.resident_srs_split();
  EXPECT_EQ(split.device_bytes, 0u);
  EXPECT_EQ(split.pinned_host_bytes, total_bytes);
  EXPECT_EQ(gpu.srs_device_bytes(d.params), 0u);
  EXPECT_GT(gpu.msm_scratch_device_bytes(), 0u);
  std::promise<void> released;
  asio::post(gpu.runner().executor(), [&] {
    gpu.release_resident_srs();
    released.set_value();
  });
  released.get_future().get();
  split = gpu.resident_srs_split();
  EXPECT_EQ(split.device_bytes + split.pinned_host_bytes, 0u);
  // The MSM arena went with the workspace: a next SRS's budget counts the
  // arena's limit as working memory and must not find it held as well.
  EXPECT_EQ(gpu.msm_scratch_device_bytes(), 0u);
}

// The stage observer sees every stage of each instance in order, device
// stages on the prover's (non-default) compute stream; the back end reports
// no stage once prove() has returned.
TEST(GpuService, StageObserverReportsEachStageInOrder) {
  CUZK_REQUIRE_GPU();
  ThreadPool math(4);
  Demo d = make_demo(10, math);
  cuzk::gpu::Device device(0);
  cuzk::gpu::GpuProver prover(device, math);
  std::vector<std::pair<std::string, std::uintptr_t>> seen;
  prover.set_stage_observer(
      [&seen](std::string_view stage, std::uintptr_t stream) { seen.emplace_back(std::string(stage), stream); });
  const groth16::Witness ws[2] = {d.witness, d.witness};
  const groth16::Blinding bs[2] = {groth16::random_blinding(), groth16::random_blinding()};
  ASSERT_EQ(prover.prove(d.params, d.r1cs, ws, bs).size(), 2u);
  const std::vector<std::string> order = {"evaluate", "h_ntt", "h_msm", "l_msm", "a_msm", "b_msm", "assemble"};
  ASSERT_EQ(seen.size(), 2 * order.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const std::string& want = order[i % order.size()];
    EXPECT_EQ(seen[i].first, want) << i;
    const bool host = want == "evaluate" || want == "assemble";
    EXPECT_EQ(seen[i].second == 0, host) << want;
  }
  GpuBackend gpu(0, math);
  EXPECT_FALSE(gpu.prover_stage().has_value());
  groth16::Blinding b = groth16::random_blinding();
  std::promise<void> done;
  asio::post(gpu.runner().executor(), [&] {
    gpu.prove(d.params, d.r1cs, std::span(&d.witness, 1), std::span(&b, 1), nullptr);
    done.set_value();
  });
  done.get_future().get();
  EXPECT_FALSE(gpu.prover_stage().has_value());
}

TEST(GpuService, DevelopmentParametersMatchTheCpu) {
  CUZK_REQUIRE_GPU();
  if (!GpuBackend::has_gpu_setup()) GTEST_SKIP() << "built without gpu/setup: parameters are made on the CPU";
  ThreadPool math(4);
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(10);
  groth16::R1cs r1cs = groth16::compile(circuits::DemoCircuit(rounds, std::nullopt));
  groth16::ToxicWaste tw = groth16::random_toxic_waste();
  GpuBackend gpu(0, math);
  std::uint64_t last_done = 0, last_total = 0;
  groth16::Parameters on_gpu = gpu.generate_parameters(r1cs, tw, math, [&](std::uint64_t done, std::uint64_t total) {
    last_done = done;
    last_total = total;
  });
  groth16::Parameters on_cpu = groth16::generate_parameters(r1cs, tw, math);
  EXPECT_GT(last_total, 0u);
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(on_gpu.h, on_cpu.h);
  EXPECT_EQ(on_gpu.l, on_cpu.l);
  EXPECT_EQ(on_gpu.a, on_cpu.a);
  EXPECT_EQ(on_gpu.b_g1, on_cpu.b_g1);
  EXPECT_EQ(on_gpu.b_g2, on_cpu.b_g2);
}

TEST(GpuService, SelectDevices) {
  EXPECT_TRUE(select_devices("none").empty());
  EXPECT_EQ(select_devices("0,2"), (std::vector<int>{0, 2}));
  EXPECT_EQ(static_cast<int>(select_devices("auto").size()), cuzk::gpu::device_count());
  EXPECT_THROW(select_devices("zero"), std::invalid_argument);
}

// What the engine pipeline tests on the GPU share: a loop, pools and a param
// store with the 2^14 demo circuit in a temporary directory (removed last),
// a memory gate and a device set of the CPU and the given GPU back end.
class GpuPipelineRig {
 public:
  explicit GpuPipelineRig(std::shared_ptr<GpuBackend> gpu_backend)
      : gpu(std::move(gpu_backend)), devices(loop.executor(), std::make_shared<engine::CpuBackend>(cpu, math), {gpu}) {}
  engine::PipelineDeps deps() { return engine::PipelineDeps{synthesis, cpu, devices, memory, log}; }

 private:
  struct TempDir {
    TempDir() {
      char tmpl[] = "/tmp/cuzk-gpu-service-XXXXXX";
      path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
    std::filesystem::path path;
  } dir_;

 public:
  runtime::EventLoop loop;
  runtime::Logger log{runtime::LogLevel::kInfo};
  ThreadPool math{4};
  runtime::WorkerPool cpu{2}, synthesis{2};
  engine::ParamStore store{dir_.path, math, log};
  std::shared_ptr<const engine::CircuitParams> demo = store.get_demo(14).params;
  std::shared_ptr<GpuBackend> gpu;
  engine::MemoryGate memory{loop.executor(), 1ull << 34};
  engine::DeviceSet devices;
};

// A 4-partition plan over the demo circuit's parameters; the caller sets
// synthesize (and anything else it tests).
engine::PartitionPlan demo_plan(const engine::CircuitParams& demo, engine::JobId job) {
  engine::PartitionPlan plan;
  plan.job = job;
  plan.srs_key = demo.circuit_id;
  plan.partitions = 4;
  plan.witness_bytes = engine::witness_bytes(demo.r1cs);
  plan.synthesis_lanes = 2;
  plan.max_in_flight = 3;
  plan.params = &demo.params;
  plan.r1cs = &demo.r1cs;
  plan.pvk = &demo.pvk;
  return plan;
}

// Runs the partition pipeline on the loop until it is done.
std::optional<engine::Result<engine::PipelineOutcome>> run_pipeline(runtime::EventLoop& loop, engine::PipelineDeps deps,
                                                                    const engine::PartitionPlan& plan) {
  runtime::CancelFlag cancel;
  std::optional<engine::Result<engine::PipelineOutcome>> result;
  runtime::TaskSet tasks(loop.executor());
  tasks.spawn([](engine::PipelineDeps d, const engine::PartitionPlan& p, runtime::CancelFlag& c,
                 std::optional<engine::Result<engine::PipelineOutcome>>& out) -> asio::awaitable<void> {
    out.emplace(co_await engine::run_partition_pipeline(d, p, c));
  }(deps, plan, cancel, result));
  loop.io().restart();
  loop.run();
  return result;
}

TEST(GpuService, EnginePipelineOnTheGpu) {
  CUZK_REQUIRE_GPU();
  ThreadPool prover_math(4);
  GpuPipelineRig rig(std::make_shared<GpuBackend>(0, prover_math));
  engine::PartitionPlan plan = demo_plan(*rig.demo, 1);
  plan.synthesize = [](std::uint32_t k, groth16::Witness) -> engine::Result<groth16::Witness> {
    const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(14);
    return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(k + 1)));
  };
  const auto result = run_pipeline(rig.loop, rig.deps(), plan);
  ASSERT_TRUE(result && result->ok()) << (result ? result->error().message : "no result");
  const engine::PipelineOutcome& out = result->value();
  ASSERT_EQ(out.proofs.size(), 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(out.timings[k].device, rig.gpu->name());
    EXPECT_EQ(groth16::verify(rig.demo->pvk, out.proofs[k], out.public_inputs[k]), groth16::VerifyResult::kValid);
  }
  EXPECT_EQ(out.cpu_retries, 0u);
  EXPECT_EQ(rig.devices.gpu(0).proofs_done, 4u);
  EXPECT_EQ(rig.devices.gpu(0).resident_srs, rig.demo->circuit_id);
}

// The engine's partition pipeline (the staged prepare / device / finish
// path) on a back end with a, b, c on the device and the prover's check
// (PartitionPlan::satisfaction = kCheck): good partitions prove and verify
// with the matrices resident; a partition whose witness is broken fails the
// job as kInvalidInput naming the host's first failing row, found by the
// device mat-vec and reported by finish, with no CPU retry.
TEST(GpuService, EnginePipelineWithAbcOnDeviceChecksOnTheDevice) {
  CUZK_REQUIRE_GPU();
  ThreadPool prover_math(4);
  runtime::Logger backend_log(runtime::LogLevel::kInfo);
  GpuPipelineRig rig(
      std::make_shared<GpuBackend>(0, prover_math, GpuBackendOptions{.abc_on_device = true, .log = &backend_log}));
  const engine::CircuitParams& demo = *rig.demo;
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(14);
  auto witness = [rounds](std::uint32_t k) {
    return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(k + 1)));
  };
  groth16::Witness broken = witness(2);
  broken.aux.at(broken.aux.size() / 2) += ff::Fr::one();
  const std::optional<std::size_t> bad_row = groth16::first_unsatisfied(demo.r1cs, broken.inputs, broken.aux, rig.math);
  ASSERT_TRUE(bad_row.has_value());

  auto run = [&](engine::JobId job, std::optional<std::uint32_t> broken_partition) {
    engine::PartitionPlan plan = demo_plan(demo, job);
    plan.satisfaction = groth16::SatisfactionCheck::kCheck;
    plan.synthesize = [&, broken_partition](std::uint32_t k, groth16::Witness) -> engine::Result<groth16::Witness> {
      return broken_partition == k ? broken : witness(k);
    };
    return run_pipeline(rig.loop, rig.deps(), plan);
  };

  auto good = run(1, std::nullopt);
  ASSERT_TRUE(good && good->ok()) << (good ? good->error().message : "no result");
  ASSERT_EQ(good->value().proofs.size(), 4u);
  for (std::uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(groth16::verify(demo.pvk, good->value().proofs[k], good->value().public_inputs[k]),
              groth16::VerifyResult::kValid);
  }
  EXPECT_EQ(good->value().cpu_retries, 0u);
  EXPECT_EQ(rig.gpu->abc_matrices_device_bytes(), cuzk::gpu::DeviceR1cs::bytes_for(demo.r1cs));
  // The proofs' MSMs grew the device's arena, within its limit; it stays for the next proof.
  EXPECT_GT(rig.gpu->msm_scratch_device_bytes(), 0u);
  EXPECT_LE(rig.gpu->msm_scratch_device_bytes(), rig.gpu->msm_scratch_limit_bytes());

  auto bad = run(2, 2u);
  ASSERT_TRUE(bad.has_value());
  ASSERT_FALSE(bad->ok());
  EXPECT_EQ(bad->error().kind, engine::ErrorKind::kInvalidInput) << bad->error().message;
  EXPECT_NE(bad->error().message.find("partition 2: unsatisfied: constraint " + std::to_string(*bad_row) + " "),
            std::string::npos)
      << bad->error().message;
  EXPECT_EQ(rig.devices.cpu_retries(), 0u);
}

}  // namespace
}  // namespace cuzk::gpu_service
