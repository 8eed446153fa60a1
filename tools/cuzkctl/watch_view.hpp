// The frame of `cuzkctl watch`: a pure function from a daemon status and the
// recent job events to the lines of text a terminal shows. No I/O, no clock:
// whatever time a frame mentions is in its input, so tests render exact
// frames from hand-made statuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "engine/views.hpp"
#include "rpc/client.hpp"

namespace cuzkctl {

// One job event as the watch stream delivered it, stamped on arrival.
struct ReceivedEvent {
  cuzk::engine::JobEvent event;
  std::uint64_t received_unix_ms = 0;  // wall clock at arrival (rendered as UTC HH:MM:SS)
};

// The last `capacity` events, oldest first; older ones are dropped and
// counted, so a frame can say how many it no longer shows.
class EventRing {
 public:
  explicit EventRing(std::size_t capacity) : capacity_(capacity) {}
  void push(ReceivedEvent e);
  const std::deque<ReceivedEvent>& events() const { return events_; }
  std::uint64_t total() const { return total_; }  // every event ever pushed
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::deque<ReceivedEvent> events_;
  std::uint64_t total_ = 0;
};

struct WatchInput {
  std::string addr;  // shown in the title line
  cuzk::rpc::ClientStatus status;
  const EventRing* events = nullptr;  // may be null: no events section
  std::uint64_t now_unix_ms = 0;      // title clock; 0: no clock shown
};

struct WatchLayout {
  std::size_t width = 0;          // truncate every line to this many columns (0: no limit)
  std::size_t max_job_rows = 12;  // the jobs table shows unfinished jobs first, then the newest finished
};

// The frame, one string per line, no trailing newlines, no escape codes.
std::vector<std::string> render_watch(const WatchInput& in, const WatchLayout& layout);

// Stage progress of a job: (phases done, phases in all). Every kind's raw
// stages fold into five phases: queued, setup (params, c1, inputs),
// synthesis (memory, synthesis, check), prove (queued for device, device
// wait, prove), verify; "partition K: " prefixes are ignored. {0, 0} for a
// stage the view does not know.
struct StageProgress {
  unsigned done = 0, total = 0;
};
StageProgress stage_progress(cuzk::engine::JobState state, const std::string& stage);

// `cuzkctl status`'s line for one proving back end (no newline): what it
// does, its counters, device memory, the R1CS matrices kept on it and its
// MSM scratch arena against the arena's limit.
std::string status_device_line(const cuzk::engine::DeviceWorkerView& d);

// One parameter file being read (no newline):
// "loading v28-...params: 45% read, 40% decoded of 47.4 GiB, 41.2 s".
std::string loading_line(const cuzk::engine::ParamsLoadView& l);

// Human sizes and durations used in the frame: "1.5 GiB", "812 ms", "3.2 s", "4m05s", "2h03m".
std::string format_bytes(std::uint64_t bytes);
std::string format_duration_ms(std::uint64_t ms);

}  // namespace cuzkctl
