// Batch collection: jobs of one parameter set that share one partition
// pipeline (demo jobs of one domain size, PoRep and SnapDeals jobs of one
// set), and the admission of joiners into a running batch.
#include <algorithm>
#include <string>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Batches: jobs of one set share parameters, R1cs, lanes and prover working
// sets (on a GPU the SRS stays resident and one member's host step overlaps
// the previous member's device step). Each member still gets its own
// verified proof, its own timings and its own outcome.

// A PoRep or SnapDeals job's parameter set from its request's header ("" when
// it names none readable), read once.
const std::string& Engine::batch_key_of(Job& j) {
  if (!j.batch_key) {
    j.batch_key = (j.request.kind == ProofKind::kPoRepC2 ? porep_srs_of_c1_json(j.request.input)
                                                         : filecoin_set_of_request(j.request.kind, j.request.input))
                      .value_or("");
  }
  return *j.batch_key;
}

bool Engine::batchable_with(Job& head, Job& other) {
  if (head.request.kind != other.request.kind) return false;
  switch (head.request.kind) {
    case ProofKind::kGroth16Demo:
      return other.request.demo_log_domain == head.request.demo_log_domain;
    case ProofKind::kPoRepC2:
    case ProofKind::kSnapDeals:
      return !batch_key_of(head).empty() && batch_key_of(other) == batch_key_of(head);
    default:
      return false;
  }
}

// A joiner in the batch metrics: the batch counted once it has two members
// (its initial ones then), each joiner as a batched job.
void Engine::count_joiner(bool& counted, std::size_t initial_members) {
  if (!counted) {
    ++batches_total_;
    batched_jobs_total_ += initial_members;
    counted = true;
  }
  ++batched_jobs_total_;
}

// Takes queue heads into a running batch while decide_join says so: each
// through `join` (its own preparation, then BatchDoor::add), with the
// intake held open meanwhile.
asio::awaitable<void> Engine::admit_joiners(RunningBatch shape, BatchDoor* door, JoinFn join) {
  // Re-decided whenever the queue or the run changes, never on a timer.
  runtime::Signal::Subscription on_queue = queue_changed_.subscribe([door] { door->wake(); });
  while (door->open() && !draining_ && !stopping_) {
    std::optional<QueueHead> head;
    JobPtr next;
    if (std::optional<JobId> id = queue_.front()) {
      next = jobs_.at(*id);
      const bool keyed = next->request.kind == ProofKind::kPoRepC2 || next->request.kind == ProofKind::kSnapDeals;
      head = QueueHead{next->request.kind, next->priority, keyed ? std::string_view(batch_key_of(*next)) : ""};
    }
    shape.unfinished = door->unfinished();
    const JoinDecision decision = decide_join(shape, head);
    if (decision == JoinDecision::kClose) {
      log_.info("batch closed to joiners", {{"set", std::string(shape.srs_key)},
                                            {"waiting_job", next->id},
                                            {"waiting_priority", std::string(to_string(next->priority))}});
      co_return;
    }
    if (decision == JoinDecision::kWait) {
      co_await door->wait();
      continue;
    }
    queue_.remove(next->id);
    co_await join(door->hold(), std::move(next));
  }
}

asio::awaitable<void> Engine::collect_batch(std::vector<JobPtr>& batch, std::size_t max_size,
                                            std::chrono::milliseconds max_wait) {
  const JobPtr head = batch.front();
  auto take = [this, &batch, &head, max_size] {
    if (batch.size() >= max_size) return;
    auto fits = [this, &head](JobId id) { return batchable_with(*head, *jobs_.at(id)); };
    for (JobId id : queue_.take_matching(head->priority, max_size - batch.size(), fits)) batch.push_back(jobs_.at(id));
  };
  take();
  // A CRITICAL job (a deadline) never waits for company.
  if (max_wait.count() <= 0 || head->priority == Priority::kCritical) co_return;
  const auto deadline = clock_->after(max_wait);
  // Waits only while nothing else is queued: a job this batch cannot take (a
  // higher priority, another circuit) flushes it, so the wait never holds
  // other work, and a more urgent job runs right after this batch (or on
  // another idle worker, woken here).
  runtime::Notifier arrived(loop_, clock_);
  runtime::Signal::Subscription on_queue = queue_changed_.subscribe([&arrived] { arrived.notify_all(); });
  std::uint64_t seen = submitted_total_;
  while (batch.size() < max_size && queue_.empty() && !draining_ && !stopping_) {
    if (clock_->now() >= deadline) break;
    co_await arrived.wait_until(deadline);
    const std::size_t had = batch.size();
    take();
    // A job arrived that this batch did not take (another circuit, a higher
    // priority, or one an idle worker took first): it ends the wait, even
    // when the queue is empty again by now.
    if (submitted_total_ != seen && batch.size() == had) break;
    seen = submitted_total_;
  }
  if (!queue_.empty()) work_available_.notify_one();  // what is left, to an idle worker
}

}  // namespace cuzk::engine
