// Time as the policy components see it: an injected source of milliseconds.
//
// The policy code (memory budget, SRS residency, journal) never
// reads a system clock itself; it asks a Clock. main() wires a SteadyClock (or
// a SystemClock where a time must survive a restart, as the journal's
// retention does), and tests wire a FakeClock they move by hand.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace cuzk::policy {

// Milliseconds since the clock's epoch. Monotonic for SteadyClock and
// FakeClock; SystemClock may step (NTP), which retention tolerates.
using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Millis now() const = 0;
};

// std::chrono::steady_clock: epoch = an unspecified point (usually boot).
class SteadyClock final : public Clock {
 public:
  Millis now() const override {
    return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now().time_since_epoch());
  }
};

// Wall time, epoch = 1970-01-01 UTC: for timestamps written to disk.
class SystemClock final : public Clock {
 public:
  Millis now() const override {
    return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch());
  }
};

// Test clock: time moves only when the test says so.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Millis start = Millis{0}) : now_(start) {}
  Millis now() const override { return now_; }
  void advance(Millis d) {
    if (d.count() < 0) {
      std::fprintf(stderr, "FakeClock::advance: negative step %lld ms\n", static_cast<long long>(d.count()));
      std::abort();
    }
    now_ += d;
  }
  void set(Millis t) {
    if (t < now_) {
      std::fprintf(stderr, "FakeClock::set: %lld ms is before now (%lld ms)\n", static_cast<long long>(t.count()),
                   static_cast<long long>(now_.count()));
      std::abort();
    }
    now_ = t;
  }

 private:
  Millis now_;
};

}  // namespace cuzk::policy
