// Batching of same-circuit demo jobs: JobQueue::take_matching (the pure
// collection step), then the engine with a fake device back end: queued jobs
// of one size become ONE prove call of several witnesses, sizes are never
// mixed, a more urgent job is not held behind a waiting batch, a cancelled
// member leaves only itself, and every member's proof verifies on its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "daemon/config.hpp"
#include "engine/engine.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::FakeBackend;

TEST(JobQueueBatch, TakesMatchingJobsOfOnePriorityInServiceOrder) {
  JobQueue q(AdmissionPolicy{16, 1});
  // Even ids "fit" the batch.
  ASSERT_TRUE(q.push(1, Priority::kNormal));
  ASSERT_TRUE(q.push(2, Priority::kNormal));
  ASSERT_TRUE(q.push(3, Priority::kNormal));
  ASSERT_TRUE(q.push(4, Priority::kLow));
  ASSERT_TRUE(q.push(6, Priority::kNormal));
  ASSERT_TRUE(q.push(8, Priority::kNormal));
  ASSERT_TRUE(q.push(10, Priority::kHigh));
  EXPECT_EQ(q.top_priority(), Priority::kHigh);
  auto even = [](JobId id) { return id % 2 == 0; };
  // Bounded by max; the LOW even job (4) and the HIGH one (10) are not taken.
  EXPECT_EQ(q.take_matching(Priority::kNormal, 2, even), (std::vector<JobId>{2, 6}));
  EXPECT_EQ(q.take_matching(Priority::kNormal, 5, even), (std::vector<JobId>{8}));
  EXPECT_TRUE(q.take_matching(Priority::kNormal, 5, even).empty());
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.size(Priority::kNormal), 2u);
  EXPECT_EQ(q.snapshot(), (std::vector<JobId>{10, 1, 3, 4}));
  EXPECT_FALSE(q.position(6).has_value());
  EXPECT_EQ(q.pop(), JobId{10});
  EXPECT_EQ(q.top_priority(), Priority::kNormal);
  q.pop();
  q.pop();
  q.pop();
  EXPECT_FALSE(q.top_priority().has_value());
}

using testing::eventually;
using testing::held_by_worker;
using testing::nothing_queued;
using testing::output_verifies;
using testing::run_scenario;

struct Rig : testing::EngineRig {
  explicit Rig(std::size_t batch_max_size, std::chrono::milliseconds batch_max_wait) : EngineRig("cuzk-batch-test", 3) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{16, 1};
    cfg.max_demo_log_domain = 10;
    cfg.drain_timeout = 10s;
    cfg.batch_max_size = batch_max_size;
    cfg.batch_max_wait = batch_max_wait;
    cfg.clock = &clock;  // a batch window ends only by a flush or clock.advance()
    make_engine(cfg);
    fake = std::make_shared<FakeBackend>("fake:0", 0, math);
    engine->set_gpu_backends({fake});
  }
  ~Rig() { engine.reset(); }  // the engine reads `clock`
  runtime::ManualLoopClock clock;
  std::shared_ptr<FakeBackend> fake;
};

JobRequest demo(std::uint32_t size, std::uint64_t seed, Priority p = Priority::kNormal) {
  JobRequest r;
  r.demo_log_domain = size;
  r.demo_seed = seed;
  r.priority = p;
  return r;
}

// Awaits a job and expects a verified proof (its own public inputs) and timings.
asio::awaitable<void> expect_done(Engine& e, JobId id) {
  // On the manual clock nothing times out: a job that never ends fails here.
  EXPECT_TRUE(co_await eventually(e,
                                  [&e, id] {
                                    for (const JobView& v : e.status().jobs)
                                      if (v.id == id) return is_finished(v.state);
                                    return false;
                                  }))
      << "job " << id << " did not finish";
  auto out = co_await e.await(id, 0ms);
  EXPECT_TRUE(out.ok()) << "job " << id;
  if (!out.ok()) co_return;
  EXPECT_TRUE(output_verifies(out.value().output)) << "job " << id;
  EXPECT_GE(out.value().output.timings.total_ms, out.value().output.timings.prove_ms);
}

// A batch's members are the one-partition members of one partition pipeline
// (staged steps, engine/staged_prove.hpp): one device step per member; the
// fake records each device step as a call of one instance.
TEST(EngineBatch, QueuedJobsOfOneSizeAreProvedInOneCall) {
  Rig rig(4, 0ms);
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    // Submitted without yielding: all three are queued when the worker runs.
    std::vector<JobId> ids;
    for (std::uint64_t seed : {1, 2, 3}) ids.push_back(e.submit(demo(5, seed)).value().id);
    for (JobId id : ids) co_await expect_done(e, id);
    EXPECT_EQ(e.status().devices.at(0).proofs_done, 3u);
    EXPECT_NE(e.metrics().find("cuzk_batches_total 1\n"), std::string::npos);
    EXPECT_NE(e.metrics().find("cuzk_batched_jobs_total 3\n"), std::string::npos);
  });
  auto calls = rig.fake->calls();
  ASSERT_EQ(calls.size(), 3u);
  for (const auto& c : calls) EXPECT_EQ(c.instances, 1u);
}

// A batch leaves its SRS resident like a single job: the back end's pinned
// host part is listed (tier "pinned") and charged to the budget beside the
// host copy.
constexpr std::uint64_t kPinnedBytes = 4'321'000;
TEST(EngineBatch, PinnedHostPartOfTheResidentSrsIsListedAndCharged) {
  Rig rig(4, 0ms);
  rig.fake->srs_pinned_bytes = kPinnedBytes;
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    std::vector<JobId> ids;
    for (std::uint64_t seed : {1, 2, 3}) ids.push_back(e.submit(demo(5, seed)).value().id);
    for (JobId id : ids) co_await expect_done(e, id);
    EXPECT_NE(e.metrics().find("cuzk_batches_total 1\n"), std::string::npos);  // the batch path ran
    EngineStatus s = e.status();
    std::uint64_t host_bytes = 0, pinned_bytes = 0;
    std::int32_t pinned_device = -1;
    for (const SrsResidencyView& v : s.srs) {
      if (v.srs != "demo-5") continue;
      if (v.tier == "host") host_bytes = v.bytes;
      if (v.tier == "pinned") {
        pinned_bytes = v.bytes;
        pinned_device = v.device;
      }
    }
    EXPECT_GT(host_bytes, 0u);
    EXPECT_EQ(pinned_bytes, kPinnedBytes);
    EXPECT_EQ(pinned_device, 0);
    EXPECT_EQ(s.memory.reserved_bytes, host_bytes + kPinnedBytes + s.memory.kept_witness_bytes);
  });
}

TEST(EngineBatch, SizesAreNotMixedAndTheMaximumHolds) {
  Rig rig(2, 0ms);
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    std::vector<JobId> ids;
    ids.push_back(e.submit(demo(5, 1)).value().id);
    ids.push_back(e.submit(demo(6, 2)).value().id);
    ids.push_back(e.submit(demo(5, 3)).value().id);
    ids.push_back(e.submit(demo(5, 4)).value().id);
    for (JobId id : ids) co_await expect_done(e, id);
  });
  auto calls = rig.fake->calls();
  ASSERT_EQ(calls.size(), 4u);
  // demo-5 x2 (the maximum: the batch's two device steps), demo-6 alone,
  // then the last demo-5.
  EXPECT_EQ(calls[0].aux, calls[1].aux);
  EXPECT_NE(calls[1].aux, calls[2].aux);
  EXPECT_EQ(calls[0].aux, calls[3].aux);
}

TEST(EngineBatch, BatchingOffProvesEachJobAlone) {
  Rig rig(1, 0ms);
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    JobId a = e.submit(demo(5, 1)).value().id;
    JobId b = e.submit(demo(5, 2)).value().id;
    co_await expect_done(e, a);
    co_await expect_done(e, b);
  });
  auto calls = rig.fake->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].instances, 1u);
}

TEST(EngineBatch, UrgentJobFlushesAWaitingBatch) {
  Rig rig(4, 5000ms);  // a batch would wait 5 s for more jobs
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    EXPECT_TRUE((co_await e.preload("demo-5")).ok());
    JobId normal = e.submit(demo(5, 1)).value().id;
    EXPECT_TRUE(co_await eventually(e, [&] { return held_by_worker(e, normal); }));  // it waits for more
    EXPECT_EQ(e.status().jobs.at(0).state, JobState::kQueued);
    JobId critical = e.submit(demo(5, 2, Priority::kCritical)).value().id;
    // Both end with the clock standing still: the critical job ended the
    // 5 s wait, and it did not join the NORMAL batch.
    co_await expect_done(e, critical);
    co_await expect_done(e, normal);
  });
  auto calls = rig.fake->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].instances, 1u);
  EXPECT_EQ(calls[1].instances, 1u);
}

TEST(EngineBatch, WaitingBatchDoesNotHoldOtherWorkAndCriticalNeverWaits) {
  Rig rig(4, 5000ms);
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    EXPECT_TRUE((co_await e.preload("demo-5")).ok());
    EXPECT_TRUE((co_await e.preload("demo-6")).ok());
    JobId waiting = e.submit(demo(5, 1)).value().id;
    EXPECT_TRUE(co_await eventually(e, [&] { return held_by_worker(e, waiting); }));
    JobId other = e.submit(demo(6, 2)).value().id;  // cannot join: flushes the demo-5 batch
    co_await expect_done(e, waiting);
    // Once a worker holds `other`, it heads its own waiting batch; a CRITICAL
    // job flushes it and then runs without waiting for company. The clock
    // never moves: no 5 s window ended on its own.
    EXPECT_TRUE(co_await eventually(e, [&] { return held_by_worker(e, other); }));
    JobId critical = e.submit(demo(5, 3, Priority::kCritical)).value().id;
    co_await expect_done(e, other);
    co_await expect_done(e, critical);
  });
  EXPECT_EQ(rig.fake->calls().size(), 3u);
}

TEST(EngineBatch, CancelledMemberLeavesOnlyItself) {
  Rig rig(4, 3000ms);
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    EXPECT_TRUE((co_await e.preload("demo-5")).ok());
    JobId a = e.submit(demo(5, 1)).value().id;
    JobId b = e.submit(demo(5, 2)).value().id;
    // a and b collected (a worker holds a, nothing is queued): the batch waits for more.
    EXPECT_TRUE(co_await eventually(e, [&] { return held_by_worker(e, a) && nothing_queued(e); }));
    auto cancelled = e.cancel(b);
    EXPECT_TRUE(cancelled.ok());
    if (cancelled.ok()) {
      EXPECT_EQ(cancelled.value().state, JobState::kCancelled);
    }
    JobId c = e.submit(demo(5, 3)).value().id;
    JobId d = e.submit(demo(5, 4)).value().id;  // the fourth fills the batch: it goes now
    co_await expect_done(e, a);
    co_await expect_done(e, c);
    co_await expect_done(e, d);
    auto rb = co_await e.await(b, 0ms);
    EXPECT_FALSE(rb.ok());
    if (!rb.ok()) {
      EXPECT_EQ(rb.error().kind, ErrorKind::kCancelled);
    }
  });
  auto calls = rig.fake->calls();
  ASSERT_EQ(calls.size(), 3u);  // a, c, d in one batch
  for (const auto& c : calls) EXPECT_EQ(c.instances, 1u);
}

TEST(EngineBatch, CancelDuringTheProveEndsOnlyThatMember) {
  Rig rig(4, 0ms);
  rig.fake->delay_ms = 400;
  run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    std::vector<JobId> ids;
    for (std::uint64_t seed : {1, 2, 3}) ids.push_back(e.submit(demo(5, seed)).value().id);
    // Wait until the device proves a member (the lanes synthesize the three
    // at once, so any may come first), then cancel another: it ends at its
    // next stage boundary, before its own device step.
    EXPECT_TRUE(co_await eventually(e, [&e] { return e.status().devices.at(0).job.has_value(); }));
    const std::optional<JobId> first = e.status().devices.at(0).job;
    if (!first) co_return;
    const JobId victim = *first == ids[1] ? ids[2] : ids[1];
    EXPECT_TRUE(e.cancel(victim).ok());
    for (JobId id : ids) {
      if (id != victim) co_await expect_done(e, id);
    }
    auto rb = co_await e.await(victim, 0ms);
    EXPECT_FALSE(rb.ok());
    if (!rb.ok()) {
      EXPECT_EQ(rb.error().kind, ErrorKind::kCancelled);
    }
    EXPECT_NE(e.metrics().find("cuzk_batches_total 1\n"), std::string::npos);
  });
  // The cancelled member never reached the one device: it waited behind the
  // first member's 400 ms device step (and the third's).
  EXPECT_EQ(rig.fake->calls().size(), 2u);
}

TEST(EngineBatch, CorruptProofOfOneMemberIsProvedAgainOnTheCpu) {
  Rig rig(4, 0ms);
  rig.fake->corrupt_next = 1;  // the first proof of the batch comes back wrong
  run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    std::vector<JobId> ids;
    for (std::uint64_t seed : {1, 2}) ids.push_back(e.submit(demo(5, seed)).value().id);
    for (JobId id : ids) co_await expect_done(e, id);
    EngineStatus s = e.status();
    EXPECT_EQ(s.cpu_retries_total, 1u);
    EXPECT_EQ(s.devices.at(0).verify_failures, 1u);
    EXPECT_EQ(s.devices.at(0).proofs_done, 1u);
    EXPECT_EQ(s.devices.at(1).proofs_done, 1u);
  });
}

TEST(DeviceStatus, CarriesTheProverStageOfItsBackend) {
  runtime::EventLoop loop;
  ThreadPool math(1);
  runtime::WorkerPool cpu(1);
  auto fake = std::make_shared<FakeBackend>("fake:0", 0, math);
  DeviceSet set(loop.executor(), std::make_shared<CpuBackend>(cpu, math), {fake});
  EXPECT_EQ(set.views().at(0).prover_stage, "");
  fake->set_stage_report(ProverStage{"h_msm", std::chrono::steady_clock::now() - 250ms, 0x42, 3, 8});
  std::vector<DeviceWorkerView> v = set.views();
  EXPECT_EQ(v.at(0).prover_stage, "h_msm");
  EXPECT_GE(v.at(0).prover_stage_ms, 250u);
  EXPECT_LT(v.at(0).prover_stage_ms, 60'000u);
  EXPECT_EQ(v.at(0).prover_stream, 0x42u);
  EXPECT_EQ(v.at(0).prover_streams, 3u);
  EXPECT_EQ(v.at(0).prover_events, 8u);
  EXPECT_EQ(v.at(1).prover_stage, "");  // the CPU back end reports none
}

TEST(EngineBatch, ConfigKeys) {
  daemon::Config d = daemon::parse_config("", "test");
  EXPECT_EQ(d.engine.batch_max_size, 4u);
  EXPECT_EQ(d.engine.batch_max_wait, 0ms);
  daemon::Config c = daemon::parse_config("[engine]\nbatch_max_size = 8\nbatch_max_wait_ms = 250\n", "test");
  EXPECT_EQ(c.engine.batch_max_size, 8u);
  EXPECT_EQ(c.engine.batch_max_wait, 250ms);
  EXPECT_THROW(daemon::parse_config("[engine]\nbatch_max_size = 0\n", "test"), daemon::ConfigError);
  EXPECT_THROW(daemon::parse_config("[engine]\nbatch_max_wait_ms = 600000\n", "test"), daemon::ConfigError);
}

}  // namespace
}  // namespace cuzk::engine
