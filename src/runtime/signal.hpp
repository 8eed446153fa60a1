// Callbacks run when something happens: the loop-side link between an event
// and the waiters that care (a job's cancel request wakes its pipeline run;
// memory given back wakes runs that want more). Loop-thread only.
//
// subscribe() returns a move-only Subscription; destroying it removes the
// callback. The Signal must outlive its subscriptions (destroying one with
// live subscriptions is a bug and aborts).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <utility>

namespace cuzk::runtime {

class Signal {
  using Callbacks = std::list<std::function<void()>>;

 public:
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& o) noexcept : signal_(std::exchange(o.signal_, nullptr)), it_(o.it_) {}
    Subscription& operator=(Subscription&& o) noexcept {
      if (this != &o) {
        reset();
        signal_ = std::exchange(o.signal_, nullptr);
        it_ = o.it_;
      }
      return *this;
    }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { reset(); }
    void reset() {
      if (signal_ == nullptr) return;
      signal_->callbacks_.erase(it_);
      signal_ = nullptr;
    }

   private:
    friend class Signal;
    Subscription(Signal* s, Callbacks::iterator it) : signal_(s), it_(it) {}
    Signal* signal_ = nullptr;
    Callbacks::iterator it_{};
  };

  Signal() = default;
  ~Signal() {
    if (!callbacks_.empty()) {
      std::fprintf(stderr, "Signal destroyed with %zu subscriptions\n", callbacks_.size());
      std::abort();
    }
  }
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  Subscription subscribe(std::function<void()> fn) {
    return Subscription(this, callbacks_.insert(callbacks_.end(), std::move(fn)));
  }
  // Runs every callback once. A callback may drop its own subscription (the
  // next one is found before it runs), not another's.
  void emit() {
    for (auto it = callbacks_.begin(); it != callbacks_.end();) {
      auto next = std::next(it);
      (*it)();
      it = next;
    }
  }
  std::size_t subscribers() const { return callbacks_.size(); }

 private:
  Callbacks callbacks_;
};

}  // namespace cuzk::runtime
