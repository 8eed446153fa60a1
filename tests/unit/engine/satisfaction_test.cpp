// The satisfaction check fused into the prover (PartitionPlan::satisfaction):
// a PoRep-style pipeline (public inputs from "public data", a cheap check in
// the lane) whose partition does not satisfy the circuit fails its job as
// kInvalidInput "partition k: unsatisfied: constraint r does not hold", found
// by the back end's one evaluation of a, b, c (never by a second pass), and
// is not retried on another GPU or on the CPU, whichever step reports it; on
// the CPU back end the same check runs in its device step with the same
// typed error.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>

#include "circuits/demo.hpp"
#include "engine/pipeline.hpp"
#include "groth16/r1cs.hpp"
#include "runtime/task_set.hpp"
#include "unit/engine/fake_backend.hpp"
#include "unit/engine/pipeline_rig.hpp"

namespace cuzk::engine {
namespace {

using testing::FakeBackend;

struct Rig : testing::PipelineRig {
  explicit Rig(std::size_t gpus)
      : PipelineRig("cuzk-satisfaction-test", {gpus, 1ull << 40, 3, 4, runtime::LogLevel::kError}) {}

  groth16::Witness witness(std::uint64_t seed) const { return demo_witness(seed); }

  // Partitions 0..n-1, one at a time (partition 0 is proved before 1 is
  // synthesized); partition `bad` has aux[bad_aux] corrupted. As the PoRep
  // plan: the verifier's inputs known up front, the lane's check cheap.
  PartitionPlan plan(std::uint32_t n, std::optional<std::uint32_t> bad, std::size_t bad_aux) {
    PartitionPlan p = demo_plan(n, 1, 1);
    for (std::uint32_t k = 0; k < n; ++k) {
      const groth16::Witness w = witness(100 + k);
      p.public_inputs.emplace_back(w.inputs.begin() + 1, w.inputs.end());
    }
    p.synthesize = [this, bad, bad_aux](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> {
      groth16::Witness w = witness(100 + k);
      if (bad == k) w.aux.at(bad_aux) += ff::Fr::one();
      return w;
    };
    p.check = [this](std::uint32_t, const groth16::Witness& w) -> std::optional<Error> {
      ++lane_checks;
      if (w.aux.size() != demo->r1cs.num_aux()) return Error{ErrorKind::kInvalidInput, "shape"};
      return std::nullopt;
    };
    p.satisfaction = groth16::SatisfactionCheck::kCheck;
    return p;
  }

  Result<PipelineOutcome> run(const PartitionPlan& p) { return run_plan(p); }

  // The row the witness of partition `k` with aux[bad_aux] corrupted breaks first.
  std::size_t first_bad_row(std::uint32_t k, std::size_t bad_aux) {
    groth16::Witness w = witness(100 + k);
    w.aux.at(bad_aux) += ff::Fr::one();
    const std::optional<std::size_t> row = groth16::first_unsatisfied(demo->r1cs, w.inputs, w.aux, math);
    EXPECT_TRUE(row.has_value());
    return row.value_or(0);
  }

  std::atomic<int> lane_checks{0};
};

constexpr std::size_t kBadAux = 7;

TEST(FusedSatisfaction, AnUnsatisfiedPartitionFailsTheJobAsInvalidInputCheckedOnceAndNotRetried) {
  Rig rig(2);  // a second GPU: a GPU fault would be retried there
  const std::size_t row = rig.first_bad_row(1, kBadAux);
  Result<PipelineOutcome> r = rig.run(rig.plan(3, 1, kBadAux));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "partition 1: unsatisfied: constraint " + std::to_string(row) + " does not hold");
  // The lane ran only its cheap checks; the satisfaction work was the
  // prover's evaluation, once per prepared partition (0, then 1), asked for
  // the check each time.
  EXPECT_EQ(rig.lane_checks.load(), 2);
  int evaluations = 0;
  std::size_t prepares = 0, device_steps = 0;
  for (const auto& f : rig.fakes) {
    evaluations += f->evaluations.load();
    prepares += f->prepares().size();
    device_steps += f->calls().size();
    for (const FakeBackend::Call& p : f->prepares()) EXPECT_EQ(p.check, groth16::SatisfactionCheck::kCheck);
  }
  EXPECT_EQ(evaluations, 2);
  EXPECT_EQ(prepares, 2u);
  // Partition 0 alone reached a device; partition 1 went nowhere else.
  EXPECT_EQ(device_steps, 1u);
  EXPECT_EQ(rig.devices->cpu_retries(), 0u);
  for (std::size_t i = 0; i < rig.devices->gpu_count(); ++i) EXPECT_EQ(rig.devices->gpu(i).prove_errors, 0u);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);

  // A good job on the same devices proves, still checked by the prover alone.
  Result<PipelineOutcome> good = rig.run(rig.plan(2, std::nullopt, 0));
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good.value().proofs.size(), 2u);
  evaluations = 0;
  for (const auto& f : rig.fakes) evaluations += f->evaluations.load();
  EXPECT_EQ(evaluations, 4);
}

TEST(FusedSatisfaction, WithoutTheCheckNothingIsAskedOfTheProver) {
  Rig rig(1);
  PartitionPlan plan = rig.plan(2, std::nullopt, 0);
  plan.satisfaction = groth16::SatisfactionCheck::kSkip;
  Result<PipelineOutcome> r = rig.run(plan);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(rig.fakes[0]->evaluations.load(), 0);  // the fake's prepare evaluates only to check
  for (const FakeBackend::Call& p : rig.fakes[0]->prepares()) EXPECT_EQ(p.check, groth16::SatisfactionCheck::kSkip);
}

// A check whose verdict comes with the results (finish) is the input's fault too.
TEST(FusedSatisfaction, AnUnsatisfiedVerdictFromFinishIsNotRetriedOnAnotherGpu) {
  Rig rig(2);
  rig.fakes[0]->finish_unsatisfied_next = 1;
  rig.fakes[1]->finish_unsatisfied_next = 1;
  Result<PipelineOutcome> r = rig.run(rig.plan(1, std::nullopt, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "partition 0: unsatisfied: constraint 3 does not hold");
  EXPECT_EQ(rig.fakes[0]->calls().size() + rig.fakes[1]->calls().size(), 1u);  // one device step, no retry
  EXPECT_EQ(rig.devices->cpu_retries(), 0u);
  for (std::size_t i = 0; i < rig.devices->gpu_count(); ++i) EXPECT_EQ(rig.devices->gpu(i).prove_errors, 0u);
}

TEST(FusedSatisfaction, OnTheCpuBackEndTheDeviceStepReportsTheSameTypedError) {
  Rig rig(0);  // the CPU back end alone: its check runs inside CpuProver
  const std::size_t row = rig.first_bad_row(0, kBadAux);
  Result<PipelineOutcome> r = rig.run(rig.plan(2, 0, kBadAux));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.error().message, "partition 0: unsatisfied: constraint " + std::to_string(row) + " does not hold");
  EXPECT_EQ(rig.devices->cpu().prove_errors, 0u);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
  Result<PipelineOutcome> good = rig.run(rig.plan(1, std::nullopt, 0));
  EXPECT_TRUE(good.ok()) << good.error().message;
}

}  // namespace
}  // namespace cuzk::engine
