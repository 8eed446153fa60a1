#include "runtime/task_set.hpp"

#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace cuzk::runtime {

TaskSet::~TaskSet() {
  if (!tasks_.empty()) {
    std::fprintf(stderr, "TaskSet destroyed with %zu running tasks (owner did not join)\n", tasks_.size());
    std::abort();
  }
}

bool TaskSet::spawn(asio::awaitable<void> task) {
  if (closed_) return false;
  auto it = tasks_.emplace(tasks_.end());
  asio::co_spawn(executor_, std::move(task),
                 asio::bind_cancellation_slot(it->cancel.slot(), [this, it](std::exception_ptr e) { on_done(it, e); }));
  return true;
}

void TaskSet::on_done(std::list<Entry>::iterator it, std::exception_ptr error) {
  tasks_.erase(it);
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::system_error& e) {
      if (e.code() != asio::error::operation_aborted) {
        std::fprintf(stderr, "task failed with an unexpected error: %s\n", e.what());
        std::abort();
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "task failed with an unexpected exception: %s\n", e.what());
      std::abort();
    }
  }
  if (tasks_.empty()) {
    for (asio::steady_timer* t : joiners_) t->cancel();
  }
}

void TaskSet::cancel_all() {
  for (Entry& e : tasks_) e.cancel.emit(asio::cancellation_type::terminal);
}

asio::awaitable<void> TaskSet::join() {
  while (!tasks_.empty()) {
    asio::steady_timer wake(executor_, asio::steady_timer::time_point::max());
    auto pos = joiners_.insert(joiners_.end(), &wake);
    asio::error_code ec;
    co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    joiners_.erase(pos);
  }
}

}  // namespace cuzk::runtime
