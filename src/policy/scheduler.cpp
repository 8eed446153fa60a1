#include "policy/scheduler.hpp"

#include <algorithm>

namespace cuzk::policy {

std::string_view to_string(AdmitError e) {
  switch (e) {
    case AdmitError::kOverloaded: return "overloaded";
    case AdmitError::kDuplicate: return "duplicate";
  }
  return "?";
}

Scheduler::Scheduler(SchedulerConfig config, const Clock& clock) : config_(config), clock_(clock) {
  CUZK_POLICY_CHECK(config_.capacity > 0 && config_.reserved_for_urgent < config_.capacity,
                    "need 0 <= reserved_for_urgent (%zu) < capacity (%zu)", config_.reserved_for_urgent,
                    config_.capacity);
  CUZK_POLICY_CHECK(config_.max_batch_size >= 1, "max_batch_size 0");
  CUZK_POLICY_CHECK(!config_.aging_step || config_.aging_step->count() > 0, "aging step must be positive");
}

Priority Scheduler::effective_priority(Priority base, Millis enqueued_at) const {
  if (!config_.aging_step || base >= config_.aging_cap) return base;
  Millis waited = clock_.now() - enqueued_at;
  if (waited.count() <= 0) return base;
  long long steps = waited / *config_.aging_step;
  long long raised = static_cast<long long>(base) + steps;
  return static_cast<Priority>(std::min<long long>(raised, static_cast<long long>(config_.aging_cap)));
}

Expected<Ok, AdmitError> Scheduler::submit(SchedJob job) {
  if (where_.count(job.id) != 0) return unexpected(AdmitError::kDuplicate);
  std::size_t limit =
      job.priority >= Priority::kHigh ? config_.capacity : config_.capacity - config_.reserved_for_urgent;
  if (queued_jobs_ >= limit) return unexpected(AdmitError::kOverloaded);

  Millis now = clock_.now();
  // A more urgent arrival closes every batch of lower priority: it will run
  // first, and the batch should be ready right behind it, not held back.
  for (auto it = open_by_key_.begin(); it != open_by_key_.end();) {
    if (it->first.second < job.priority) {
      slots_.at(it->second).open = false;
      it = open_by_key_.erase(it);
    } else {
      ++it;
    }
  }

  ++queued_jobs_;
  ++per_priority_[static_cast<int>(job.priority)];
  if (job.batchable && config_.max_batch_size > 1) {
    BatchKey key{job.circuit_id, job.priority};
    if (auto it = open_by_key_.find(key); it != open_by_key_.end()) {
      Slot& s = slots_.at(it->second);
      s.unit.jobs.push_back(job.id);
      where_.emplace(job.id, it->second);
      if (s.unit.jobs.size() >= config_.max_batch_size) close(it->second);
      return Ok{};
    }
    Seq seq = next_seq_++;
    Slot s{Unit{{job.id}, job.priority, job.circuit_id, now}, true, now + config_.max_batch_wait};
    slots_.emplace(seq, std::move(s));
    open_by_key_.emplace(std::move(key), seq);
    where_.emplace(job.id, seq);
    return Ok{};
  }
  Seq seq = next_seq_++;
  slots_.emplace(seq, Slot{Unit{{job.id}, job.priority, std::move(job.circuit_id), now}, false, Millis{0}});
  where_.emplace(job.id, seq);
  return Ok{};
}

void Scheduler::close(Seq seq) {
  Slot& s = slots_.at(seq);
  if (!s.open) return;
  s.open = false;
  open_by_key_.erase(BatchKey{s.unit.circuit_id, s.unit.priority});
}

bool Scheduler::cancel(JobId id) {
  auto w = where_.find(id);
  if (w == where_.end()) return false;
  Seq seq = w->second;
  where_.erase(w);
  Slot& s = slots_.at(seq);
  std::erase(s.unit.jobs, id);
  --queued_jobs_;
  --per_priority_[static_cast<int>(s.unit.priority)];
  if (s.unit.jobs.empty()) {
    close(seq);
    slots_.erase(seq);
  }
  return true;
}

void Scheduler::poll() {
  Millis now = clock_.now();
  for (auto it = open_by_key_.begin(); it != open_by_key_.end();) {
    Slot& s = slots_.at(it->second);
    if (s.deadline <= now) {
      s.open = false;
      it = open_by_key_.erase(it);
    } else {
      ++it;
    }
  }
}

void Scheduler::flush_all() {
  for (auto& [key, seq] : open_by_key_) slots_.at(seq).open = false;
  open_by_key_.clear();
}

std::optional<Millis> Scheduler::next_deadline() const {
  std::optional<Millis> earliest;
  for (const auto& [key, seq] : open_by_key_) {
    Millis d = slots_.at(seq).deadline;
    if (!earliest || d < *earliest) earliest = d;
  }
  return earliest;
}

std::size_t Scheduler::runnable_units() const { return slots_.size() - open_by_key_.size(); }

std::optional<Scheduler::Seq> Scheduler::pick(const std::function<bool(const Unit&)>& preferred) const {
  // O(queued units), bounded by capacity; effective priorities move with the
  // clock when aging is on, so no ordered index is kept.
  std::optional<Seq> best, best_preferred;
  Priority top = Priority::kLow;
  for (const auto& [seq, s] : slots_) {
    if (s.open) continue;
    Priority p = effective_priority(s.unit.priority, s.unit.enqueued_at);
    bool pref = preferred && preferred(s.unit);
    if (!best || p > top) {
      top = p;
      best = seq;  // slots_ iterates in FIFO order: the first seen is the oldest
      best_preferred = pref ? std::optional<Seq>(seq) : std::nullopt;
    } else if (p == top && pref && !best_preferred) {
      best_preferred = seq;
    }
  }
  return best_preferred ? best_preferred : best;
}

Unit Scheduler::take(Seq seq) {
  auto node = slots_.extract(seq);
  Unit u = std::move(node.mapped().unit);
  for (JobId id : u.jobs) where_.erase(id);
  queued_jobs_ -= u.jobs.size();
  per_priority_[static_cast<int>(u.priority)] -= u.jobs.size();
  return u;
}

std::optional<Unit> Scheduler::next_for(std::uint32_t device, const ResidentFn& resident) {
  poll();
  std::function<bool(const Unit&)> pref;
  if (resident) pref = [&](const Unit& u) { return resident(u.circuit_id, device); };
  auto seq = pick(pref);
  if (!seq) return std::nullopt;
  return take(*seq);
}

std::optional<Scheduler::Assignment> Scheduler::assign(std::span<const WorkerSlot> idle, const ResidentFn& resident) {
  if (idle.empty()) return std::nullopt;
  poll();
  // The unit is chosen by priority and age alone; residency then only picks
  // which idle worker runs it, so several idle GPUs never reorder the queue.
  auto seq = pick({});
  if (!seq) return std::nullopt;
  const Unit& u = slots_.at(*seq).unit;
  WorkerSlot chosen = idle.front();
  if (resident) {
    for (const WorkerSlot& w : idle) {
      if (resident(u.circuit_id, w.device)) {
        chosen = w;
        break;
      }
    }
  }
  return Assignment{chosen, take(*seq)};
}

}  // namespace cuzk::policy
