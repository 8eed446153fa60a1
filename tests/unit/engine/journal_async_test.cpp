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
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "engine/engine.hpp"
#include "engine/job_journal.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Shared with the writer thread through the journal's before_write hook. The
// writer waits on a condition variable while a write is held; every step it
// takes is announced on the loop (`changed`), where the test waits for it.
struct Disk {
  explicit Disk(asio::any_io_executor l) : loop(std::move(l)) {}
  asio::any_io_executor loop;
  runtime::Signal changed;  // loop side
  std::atomic<bool> fail_accept{false};
  std::atomic<int> accepts_held{0}, finishes_held{0}, finish_writes{0};

  void hold(bool accept, bool finish) {
    std::lock_guard lock(mu_);
    hold_accept_ = accept;
    hold_finish_ = finish;
    cv_.notify_all();
  }
  void before_write(std::string_view event) {
    if (event == "accepted" && fail_accept.exchange(false)) throw std::runtime_error("injected: no space left");
    {
      std::unique_lock lock(mu_);
      bool& held = event == "accepted" ? hold_accept_ : hold_finish_;
      if ((event == "accepted" || event == "finished") && held) {
        ++(event == "accepted" ? accepts_held : finishes_held);
        announce();
        // Bounded: a broken test must not hang the suite.
        cv_.wait_for(lock, 60s, [&held] { return !held; });
      }
    }
    if (event == "finished") {
      ++finish_writes;
      announce();
    }
  }
  // Until `pred` holds, re-checked at every step the writer announces.
  template <class Pred>
  asio::awaitable<bool> until(Pred pred) {
    co_return co_await testing::until([this](std::function<void()> fn) { return changed.subscribe(std::move(fn)); },
                                      std::move(pred));
  }

 private:
  void announce() {
    asio::post(loop, [this] { changed.emit(); });
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_accept_ = false, hold_finish_ = false;
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
  ~Rig() {
    engine.reset();    // the engine's journal writer calls into `disk`
    loop.io().poll();  // the writer's last announcements, while `disk` lives
  }
  Disk disk{loop.executor()};
};

JobRequest demo(std::uint64_t seed, std::string request_id) {
  JobRequest r;
  r.demo_log_domain = 5;
  r.demo_seed = seed;
  r.request_id = std::move(request_id);
  return r;
}

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
  disk.hold(true, false);
  Submitted first, second;
  side.spawn(submit_into(e, demo(1, "r1"), jobs_dir, first));
  EXPECT_TRUE(co_await disk.until([&disk] { return disk.accepts_held > 0; }));
  {
    // A timer fires while the writer is stuck in the write.
    asio::steady_timer t(co_await asio::this_coro::executor, 0ms);
    co_await t.async_wait(asio::use_awaitable);
  }
  EXPECT_FALSE(first.result.has_value()) << "submit answered before its record was written";
  std::optional<JobView> pending = find_job(e.status(), "r1");  // status answers meanwhile
  EXPECT_TRUE(pending.has_value());
  if (pending) {
    EXPECT_EQ(pending->state, JobState::kQueued);
    EXPECT_EQ(pending->stage, "accepting");
  }
  side.spawn(submit_into(e, demo(1, "r1"), jobs_dir, second));
  co_await testing::run_ready();  // the resubmit runs up to its wait
  EXPECT_FALSE(second.result.has_value()) << "a resubmit answered before the first record was written";
  disk.hold(false, false);
  co_await side.join();  // both submissions answered
  EXPECT_TRUE(first.result && second.result);
  if (!first.result || !second.result) co_return;
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
  EXPECT_TRUE(co_await disk.until([&disk] { return disk.finish_writes >= 1; }));

  // 2. A finish record in flight: the loop serves, and the input file stays
  // until the terminal record is durable.
  disk.hold(false, true);
  Result<JobView> third = co_await e.submit_durable(demo(3, "r3"));
  EXPECT_TRUE(third.ok());
  if (third) {
    const JobId id = third.value().id;
    auto out = co_await e.await(id, 0ms);
    EXPECT_TRUE(out.ok());
    EXPECT_TRUE(co_await disk.until([&disk] { return disk.finishes_held > 0; }));
    co_await testing::run_ready();
    EXPECT_EQ(e.status().completed_total, 2u);
    EXPECT_TRUE(fs::exists(jobs_dir / (std::to_string(id) + ".job"))) << "input deleted before its end was durable";
    done_ids.push_back(id);
  }
  disk.hold(false, false);

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
