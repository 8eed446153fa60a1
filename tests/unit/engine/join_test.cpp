// Members that join a running batch pipeline (BatchDoor, engine/pipeline.hpp),
// on one fake GPU with demo witnesses as partitions:
//   - a member added while the first one proves starts synthesizing before
//     the first one's last partition is proved, and both are answered with
//     valid proofs (the GPU does not wait for the joiner's first wave);
//   - cancelling the joined member, or the original one, leaves the other
//     completing;
//   - the intake closes once nothing is left to overlap: the run ends and a
//     late add() is refused.
// The admission rule itself (decide_join) is tested in policy_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "circuits/demo.hpp"
#include "engine/pipeline.hpp"
#include "groth16/verifier.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/pipeline_rig.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kSeedA = 100, kSeedB = 200;

struct JoinRig : testing::PipelineRig {
  JoinRig() : PipelineRig("cuzk-join-test", {1, 1ull << 40, 2, 4, runtime::LogLevel::kError}) {
    fakes[0]->delay_ms = 60;  // the GPU is the bottleneck, as on the H200 (1.54 s against ~12 s / 8 lanes)
  }

  // Demo witness of seed `seed`, synthesized in 20 ms; records when it started.
  Result<groth16::Witness> synthesize(std::uint64_t seed) {
    {
      std::lock_guard lock(mu);
      synthesis_started.emplace(seed, Clock::now());
    }
    testing::simulate_work(20ms);
    return demo_witness(seed);
  }
  Clock::time_point started(std::uint64_t seed) {
    std::lock_guard lock(mu);
    return synthesis_started.at(seed);
  }

  // The first member's partitions, through the plan's callbacks (seed kSeedA + k).
  PartitionPlan plan(std::uint32_t n) {
    PartitionPlan p = demo_plan(n, 2, 3);
    p.synthesize = [this](std::uint32_t k, groth16::Witness) { return synthesize(kSeedA + k); };
    return p;
  }

  // A joiner with its own callbacks (seed kSeedB + i).
  PlanMember joiner(std::uint32_t n, const runtime::CancelFlag* cancel) {
    PlanMember m;
    m.job = 2;
    m.partitions = n;
    m.cancel = cancel;
    m.synthesize = [this](std::uint32_t i, groth16::Witness) { return synthesize(kSeedB + i); };
    m.on_stage = [this](std::uint32_t i, std::string_view) { joiner_indices.push_back(i); };
    return m;
  }

  std::mutex mu;
  std::map<std::uint64_t, Clock::time_point> synthesis_started;
  std::vector<std::uint32_t> joiner_indices;  // on_stage of the joiner: its own indices
};

struct JoinRun {
  std::vector<std::optional<Result<PipelineOutcome>>> reported{2};  // by on_done: the first member, the joiner
  std::vector<Clock::time_point> reported_at{2};
  std::vector<Result<PipelineOutcome>> returned;
};

// What the test's admitter does once the first member's first partition is
// on the GPU: the joiner is held over a few turns of the loop (its C1
// parsed) and added; `then` runs on the loop after the add (a cancel).
struct Script {
  std::uint32_t partitions = 3;
  std::function<void()> then;
  bool wait_for_close = false;  // adds nothing: waits for the intake to close, then tries
  std::optional<bool> added;
};

asio::awaitable<void> admitter(JoinRig& rig, BatchDoor& door, Script& script, const runtime::CancelFlag& cancel_b) {
  if (script.wait_for_close) {
    while (door.open()) co_await door.wait();
    script.added = door.add(rig.joiner(1, &cancel_b));
    co_return;
  }
  EXPECT_TRUE(co_await testing::eventually(*rig.devices, [&rig] { return rig.devices->gpu(0).busy; }));
  EXPECT_TRUE(door.open());
  EXPECT_EQ(door.unfinished(), 1u);
  BatchDoor::Hold hold = door.hold();
  EXPECT_EQ(door.unfinished(), 2u);  // a joiner being prepared takes its place
  co_await testing::run_ready();
  script.added = door.add(rig.joiner(script.partitions, &cancel_b));
  if (script.then) script.then();
}

JoinRun run_join(JoinRig& rig, std::uint32_t partitions_a, Script& script, runtime::CancelFlag& cancel_a,
                 runtime::CancelFlag& cancel_b) {
  JoinRun out;
  PartitionPlan plan = rig.plan(partitions_a);
  std::vector<PlanMember> members(1);
  members[0].job = 1;
  members[0].partitions = partitions_a;
  members[0].cancel = &cancel_a;
  members[0].on_done = [&out](const Result<PipelineOutcome>& r) {
    EXPECT_FALSE(out.reported[0].has_value());
    out.reported[0] = r;
    out.reported_at[0] = Clock::now();
  };
  BatchAdmitter admit = [&rig, &script, &cancel_b](BatchDoor& door) { return admitter(rig, door, script, cancel_b); };
  runtime::TaskSet tasks(rig.loop.executor());
  tasks.spawn([](JoinRig& r, const PartitionPlan& p, std::vector<PlanMember> ms, BatchAdmitter a,
                 std::vector<Result<PipelineOutcome>>& ret) -> asio::awaitable<void> {
    ret = co_await run_batch_pipeline(r.deps(), p, std::move(ms), std::move(a));
  }(rig, plan, std::move(members), std::move(admit), out.returned));
  rig.loop.run();
  EXPECT_EQ(tasks.size(), 0u);
  return out;
}

void expect_valid(const JoinRig& rig, const PipelineOutcome& out, std::uint32_t n, std::uint64_t seed0) {
  ASSERT_EQ(out.proofs.size(), n);
  for (std::uint32_t k = 0; k < n; ++k) {
    EXPECT_EQ(out.public_inputs[k].at(0), ff::Fr::from_u64(seed0 + k));
    EXPECT_EQ(groth16::verify(rig.demo->pvk, out.proofs[k], out.public_inputs[k]), groth16::VerifyResult::kValid);
    EXPECT_EQ(out.timings.at(k).partition, k);  // by the member's own index
  }
}

// (The joiner has no on_done here: its result is the run's second one.)
TEST(JoinRunningBatch, AJoinerSynthesizesBeforeTheFirstsLastProofAndBothAreProved) {
  JoinRig rig;
  runtime::CancelFlag cancel_a, cancel_b;
  Script script;
  // 6 partitions of 60 ms on the GPU, at most 3 in flight: the joiner comes
  // while the first member's first partition proves.
  JoinRun r = run_join(rig, 6, script, cancel_a, cancel_b);
  ASSERT_EQ(script.added, std::optional<bool>(true));
  ASSERT_EQ(r.returned.size(), 2u);
  ASSERT_TRUE(r.returned[0].ok()) << r.returned[0].error().message;
  ASSERT_TRUE(r.returned[1].ok()) << r.returned[1].error().message;
  expect_valid(rig, r.returned[0].value(), 6, kSeedA);
  expect_valid(rig, r.returned[1].value(), 3, kSeedB);
  ASSERT_TRUE(r.reported[0].has_value());
  // The GPU's next work was synthesizing while the first member still proved.
  EXPECT_LT(rig.started(kSeedB), r.reported_at[0]);
  // Partitions taken member by member: the joiner's first after the first
  // member's last.
  EXPECT_LT(rig.started(kSeedA + 5), rig.started(kSeedB));
  // The joiner's stages carry its own indices.
  for (std::uint32_t i : rig.joiner_indices) EXPECT_LT(i, 3u);
  EXPECT_FALSE(rig.joiner_indices.empty());
  EXPECT_EQ(rig.fakes[0]->calls().size(), 9u);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

TEST(JoinRunningBatch, CancellingTheJoinerLeavesTheFirstCompleting) {
  JoinRig rig;
  runtime::CancelFlag cancel_a, cancel_b;
  Script script;
  script.partitions = 4;
  script.then = [&cancel_b] { cancel_b.request(); };
  JoinRun r = run_join(rig, 6, script, cancel_a, cancel_b);
  ASSERT_EQ(script.added, std::optional<bool>(true));
  ASSERT_EQ(r.returned.size(), 2u);
  ASSERT_TRUE(r.returned[0].ok()) << r.returned[0].error().message;
  expect_valid(rig, r.returned[0].value(), 6, kSeedA);
  ASSERT_FALSE(r.returned[1].ok());
  EXPECT_EQ(r.returned[1].error().kind, ErrorKind::kCancelled);
  EXPECT_LT(rig.fakes[0]->calls().size(), 10u);  // not every joiner partition was proved
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

TEST(JoinRunningBatch, CancellingTheFirstLeavesTheJoinerCompleting) {
  JoinRig rig;
  runtime::CancelFlag cancel_a, cancel_b;
  Script script;
  script.then = [&cancel_a] { cancel_a.request(); };
  JoinRun r = run_join(rig, 8, script, cancel_a, cancel_b);
  ASSERT_EQ(script.added, std::optional<bool>(true));
  ASSERT_EQ(r.returned.size(), 2u);
  ASSERT_FALSE(r.returned[0].ok());
  EXPECT_EQ(r.returned[0].error().kind, ErrorKind::kCancelled);
  ASSERT_TRUE(r.reported[0].has_value());  // answered (on_done) once nothing of it was in flight
  EXPECT_FALSE(r.reported[0]->ok());
  ASSERT_TRUE(r.returned[1].ok()) << r.returned[1].error().message;
  expect_valid(rig, r.returned[1].value(), 3, kSeedB);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

TEST(JoinRunningBatch, TheIntakeClosesWhenNothingIsLeftToOverlapAndRefusesLateMembers) {
  JoinRig rig;
  runtime::CancelFlag cancel_a, cancel_b;
  Script script;
  script.wait_for_close = true;
  // A run that waited for a joiner that never came would not return.
  JoinRun r = run_join(rig, 3, script, cancel_a, cancel_b);
  EXPECT_EQ(script.added, std::optional<bool>(false));
  ASSERT_EQ(r.returned.size(), 1u);
  ASSERT_TRUE(r.returned[0].ok()) << r.returned[0].error().message;
  expect_valid(rig, r.returned[0].value(), 3, kSeedA);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

}  // namespace
}  // namespace cuzk::engine
