// The last job events of the daemon, kept for clients that start watching
// after the fact (cuzk.capnp recentEvents; `cuzkctl watch --once`). A bounded
// ring: the oldest event goes when a new one comes and the ring is full.
// Used on the event loop only (engine subscribers run there), so unlocked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "engine/views.hpp"

namespace cuzk::rpc {

struct KeptEvent {
  engine::JobEvent event;
  std::uint64_t unix_ms = 0;  // wall clock when the event was emitted
};

class RecentEvents {
 public:
  // 64 rows: a few jobs' whole lives (about six events each), more than a
  // watch frame shows (12 by default).
  static constexpr std::size_t kDefaultCapacity = 64;

  explicit RecentEvents(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  void push(const engine::JobEvent& e, std::uint64_t unix_ms) {
    ++total_;
    if (capacity_ == 0) return;
    if (events_.size() == capacity_) events_.pop_front();
    events_.push_back({e, unix_ms});
  }
  const std::deque<KeptEvent>& events() const { return events_; }  // oldest first
  std::uint64_t total() const { return total_; }                   // every event pushed

 private:
  std::size_t capacity_;
  std::deque<KeptEvent> events_;
  std::uint64_t total_ = 0;
};

}  // namespace cuzk::rpc
