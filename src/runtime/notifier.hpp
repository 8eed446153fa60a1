// A wake-up point for coroutines on the loop (a condition variable without a
// mutex: everything runs on one thread). Waiters park on a timer set to their
// deadline; notify cancels the timers of the waiters it wakes.
//
// Deadlines are read on the LoopClock given (runtime/loop_clock.hpp; none:
// the steady clock), so a test's ManualLoopClock decides when they pass.
//
// Loop-thread only. The owner must outlive its waiters (owners that waiters
// can outlive are held by shared_ptr in the waiting coroutine).
#pragma once

#include <asio.hpp>

#include "runtime/loop_clock.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <list>

namespace cuzk::runtime {

class Notifier {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Notifier(asio::any_io_executor executor, LoopClock* clock = nullptr)
      : executor_(std::move(executor)), clock_(clock) {}
  ~Notifier() {
    if (!waiters_.empty()) {
      std::fprintf(stderr, "Notifier destroyed with %zu waiters\n", waiters_.size());
      std::abort();
    }
  }
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // True when woken by notify_*, false when the deadline passed or the
  // waiting coroutine was cancelled (its next co_await then throws).
  asio::awaitable<bool> wait_until(Clock::time_point deadline) {
    asio::steady_timer timer(executor_);
    if (clock_ != nullptr && deadline != Clock::time_point::max()) {
      clock_->arm(timer, deadline);
    } else {
      timer.expires_at(deadline);
    }
    auto it = waiters_.insert(waiters_.end(), Waiter{&timer, false});
    asio::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (clock_ != nullptr) clock_->disarm(timer);
    bool notified = it->notified;
    waiters_.erase(it);
    co_return notified;
  }
  asio::awaitable<bool> wait() { return wait_until(Clock::time_point::max()); }

  void notify_all() {
    for (Waiter& w : waiters_) wake(w);
  }
  void notify_one() {
    for (Waiter& w : waiters_) {
      if (!w.notified) {
        wake(w);
        return;
      }
    }
  }
  std::size_t waiters() const { return waiters_.size(); }

 private:
  struct Waiter {
    asio::steady_timer* timer;
    bool notified;
  };
  static void wake(Waiter& w) {
    w.notified = true;
    w.timer->cancel();
  }
  asio::any_io_executor executor_;
  LoopClock* clock_;
  std::list<Waiter> waiters_;
};

}  // namespace cuzk::runtime
