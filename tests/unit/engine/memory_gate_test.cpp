// Waits for memory end by notification, not by polling: a cancel request
// or memory given back completes the wait in the loop's next pass over its
// ready handlers (io_context::poll runs no timer that has not expired, so a
// wait that only polled its flag would still be asleep).
#include <gtest/gtest.h>

#include <optional>

#include "engine/pipeline.hpp"
#include "runtime/cancel_flag.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/task_set.hpp"
#include "unit/engine/pipeline_rig.hpp"

namespace cuzk::engine {
namespace {

asio::awaitable<void> reserve_into(MemoryGate& gate, std::uint64_t bytes, const runtime::CancelFlag& cancel,
                                   std::optional<Result<policy::Reservation>>& out) {
  out.emplace(co_await gate.reserve(bytes, Priority::kNormal, cancel));
}

// A 100-byte budget held whole, and a wait for 10 more bytes parked on it.
struct ParkedWait {
  ParkedWait() {
    held = gate.try_reserve(100, Priority::kNormal);
    EXPECT_TRUE(held);
    tasks.spawn(reserve_into(gate, 10, cancel, out));
    loop.io().poll();
    EXPECT_FALSE(out) << "the wait ended with the budget full";
  }
  runtime::EventLoop loop;
  MemoryGate gate{loop.executor(), 100};
  std::optional<policy::Reservation> held;
  runtime::CancelFlag cancel;
  std::optional<Result<policy::Reservation>> out;
  runtime::TaskSet tasks{loop.executor()};
};

TEST(MemoryGate, ACancelRequestEndsAWaitAtOnce) {
  ParkedWait w;
  w.cancel.request();
  w.loop.io().poll();
  ASSERT_TRUE(w.out);
  ASSERT_FALSE(w.out->ok());
  EXPECT_EQ(w.out->error().kind, ErrorKind::kCancelled);
  EXPECT_EQ(w.gate.budget().waiting(), 0u);
  EXPECT_EQ(w.tasks.size(), 0u);
}

TEST(MemoryGate, MemoryGivenBackEndsAWaitAtOnce) {
  ParkedWait w;
  int freed = 0;
  runtime::Signal::Subscription on_freed = w.gate.on_freed([&freed] { ++freed; });
  w.held->release();
  EXPECT_EQ(freed, 1);
  w.loop.io().poll();
  ASSERT_TRUE(w.out);
  ASSERT_TRUE(w.out->ok());
  EXPECT_EQ(w.out->value().bytes(), 10u);
  EXPECT_EQ(w.tasks.size(), 0u);
}

// A pipeline run waiting for its first prover working set ends on its job's
// cancel request the same way.
TEST(PartitionPipeline, ACancelEndsAMemoryWaitAtOnce) {
  testing::PipelineRig rig("cuzk-gate-", {.budget_bytes = 64ull << 20});
  rig.fakes.at(0)->host_bytes = 1 << 20;  // the working set the run waits for
  std::optional<policy::Reservation> held = rig.memory.try_reserve(64ull << 20, Priority::kNormal);
  ASSERT_TRUE(held);
  PartitionPlan plan = rig.demo_plan(2, 1, 2);
  plan.synthesize = [](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> {
    return testing::PipelineRig::demo_witness(k);
  };
  runtime::CancelFlag cancel;
  std::optional<Result<PipelineOutcome>> out;
  runtime::TaskSet tasks(rig.loop.executor());
  tasks.spawn([](testing::PipelineRig& r, const PartitionPlan& p, const runtime::CancelFlag& c,
                 std::optional<Result<PipelineOutcome>>& o) -> asio::awaitable<void> {
    o.emplace(co_await run_partition_pipeline(r.deps(), p, c));
  }(rig, plan, cancel, out));
  for (int i = 0; i < 3; ++i) rig.loop.io().poll();
  EXPECT_FALSE(out) << "the run did not wait for memory";
  EXPECT_EQ(rig.memory.budget().waiting(), 1u);
  cancel.request();
  for (int i = 0; i < 3 && !out; ++i) rig.loop.io().poll();
  ASSERT_TRUE(out);
  ASSERT_FALSE(out->ok());
  EXPECT_EQ(out->error().kind, ErrorKind::kCancelled);
  EXPECT_EQ(tasks.size(), 0u);
}

}  // namespace
}  // namespace cuzk::engine
