// The durable journal's writes never block the event loop (issue 5): a
// submission's accept record, and a job's start and finish records, are
// written on the engine's journal writer thread. A test hook holds the writer
// inside a write (a disk that does not answer) until the test lets it go, so
// no timing is assumed: while it is held, timers fire and status answers on
// the loop; a resubmit of the same request id waits for the first write and
// returns the same job; a failed write fails the submit with a typed error and
// frees the request id; a held finish record keeps the job's input file.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "engine/engine.hpp"
#include "engine/job_journal.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Shared with the writer thread through the journal's before_write hook.
struct Disk {
  std::atomic<bool> hold_accept{false}, hold_finish{false}, fail_accept{false};
  std::atomic<int> accepts_held{0}, finishes_held{0}, finish_writes{0};

  void before_write(std::string_view event) {
    if (event == "accepted" && fail_accept.exchange(false)) throw std::runtime_error("injected: no space left");
    std::atomic<bool>* hold = event == "accepted" ? &hold_accept : event == "finished" ? &hold_finish : nullptr;
    if (hold && hold->load()) {
      ++(event == "accepted" ? accepts_held : finishes_held);
      // Bounded: a broken test must not hang the suite.
      for (int i = 0; i < 10000 && hold->load(); ++i) std::this_thread::sleep_for(1ms);
    }
    if (event == "finished") ++finish_writes;
  }
};

struct Rig : testing::EngineRig {
  Rig() : EngineRig("cuzk-journal-async", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 8;
    cfg.drain_timeout = 10s;
    cfg.journal_dir = dir / "state";
    cfg.journal_before_write = [this](std::string_view event) { disk.before_write(event); };
    make_engine(cfg);
  }
  ~Rig() { engine.reset(); }  // the engine's journal writer calls into `disk`
  Disk disk;
};

JobRequest demo(std::uint64_t seed, std::string request_id) {
  JobRequest r;
  r.demo_log_domain = 5;
  r.demo_seed = seed;
  r.request_id = std::move(request_id);
  return r;
}

using testing::sleep_for;

struct Submitted {
  std::optional<Result<JobView>> result;
  bool input_on_disk = false;  // the job's input file existed when the id came back
};

asio::awaitable<void> submit_into(Engine& e, JobRequest r, fs::path jobs_dir, Submitted& out) {
  Result<JobView> v = co_await e.submit_durable(std::move(r));
  if (v) out.input_on_disk = fs::exists(jobs_dir / (std::to_string(v.value().id) + ".job"));
  out.result = std::move(v);
}

std::optional<JobView> find_job(const EngineStatus& s, const std::string& request_id) {
  for (const JobView& v : s.jobs)
    if (v.request_id == request_id) return v;
  return std::nullopt;
}

asio::awaitable<void> scenario(Rig& rig, runtime::TaskSet& side, std::vector<JobId>& done_ids, bool& finished) {
  Engine& e = *rig.engine;
  Disk& disk = rig.disk;
  const fs::path jobs_dir = rig.dir / "state" / "jobs";

  // 1. An accept record in flight: the loop serves, a resubmit dedups.
  disk.hold_accept = true;
  Submitted first, second;
  side.spawn(submit_into(e, demo(1, "r1"), jobs_dir, first));
  while (disk.accepts_held == 0) co_await sleep_for(1ms);
  co_await sleep_for(5ms);  // a timer fires while the writer is stuck in the write
  EXPECT_FALSE(first.result.has_value()) << "submit answered before its record was written";
  std::optional<JobView> pending = find_job(e.status(), "r1");  // status answers meanwhile
  EXPECT_TRUE(pending.has_value());
  if (pending) {
    EXPECT_EQ(pending->state, JobState::kQueued);
    EXPECT_EQ(pending->stage, "accepting");
  }
  side.spawn(submit_into(e, demo(1, "r1"), jobs_dir, second));
  co_await sleep_for(20ms);
  EXPECT_FALSE(second.result.has_value()) << "a resubmit answered before the first record was written";
  disk.hold_accept = false;
  while (!first.result || !second.result) co_await sleep_for(1ms);
  EXPECT_TRUE(*first.result && *second.result);
  if (*first.result && *second.result) {
    EXPECT_TRUE(first.input_on_disk);
    EXPECT_EQ(second.result->value().id, first.result->value().id);
    EXPECT_FALSE(first.result->value().deduplicated);
    EXPECT_TRUE(second.result->value().deduplicated);
    auto out = co_await e.await(first.result->value().id, 0ms);
    EXPECT_TRUE(out.ok());
    done_ids.push_back(first.result->value().id);
  }
  while (disk.finish_writes < 1) co_await sleep_for(1ms);

  // 2. A finish record in flight: the loop serves, and the input file stays
  // until the terminal record is durable.
  disk.hold_finish = true;
  Result<JobView> third = co_await e.submit_durable(demo(3, "r3"));
  EXPECT_TRUE(third.ok());
  if (third) {
    const JobId id = third.value().id;
    auto out = co_await e.await(id, 0ms);
    EXPECT_TRUE(out.ok());
    while (disk.finishes_held == 0) co_await sleep_for(1ms);
    co_await sleep_for(5ms);
    EXPECT_EQ(e.status().completed_total, 2u);
    EXPECT_TRUE(fs::exists(jobs_dir / (std::to_string(id) + ".job"))) << "input deleted before its end was durable";
    done_ids.push_back(id);
  }
  disk.hold_finish = false;

  // 3. A failed accept write: a typed error, and the request id is free again.
  disk.fail_accept = true;
  Result<JobView> failed = co_await e.submit_durable(demo(4, "r4"));
  EXPECT_FALSE(failed.ok());
  if (!failed) {
    EXPECT_EQ(failed.error().kind, ErrorKind::kInternal);
  }
  EXPECT_FALSE(find_job(e.status(), "r4").has_value());
  Result<JobView> retried = co_await e.submit_durable(demo(4, "r4"));
  EXPECT_TRUE(retried.ok());
  if (retried) {
    EXPECT_FALSE(retried.value().deduplicated);
    auto out = co_await e.await(retried.value().id, 0ms);
    EXPECT_TRUE(out.ok());
    done_ids.push_back(retried.value().id);
  }

  co_await e.drain();  // flushes the writer
  EXPECT_EQ(disk.finish_writes, 3);
  finished = true;
}

TEST(JournalAsync, WritesLeaveTheLoopFreeAndResubmitsDedupDuringAWrite) {
  Rig rig;
  runtime::TaskSet side(rig.loop.executor());
  std::vector<JobId> done_ids;
  testing::run_on_loop(rig, [&](bool& finished) { return scenario(rig, side, done_ids, finished); });
  rig.engine.reset();  // releases the journal's lock

  // Every end recorded, in order after its acceptance: all three are finished
  // (none resumed) and their inputs are gone.
  runtime::Logger log(runtime::LogLevel::kWarn);
  JobJournalConfig jc;
  jc.dir = rig.dir / "state";
  JobJournal::Opened o = JobJournal::open(jc, log);
  EXPECT_TRUE(o.recovery.resume.empty());
  std::vector<JobId> recovered;
  for (const RecoveredJob& r : o.recovery.finished) {
    EXPECT_EQ(r.state, JobState::kDone);
    recovered.push_back(r.id);
  }
  EXPECT_EQ(recovered, done_ids);
  for (JobId id : done_ids) EXPECT_FALSE(fs::exists(o.journal->input_path(id)));
}

}  // namespace
}  // namespace cuzk::engine
