// The event loop's contracts: run_on resumes on the loop thread with f's
// result or exception; a TaskSet cancels and awaits its tasks at shutdown and
// refuses new ones once closed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "runtime/event_loop.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::runtime {
namespace {

using namespace std::chrono_literals;

TEST(EventLoop, ProbeReportsAConsistentBackend) {
  IoUringProbe p = probe_io_uring();
  EXPECT_FALSE(p.detail.empty());
  EventLoop loop;  // must not throw in the default (epoll-fallback) build
  EXPECT_EQ(loop.files_on_io_uring(), p.available);
  EXPECT_EQ(loop.socket_backend(), compiled_socket_backend());
}

asio::awaitable<void> run_on_probe(EventLoop& loop, WorkerPool& pool, std::thread::id& f_thread,
                                   std::thread::id& resumed_thread, int& value, bool& caught) {
  value = co_await run_on(pool, [&f_thread] {
    f_thread = std::this_thread::get_id();
    return 41 + 1;
  });
  resumed_thread = std::this_thread::get_id();
  EXPECT_TRUE(loop.in_loop_thread());
  try {
    co_await run_on(pool, [] { throw std::runtime_error("boom"); });
  } catch (const std::runtime_error& e) {
    caught = std::string(e.what()) == "boom" && loop.in_loop_thread();
  }
}

TEST(RunOn, RunsOnPoolAndResumesOnLoop) {
  EventLoop loop;
  WorkerPool pool(2);
  TaskSet tasks(loop.executor());
  std::thread::id f_thread, resumed_thread;
  int value = 0;
  bool caught = false;
  ASSERT_TRUE(tasks.spawn(run_on_probe(loop, pool, f_thread, resumed_thread, value, caught)));
  loop.run();  // returns when the task is done (no other work)
  EXPECT_EQ(value, 42);
  EXPECT_EQ(resumed_thread, std::this_thread::get_id());
  EXPECT_NE(f_thread, std::this_thread::get_id());
  EXPECT_NE(f_thread, std::thread::id{});
  EXPECT_TRUE(caught);
  EXPECT_EQ(tasks.size(), 0u);
}

asio::awaitable<void> sleeper(asio::any_io_executor ex, std::atomic<int>& aborted) {
  asio::steady_timer t(ex, 1h);
  try {
    co_await t.async_wait(asio::use_awaitable);
  } catch (const std::system_error& e) {
    if (e.code() == asio::error::operation_aborted) ++aborted;
    throw;
  }
}

asio::awaitable<void> shutdown_sequence(TaskSet& tasks, bool& spawn_after_close, bool& joined) {
  // Let the sleepers start waiting first.
  asio::steady_timer t(co_await asio::this_coro::executor, 10ms);
  co_await t.async_wait(asio::use_awaitable);
  tasks.close();
  spawn_after_close = tasks.spawn([]() -> asio::awaitable<void> { co_return; }());
  tasks.cancel_all();
  co_await tasks.join();
  joined = tasks.size() == 0;
}

TEST(TaskSet, ShutdownCancelsAndAwaitsEveryTask) {
  EventLoop loop;
  TaskSet workers(loop.executor());
  TaskSet control(loop.executor());
  std::atomic<int> aborted = 0;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(workers.spawn(sleeper(loop.executor(), aborted)));
  bool spawn_after_close = true, joined = false;
  ASSERT_TRUE(control.spawn(shutdown_sequence(workers, spawn_after_close, joined)));
  auto t0 = std::chrono::steady_clock::now();
  loop.run();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // the 1 h timers did not run out
  EXPECT_EQ(aborted.load(), 3);
  EXPECT_FALSE(spawn_after_close);
  EXPECT_TRUE(joined);
}

TEST(TaskSet, JoinOnEmptySetCompletesImmediately) {
  EventLoop loop;
  TaskSet empty(loop.executor());
  TaskSet control(loop.executor());
  bool joined = false;
  control.spawn([](TaskSet& s, bool& j) -> asio::awaitable<void> {
    co_await s.join();
    j = true;
  }(empty, joined));
  loop.run();
  EXPECT_TRUE(joined);
}

}  // namespace
}  // namespace cuzk::runtime
