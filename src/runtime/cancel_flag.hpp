// A job's cancel request: set once on the loop, read anywhere (synthesis
// threads check it between steps), and announced on the loop to whoever
// subscribed (a pipeline run or a memory wait wakes at once instead of
// polling the flag).
#pragma once

#include <atomic>
#include <functional>

#include "runtime/signal.hpp"

namespace cuzk::runtime {

class CancelFlag {
 public:
  CancelFlag() = default;
  CancelFlag(const CancelFlag&) = delete;
  CancelFlag& operator=(const CancelFlag&) = delete;

  bool requested() const { return flag_.load(std::memory_order_acquire); }
  // The flag itself, for threads off the loop.
  const std::atomic<bool>& flag() const { return flag_; }
  // Loop thread. Sets the flag and runs the subscribers, the first time only.
  void request() {
    if (flag_.exchange(true, std::memory_order_acq_rel)) return;
    requested_.emit();
  }
  // Loop thread. `fn` runs when request() is first called (not when it already was).
  Signal::Subscription on_request(std::function<void()> fn) const { return requested_.subscribe(std::move(fn)); }

 private:
  std::atomic<bool> flag_{false};
  mutable Signal requested_;
};

}  // namespace cuzk::runtime
