// Scheduler: admission bound, priority + FIFO order, aging, batch flush rules,
// and placement preferring a device with the SRS resident.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "policy/scheduler.hpp"

namespace cuzk::policy {
namespace {

using namespace std::chrono_literals;

SchedJob job(JobId id, Priority p, std::string circuit = "c", bool batchable = false) {
  return SchedJob{id, p, std::move(circuit), batchable};
}

SchedulerConfig limits(std::size_t capacity, std::size_t reserved_for_urgent) {
  SchedulerConfig cfg;
  cfg.capacity = capacity;
  cfg.reserved_for_urgent = reserved_for_urgent;
  return cfg;
}

std::vector<JobId> drain(Scheduler& s) {
  std::vector<JobId> out;
  while (auto u = s.next_for(0, {})) out.insert(out.end(), u->jobs.begin(), u->jobs.end());
  return out;
}

TEST(Scheduler, PriorityThenFifo) {
  FakeClock clock;
  Scheduler s(limits(16, 0), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal)));
  ASSERT_TRUE(s.submit(job(2, Priority::kLow)));
  ASSERT_TRUE(s.submit(job(3, Priority::kCritical)));
  ASSERT_TRUE(s.submit(job(4, Priority::kNormal)));
  ASSERT_TRUE(s.submit(job(5, Priority::kHigh)));
  ASSERT_TRUE(s.submit(job(6, Priority::kCritical)));
  EXPECT_EQ(s.size(), 6u);
  EXPECT_EQ(s.size(Priority::kCritical), 2u);
  EXPECT_EQ(drain(s), (std::vector<JobId>{3, 6, 5, 1, 4, 2}));
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.size(Priority::kCritical), 0u);
}

TEST(Scheduler, AdmissionBoundWithUrgentReserve) {
  FakeClock clock;
  Scheduler s(limits(4, 1), clock);
  for (JobId id = 1; id <= 3; ++id) ASSERT_TRUE(s.submit(job(id, Priority::kNormal)));
  auto r = s.submit(job(4, Priority::kLow));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), AdmitError::kOverloaded);
  ASSERT_TRUE(s.submit(job(5, Priority::kCritical)));  // the reserved slot
  EXPECT_EQ(s.submit(job(6, Priority::kCritical)).error(), AdmitError::kOverloaded);
  EXPECT_EQ(s.submit(job(1, Priority::kCritical)).error(), AdmitError::kDuplicate);
  EXPECT_TRUE(s.cancel(2));
  EXPECT_FALSE(s.cancel(2));
  EXPECT_FALSE(s.contains(2));
  // 3 queued: the CRITICAL job sits in the reserve, so LOW is still refused.
  EXPECT_EQ(s.submit(job(7, Priority::kLow)).error(), AdmitError::kOverloaded);
  EXPECT_TRUE(s.cancel(3));
  EXPECT_TRUE(s.submit(job(7, Priority::kLow)));
  EXPECT_EQ(drain(s), (std::vector<JobId>{5, 1, 7}));
}

TEST(Scheduler, AgingRaisesUpToTheCapOnly) {
  FakeClock clock;
  SchedulerConfig cfg = limits(16, 0);
  cfg.aging_step = 1000ms;
  Scheduler s(cfg, clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kLow)));
  clock.advance(1500ms);
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal)));
  // Job 1 aged to NORMAL and is older: it goes first.
  EXPECT_EQ(s.effective_priority(Priority::kLow, 0ms), Priority::kNormal);
  auto u = s.next_for(0, {});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, std::vector<JobId>{1});
  ASSERT_TRUE(s.submit(job(3, Priority::kCritical)));
  clock.advance(1h);  // job 2 is capped at HIGH and never overtakes CRITICAL
  EXPECT_EQ(s.effective_priority(Priority::kNormal, 0ms), Priority::kHigh);
  EXPECT_EQ(drain(s), (std::vector<JobId>{3, 2}));
}

TEST(Scheduler, WithoutAgingLowWaitsBehindNewerNormal) {
  FakeClock clock;
  Scheduler s(limits(16, 0), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kLow)));
  clock.advance(1h);
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal)));
  EXPECT_EQ(drain(s), (std::vector<JobId>{2, 1}));
}

SchedulerConfig batching(std::size_t max_batch, Millis wait) {
  SchedulerConfig cfg = limits(64, 0);
  cfg.max_batch_size = max_batch;
  cfg.max_batch_wait = wait;
  return cfg;
}

TEST(Scheduler, BatchFlushesWhenFull) {
  FakeClock clock;
  Scheduler s(batching(3, 10s), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal, "porep", true)));
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "porep", true)));
  EXPECT_FALSE(s.next_for(0, {}).has_value());  // still collecting
  EXPECT_EQ(s.open_batches(), 1u);
  ASSERT_TRUE(s.submit(job(3, Priority::kNormal, "porep", true)));
  ASSERT_TRUE(s.submit(job(4, Priority::kNormal, "porep", true)));  // opens the next batch
  auto u = s.next_for(0, {});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, (std::vector<JobId>{1, 2, 3}));
  EXPECT_EQ(u->circuit_id, "porep");
  EXPECT_FALSE(s.next_for(0, {}).has_value());
  EXPECT_EQ(s.size(), 1u);
}

TEST(Scheduler, BatchFlushesWhenTheWaitExpires) {
  FakeClock clock;
  Scheduler s(batching(4, 10s), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal, "snap", true)));
  clock.advance(4s);
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "snap", true)));
  EXPECT_EQ(s.next_deadline(), Millis{10'000});  // from the first job, not the last
  clock.advance(5999ms);
  EXPECT_FALSE(s.next_for(0, {}).has_value());
  clock.advance(1ms);
  auto u = s.next_for(0, {});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, (std::vector<JobId>{1, 2}));
  EXPECT_FALSE(s.next_deadline().has_value());
}

TEST(Scheduler, HigherPriorityArrivalFlushesLowerBatchesAndRunsFirst) {
  FakeClock clock;
  Scheduler s(batching(8, 60s), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal, "porep", true)));
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "porep", true)));
  ASSERT_TRUE(s.submit(job(3, Priority::kLow, "snap", true)));
  ASSERT_TRUE(s.submit(job(4, Priority::kHigh, "wdpost", false)));
  EXPECT_EQ(s.open_batches(), 0u);
  auto a = s.next_for(0, {});
  auto b = s.next_for(0, {});
  auto c = s.next_for(0, {});
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->jobs, std::vector<JobId>{4});
  EXPECT_EQ(b->jobs, (std::vector<JobId>{1, 2}));
  EXPECT_EQ(c->jobs, std::vector<JobId>{3});
}

TEST(Scheduler, EqualOrLowerArrivalsDoNotFlushAndCircuitsNeverMix) {
  FakeClock clock;
  Scheduler s(batching(8, 60s), clock);
  ASSERT_TRUE(s.submit(job(4, Priority::kNormal, "x", false)));  // not batchable: runs alone
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal, "porep", true)));
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "snap", true)));
  ASSERT_TRUE(s.submit(job(3, Priority::kLow, "porep", true)));  // its own batch at LOW
  EXPECT_EQ(s.open_batches(), 3u);
  EXPECT_EQ(s.runnable_units(), 1u);
  auto u = s.next_for(0, {});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, std::vector<JobId>{4});
  s.flush_all();
  EXPECT_EQ(drain(s), (std::vector<JobId>{1, 2, 3}));
}

TEST(Scheduler, CancelInsideAnOpenBatch) {
  FakeClock clock;
  Scheduler s(batching(3, 60s), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal, "p", true)));
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "p", true)));
  EXPECT_TRUE(s.cancel(1));
  EXPECT_TRUE(s.cancel(2));
  EXPECT_EQ(s.open_batches(), 0u);  // an emptied batch disappears
  ASSERT_TRUE(s.submit(job(3, Priority::kNormal, "p", true)));
  ASSERT_TRUE(s.submit(job(4, Priority::kNormal, "p", true)));
  ASSERT_TRUE(s.submit(job(5, Priority::kNormal, "p", true)));
  auto u = s.next_for(0, {});
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, (std::vector<JobId>{3, 4, 5}));
}

TEST(Scheduler, WorkerPrefersAUnitWhoseSrsIsResidentWithinTheTopPriority) {
  FakeClock clock;
  Scheduler s(limits(16, 0), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kNormal, "porep")));
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "snap")));
  ASSERT_TRUE(s.submit(job(3, Priority::kLow, "wdpost")));
  auto resident = [](std::string_view circuit, std::uint32_t device) {
    return (device == 1 && circuit == "snap") || (device == 1 && circuit == "wdpost");
  };
  auto u = s.next_for(1, resident);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, std::vector<JobId>{2});  // resident beats older, same priority
  u = s.next_for(1, resident);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->jobs, std::vector<JobId>{1});  // priority beats residency (3 is LOW)
}

TEST(Scheduler, AssignPicksTheIdleWorkerWithTheSrs) {
  FakeClock clock;
  Scheduler s(limits(16, 0), clock);
  ASSERT_TRUE(s.submit(job(1, Priority::kHigh, "wdpost")));
  ASSERT_TRUE(s.submit(job(2, Priority::kNormal, "porep")));
  std::vector<WorkerSlot> idle = {{10, 0}, {11, 1}, {12, 2}};
  auto resident = [](std::string_view circuit, std::uint32_t device) {
    return (circuit == "wdpost" && device == 2) || (circuit == "porep" && device == 1);
  };
  auto a = s.assign(idle, resident);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->unit.jobs, std::vector<JobId>{1});
  EXPECT_EQ(a->worker.worker_id, 12u);
  auto b = s.assign(std::span(idle).first(1), resident);  // only device 0 is free
  ASSERT_TRUE(b);
  EXPECT_EQ(b->unit.jobs, std::vector<JobId>{2});
  EXPECT_EQ(b->worker.worker_id, 10u);
  EXPECT_FALSE(s.assign(idle, resident).has_value());
  EXPECT_FALSE(s.assign({}, resident).has_value());
}

// Random submits/cancels/dispatches without batching against a model: a
// stable sort by priority of what is queued.
TEST(Scheduler, MatchesAStableSortModel) {
  std::mt19937_64 rng(99);
  FakeClock clock;
  Scheduler s(limits(200, 10), clock);
  std::vector<std::pair<Priority, JobId>> model;
  JobId next = 1;
  for (int step = 0; step < 5000; ++step) {
    int op = static_cast<int>(rng() % 4);
    if (op <= 1) {
      auto p = static_cast<Priority>(rng() % kNumPriorities);
      bool fits = model.size() < (p >= Priority::kHigh ? 200u : 190u);
      auto r = s.submit(job(next, p));
      ASSERT_EQ(r.has_value(), fits);
      if (fits) model.emplace_back(p, next);
      ++next;
    } else if (op == 2) {
      auto u = s.next_for(0, {});
      if (model.empty()) {
        ASSERT_FALSE(u);
        continue;
      }
      auto best = model.begin();
      for (auto it = model.begin(); it != model.end(); ++it) {
        if (it->first > best->first) best = it;
      }
      ASSERT_TRUE(u);
      ASSERT_EQ(u->jobs, std::vector<JobId>{best->second});
      model.erase(best);
    } else if (!model.empty()) {
      std::size_t i = rng() % model.size();
      ASSERT_TRUE(s.cancel(model[i].second));
      model.erase(model.begin() + static_cast<long>(i));
    }
    clock.advance(Millis{static_cast<long>(rng() % 10)});
    ASSERT_EQ(s.size(), model.size());
  }
}

}  // namespace
}  // namespace cuzk::policy
