// The satisfaction check fused into GpuProver's host evaluation of a, b, c
// (SatisfactionCheck::kCheck): an unsatisfied witness fails prepare(),
// compute_h(), prove() and the engine's GPU back end with
// groth16::UnsatisfiedError naming the first bad row (as first_unsatisfied),
// before anything reaches the device, and leaves the staging reusable; a good
// witness still proves byte-identical to the CPU prover. With a, b, c on the
// device (the back end's abc_on_device) the same error comes from finish().
// Skips without a device.
#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <vector>

#include "circuits/demo.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/groth16/r1cs_device.hpp"
#include "gpu/service/gpu_backend.hpp"
#include "gpu_test_util.hpp"
#include "unsatisfied_demo.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"

namespace cuzk::gpu {
namespace {

using groth16::SatisfactionCheck;

using test::make_unsatisfied_demo;
using test::unsatisfied_row;

TEST(GpuSatisfaction, ProverRejectsAnUnsatisfiedWitnessAndStillProvesAGoodOneLikeTheCpu) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  const test::UnsatisfiedDemo d = make_unsatisfied_demo(14, 5, {0.5}, pool);
  auto device = test::make_device();
  GpuProver prover(*device, pool);
  const ResidentSrs& srs = prover.cache_srs(d.params);
  const groth16::Blinding b = groth16::random_blinding();

  ProveStaging staging;
  EXPECT_EQ(unsatisfied_row([&] { prover.prepare(d.r1cs, d.bad, staging, SatisfactionCheck::kCheck); }), d.bad_row);
  EXPECT_EQ(unsatisfied_row([&] { prover.compute_h(d.r1cs, d.bad, SatisfactionCheck::kCheck); }), d.bad_row);
  // The same staging, after the rejection: the good witness, checked, proves
  // the CPU's bytes.
  prover.prepare(d.r1cs, d.good, staging, SatisfactionCheck::kCheck);
  prover.enqueue(srs, staging).wait();
  const groth16::Proof p = prover.finish(srs, staging, b);
  groth16::CpuProver cpu(pool, groth16::ProveOptions{.satisfaction = SatisfactionCheck::kCheck});
  const std::vector<groth16::Proof> expected = cpu.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1));
  EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), groth16::encode_proofs(expected));
  EXPECT_EQ(prover.compute_h(d.r1cs, d.good, SatisfactionCheck::kCheck), groth16::compute_h(d.r1cs, d.good, pool));

  // prove() through GpuProverOptions.
  GpuProver checking(*device, pool, GpuProverOptions{.satisfaction = SatisfactionCheck::kCheck});
  EXPECT_EQ(unsatisfied_row([&] { checking.prove(d.params, d.r1cs, std::span(&d.bad, 1), std::span(&b, 1)); }),
            d.bad_row);
  const std::vector<groth16::Proof> q = checking.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1));
  EXPECT_EQ(groth16::encode_proofs(q), groth16::encode_proofs(expected));
}

// The engine's GPU back end: prepare() with kCheck throws the typed error
// (the engine turns it into kInvalidInput, no retry); the staging then
// proves a good witness with the CPU's bytes.
TEST(GpuSatisfaction, BackendPrepareRejectsAnUnsatisfiedWitness) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  const test::UnsatisfiedDemo d = make_unsatisfied_demo(12, 5, {0.5}, pool);
  gpu_service::GpuBackend gpu(0, pool, gpu_service::GpuBackendOptions{.abc_on_device = false});
  EXPECT_EQ(gpu.host_bytes_per_instance(d.r1cs), ProveStaging::host_bytes_bound(d.r1cs, AbcSource::kHost));
  std::unique_ptr<engine::InstanceStaging> staging = gpu.make_staging();
  const groth16::Blinding b = groth16::random_blinding();
  EXPECT_EQ(unsatisfied_row([&] { gpu.prepare(*staging, d.params, d.r1cs, d.bad, b, SatisfactionCheck::kCheck); }),
            d.bad_row);
  gpu.prepare(*staging, d.params, d.r1cs, d.good, b, SatisfactionCheck::kCheck);
  std::promise<std::exception_ptr> done;
  asio::post(gpu.runner().executor(),
             [&] { gpu.start(*staging, [&done](std::exception_ptr e) { done.set_value(e); }); });
  EXPECT_EQ(done.get_future().get(), nullptr);
  const groth16::Proof p = gpu.finish(*staging, nullptr);
  groth16::CpuProver cpu(pool);
  EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)),
            groth16::encode_proofs(cpu.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1))));
}

// abc_on_device (the default): the check runs in the device mat-vec, so
// prepare() accepts the bad witness, the device step completes, and finish()
// throws the typed error with the host's row (the engine's step_error maps it
// to kInvalidInput from any step). The staging then proves a good witness
// with the CPU's bytes, the matrices are reported resident, and the working
// set the engine reserves is the witness path's.
TEST(GpuSatisfaction, BackendWithAbcOnDeviceRejectsAnUnsatisfiedWitnessInFinish) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  const test::UnsatisfiedDemo d = make_unsatisfied_demo(12, 5, {0.5}, pool);
  gpu_service::GpuBackend gpu(0, pool);
  ASSERT_TRUE(gpu.abc_on_device());
  EXPECT_EQ(gpu.host_bytes_per_instance(d.r1cs), ProveStaging::host_bytes_bound(d.r1cs, AbcSource::kDevice));
  EXPECT_LT(gpu.host_bytes_per_instance(d.r1cs), ProveStaging::host_bytes_bound(d.r1cs, AbcSource::kHost));
  std::unique_ptr<engine::InstanceStaging> staging = gpu.make_staging();
  const groth16::Blinding b = groth16::random_blinding();
  auto start = [&] {
    std::promise<std::exception_ptr> done;
    asio::post(gpu.runner().executor(), [&] {
      try {
        gpu.start(*staging, [&done](std::exception_ptr e) { done.set_value(e); });
      } catch (...) {
        done.set_value(std::current_exception());
      }
    });
    return done.get_future().get();
  };
  gpu.prepare(*staging, d.params, d.r1cs, d.bad, b, SatisfactionCheck::kCheck);
  EXPECT_EQ(start(), nullptr);
  EXPECT_EQ(unsatisfied_row([&] { (void)gpu.finish(*staging, nullptr); }), d.bad_row);
  EXPECT_EQ(gpu.abc_matrices_device_bytes(), DeviceR1cs::bytes_for(d.r1cs));

  gpu.prepare(*staging, d.params, d.r1cs, d.good, b, SatisfactionCheck::kCheck);
  EXPECT_EQ(start(), nullptr);
  engine::ProveBreakdown breakdown;
  const groth16::Proof p = gpu.finish(*staging, &breakdown);
  groth16::CpuProver cpu(pool);
  EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)),
            groth16::encode_proofs(cpu.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1))));
}

}  // namespace
}  // namespace cuzk::gpu
