// Pure policy: queue order, admission with the urgent reserve, the
// request-id book and result retention under an injected clock.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/param_store.hpp"
#include "engine/policy.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;

TEST(JobQueue, ServesHigherPriorityFirstAndFifoWithinAPriority) {
  JobQueue q(AdmissionPolicy{16, 0});
  ASSERT_TRUE(q.push(1, Priority::kNormal));
  ASSERT_TRUE(q.push(2, Priority::kLow));
  ASSERT_TRUE(q.push(3, Priority::kCritical));
  ASSERT_TRUE(q.push(4, Priority::kNormal));
  ASSERT_TRUE(q.push(5, Priority::kHigh));
  ASSERT_TRUE(q.push(6, Priority::kCritical));
  EXPECT_EQ(q.position(3), 0u);
  EXPECT_EQ(q.position(2), 5u);
  EXPECT_EQ(q.size(Priority::kNormal), 2u);
  std::vector<JobId> order;
  while (auto id = q.pop()) order.push_back(*id);
  EXPECT_EQ(order, (std::vector<JobId>{3, 6, 5, 1, 4, 2}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(Priority::kCritical), 0u);
}

TEST(JobQueue, RemoveKeepsTheRestInOrder) {
  JobQueue q(AdmissionPolicy{8, 0});
  for (JobId id = 1; id <= 4; ++id) ASSERT_TRUE(q.push(id, Priority::kNormal));
  EXPECT_TRUE(q.remove(2));
  EXPECT_FALSE(q.remove(2));
  EXPECT_FALSE(q.position(2).has_value());
  EXPECT_EQ(q.position(3), 1u);
  EXPECT_EQ(q.snapshot(), (std::vector<JobId>{1, 3, 4}));
  EXPECT_EQ(q.size(Priority::kNormal), 3u);
}

// Against a reference model: a stable sort by priority of the admitted jobs,
// over random pushes, pops and removals.
TEST(JobQueue, MatchesAStableSortModelOnRandomOperations) {
  std::mt19937_64 rng(12345);
  JobQueue q(AdmissionPolicy{1000, 0});
  std::vector<std::pair<Priority, JobId>> model;  // in admission order
  JobId next = 1;
  for (int step = 0; step < 5000; ++step) {
    int op = static_cast<int>(rng() % 4);
    if (op <= 1) {
      auto p = static_cast<Priority>(rng() % kNumPriorities);
      ASSERT_TRUE(q.push(next, p));
      model.emplace_back(p, next++);
    } else if (op == 2) {
      auto got = q.pop();
      if (model.empty()) {
        ASSERT_FALSE(got.has_value());
        continue;
      }
      // Model's next: highest priority, earliest admitted among those.
      auto best = model.begin();
      for (auto it = model.begin(); it != model.end(); ++it)
        if (it->first > best->first) best = it;
      ASSERT_EQ(got, best->second);
      model.erase(best);
    } else if (!model.empty()) {
      auto victim = model.begin() + static_cast<long>(rng() % model.size());
      ASSERT_TRUE(q.remove(victim->second));
      model.erase(victim);
    }
    ASSERT_EQ(q.size(), model.size());
  }
}

TEST(Admission, ReservesTheLastSlotsForUrgentWork) {
  AdmissionPolicy policy{4, 1};
  JobQueue q(policy);
  EXPECT_TRUE(q.push(1, Priority::kLow));
  EXPECT_TRUE(q.push(2, Priority::kNormal));
  EXPECT_TRUE(q.push(3, Priority::kNormal));
  // 3 of 4 used: the last slot is reserved for HIGH/CRITICAL.
  EXPECT_FALSE(q.push(4, Priority::kNormal));
  EXPECT_FALSE(q.push(4, Priority::kLow));
  EXPECT_TRUE(q.push(4, Priority::kCritical));
  // Full for everyone.
  EXPECT_FALSE(q.push(5, Priority::kCritical));
  EXPECT_EQ(q.size(), 4u);
  // A refused push leaves nothing behind.
  EXPECT_FALSE(q.position(5).has_value());
  // Popping frees a slot for urgent work first.
  q.pop();
  EXPECT_FALSE(policy.admits(Priority::kNormal, q.size()));
  EXPECT_TRUE(policy.admits(Priority::kHigh, q.size()));
}

TEST(JobBook, RepeatedRequestIdMapsToTheSameJob) {
  JobBook book(1000ms);
  auto a = book.register_request("porep-1000-7");
  EXPECT_FALSE(a.existing);
  auto b = book.register_request("porep-1000-7");
  EXPECT_TRUE(b.existing);
  EXPECT_EQ(a.id, b.id);
  auto c = book.register_request("");
  auto d = book.register_request("");
  EXPECT_NE(c.id, d.id);
  EXPECT_NE(c.id, a.id);
  EXPECT_EQ(book.request_id(c.id), "job-" + std::to_string(c.id));
  EXPECT_EQ(book.find("porep-1000-7"), a.id);
}

TEST(JobBook, FinishedJobsExpireAfterTheTtlAndFreeTheirRequestId) {
  JobBook book(1000ms);
  const Clock::time_point t0{};  // injected clock: an arbitrary origin
  auto a = book.register_request("a");
  auto b = book.register_request("b");
  auto running = book.register_request("running");
  book.finished(a.id, t0);
  book.finished(b.id, t0 + 500ms);
  book.finished(a.id, t0 + 900ms);  // repeated finish does not extend retention
  EXPECT_EQ(book.next_expiry(), t0 + 1000ms);
  EXPECT_TRUE(book.expire(t0 + 999ms).empty());
  EXPECT_EQ(book.expire(t0 + 1000ms), std::vector<JobId>{a.id});
  EXPECT_FALSE(book.contains(a.id));
  EXPECT_FALSE(book.find("a").has_value());
  EXPECT_EQ(book.expire(t0 + 10h), std::vector<JobId>{b.id});
  // Unfinished jobs never expire.
  EXPECT_TRUE(book.contains(running.id));
  EXPECT_FALSE(book.next_expiry().has_value());
  // The freed request id now starts a new job.
  auto a2 = book.register_request("a");
  EXPECT_FALSE(a2.existing);
  EXPECT_NE(a2.id, a.id);
}

// Jobs recovered from the journal after a restart.
TEST(JobQueue, RestoredJobsBypassAdmissionAndKeepPriorityOrder) {
  JobQueue q(AdmissionPolicy{2, 1});
  q.restore(7, Priority::kLow);
  q.restore(3, Priority::kNormal);
  q.restore(9, Priority::kHigh);
  q.restore(4, Priority::kNormal);
  EXPECT_EQ(q.size(), 4u);                        // above the capacity of 2: nothing admitted is dropped
  EXPECT_FALSE(q.push(10, Priority::kCritical));  // but new work is refused
  std::vector<JobId> order;
  while (auto id = q.pop()) order.push_back(*id);
  EXPECT_EQ(order, (std::vector<JobId>{9, 3, 4, 7}));
}

TEST(JobBook, RestoredJobsKeepTheirIdsAndNewIdsGoAbove) {
  JobBook book(1000ms);
  book.restore(5, "porep-5");
  book.restore(2, "");
  EXPECT_EQ(book.find("porep-5"), 5u);
  EXPECT_EQ(book.request_id(2), "job-2");
  EXPECT_EQ(book.register_request("porep-5").id, 5u);  // idempotent across the restart
  EXPECT_EQ(book.next_id(), 6u);
  book.skip_ids_below(40);  // ids of expired jobs are not issued again
  book.skip_ids_below(30);  // never backwards
  EXPECT_EQ(book.next_id(), 40u);
  auto fresh = book.register_request("");
  EXPECT_EQ(fresh.id, 40u);
  EXPECT_FALSE(fresh.existing);
}

TEST(ParamStore, CircuitIdsRoundTripAndRejectGarbage) {
  EXPECT_EQ(parse_demo_circuit_id(demo_circuit_id(20)), 20u);
  EXPECT_FALSE(parse_demo_circuit_id("demo-").has_value());
  EXPECT_FALSE(parse_demo_circuit_id("demo-2").has_value());
  EXPECT_FALSE(parse_demo_circuit_id("demo-12x").has_value());
  EXPECT_FALSE(parse_demo_circuit_id("porep-32g").has_value());
  EXPECT_FALSE(parse_demo_circuit_id("demo-99999999999").has_value());
}

// Joining a running PoRep batch: only the queue head is considered.
TEST(JoinPolicy, APorepJobOfTheBatchsParametersAndPriorityJoinsWhileThereIsRoom) {
  const RunningBatch batch{"porep-32GiB", Priority::kNormal, 1, 2};
  const QueueHead same{ProofKind::kPoRepC2, Priority::kNormal, "porep-32GiB"};
  EXPECT_EQ(decide_join(batch, same), JoinDecision::kJoin);
  // Full: two members unanswered (a joiner being prepared counts).
  EXPECT_EQ(decide_join(RunningBatch{"porep-32GiB", Priority::kNormal, 2, 2}, same), JoinDecision::kWait);
  // A finished member frees its place.
  EXPECT_EQ(decide_join(RunningBatch{"porep-32GiB", Priority::kNormal, 1, 2}, same), JoinDecision::kJoin);
  // Nothing queued.
  EXPECT_EQ(decide_join(batch, std::nullopt), JoinDecision::kWait);
  // No batching (max 1): never joins.
  EXPECT_EQ(decide_join(RunningBatch{"porep-32GiB", Priority::kNormal, 1, 1}, same), JoinDecision::kWait);
}

// A SnapDeals batch takes SnapDeals jobs of its set; a PoRep job of any set
// closes it (and a SnapDeals job closes a PoRep batch).
TEST(JoinPolicy, ASnapDealsBatchTakesOnlySnapDealsJobsOfItsSet) {
  const RunningBatch snap{"snap-deals-32GiB", Priority::kNormal, 1, 2, ProofKind::kSnapDeals};
  EXPECT_EQ(decide_join(snap, QueueHead{ProofKind::kSnapDeals, Priority::kNormal, "snap-deals-32GiB"}),
            JoinDecision::kJoin);
  EXPECT_EQ(decide_join(snap, QueueHead{ProofKind::kSnapDeals, Priority::kNormal, "snap-deals-2KiB"}),
            JoinDecision::kClose);
  EXPECT_EQ(decide_join(snap, QueueHead{ProofKind::kPoRepC2, Priority::kNormal, "snap-deals-32GiB"}),
            JoinDecision::kClose);
  const RunningBatch porep{"porep-32GiB", Priority::kNormal, 1, 2};
  EXPECT_EQ(decide_join(porep, QueueHead{ProofKind::kSnapDeals, Priority::kNormal, "porep-32GiB"}),
            JoinDecision::kClose);
}

TEST(JoinPolicy, AHeadTheBatchCannotTakeClosesItUnlessItIsLessUrgent) {
  const RunningBatch batch{"porep-32GiB", Priority::kNormal, 1, 4};
  // Another sector size, another kind, a C1 naming no size: closes (it would
  // otherwise wait behind joiners forever).
  EXPECT_EQ(decide_join(batch, QueueHead{ProofKind::kPoRepC2, Priority::kNormal, "porep-2KiB"}), JoinDecision::kClose);
  EXPECT_EQ(decide_join(batch, QueueHead{ProofKind::kGroth16Demo, Priority::kNormal, ""}), JoinDecision::kClose);
  EXPECT_EQ(decide_join(batch, QueueHead{ProofKind::kPoRepC2, Priority::kNormal, ""}), JoinDecision::kClose);
  // More urgent, even of the same parameters (a batch never lifts a job to
  // another priority) and even with the batch full.
  EXPECT_EQ(decide_join(batch, QueueHead{ProofKind::kPoRepC2, Priority::kHigh, "porep-32GiB"}), JoinDecision::kClose);
  EXPECT_EQ(decide_join(RunningBatch{"porep-32GiB", Priority::kNormal, 4, 4},
                        QueueHead{ProofKind::kGroth16Demo, Priority::kCritical, ""}),
            JoinDecision::kClose);
  // Less urgent: served after the batch's priority anyway; not taken, not closing.
  EXPECT_EQ(decide_join(batch, QueueHead{ProofKind::kPoRepC2, Priority::kLow, "porep-32GiB"}), JoinDecision::kWait);
  EXPECT_EQ(decide_join(batch, QueueHead{ProofKind::kGroth16Demo, Priority::kLow, ""}), JoinDecision::kWait);
}

// What the engine's admission loop does with the decisions: a waiting job
// that cannot join stops the joining for good, even once a joinable job is
// queued behind it (the head is served first).
TEST(JoinPolicy, AWaitingJobThatCannotJoinStopsFurtherJoining) {
  JobQueue q(AdmissionPolicy{16, 0});
  struct Queued {
    ProofKind kind;
    Priority priority;
    const char* srs;
  };
  std::map<JobId, Queued> jobs{{1, {ProofKind::kPoRepC2, Priority::kNormal, "porep-32GiB"}},
                               {2, {ProofKind::kGroth16Demo, Priority::kNormal, ""}},
                               {3, {ProofKind::kPoRepC2, Priority::kNormal, "porep-32GiB"}}};
  for (auto& [id, j] : jobs) ASSERT_TRUE(q.push(id, j.priority));
  std::vector<JobId> joined;
  bool closed = false;
  for (int step = 0; step < 10 && !closed; ++step) {
    std::optional<QueueHead> head;
    if (auto id = q.front()) head = QueueHead{jobs.at(*id).kind, jobs.at(*id).priority, jobs.at(*id).srs};
    switch (decide_join(RunningBatch{"porep-32GiB", Priority::kNormal, 1, 8}, head)) {
      case JoinDecision::kJoin:
        joined.push_back(*q.front());
        q.remove(*q.front());
        break;
      case JoinDecision::kClose:
        closed = true;
        break;
      case JoinDecision::kWait:
        break;
    }
  }
  EXPECT_EQ(joined, (std::vector<JobId>{1}));
  EXPECT_TRUE(closed);
  EXPECT_EQ(q.front(), std::optional<JobId>(2));  // the demo job is served next, then job 3
}

TEST(PipelineLanes, ConfiguredWinsElseThePoolsCappedByTheGpus) {
  EXPECT_EQ(pipeline_lanes(3, 8, 1), 3u);  // [porep] synthesis_concurrency
  EXPECT_EQ(pipeline_lanes(12, 8, 1), 12u);
  EXPECT_EQ(pipeline_lanes(0, 8, 0), 8u);   // CPU only: the pool's
  EXPECT_EQ(pipeline_lanes(0, 8, 1), 4u);   // one GPU: 2 + 2
  EXPECT_EQ(pipeline_lanes(0, 16, 2), 6u);  // two GPUs
  EXPECT_EQ(pipeline_lanes(0, 8, 4), 8u);   // capped by the pool
  EXPECT_EQ(pipeline_lanes(0, 1, 1), 1u);   // a 2-core host
  EXPECT_EQ(pipeline_lanes(0, 0, 1), 1u);
}

}  // namespace
}  // namespace cuzk::engine
