// Pure scheduling policy: the bounded priority queue, admission, and the job
// table's bookkeeping (request-id index, result retention). No I/O, no clock
// reads: time enters as arguments, so tests drive it deterministically.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/types.hpp"

namespace cuzk::engine {

using Clock = std::chrono::steady_clock;

// Admission: the queue holds at most `capacity` jobs; the last
// `reserved_for_urgent` slots only admit HIGH and CRITICAL work, so a burst of
// sealing jobs cannot lock out a PoSt that has a deadline.
struct AdmissionPolicy {
  std::size_t capacity = 64;
  std::size_t reserved_for_urgent = 4;  // must be < capacity
  // Whether a job of `p` may enter a queue currently holding `queued` jobs.
  bool admits(Priority p, std::size_t queued) const {
    std::size_t limit = (p >= Priority::kHigh) ? capacity : capacity - reserved_for_urgent;
    return queued < limit;
  }
};

// Bounded priority queue: CRITICAL > HIGH > NORMAL > LOW, FIFO within a
// priority (by admission sequence, not by time: two jobs submitted in the same
// clock tick keep their order).
class JobQueue {
 public:
  explicit JobQueue(AdmissionPolicy policy);

  // False (and nothing queued) when admission refuses.
  bool push(JobId id, Priority p);
  // Queues a job recovered from the journal without asking admission: it was
  // admitted before the restart (the jobs that were running come back to the
  // queue too, and the capacity may have been lowered since).
  void restore(JobId id, Priority p);
  // The next job to run, removed from the queue.
  std::optional<JobId> pop();
  // Removes a queued job (cancel); false if it is not queued.
  bool remove(JobId id);
  // Batch collection: removes and returns, in service order, up to `max`
  // queued jobs of priority exactly `p` for which `fits(id)` holds. Only the
  // batch head's own priority joins it, so a batch never lifts a lower-priority
  // job over work queued before it.
  std::vector<JobId> take_matching(Priority p, std::size_t max, const std::function<bool(JobId)>& fits);
  // The highest priority with a queued job; nullopt when empty.
  std::optional<Priority> top_priority() const;
  // The job pop() would return, left queued; nullopt when empty.
  std::optional<JobId> front() const;

  bool empty() const { return order_.empty(); }
  std::size_t size() const { return order_.size(); }
  std::size_t size(Priority p) const { return per_priority_[static_cast<int>(p)]; }
  const AdmissionPolicy& policy() const { return policy_; }
  // SIGHUP reload: later admissions use `policy` (same precondition as the
  // constructor); jobs already queued stay, even above a lowered capacity.
  void set_policy(AdmissionPolicy policy);
  // 0-based rank in service order, nullopt if not queued.
  std::optional<std::size_t> position(JobId id) const;
  // Ids in service order.
  std::vector<JobId> snapshot() const;

 private:
  struct Key {
    int neg_priority;  // negated so that std::set's ascending order serves CRITICAL first
    std::uint64_t seq;
    JobId id;
    auto operator<=>(const Key&) const = default;
  };
  AdmissionPolicy policy_;
  std::set<Key> order_;
  std::unordered_map<JobId, Key> index_;
  std::size_t per_priority_[kNumPriorities] = {};
  std::uint64_t next_seq_ = 0;
};

// Joining a running batch (Engine::admit_partitioned_joiners): whether the
// job at the head of the queue becomes a member of a batch pipeline that is
// already proving. Joining keeps the GPU busy across back-to-back jobs: a job
// queued a few ms after the worker popped the previous one otherwise waited
// for that job's whole pipeline, then left the GPU idle ~15 s while its first
// wave synthesized (32 GiB, H200 host: 31.2 s of pipeline for 10 partitions
// against 15.4 s of GPU work).
enum class JoinDecision : std::uint8_t {
  kJoin,   // take the head now
  kWait,   // not now (nothing queued, the batch is full, the head is less urgent): ask again later
  kClose,  // admit nothing more: the head is work the batch cannot take, and it must not wait behind joiners
};

struct RunningBatch {
  std::string_view srs_key;  // the batch's parameter set ("porep-32GiB", "snap-deals-32GiB")
  Priority priority = Priority::kNormal;
  std::size_t unfinished = 0;            // members not yet answered, joiners being prepared included
  std::size_t max_members = 1;           // porep_batch_max_jobs / snap_batch_max_jobs
  ProofKind kind = ProofKind::kPoRepC2;  // the batch's jobs' kind (PoRep C2 or SnapDeals)
};

struct QueueHead {
  ProofKind kind = ProofKind::kGroth16Demo;
  Priority priority = Priority::kNormal;
  std::string_view srs_key;  // a PoRep / SnapDeals job's parameter set; "" when its request names none readable
};

// Only the head is considered, so a joiner never overtakes a job queued
// before it. The head joins when it is a job of the batch's kind, parameter
// set and priority (the collector's rule: a batch never lifts a job over
// work queued before it) and fewer than max_members members are unfinished
// (finished members free their place). A head of the batch's priority or
// higher that cannot join closes the batch: joiners would otherwise keep it
// waiting forever. A less urgent head waits (it is served after every job
// of the batch's priority anyway).
JoinDecision decide_join(const RunningBatch& batch, const std::optional<QueueHead>& head);

// Job bookkeeping: ids, the request-id index (idempotency), and retention of
// finished jobs for `result_ttl`. Holds no job payload; the engine keeps that
// keyed by the same id.
class JobBook {
 public:
  explicit JobBook(std::chrono::milliseconds result_ttl) : result_ttl_(result_ttl) {}

  struct Lookup {
    JobId id;
    bool existing;  // true: the request id was already known
  };
  // The job for `request_id`: the existing one, or a new id registered under
  // it. An empty request id always creates a job (named "job-<id>").
  Lookup register_request(const std::string& request_id);
  // The request id a job was registered with.
  const std::string& request_id(JobId id) const { return jobs_.at(id).request_id; }
  std::optional<JobId> find(const std::string& request_id) const;
  bool contains(JobId id) const { return jobs_.count(id) != 0; }
  // Re-registers a job recovered from the journal under its original id and
  // request id (empty: the generated name); later ids are above it.
  void restore(JobId id, const std::string& request_id);
  // Drops a job registered for a submission that then failed (its journal
  // write): its request id is free again; its id is not reused.
  void forget(JobId id);
  // The id the next new job gets.
  JobId next_id() const { return next_id_; }
  // Issues no id below `id` (ids are never reused across restarts).
  void skip_ids_below(JobId id) { next_id_ = std::max(next_id_, id); }

  // Records that a job finished at `now`; it expires at now + result_ttl.
  void finished(JobId id, Clock::time_point now);
  // Forgets jobs whose retention ended at or before `now`; returns their ids.
  std::vector<JobId> expire(Clock::time_point now);
  // When the next job expires (nullopt: nothing finished).
  std::optional<Clock::time_point> next_expiry() const;
  std::size_t size() const { return jobs_.size(); }

 private:
  struct Entry {
    std::string request_id;
    std::optional<Clock::time_point> expires_at;
  };
  std::chrono::milliseconds result_ttl_;
  JobId next_id_ = 1;
  std::map<JobId, Entry> jobs_;
  std::unordered_map<std::string, JobId> by_request_;
  std::multimap<Clock::time_point, JobId> expiry_;
};

// Synthesis lanes of a Filecoin partition pipeline: `configured` when set
// ([porep] synthesis_concurrency), else `pool_lanes` (the synthesis pool's,
// from the cores), at most two per GPU plus two when there are GPUs. A 32 GiB
// PoRep partition's witness takes 1.1-1.8 s on one core (16 at once on 16
// cores, bench/RESULTS.md) and its proof 1.1 s of GPU, so four lanes stay
// ahead of one GPU with room; each lane's partition holds a witness (4.2 GB)
// until proved, and eight lanes on a 16-core host kept nine in flight (~43 GB).
inline std::size_t pipeline_lanes(std::size_t configured, std::size_t pool_lanes, std::size_t gpus) {
  if (configured != 0) return configured;
  const std::size_t lanes = std::max<std::size_t>(1, pool_lanes);
  return gpus == 0 ? lanes : std::min<std::size_t>(lanes, 2 + 2 * gpus);
}

}  // namespace cuzk::engine
