// The engine with device back ends (fakes wrapping the CPU prover): jobs go
// to a device back end when there is one, prefer the device where their SRS
// is resident, and a proof that fails verification is proved again on the
// CPU. The per-partition pipeline on its own: synthesis of partition N+1
// overlaps the proving of N, the in-flight bound and the memory budget hold,
// and a cancel gives every reservation back.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "circuits/demo.hpp"
#include "engine/engine.hpp"
#include "engine/pipeline.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::FakeBackend;
using Clock = std::chrono::steady_clock;

using testing::output_verifies;
using testing::run_scenario;

struct Rig : testing::EngineRig {
  explicit Rig(std::size_t gpus, std::size_t concurrent_jobs = 1) : EngineRig("cuzk-backend-test", 3) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 10;
    cfg.max_concurrent_jobs = concurrent_jobs;
    cfg.drain_timeout = 10s;
    cfg.staging_keep_idle = 0ms;  // stagings given back as soon as the engine is idle
    make_engine(cfg);
    std::vector<std::shared_ptr<DeviceBackend>> backends;
    for (std::size_t i = 0; i < gpus; ++i) {
      fakes.push_back(std::make_shared<FakeBackend>("fake:" + std::to_string(i), static_cast<std::uint32_t>(i), math));
      backends.push_back(fakes.back());
    }
    engine->set_gpu_backends(backends);
  }
  std::vector<std::shared_ptr<FakeBackend>> fakes;
};

using testing::demo;

TEST(EngineBackends, JobsGoToTheDeviceBackend) {
  Rig rig(1);
  // The body outlives no frame: run_scenario keeps it until the loop ends.
  run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    auto a = e.submit(demo(5, 3));
    EXPECT_TRUE(a.ok());
    auto out = co_await e.await(a.value().id, 0ms);
    EXPECT_TRUE(out.ok());
    if (out.ok()) {
      EXPECT_TRUE(output_verifies(out.value().output));
    }
    EngineStatus s = e.status();
    EXPECT_EQ(s.devices.size(), 2u);  // the fake GPU, then the CPU
    EXPECT_EQ(s.devices.at(0).proofs_done, 1u);
    EXPECT_EQ(s.devices.at(0).resident_srs, "demo-5");
    EXPECT_EQ(s.devices.at(1).name, "cpu");
    EXPECT_EQ(s.devices.at(1).proofs_done, 0u);
    EXPECT_EQ(s.cpu_retries_total, 0u);
    // Once idle, the engine gives the staging's (pinned, on a GPU) memory back.
    EXPECT_TRUE(co_await testing::eventually(e, [&rig] { return rig.fakes[0]->live_stagings->load() == 0; }));
  });
  EXPECT_EQ(rig.fakes[0]->calls().size(), 1u);
}

// The R1CS matrices a GPU keeps for a, b, c on the device (7.34 GB per GPU
// on a 32 GiB PoRep) show per device in status and metrics, read from the
// back end at each status (they appear and go with uploads and releases).
constexpr std::uint64_t kGpu0MatricesBytes = 7'340'032'000, kGpu1MatricesBytes = 123'456'789;

TEST(EngineBackends, R1csMatricesOnTheDeviceInStatusAndMetrics) {
  Rig rig(2);
  rig.fakes[0]->r1cs_matrices_bytes = kGpu0MatricesBytes;
  rig.fakes[1]->r1cs_matrices_bytes = kGpu1MatricesBytes;
  run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    EngineStatus s = e.status();
    EXPECT_EQ(s.devices.size(), 3u);  // the two fake GPUs, then the CPU
    EXPECT_EQ(s.devices.at(0).r1cs_matrices_bytes, kGpu0MatricesBytes);
    EXPECT_EQ(s.devices.at(1).r1cs_matrices_bytes, kGpu1MatricesBytes);
    EXPECT_EQ(s.devices.at(2).name, "cpu");
    EXPECT_EQ(s.devices.at(2).r1cs_matrices_bytes, 0u);
    // Not an SRS: no residency tier carries them.
    for (const SrsResidencyView& v : s.srs) {
      EXPECT_NE(v.bytes, kGpu0MatricesBytes) << v.srs << " " << v.tier;
      EXPECT_NE(v.bytes, kGpu1MatricesBytes) << v.srs << " " << v.tier;
    }
    std::string m = e.metrics();
    EXPECT_NE(m.find("# TYPE cuzk_device_r1cs_matrices_bytes gauge\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_r1cs_matrices_bytes{device=\"fake:0\"} 7340032000\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_r1cs_matrices_bytes{device=\"fake:1\"} 123456789\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_r1cs_matrices_bytes{device=\"cpu\"} 0\n"), std::string::npos) << m;
    // Released (an SRS eviction frees the matrices with the workspace): 0 at the next status.
    rig.fakes[0]->r1cs_matrices_bytes = 0;
    EXPECT_EQ(e.status().devices.at(0).r1cs_matrices_bytes, 0u);
    EXPECT_NE(e.metrics().find("cuzk_device_r1cs_matrices_bytes{device=\"fake:0\"} 0\n"), std::string::npos);
    co_return;
  });
}

// The MSM scratch arena a GPU grows on demand and keeps between proofs (~54
// of 58.2 GiB on an H200 after a 32 GiB PoRep) shows per device with its
// limit in status and metrics, read from the back end at each status.
constexpr std::uint64_t kArenaBytes = 58'000'000'000, kArenaLimitBytes = 62'491'774'976;

TEST(EngineBackends, MsmScratchArenaInStatusAndMetrics) {
  Rig rig(2);
  rig.fakes[0]->msm_scratch_bytes = kArenaBytes;
  rig.fakes[0]->msm_scratch_limit = kArenaLimitBytes;
  rig.fakes[1]->msm_scratch_limit = kArenaLimitBytes;  // no MSM yet: an empty arena
  run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    EngineStatus s = e.status();
    EXPECT_EQ(s.devices.size(), 3u);  // the two fake GPUs, then the CPU
    EXPECT_EQ(s.devices.at(0).msm_scratch_bytes, kArenaBytes);
    EXPECT_EQ(s.devices.at(0).msm_scratch_limit_bytes, kArenaLimitBytes);
    EXPECT_EQ(s.devices.at(1).msm_scratch_bytes, 0u);
    EXPECT_EQ(s.devices.at(1).msm_scratch_limit_bytes, kArenaLimitBytes);
    EXPECT_EQ(s.devices.at(2).name, "cpu");
    EXPECT_EQ(s.devices.at(2).msm_scratch_bytes, 0u);
    EXPECT_EQ(s.devices.at(2).msm_scratch_limit_bytes, 0u);
    std::string m = e.metrics();
    EXPECT_NE(m.find("# TYPE cuzk_device_msm_scratch_bytes gauge\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_msm_scratch_bytes{device=\"fake:0\"} 58000000000\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_msm_scratch_bytes{device=\"fake:1\"} 0\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_msm_scratch_bytes{device=\"cpu\"} 0\n"), std::string::npos) << m;
    EXPECT_NE(m.find("# TYPE cuzk_device_msm_scratch_limit_bytes gauge\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_msm_scratch_limit_bytes{device=\"fake:0\"} 62491774976\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_msm_scratch_limit_bytes{device=\"cpu\"} 0\n"), std::string::npos) << m;
    // Released (Device::release_msm_scratch): 0 at the next status, the limit kept.
    rig.fakes[0]->msm_scratch_bytes = 0;
    EXPECT_EQ(e.status().devices.at(0).msm_scratch_bytes, 0u);
    m = e.metrics();
    EXPECT_NE(m.find("cuzk_device_msm_scratch_bytes{device=\"fake:0\"} 0\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_device_msm_scratch_limit_bytes{device=\"fake:0\"} 62491774976\n"), std::string::npos) << m;
    co_return;
  });
}

TEST(EngineBackends, PrefersTheDeviceWithTheResidentSrs) {
  Rig rig(2, /*concurrent_jobs=*/2);
  rig.fakes[0]->delay_ms = 300;
  rig.fakes[1]->delay_ms = 300;
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    // Parameters first, so that both jobs reach placement together.
    EXPECT_TRUE((co_await e.preload("demo-5")).ok());
    EXPECT_TRUE((co_await e.preload("demo-6")).ok());
    // Two jobs at once: the least loaded device takes each, one per device.
    auto a = e.submit(demo(5, 1));
    auto b = e.submit(demo(6, 2));
    EXPECT_TRUE((co_await e.await(a.value().id, 0ms)).ok());
    EXPECT_TRUE((co_await e.await(b.value().id, 0ms)).ok());
    EngineStatus s = e.status();
    std::string r0 = s.devices.at(0).resident_srs, r1 = s.devices.at(1).resident_srs;
    EXPECT_NE(r0, r1);
    // Now, one at a time (no load difference), each goes where its SRS is.
    for (std::uint32_t size : {6u, 5u, 6u}) {
      auto j = e.submit(demo(size, size + 10));
      EXPECT_TRUE((co_await e.await(j.value().id, 0ms)).ok());
      s = e.status();
      EXPECT_EQ(s.devices.at(0).resident_srs, r0);
      EXPECT_EQ(s.devices.at(1).resident_srs, r1);
    }
    EXPECT_EQ(s.devices.at(0).proofs_done + s.devices.at(1).proofs_done, 5u);
  });
  // Each device proved only its own circuit (witness sizes differ).
  for (const auto& fake : rig.fakes) {
    auto calls = fake->calls();
    ASSERT_FALSE(calls.empty());
    for (const auto& c : calls) EXPECT_EQ(c.aux, calls[0].aux);
  }
  EXPECT_NE(rig.fakes[0]->calls()[0].aux, rig.fakes[1]->calls()[0].aux);
}

TEST(EngineBackends, CorruptGpuProofIsProvedAgainOnTheCpu) {
  Rig rig(1);
  rig.fakes[0]->corrupt_next = 1;
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    auto a = e.submit(demo(5, 9));
    auto out = co_await e.await(a.value().id, 0ms);
    EXPECT_TRUE(out.ok());
    if (out.ok()) {
      EXPECT_TRUE(output_verifies(out.value().output));
    }
    EngineStatus s = e.status();
    EXPECT_EQ(s.cpu_retries_total, 1u);
    EXPECT_EQ(s.devices.at(0).verify_failures, 1u);
    EXPECT_EQ(s.devices.at(0).proofs_done, 0u);
    EXPECT_EQ(s.devices.at(1).proofs_done, 1u);  // the CPU's
    EXPECT_NE(e.metrics().find("cuzk_gpu_cpu_retries_total 1"), std::string::npos);
    // The next job is the device's again.
    auto b = e.submit(demo(5, 10));
    EXPECT_TRUE((co_await e.await(b.value().id, 0ms)).ok());
    EXPECT_EQ(e.status().devices.at(0).proofs_done, 1u);
  });
}

TEST(EngineBackends, ThrowingDeviceFailsTheJobAndServesTheNext) {
  Rig rig(1);
  rig.fakes[0]->throw_next = 1;
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    auto a = e.submit(demo(5, 11));
    auto out = co_await e.await(a.value().id, 0ms);
    EXPECT_FALSE(out.ok());
    if (!out.ok()) {
      EXPECT_EQ(out.error().kind, ErrorKind::kInternal);
      EXPECT_NE(out.error().message.find("fake device failure"), std::string::npos) << out.error().message;
    }
    EXPECT_EQ(e.status().cpu_retries_total, 0u);
    auto b = e.submit(demo(5, 12));
    auto ok = co_await e.await(b.value().id, 0ms);
    EXPECT_TRUE(ok.ok());
    if (ok.ok()) {
      EXPECT_TRUE(output_verifies(ok.value().output));
    }
  });
}

// ---------------------------------------------------------------------------
// The pipeline on its own, with demo witnesses as partitions.

struct PipelineRig {
  // with_lane: the GPU's card has a critical lane (lane_fake).
  explicit PipelineRig(std::uint64_t budget_bytes, bool with_lane = false)
      : log(runtime::LogLevel::kWarn), math(2), cpu(2), synthesis(4), memory(loop.executor(), budget_bytes) {
    dir = testing::make_temp_dir("cuzk-pipeline-test");
    params = std::make_unique<ParamStore>(dir, math, log);
    demo = params->get_demo(5).params;
    fake = std::make_shared<FakeBackend>("fake:0", 0, math);
    std::vector<std::shared_ptr<DeviceBackend>> gpus{fake};
    if (with_lane) {
      lane_fake = std::make_shared<FakeBackend>("fake:0 lane", 0, math);
      lane_fake->lane = true;
      gpus.push_back(lane_fake);
    }
    devices = std::make_unique<DeviceSet>(loop.executor(), std::make_shared<CpuBackend>(cpu, math), std::move(gpus));
  }
  ~PipelineRig() {
    devices.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // A plan of `n` demo partitions (seed k) whose synthesis takes `synth_delay`
  // and records its start and end.
  PartitionPlan plan(std::uint32_t n, std::chrono::milliseconds synth_delay, std::uint64_t witness_bytes) {
    synth_start.assign(n, {});
    synth_end.assign(n, {});
    PartitionPlan p;
    p.job = 1;
    p.srs_key = demo->circuit_id;
    p.partitions = n;
    p.witness_bytes = witness_bytes;
    p.params = &demo->params;
    p.r1cs = &demo->r1cs;
    p.pvk = &demo->pvk;
    p.synthesize = [this, synth_delay](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> {
      {
        std::lock_guard lock(mu);
        synth_start[k] = Clock::now();
        ++synthesizing;
        max_synthesizing = std::max(max_synthesizing, synthesizing);
      }
      testing::simulate_work(synth_delay);
      std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(5);
      groth16::Witness w = groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(100 + k)));
      std::lock_guard lock(mu);
      synth_end[k] = Clock::now();
      --synthesizing;
      return w;
    };
    return p;
  }

  // `on_first_prove` runs on the loop once the GPU holds the first partition.
  Result<PipelineOutcome> run(const PartitionPlan& p, runtime::CancelFlag& cancel,
                              std::function<void()> on_first_prove = {}) {
    std::optional<Result<PipelineOutcome>> result;
    loop.io().restart();  // a loop that ran out of work before (an earlier run)
    runtime::TaskSet tasks(loop.executor());
    tasks.spawn([](PipelineRig& r, const PartitionPlan& plan, runtime::CancelFlag& c,
                   std::optional<Result<PipelineOutcome>>& out) -> asio::awaitable<void> {
      out.emplace(co_await run_partition_pipeline(
          PipelineDeps{r.synthesis, r.cpu, *r.devices, r.memory, r.log, nullptr, r.kept}, plan, c));
    }(*this, p, cancel, result));
    if (on_first_prove) {
      tasks.spawn([](PipelineRig& r, std::function<void()> fn) -> asio::awaitable<void> {
        EXPECT_TRUE(co_await testing::eventually(*r.devices, [&r] { return r.devices->gpu(0).busy; }));
        fn();
      }(*this, std::move(on_first_prove)));
    }
    loop.run();
    EXPECT_EQ(tasks.size(), 0u);
    return std::move(*result);
  }

  runtime::EventLoop loop;
  runtime::Logger log;
  ThreadPool math;
  runtime::WorkerPool cpu, synthesis;
  MemoryGate memory;
  KeptWitnesses* kept = nullptr;  // run()'s PipelineDeps::kept
  fs::path dir;
  std::unique_ptr<ParamStore> params;
  std::shared_ptr<const CircuitParams> demo;
  std::shared_ptr<FakeBackend> fake;
  std::shared_ptr<FakeBackend> lane_fake;  // with_lane
  std::unique_ptr<DeviceSet> devices;
  std::mutex mu;
  std::vector<Clock::time_point> synth_start, synth_end;
  int synthesizing = 0, max_synthesizing = 0;
};

// Every proof verifies against its partition's inputs.
void expect_valid(const PipelineRig& rig, const PipelineOutcome& out, std::uint32_t n) {
  ASSERT_EQ(out.proofs.size(), n);
  ASSERT_EQ(out.public_inputs.size(), n);
  for (std::uint32_t k = 0; k < n; ++k) {
    EXPECT_EQ(out.public_inputs[k].at(0), ff::Fr::from_u64(100 + k));  // x_0 = the partition's seed
    EXPECT_EQ(groth16::verify(rig.demo->pvk, out.proofs[k], out.public_inputs[k]), groth16::VerifyResult::kValid);
  }
}

TEST(PartitionPipeline, SynthesisOfTheNextPartitionOverlapsProving) {
  PipelineRig rig(1ull << 40);
  rig.fake->delay_ms = 150;
  // One lane: without the hand-off, partition N+1 would wait for N's proof.
  PartitionPlan plan = rig.plan(4, 60ms, 1 << 20);
  plan.synthesis_lanes = 1;
  plan.max_in_flight = 2;
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 4);
  auto calls = rig.fake->calls();
  ASSERT_EQ(calls.size(), 4u);
  // Partitions are proved in order here (one lane); synthesis of N+1 started
  // before the proof of N ended.
  for (std::uint32_t k = 0; k + 1 < 4; ++k) EXPECT_LT(rig.synth_start[k + 1], calls[k].end) << "partition " << k;
  // And never more than max_in_flight partitions between synthesis start and proof end.
  for (std::uint32_t k = 0; k < 4; ++k) {
    int live = 0;
    for (std::uint32_t j = 0; j < 4; ++j)
      live += (rig.synth_start[j] <= rig.synth_start[k] && calls[j].end > rig.synth_start[k]);
    EXPECT_LE(live, 2) << "at the start of partition " << k;
  }
  EXPECT_LE(out.value().peak_in_flight, 2u);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

// A plan's synthesize (demo witnesses) that records, per call, the storage
// handed in (null: none) and the witness memory it produced.
struct StorageProbe {
  struct Call {
    std::uint32_t k = 0;
    const ff::Fr* given = nullptr;
    const ff::Fr* made = nullptr;
  };
  std::mutex mu;
  std::vector<Call> calls;

  std::function<Result<groth16::Witness>(std::uint32_t, groth16::Witness)> synthesize() {
    return [this](std::uint32_t k, groth16::Witness storage) -> Result<groth16::Witness> {
      const ff::Fr* in = storage.aux.capacity() > 0 ? storage.aux.data() : nullptr;
      const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(5);
      groth16::Witness w =
          groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(100 + k)), {}, std::move(storage));
      std::lock_guard lock(mu);
      calls.push_back({k, in, w.aux.data()});
      return w;
    };
  }
  // Whether `p` is the memory of a witness made by the first `n` calls.
  bool made_by_first(std::size_t n, const ff::Fr* p) const {
    return std::any_of(calls.begin(), calls.begin() + std::ptrdiff_t(std::min(n, calls.size())),
                       [p](const Call& c) { return c.made == p; });
  }
};

// A proved partition's witness memory is handed to a later synthesis of the
// run (its pages are not cleared again), the proofs stay valid, and nothing
// is kept or reserved once the run ends.
TEST(PartitionPipeline, ProvedWitnessMemoryIsReusedByALaterSynthesis) {
  constexpr std::uint64_t kW = 1 << 20;
  PipelineRig rig(1ull << 40);
  rig.fake->delay_ms = 30;
  PartitionPlan plan = rig.plan(5, 0ms, kW);
  plan.synthesis_lanes = 1;
  plan.max_in_flight = 2;
  StorageProbe probe;
  plan.synthesize = probe.synthesize();
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 5);
  // One lane, two in flight: partitions 2..4 start after 0..2 are proved.
  std::size_t given = 0;
  for (std::size_t i = 0; i < probe.calls.size(); ++i) {
    if (probe.calls[i].given == nullptr) continue;
    ++given;
    EXPECT_TRUE(probe.made_by_first(i, probe.calls[i].given));  // an earlier witness's memory
  }
  EXPECT_GT(given, 0u);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

// With the engine's KeptWitnesses, a run's last spares outlive it, with their
// reservations, and the next run of the same witness size synthesizes its
// first partition into one of them; a run of another size takes none.
TEST(PartitionPipeline, KeptWitnessMemoryCarriesToTheNextRunOfTheSameSize) {
  constexpr std::uint64_t kW = 1 << 20;
  PipelineRig rig(1ull << 40);
  KeptWitnesses kept(2);
  rig.kept = &kept;
  rig.fake->delay_ms = 30;
  StorageProbe probe;
  runtime::CancelFlag cancel;
  // A 3-partition run; the storage its partition 0 was handed (null: none).
  auto run = [&](std::uint64_t witness_bytes) -> const ff::Fr* {
    PartitionPlan plan = rig.plan(3, 0ms, witness_bytes);
    plan.synthesis_lanes = 1;
    plan.max_in_flight = 2;
    plan.synthesize = probe.synthesize();
    const std::size_t from = probe.calls.size();
    auto out = rig.run(plan, cancel);
    EXPECT_TRUE(out.ok()) << out.error().message;
    if (out.ok()) expect_valid(rig, out.value(), 3);
    for (std::size_t i = from; i < probe.calls.size(); ++i)
      if (probe.calls[i].k == 0) return probe.calls[i].given;
    ADD_FAILURE() << "no partition 0";
    return nullptr;
  };
  run(kW);
  ASSERT_GE(kept.size(), 1u);
  EXPECT_EQ(kept.reserved_bytes(), kept.size() * kW);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, kept.reserved_bytes());  // nothing else held

  const std::size_t first_run_calls = probe.calls.size();
  const ff::Fr* given = run(kW);
  ASSERT_NE(given, nullptr);
  EXPECT_TRUE(probe.made_by_first(first_run_calls, given));
  EXPECT_EQ(run(2 * kW), nullptr);  // no entry of that size

  std::vector<KeptWitnesses::Entry> all = kept.take_all();
  EXPECT_LE(all.size(), 2u);
  all.clear();
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

// Job 1's partition holds the only GPU (the fake held) while job 2's racing
// partition (PartitionPlan::race_on_cpu: WinningPoSt, critical) arrives; the
// GPU is let go once job 2 is answered. Should the race not answer, the GPU
// is let go after 120 s so that the test ends (and fails) instead of hanging.
struct RaceWhileHeld {
  std::optional<Result<PipelineOutcome>> held, racing;
  bool guard_fired = false;
};
RaceWhileHeld race_while_the_gpu_is_held(PipelineRig& rig) {
  RaceWhileHeld r;
  rig.fake->hold();
  const PartitionPlan a = rig.plan(1, 0ms, 1 << 20);
  PartitionPlan b = a;
  b.job = 2;
  b.priority = Priority::kCritical;
  b.race_on_cpu = true;
  runtime::CancelFlag cancel_a, cancel_b;
  asio::steady_timer guard(rig.loop.executor(), 120s);
  guard.async_wait([&](asio::error_code ec) {
    if (ec) return;
    r.guard_fired = true;
    rig.fake->release();
  });
  runtime::TaskSet tasks(rig.loop.executor());
  tasks.spawn([](PipelineRig& rg, const PartitionPlan& plan, runtime::CancelFlag& c,
                 std::optional<Result<PipelineOutcome>>& out) -> asio::awaitable<void> {
    out.emplace(
        co_await run_partition_pipeline(PipelineDeps{rg.synthesis, rg.cpu, *rg.devices, rg.memory, rg.log}, plan, c));
  }(rig, a, cancel_a, r.held));
  tasks.spawn([](PipelineRig& rg, const PartitionPlan& plan, runtime::CancelFlag& c,
                 std::optional<Result<PipelineOutcome>>& answered, asio::steady_timer& g) -> asio::awaitable<void> {
    EXPECT_TRUE(co_await testing::eventually(
        *rg.devices, [&rg] { return rg.devices->gpu(0).busy; }));  // a's partition holds the GPU
    PlanMember pm;
    pm.job = plan.job;
    pm.partitions = 1;
    pm.cancel = &c;
    pm.on_done = [&rg, &answered, &g](const Result<PipelineOutcome>& o) {
      answered.emplace(o);
      g.cancel();
      rg.fake->release();
    };
    std::vector<PlanMember> members;
    members.push_back(std::move(pm));
    co_await run_batch_pipeline(PipelineDeps{rg.synthesis, rg.cpu, *rg.devices, rg.memory, rg.log}, plan,
                                std::move(members));
  }(rig, b, cancel_b, r.racing, guard));
  rig.loop.run();
  EXPECT_EQ(tasks.size(), 0u);
  return r;
}

// The racing partition is proved on the CPU and answered while the GPU is
// still held; the GPU, once free, proves only the other job's partition.
TEST(PartitionPipeline, RacingPartitionIsAnsweredByTheCpuWhileTheGpuIsHeld) {
  PipelineRig rig(1ull << 40);
  RaceWhileHeld r = race_while_the_gpu_is_held(rig);
  EXPECT_FALSE(r.guard_fired);
  ASSERT_TRUE(r.racing.has_value());
  ASSERT_TRUE(r.racing->ok()) << r.racing->error().message;
  expect_valid(rig, r.racing->value(), 1);
  EXPECT_EQ(r.racing->value().timings.at(0).device, rig.devices->cpu().backend->name());
  ASSERT_TRUE(r.held.has_value());
  ASSERT_TRUE(r.held->ok()) << r.held->error().message;
  expect_valid(rig, r.held->value(), 1);
  EXPECT_EQ(r.held->value().timings.at(0).device, "fake:0");
  EXPECT_EQ(rig.fake->calls().size(), 1u);  // the GPU proved a's partition only
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

// With a critical lane on the card, the racing partition proves there (in
// the staging prepared for it), not on the CPU, while the GPU is held; the
// lane proves nothing else.
TEST(PartitionPipeline, RacingPartitionIsAnsweredByTheCriticalLaneWhileTheGpuIsHeld) {
  PipelineRig rig(1ull << 40, /*with_lane=*/true);
  ASSERT_EQ(rig.devices->gpu_count(), 1u);
  ASSERT_EQ(rig.devices->lane_count(), 1u);
  EXPECT_EQ(rig.devices->lane(0).index, 2u);  // after the GPU and the CPU
  RaceWhileHeld r = race_while_the_gpu_is_held(rig);
  EXPECT_FALSE(r.guard_fired);
  ASSERT_TRUE(r.racing.has_value());
  ASSERT_TRUE(r.racing->ok()) << r.racing->error().message;
  expect_valid(rig, r.racing->value(), 1);
  EXPECT_EQ(r.racing->value().timings.at(0).device, "fake:0 lane");
  ASSERT_TRUE(r.held.has_value());
  ASSERT_TRUE(r.held->ok()) << r.held->error().message;
  EXPECT_EQ(r.held->value().timings.at(0).device, "fake:0");
  EXPECT_EQ(rig.lane_fake->calls().size(), 1u);
  EXPECT_EQ(rig.fake->calls().size(), 1u);
  EXPECT_EQ(rig.devices->lane(0).proofs_done, 1u);
  EXPECT_FALSE(rig.devices->lane(0).busy);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

// A lane is never a GPU of the dispatch rule: partitions of a plan that does
// not race wait for the card's worker while the lane stays idle.
TEST(PartitionPipeline, ACriticalLaneTakesNoOrdinaryPartition) {
  PipelineRig rig(1ull << 40, /*with_lane=*/true);
  rig.fake->delay_ms = 20;
  PartitionPlan plan = rig.plan(4, 0ms, 1 << 20);
  plan.priority = Priority::kCritical;
  plan.synthesis_lanes = 2;
  plan.max_in_flight = 4;
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 4);
  for (const PartitionTiming& t : out.value().timings) EXPECT_EQ(t.device, "fake:0");
  EXPECT_TRUE(rig.lane_fake->calls().empty());
  const std::vector<DeviceWorkerView> views = rig.devices->views();
  ASSERT_EQ(views.size(), 3u);  // the GPU, the CPU, the lane
  EXPECT_EQ(views.back().name, "fake:0 lane");
}

// With a GPU free, a racing partition simply proves there.
TEST(PartitionPipeline, RacingPartitionTakesAFreeGpu) {
  PipelineRig rig(1ull << 40);
  PartitionPlan plan = rig.plan(1, 0ms, 1 << 20);
  plan.race_on_cpu = true;
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 1);
  EXPECT_EQ(out.value().timings.at(0).device, "fake:0");
}

TEST(PartitionPipeline, InFlightBoundHoldsWithManyLanes) {
  PipelineRig rig(1ull << 40);
  rig.fake->delay_ms = 80;
  PartitionPlan plan = rig.plan(6, 20ms, 1 << 20);
  plan.synthesis_lanes = 4;
  plan.max_in_flight = 2;
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 6);
  EXPECT_LE(out.value().peak_in_flight, 2u);
  EXPECT_LE(rig.max_synthesizing, 2);
}

TEST(PartitionPipeline, MemoryBudgetBoundsPartitionsInMemory) {
  // Witness W, held from synthesis until proved: a budget of 2W admits two
  // partitions in memory at once, so the third lane waits.
  constexpr std::uint64_t kW = 1 << 20;
  PipelineRig rig(2 * kW);
  rig.fake->delay_ms = 60;
  PartitionPlan plan = rig.plan(5, 30ms, kW);
  plan.synthesis_lanes = 3;
  plan.max_in_flight = 5;
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 5);
  EXPECT_LE(rig.max_synthesizing, 2);
  policy::BudgetStats s = rig.memory.stats();
  EXPECT_LE(s.peak_reserved_bytes, 2 * kW);
  EXPECT_GT(s.waited_total, 0u);  // lanes did wait for memory
  EXPECT_EQ(s.reserved_bytes, 0u);
}

TEST(PartitionPipeline, PartitionLargerThanTheBudgetFails) {
  PipelineRig rig(1 << 20);
  PartitionPlan plan = rig.plan(2, 0ms, 2 << 20);  // a 2 MiB witness
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kInternal);
  EXPECT_NE(out.error().message.find("memory budget"), std::string::npos);
}

TEST(PartitionPipeline, CancelFreesEveryReservation) {
  constexpr std::uint64_t kW = 1 << 20;
  PipelineRig rig(1ull << 40);
  rig.fake->delay_ms = 200;
  rig.fake->host_bytes = 5 * kW;
  PartitionPlan plan = rig.plan(6, 20ms, kW);
  plan.synthesis_lanes = 2;
  plan.max_in_flight = 4;
  runtime::CancelFlag cancel;
  auto out = rig.run(plan, cancel, [&cancel] { cancel.request(); });
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind, ErrorKind::kCancelled);
  EXPECT_LT(rig.fake->calls().size(), 6u);
  policy::BudgetStats s = rig.memory.stats();
  EXPECT_GT(s.peak_reserved_bytes, 5 * kW);  // the prover's set and witnesses were held
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.waiting[0] + s.waiting[1] + s.waiting[2] + s.waiting[3], 0u);
}

// DeviceSet's dispatch rule and wait queue: dispatch_test.cpp.

}  // namespace
}  // namespace cuzk::engine
