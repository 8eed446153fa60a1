// runtime::ManualLoopClock driving a Notifier's deadlines: a deadline passes
// when the test advances the clock past it, never by itself.
#include <gtest/gtest.h>

#include <optional>

#include "runtime/event_loop.hpp"
#include "runtime/loop_clock.hpp"
#include "runtime/notifier.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::runtime {
namespace {

using namespace std::chrono_literals;

asio::awaitable<void> wait_into(Notifier& n, LoopClock::time_point deadline, std::optional<bool>& out) {
  out = co_await n.wait_until(deadline);
}

TEST(ManualLoopClock, ADeadlinePassesOnlyWhenTheClockIsAdvancedPastIt) {
  EventLoop loop;
  ManualLoopClock clock;
  Notifier n(loop.executor(), &clock);
  TaskSet tasks(loop.executor());
  std::optional<bool> out;
  tasks.spawn(wait_into(n, clock.after(10s), out));
  loop.io().poll();
  EXPECT_FALSE(out);
  EXPECT_EQ(clock.armed(), 1u);
  clock.advance(9s);
  loop.io().poll();
  EXPECT_FALSE(out);
  clock.advance(1s);
  loop.io().poll();
  ASSERT_TRUE(out);
  EXPECT_FALSE(*out);  // timed out, not notified
  EXPECT_EQ(clock.armed(), 0u);
  EXPECT_EQ(n.waiters(), 0u);
}

TEST(ManualLoopClock, APassedDeadlineTimesOutAtOnceAndANotifyDisarms) {
  EventLoop loop;
  ManualLoopClock clock;
  Notifier n(loop.executor(), &clock);
  TaskSet tasks(loop.executor());
  std::optional<bool> passed, notified;
  tasks.spawn(wait_into(n, clock.now(), passed));
  loop.io().poll();
  ASSERT_TRUE(passed);
  EXPECT_FALSE(*passed);
  loop.io().restart();  // it ran out of work
  tasks.spawn(wait_into(n, clock.after(1h), notified));
  loop.io().poll();
  EXPECT_EQ(clock.armed(), 1u);
  n.notify_all();
  loop.io().poll();
  ASSERT_TRUE(notified);
  EXPECT_TRUE(*notified);
  EXPECT_EQ(clock.armed(), 0u);  // the woken waiter's deadline is gone
}

TEST(LoopClock, AfterSaturatesForTimeoutsOfYears) {
  ManualLoopClock clock;
  EXPECT_EQ(clock.after(std::chrono::milliseconds::max()), LoopClock::time_point::max());
  EXPECT_EQ(clock.after(std::chrono::milliseconds(10'000'000'000'000)), LoopClock::time_point::max());
  EXPECT_EQ(clock.after(0ms), clock.now());
  EXPECT_EQ(clock.after(5ms), clock.now() + 5ms);
}

}  // namespace
}  // namespace cuzk::runtime
