// GpuProver's three steps (prepare / enqueue / finish) and the fences: two
// instances with overlap - the second prepared on another thread while the
// first is queued on the device - give the CPU prover's bytes; a fence's
// callbacks run once the device is done and the in-flight count returns to
// zero; a staging is reused across instances of one shape; the GPU back end's
// staged steps (engine/backend.hpp) give the CPU's bytes too. Skips without a
// device.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "circuits/demo.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/service/gpu_backend.hpp"
#include "gpu_test_util.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"

namespace cuzk::gpu {
namespace {

struct Demo {
  groth16::R1cs r1cs;
  groth16::Parameters params;
  std::vector<groth16::Witness> witnesses;
};

// The demo circuit of domain 2^log_domain with `n` different witnesses.
Demo make_demo(unsigned log_domain, int n, ThreadPool& pool) {
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
  Demo d{groth16::compile(circuits::DemoCircuit(rounds, std::nullopt)), {}, {}};
  d.params = groth16::generate_parameters(d.r1cs, groth16::random_toxic_waste(), pool);
  for (int i = 0; i < n; ++i) {
    d.witnesses.push_back(groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(11 + 7 * i))));
  }
  return d;
}

std::vector<std::uint8_t> cpu_bytes(const Demo& d, std::size_t i, const groth16::Blinding& b, ThreadPool& pool) {
  groth16::CpuProver cpu(pool);
  return groth16::encode_proofs(cpu.prove(d.params, d.r1cs, std::span(&d.witnesses[i], 1), std::span(&b, 1)));
}

TEST(GpuStagedProve, SecondInstancePreparedWhileTheFirstIsOnTheDevice) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  Demo d = make_demo(16, 2, pool);
  auto device = test::make_device();
  GpuProver prover(*device, pool);
  const ResidentSrs& srs = prover.cache_srs(d.params);
  const groth16::Blinding b0 = groth16::random_blinding(), b1 = groth16::random_blinding();
  ProveStaging s0, s1;

  prover.prepare(d.r1cs, d.witnesses[0], s0);
  std::atomic<bool> callback_ran{false};
  const Fence f0 = prover.enqueue(srs, s0);
  f0.on_done([&callback_ran] { callback_ran = true; });
  // Instance 1's host step on another thread while instance 0 is queued:
  // prepare() touches no device state.
  auto prepared = std::async(std::launch::async, [&] { prover.prepare(d.r1cs, d.witnesses[1], s1); });
  prepared.get();
  const Fence f1 = prover.enqueue(srs, s1);              // queued behind instance 0
  const groth16::Proof p1 = prover.finish(srs, s1, b1);  // waits for f1
  EXPECT_TRUE(f1.ready());
  EXPECT_TRUE(f0.ready());  // the streams are in order
  const groth16::Proof p0 = prover.finish(srs, s0, b0);
  EXPECT_TRUE(callback_ran.load());
  EXPECT_EQ(prover.callbacks_in_flight(), 0u);

  EXPECT_EQ(groth16::encode_proofs(std::span(&p0, 1)), cpu_bytes(d, 0, b0, pool));
  EXPECT_EQ(groth16::encode_proofs(std::span(&p1, 1)), cpu_bytes(d, 1, b1, pool));
  for (const ProveStaging* s : {&s0, &s1}) {
    const GpuProveStats& st = s->stats();
    EXPECT_GT(st.evaluate_ms, 0.0);
    EXPECT_GT(st.h_gpu_ms, 0.0);
    EXPECT_GT(st.device_ms, st.h_msm_ms);
    EXPECT_GE(st.device_ms, st.h_ms);
  }
  EXPECT_GT(s0.pinned_bytes(), 0u);
  EXPECT_LE(s0.pinned_bytes(), ProveStaging::host_bytes_bound(d.r1cs));
}

// One staging through several instances (its buffers reused), a fence's
// callback registered after it passed runs at once, and the stage observer
// reports the device stages from CUDA's callback thread in order.
TEST(GpuStagedProve, StagingReusedAndDeviceStagesReportedInOrder) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  Demo d = make_demo(12, 3, pool);
  auto device = test::make_device();
  GpuProver prover(*device, pool);
  std::mutex mu;
  std::vector<std::string> device_stages;
  prover.set_stage_observer([&](std::string_view stage, std::uintptr_t stream) {
    if (stream == 0) return;
    std::lock_guard lock(mu);
    device_stages.emplace_back(stage);
  });
  const ResidentSrs& srs = prover.cache_srs(d.params);
  ProveStaging staging;
  std::size_t pinned_after_first = 0;
  for (std::size_t i = 0; i < d.witnesses.size(); ++i) {
    const groth16::Blinding b = groth16::random_blinding();
    prover.prepare(d.r1cs, d.witnesses[i], staging);
    const Fence f = prover.enqueue(srs, staging);
    f.wait();
    bool ran = false;
    f.on_done([&ran] { ran = true; });  // already passed: runs here
    EXPECT_TRUE(ran);
    const groth16::Proof p = prover.finish(srs, staging, b);
    EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), cpu_bytes(d, i, b, pool)) << i;
    if (i == 0) pinned_after_first = staging.pinned_bytes();
    EXPECT_EQ(staging.pinned_bytes(), pinned_after_first) << "same shape: no regrowth";
  }
  const std::vector<std::string> order = {"h_ntt", "h_msm", "l_msm", "a_msm", "b_msm"};
  std::lock_guard lock(mu);
  ASSERT_EQ(device_stages.size(), 3 * order.size());
  for (std::size_t i = 0; i < device_stages.size(); ++i) EXPECT_EQ(device_stages[i], order[i % order.size()]) << i;
}

// reserve_staging pins exactly the buffer prepare() fills on the prover's
// path for the circuit, before it; the instance prepared there afterwards
// proves as on the CPU, and a reserve of a staging already grown keeps it.
TEST(GpuStagedProve, ReservedStagingIsTheBufferPrepareFills) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  Demo d = make_demo(12, 1, pool);
  auto device = test::make_device();
  GpuProver prover(*device, pool);
  const ResidentSrs& srs = prover.cache_srs(d.params);
  ProveStaging staging;
  ASSERT_EQ(staging.pinned_bytes(), 0u);
  prover.reserve_staging(d.r1cs, staging);
  const std::size_t elements =
      prover.abc_source_for(d.r1cs) == AbcSource::kDevice ? d.r1cs.num_variables() : 3 * groth16::domain_size(d.r1cs);
  EXPECT_EQ(staging.pinned_bytes(), elements * sizeof(ff::Fr));
  const groth16::Blinding b = groth16::random_blinding();
  prover.prepare(d.r1cs, d.witnesses[0], staging);
  prover.enqueue(srs, staging);
  const groth16::Proof p = prover.finish(srs, staging, b);
  EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), cpu_bytes(d, 0, b, pool));
  const std::size_t after = staging.pinned_bytes();
  prover.reserve_staging(d.r1cs, staging);
  EXPECT_EQ(staging.pinned_bytes(), after);
}

// The enqueue in steps that a service takes (its device thread never waits
// for the device): with the witness split on the device, the first step
// ends at the count pass's fence and the next, once it has passed, queues
// the rest; the staging is reused and the proofs are the CPU's.
TEST(GpuStagedProve, EnqueueInStepsResumesAfterTheSplitCountsFence) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  Demo d = make_demo(12, 2, pool);
  auto device = test::make_device();
  GpuProver prover(*device, pool, GpuProverOptions{.abc_source = AbcSource::kDevice});
  const ResidentSrs& srs = prover.cache_srs(d.params, &d.r1cs);
  ProveStaging staging;
  for (std::size_t i = 0; i < d.witnesses.size(); ++i) {
    const groth16::Blinding b = groth16::random_blinding();
    prover.prepare(d.r1cs, d.witnesses[i], staging);
    GpuProver::EnqueueStep step = prover.enqueue_start(srs, staging);
    EXPECT_TRUE(step.more) << i;
    EXPECT_TRUE(prover.enqueue_pending());
    int steps = 1;
    while (step.more) {
      std::promise<void> passed;
      step.fence.on_done([&passed] { passed.set_value(); });  // CUDA's callback thread
      passed.get_future().wait();
      step = prover.enqueue_continue(staging);
      ++steps;
    }
    EXPECT_EQ(steps, 2) << "the SRS is on the device: the counts, then the rest";
    EXPECT_FALSE(prover.enqueue_pending());
    const groth16::Proof p = prover.finish(srs, staging, b);
    EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), cpu_bytes(d, i, b, pool)) << i;
    EXPECT_TRUE(staging.stats().split_on_device);
    EXPECT_TRUE(staging.stats().abc_on_device);
  }
  EXPECT_EQ(prover.callbacks_in_flight(), 0u);
}

// The H stage in two device vectors (compact_h_stage: what a 16-24 GB device
// falls back to when four do not fit): the CPU's bytes with a, b, c from the
// host and from a staged witness (evaluated on the host then: the device
// evaluation needs three vectors), at an even and an odd number of stages,
// two instances in a row.
TEST(GpuStagedProve, TwoVectorHStageGivesTheCpuBytes) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  auto device = test::make_device();
  for (const unsigned log_domain : {12u, 9u}) {
    Demo d = make_demo(log_domain, 2, pool);
    for (const AbcSource source : {AbcSource::kHost, AbcSource::kDevice}) {
      SCOPED_TRACE("log_domain " + std::to_string(log_domain) + ", device source " +
                   std::to_string(source == AbcSource::kDevice));
      GpuProver prover(*device, pool, GpuProverOptions{.compact_h_stage = true, .abc_source = source});
      const ResidentSrs& srs = prover.cache_srs(d.params, &d.r1cs);
      ProveStaging staging;
      for (std::size_t i = 0; i < d.witnesses.size(); ++i) {
        const groth16::Blinding b = groth16::random_blinding();
        prover.prepare(d.r1cs, d.witnesses[i], staging);
        (void)prover.enqueue(srs, staging);
        const groth16::Proof p = prover.finish(srs, staging, b);
        EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), cpu_bytes(d, i, b, pool)) << i;
        EXPECT_TRUE(staging.stats().compact_h);
        EXPECT_FALSE(staging.stats().abc_on_device);
      }
    }
  }
  // The default keeps four vectors where they fit.
  Demo d = make_demo(10, 1, pool);
  GpuProver prover(*device, pool);
  const ResidentSrs& srs = prover.cache_srs(d.params);
  ProveStaging staging;
  const groth16::Blinding b = groth16::random_blinding();
  prover.prepare(d.r1cs, d.witnesses[0], staging);
  (void)prover.enqueue(srs, staging);
  const groth16::Proof p = prover.finish(srs, staging, b);
  EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), cpu_bytes(d, 0, b, pool));
  EXPECT_FALSE(staging.stats().compact_h);
}

// The engine's GPU back end through its staged steps: prepare on this
// thread, start on the device thread (done from CUDA's callback thread),
// finish here; same bytes as the CPU, and status shows no stage afterwards.
// With the default abc_on_device, a, b, c come from the resident matrices.
TEST(GpuStagedProve, BackendStagedStepsMatchTheCpu) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  Demo d = make_demo(12, 2, pool);
  gpu_service::GpuBackend gpu(0, pool);
  std::unique_ptr<engine::InstanceStaging> staging = gpu.make_staging();
  ASSERT_TRUE(gpu.can_use(*staging));
  for (std::size_t i = 0; i < d.witnesses.size(); ++i) {
    const groth16::Blinding b = groth16::random_blinding();
    gpu.prepare(*staging, d.params, d.r1cs, d.witnesses[i], b, groth16::SatisfactionCheck::kSkip);
    std::promise<std::exception_ptr> done;
    asio::post(gpu.runner().executor(),
               [&] { gpu.start(*staging, [&done](std::exception_ptr e) { done.set_value(e); }); });
    EXPECT_EQ(done.get_future().get(), nullptr);
    engine::ProveBreakdown br;
    const groth16::Proof p = gpu.finish(*staging, &br);
    EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), cpu_bytes(d, i, b, pool)) << i;
    EXPECT_EQ(br.srs_uploaded, i == 0);
    EXPECT_GT(br.h_msm_ms, 0.0);
    EXPECT_FALSE(gpu.prover_stage().has_value());
  }
  EXPECT_TRUE(gpu.abc_on_device());
  EXPECT_GT(gpu.abc_matrices_device_bytes(), 0u);
}

}  // namespace
}  // namespace cuzk::gpu
