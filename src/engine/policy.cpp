#include "engine/policy.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace cuzk::engine {

JobQueue::JobQueue(AdmissionPolicy policy) : policy_(policy) {
  if (policy_.capacity == 0 || policy_.reserved_for_urgent >= policy_.capacity) {
    std::fprintf(stderr, "AdmissionPolicy: need 0 <= reserved_for_urgent (%zu) < capacity (%zu)\n",
                 policy_.reserved_for_urgent, policy_.capacity);
    std::abort();
  }
}

void JobQueue::set_policy(AdmissionPolicy policy) {
  JobQueue check(policy);  // aborts on an inconsistent policy, like the constructor
  policy_ = policy;
}

bool JobQueue::push(JobId id, Priority p) {
  if (!policy_.admits(p, order_.size())) return false;
  restore(id, p);
  return true;
}

void JobQueue::restore(JobId id, Priority p) {
  if (index_.count(id) != 0) {
    std::fprintf(stderr, "JobQueue: job %llu queued twice\n", static_cast<unsigned long long>(id));
    std::abort();
  }
  Key k{-static_cast<int>(p), next_seq_++, id};
  order_.insert(k);
  index_.emplace(id, k);
  ++per_priority_[static_cast<int>(p)];
}

std::optional<JobId> JobQueue::pop() {
  if (order_.empty()) return std::nullopt;
  Key k = *order_.begin();
  order_.erase(order_.begin());
  index_.erase(k.id);
  --per_priority_[-k.neg_priority];
  return k.id;
}

bool JobQueue::remove(JobId id) {
  auto it = index_.find(id);
  if (it == index_.end()) return false;
  order_.erase(it->second);
  --per_priority_[-it->second.neg_priority];
  index_.erase(it);
  return true;
}

std::vector<JobId> JobQueue::take_matching(Priority p, std::size_t max, const std::function<bool(JobId)>& fits) {
  std::vector<JobId> taken;
  // Keys of one priority are contiguous in order_ (sorted by negated priority, then sequence).
  auto it = order_.lower_bound(Key{-static_cast<int>(p), 0, 0});
  while (taken.size() < max && it != order_.end() && it->neg_priority == -static_cast<int>(p)) {
    if (!fits(it->id)) {
      ++it;
      continue;
    }
    taken.push_back(it->id);
    index_.erase(it->id);
    --per_priority_[static_cast<int>(p)];
    it = order_.erase(it);
  }
  return taken;
}

std::optional<Priority> JobQueue::top_priority() const {
  if (order_.empty()) return std::nullopt;
  return static_cast<Priority>(-order_.begin()->neg_priority);
}

std::optional<JobId> JobQueue::front() const {
  if (order_.empty()) return std::nullopt;
  return order_.begin()->id;
}

JoinDecision decide_join(const RunningBatch& batch, const std::optional<QueueHead>& head) {
  if (!head) return JoinDecision::kWait;
  if (head->priority < batch.priority) return JoinDecision::kWait;
  const bool joinable = head->priority == batch.priority && head->kind == batch.kind && !head->srs_key.empty() &&
                        head->srs_key == batch.srs_key;
  if (!joinable) return JoinDecision::kClose;
  return batch.unfinished < batch.max_members ? JoinDecision::kJoin : JoinDecision::kWait;
}

std::optional<std::size_t> JobQueue::position(JobId id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  // O(queue length); the queue is bounded by policy_.capacity.
  return static_cast<std::size_t>(std::distance(order_.begin(), order_.find(it->second)));
}

std::vector<JobId> JobQueue::snapshot() const {
  std::vector<JobId> ids;
  ids.reserve(order_.size());
  for (const Key& k : order_) ids.push_back(k.id);
  return ids;
}

JobBook::Lookup JobBook::register_request(const std::string& request_id) {
  if (!request_id.empty()) {
    if (auto it = by_request_.find(request_id); it != by_request_.end()) return {it->second, true};
  }
  JobId id = next_id_++;
  std::string name = request_id.empty() ? "job-" + std::to_string(id) : request_id;
  jobs_.emplace(id, Entry{name, std::nullopt});
  // A generated name could collide with a client's id "job-7"; the client's
  // then simply maps to this job, which is the idempotent reading of it.
  by_request_.emplace(name, id);
  return {id, false};
}

void JobBook::restore(JobId id, const std::string& request_id) {
  if (jobs_.count(id) != 0) {
    std::fprintf(stderr, "JobBook::restore: job %llu already known\n", static_cast<unsigned long long>(id));
    std::abort();
  }
  std::string name = request_id.empty() ? "job-" + std::to_string(id) : request_id;
  jobs_.emplace(id, Entry{name, std::nullopt});
  by_request_.emplace(name, id);
  next_id_ = std::max(next_id_, id + 1);
}

void JobBook::forget(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  if (auto r = by_request_.find(it->second.request_id); r != by_request_.end() && r->second == id) by_request_.erase(r);
  if (it->second.expires_at) {
    auto [first, last] = expiry_.equal_range(*it->second.expires_at);
    for (auto e = first; e != last; ++e) {
      if (e->second == id) {
        expiry_.erase(e);
        break;
      }
    }
  }
  jobs_.erase(it);
}

std::optional<JobId> JobBook::find(const std::string& request_id) const {
  auto it = by_request_.find(request_id);
  if (it == by_request_.end()) return std::nullopt;
  return it->second;
}

void JobBook::finished(JobId id, Clock::time_point now) {
  Entry& e = jobs_.at(id);
  if (e.expires_at) return;  // already finished (idempotent)
  e.expires_at = now + result_ttl_;
  expiry_.emplace(*e.expires_at, id);
}

std::vector<JobId> JobBook::expire(Clock::time_point now) {
  std::vector<JobId> gone;
  while (!expiry_.empty() && expiry_.begin()->first <= now) {
    JobId id = expiry_.begin()->second;
    expiry_.erase(expiry_.begin());
    auto it = jobs_.find(id);
    by_request_.erase(it->second.request_id);
    jobs_.erase(it);
    gone.push_back(id);
  }
  return gone;
}

std::optional<Clock::time_point> JobBook::next_expiry() const {
  if (expiry_.empty()) return std::nullopt;
  return expiry_.begin()->first;
}

}  // namespace cuzk::engine
