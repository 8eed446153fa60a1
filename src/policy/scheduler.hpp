// Pure scheduling decisions for GPU work: admission into a bounded priority
// queue, a batch collector for same-circuit jobs, and the choice of the next
// unit (one job or a batch) for a free GPU worker.
//
// Order: by effective priority (CRITICAL > HIGH > NORMAL > LOW), FIFO within
// a priority by admission order. With aging on, a unit's effective priority
// rises one level per `aging_step` waited, up to `aging_cap` (HIGH by
// default: aged sealing work never competes with a WinningPoSt, which has a
// ~25 s deadline, but a long LOW backlog does not starve forever).
//
// Batching (max_batch_size > 1, for jobs marked batchable): jobs of one
// circuit and one priority collect in an open batch, which becomes runnable
// when it is full, when max_batch_wait has passed since its first job, when a
// job of a higher priority arrives (nothing waits on a batch that a more
// urgent job will overtake anyway), or on flush_all() (drain). Open batches
// are not runnable: the loop arms a timer for next_deadline() and calls poll().
//
// Placement: among the runnable units of the top effective priority, a worker
// takes the oldest one whose SRS is resident on its device, else the oldest;
// priority always beats residency.
//
// No threads, no I/O: the loop calls it; time comes from the injected Clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/types.hpp"
#include "policy/clock.hpp"
#include "policy/expected.hpp"

namespace cuzk::policy {

using engine::JobId;
using engine::Priority;
using engine::kNumPriorities;

struct SchedJob {
  JobId id = 0;
  Priority priority = Priority::kNormal;
  std::string circuit_id;  // same circuit = same SRS; batches never mix circuits
  bool batchable = false;  // PoRep/Snap may batch; PoSt never does
};

struct SchedulerConfig {
  std::size_t capacity = 64;            // jobs admitted and not yet dispatched
  std::size_t reserved_for_urgent = 4;  // last slots admit only HIGH and CRITICAL; < capacity
  std::size_t max_batch_size = 1;       // 1: no batching
  Millis max_batch_wait{10'000};
  std::optional<Millis> aging_step;  // nullopt: no aging
  Priority aging_cap = Priority::kHigh;
};

enum class AdmitError : std::uint8_t {
  kOverloaded,  // the queue is full for this priority: retry later
  kDuplicate,   // the job id is already queued (a bug in the caller, reported not aborted)
};
std::string_view to_string(AdmitError e);

// What one worker runs: a single job, or a batch of jobs of one circuit.
struct Unit {
  std::vector<JobId> jobs;  // in admission order
  Priority priority = Priority::kNormal;
  std::string circuit_id;
  Millis enqueued_at{0};  // admission of the first job
};

struct WorkerSlot {
  std::uint32_t worker_id = 0;
  std::uint32_t device = 0;
};

// Whether the SRS of `circuit_id` is resident on `device` (SrsManager answers).
using ResidentFn = std::function<bool(std::string_view circuit_id, std::uint32_t device)>;

class Scheduler {
 public:
  Scheduler(SchedulerConfig config, const Clock& clock);

  Expected<Ok, AdmitError> submit(SchedJob job);
  // Removes a job that is not dispatched yet; false if it is not here.
  bool cancel(JobId id);
  // Closes open batches whose wait is over. next_for/assign call it too.
  void poll();
  // Closes every open batch (drain, or nothing else to do at shutdown).
  void flush_all();

  // The unit a free worker on `device` should run next, removed from the queue.
  std::optional<Unit> next_for(std::uint32_t device, const ResidentFn& resident);
  // The next unit and which of the idle workers should run it: the first idle
  // worker whose device has the SRS resident, else the first idle worker.
  struct Assignment {
    WorkerSlot worker;
    Unit unit;
  };
  std::optional<Assignment> assign(std::span<const WorkerSlot> idle, const ResidentFn& resident);

  // When the earliest open batch closes by time (nullopt: none open).
  std::optional<Millis> next_deadline() const;

  std::size_t size() const { return queued_jobs_; }
  std::size_t size(Priority p) const { return per_priority_[static_cast<int>(p)]; }
  std::size_t runnable_units() const;
  std::size_t open_batches() const { return open_by_key_.size(); }
  bool contains(JobId id) const { return where_.count(id) != 0; }
  // Effective priority of a unit enqueued at `enqueued_at` (exposed for status).
  Priority effective_priority(Priority base, Millis enqueued_at) const;

 private:
  struct Slot {
    Unit unit;
    bool open = false;   // an open batch, still collecting
    Millis deadline{0};  // open batches: when they close by time
  };
  using Seq = std::uint64_t;
  using BatchKey = std::pair<std::string, Priority>;

  void close(Seq seq);
  // The runnable unit to take next: top effective priority, then the oldest
  // resident on `device` (if given), then the oldest.
  std::optional<Seq> pick(const std::function<bool(const Unit&)>& preferred) const;
  Unit take(Seq seq);

  SchedulerConfig config_;
  const Clock& clock_;
  std::map<Seq, Slot> slots_;  // by admission of the first job: FIFO
  std::map<BatchKey, Seq> open_by_key_;
  std::unordered_map<JobId, Seq> where_;
  std::size_t queued_jobs_ = 0;
  std::size_t per_priority_[kNumPriorities] = {};
  Seq next_seq_ = 0;
};

}  // namespace cuzk::policy
