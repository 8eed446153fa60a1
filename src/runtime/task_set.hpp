// Structured concurrency for coroutines on the loop: a TaskSet owns every
// coroutine a component starts. Nothing is detached.
//
//   TaskSet tasks(loop.executor());
//   tasks.spawn(worker(...));        // refused (false) once closed
//   ...
//   tasks.close();                   // the gate: no new tasks
//   tasks.cancel_all();              // optional: terminal cancellation to each task
//   co_await tasks.join();           // every task has finished
//
// Cancellation is asio's per-operation cancellation: the task's current
// co_await of a cancellable operation (timer, socket) completes with
// operation_aborted, and with asio 1.22's default throw_if_cancelled every
// later co_await throws too, so a cancelled task unwinds. Work inside run_on()
// is not interrupted (see event_loop.hpp); cooperative flags handle that.
//
// A task ending with an exception other than operation_aborted is a bug in
// the task (tasks turn operating errors into data), so it aborts the process.
//
// Loop-thread only: spawn, close, cancel_all and join must be called from the
// executor's thread.
#pragma once

#include <asio.hpp>

#include <cstddef>
#include <list>
#include <memory>

namespace cuzk::runtime {

class TaskSet {
 public:
  explicit TaskSet(asio::any_io_executor executor) : executor_(std::move(executor)) {}
  // The owner must have joined (or never started) its tasks: destroying a
  // non-empty set would leave coroutines referring to a dead owner.
  ~TaskSet();
  TaskSet(const TaskSet&) = delete;
  TaskSet& operator=(const TaskSet&) = delete;

  // Starts `task` on the executor. Returns false (and drops the task
  // unstarted) once the set is closed.
  bool spawn(asio::awaitable<void> task);
  void close() { closed_ = true; }
  bool closed() const { return closed_; }
  void cancel_all();
  // Completes when the set is empty (immediately if it is).
  asio::awaitable<void> join();
  std::size_t size() const { return tasks_.size(); }

 private:
  struct Entry {
    asio::cancellation_signal cancel;
  };
  void on_done(std::list<Entry>::iterator it, std::exception_ptr error);

  asio::any_io_executor executor_;
  std::list<Entry> tasks_;  // list: stable addresses for the cancellation slots
  std::list<asio::steady_timer*> joiners_;
  bool closed_ = false;
};

}  // namespace cuzk::runtime
