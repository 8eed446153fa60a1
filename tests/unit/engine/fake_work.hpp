// The one place the engine tests spend time: a fake's simulated work (a
// device step, a synthesis) occupies its worker thread for `d`, as the real
// work would, so that partitions overlap the way they do on a proving host.
// Nothing on the loop waits for time to pass: tests wait for what they check
// through notifications (testing::eventually) and move deadlines with a
// runtime::ManualLoopClock.
#pragma once

#include <chrono>
#include <thread>

namespace cuzk::engine::testing {

inline void simulate_work(std::chrono::milliseconds d) {
  if (d.count() > 0) std::this_thread::sleep_for(d);
}

}  // namespace cuzk::engine::testing
