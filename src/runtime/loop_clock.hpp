// Time as the loop's decisions see it: deadlines of awaits and drains,
// batch collection windows, result expiry, the SRS idle sweep. main() wires
// a SteadyLoopClock; tests wire a ManualLoopClock and move time by hand, so
// that nothing they check depends on how fast the machine runs.
//
// Durations of work (a synthesis, a load, a prove) are measurements, not
// decisions: util::Stopwatch measures them on the monotonic clock.
//
// A Notifier given a clock arms its waiters' timers through it: with a
// ManualLoopClock a deadline passes only when the test advances past it.
// Loop-thread only.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace cuzk::runtime {

class LoopClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~LoopClock() = default;
  virtual time_point now() const = 0;
  // Makes `timer` expire at `deadline` of this clock; disarm() before the
  // timer goes away.
  virtual void arm(asio::steady_timer& timer, time_point deadline) = 0;
  virtual void disarm(asio::steady_timer& timer) = 0;
  // now() + d, saturating at time_point::max() (a timeout of years).
  time_point after(std::chrono::milliseconds d) const {
    const time_point t = now();
    if (d.count() <= 0) return t;
    if (d >= std::chrono::duration_cast<std::chrono::milliseconds>(time_point::max() - t)) return time_point::max();
    return t + d;
  }
};

class SteadyLoopClock final : public LoopClock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  void arm(asio::steady_timer& timer, time_point deadline) override { timer.expires_at(deadline); }
  void disarm(asio::steady_timer&) override {}
};

// Starts at an arbitrary fixed point; advance() fires (cancels) every armed
// timer whose deadline it reaches, in deadline order.
class ManualLoopClock final : public LoopClock {
 public:
  time_point now() const override { return now_; }
  void arm(asio::steady_timer& timer, time_point deadline) override {
    if (deadline <= now_) {
      timer.expires_at(time_point::min());  // already passed: fires at once
      return;
    }
    timer.expires_at(time_point::max());
    armed_.emplace(deadline, &timer);
  }
  void disarm(asio::steady_timer& timer) override {
    for (auto it = armed_.begin(); it != armed_.end(); ++it) {
      if (it->second == &timer) {
        armed_.erase(it);
        return;
      }
    }
  }
  void advance(std::chrono::milliseconds d) {
    if (d.count() < 0) {
      std::fprintf(stderr, "ManualLoopClock::advance: negative step %lld ms\n", static_cast<long long>(d.count()));
      std::abort();
    }
    now_ += d;
    while (!armed_.empty() && armed_.begin()->first <= now_) {
      asio::steady_timer* t = armed_.begin()->second;
      armed_.erase(armed_.begin());
      t->cancel();
    }
  }
  // Timers armed and not yet reached (a test can wait for a waiter to park).
  std::size_t armed() const { return armed_.size(); }

 private:
  time_point now_ = time_point(std::chrono::hours(24));
  std::multimap<time_point, asio::steady_timer*> armed_;
};

}  // namespace cuzk::runtime
