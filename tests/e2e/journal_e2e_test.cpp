// End to end: the job journal across kill -9 and restarts of a real cuzkd on
// a Unix socket in a temp dir (CPU, demo circuit, small sizes). A "blocker"
// job (a size first used in this state dir, so it also generates parameters)
// keeps the single worker busy while the test queues jobs behind it and then
// kills the daemon; a second daemon on the same state dir must finish every
// accepted job, with the same job ids, and still hand out earlier results.
// Preconditions (the blocker running, the others queued) are checked, not
// assumed from timing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "circuits/demo.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "policy/journal.hpp"
#include "rpc/client.hpp"
#include "daemon_harness.hpp"

namespace cuzk {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using engine::ErrorKind;
using engine::JobId;
using engine::JobRequest;
using engine::JobState;
using engine::Priority;

constexpr char kConfig[] = R"(
[daemon]
drain_timeout_ms = 20000
[engine]
max_concurrent_jobs = 1
queue_capacity = 16
urgent_reserve = 1
max_demo_log_domain = 14
result_ttl_s = 600
journal = true
[cpu]
math_threads = 2
[logging]
level = "debug"
)";

// First use of 2^13 in a state dir: parameters are generated (~1 s on 2
// cores) before proving (~0.7 s); the queued jobs' submissions take ms.
constexpr std::uint32_t kBlockerSize = 13;
constexpr std::uint32_t kSmallSize = 5;

// A cuzkd on <dir>/state; `name` tells its socket, config and log apart.
class Daemon : public e2e::DaemonProcess {
 public:
  enum class Wait : std::uint8_t { kReady, kNothing };
  Daemon(const fs::path& dir, const std::string& name, Wait wait = Wait::kReady)
      : DaemonProcess(dir, name, {kConfig, dir / "state", {}, nullptr}) {
    if (wait == Wait::kNothing) return;
    if (!wait_ready(20s, /*stop_on_exit=*/true))
      ADD_FAILURE() << "cuzkd " << name << " did not become ready; log:\n" << log_text();
  }
};

using e2e::demo;
using e2e::find_job;
using e2e::verifies;

void wait_running(rpc::Client& c, JobId id) { e2e::wait_running(c, id, 20s); }

// Each test gets its own state dir (the journal admits one daemon per dir).
class JournalE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cuzkd-journal-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (HasFailure()) {
      std::fprintf(stderr, "kept for inspection: %s\n", dir_.c_str());  // daemon logs: <name>.log
      return;
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path state() const { return dir_ / "state"; }
  fs::path input_file(JobId id) const { return state() / "jobs" / (std::to_string(id) + ".job"); }
  fs::path dir_;
};

struct Submitted {
  JobId id;
  std::uint32_t size;
  std::uint64_t seed;
  Priority priority = Priority::kNormal;  // the status RPC does not carry it
};

TEST_F(JournalE2E, KilledDaemonResumesEveryAcceptedJobAndKeepsFinishedResults) {
  JobId done_id = 0;
  std::vector<Submitted> pending;
  std::vector<std::uint8_t> done_proof;
  {
    Daemon d(dir_, "first");
    rpc::Client c(d.addr());
    auto done = c.prove(demo(kSmallSize, 1, "done-1"), 60000);
    ASSERT_TRUE(done.ok()) << done.error().message;
    ASSERT_TRUE(verifies(done.value(), kSmallSize, 1));
    done_id = done.value().job.id;
    done_proof = done.value().output.proof;

    auto blocker = c.submit(demo(kBlockerSize, 2, "blocker"));
    ASSERT_TRUE(blocker.ok()) << blocker.error().message;
    wait_running(c, blocker.value().id);
    pending.push_back({blocker.value().id, kBlockerSize, 2});
    struct {
      std::uint32_t size;
      std::uint64_t seed;
      const char* request_id;
      Priority priority;
    } queued[] = {{kSmallSize, 3, "q-normal", Priority::kNormal},
                  {kSmallSize + 1, 4, "q-high", Priority::kHigh},
                  {kSmallSize, 5, "", Priority::kLow},  // the engine names it
                  {kSmallSize, 6, "q-normal-2", Priority::kNormal}};
    for (const auto& q : queued) {
      auto r = c.submit(demo(q.size, q.seed, q.request_id, q.priority));
      ASSERT_TRUE(r.ok()) << r.error().message;
      ASSERT_EQ(r.value().state, JobState::kQueued);
      pending.push_back({r.value().id, q.size, q.seed, q.priority});
    }
    auto s = c.status();
    ASSERT_EQ(find_job(s, blocker.value().id)->state, JobState::kRunning) << "the blocker finished too early";
    for (const auto& p : pending) EXPECT_TRUE(fs::exists(input_file(p.id))) << p.id;
    d.kill9();
  }

  Daemon d(dir_, "second");
  rpc::Client c(d.addr());
  // Every unfinished job is back under its id; the queued ones in priority
  // order (then acceptance order), whatever has already run.
  auto s = c.status();
  std::vector<std::pair<std::uint32_t, Submitted>> queued;  // (queue position, job)
  for (const auto& p : pending) {
    auto v = find_job(s, p.id);
    ASSERT_TRUE(v.has_value()) << "job " << p.id << " was not resumed";
    if (v->state == JobState::kQueued) queued.emplace_back(v->queue_position, p);
  }
  EXPECT_GE(queued.size(), 2u) << "too few jobs left in the queue to check its order";
  std::sort(queued.begin(), queued.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < queued.size(); ++i) {
    const Submitted &a = queued[i - 1].second, &b = queued[i].second;
    EXPECT_TRUE(a.priority > b.priority || (a.priority == b.priority && a.id < b.id))
        << "job " << a.id << " (" << engine::to_string(a.priority) << ") is queued before job " << b.id << " ("
        << engine::to_string(b.priority) << ")";
  }
  // Idempotent resubmit after the restart: the same job.
  auto again = c.submit(demo(kSmallSize, 3, "q-normal", Priority::kNormal));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again.value().id, pending[1].id);
  EXPECT_TRUE(again.value().deduplicated);
  // Each accepted job completes, with a proof that verifies.
  for (const auto& p : pending) {
    auto r = c.await(p.id, 120000);
    ASSERT_TRUE(r.ok()) << "job " << p.id << ": " << r.error().message << "\n" << d.log_text();
    EXPECT_EQ(r.value().job.id, p.id);
    EXPECT_TRUE(verifies(r.value(), p.size, p.seed)) << "job " << p.id;
  }
  // The result finished before the crash is still there, by request id and
  // by job id, and a resubmit of it returns it instead of proving again.
  auto old = c.await(std::string("done-1"), 1000);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old.value().job.id, done_id);
  EXPECT_EQ(old.value().output.proof, done_proof);
  EXPECT_TRUE(verifies(old.value(), kSmallSize, 1));
  auto resubmit = c.submit(demo(kSmallSize, 1, "done-1"));
  ASSERT_TRUE(resubmit.ok());
  EXPECT_EQ(resubmit.value().id, done_id);
  EXPECT_EQ(resubmit.value().state, JobState::kDone);
  // Ids are not reused: a new job gets a larger one.
  auto fresh = c.submit(demo(kSmallSize, 9));
  ASSERT_TRUE(fresh.ok());
  JobId max_id = done_id;
  for (const auto& p : pending) max_id = std::max(max_id, p.id);
  EXPECT_GT(fresh.value().id, max_id);
  // Finished jobs leave no input files behind.
  ASSERT_TRUE(c.await(fresh.value().id, 60000).ok());
  for (const auto& p : pending) EXPECT_FALSE(fs::exists(input_file(p.id))) << p.id;
  std::string log = d.log_text();
  EXPECT_NE(log.find("journal recovered"), std::string::npos) << log;
  // The blocker was running at the kill: one interrupted run is counted.
  auto at = log.find("request_id=blocker");
  ASSERT_NE(at, std::string::npos) << log;
  std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find("interrupted_runs=1"), std::string::npos) << line;
}

TEST_F(JournalE2E, TornJournalTailIsToleratedAndACorruptedInputFailsOnlyItsJob) {
  std::vector<Submitted> jobs;
  {
    Daemon d(dir_, "first");
    rpc::Client c(d.addr());
    auto blocker = c.submit(demo(kBlockerSize, 7, "blk"));
    ASSERT_TRUE(blocker.ok()) << blocker.error().message;
    wait_running(c, blocker.value().id);
    jobs.push_back({blocker.value().id, kBlockerSize, 7});
    for (std::uint64_t seed : {8, 9, 10}) {
      auto r = c.submit(demo(kSmallSize, seed, "j" + std::to_string(seed)));
      ASSERT_TRUE(r.ok()) << r.error().message;
      ASSERT_EQ(r.value().state, JobState::kQueued);
      jobs.push_back({r.value().id, kSmallSize, seed});
    }
    d.kill9();
  }
  // A record cut short, as a kill -9 in the middle of an append leaves it...
  auto torn = policy::encode_record(policy::RecordType::kAccepted, policy::Millis{0}, "999/ghost",
                                    std::vector<std::uint8_t>{0, 1, 1, 0, 0, 0, 0});
  {
    std::ofstream j(state() / "journal", std::ios::binary | std::ios::app);
    j.write(reinterpret_cast<const char*>(torn.data()), static_cast<std::streamsize>(torn.size() / 2));
  }
  // ...and one job's input damaged on disk.
  const Submitted damaged = jobs[2];
  {
    std::fstream f(input_file(damaged.id), std::ios::binary | std::ios::in | std::ios::out);
    ASSERT_TRUE(f.good());
    f.seekp(-2, std::ios::end);
    f.put('\x7f');
  }

  Daemon d(dir_, "second");
  rpc::Client c(d.addr());
  for (const auto& j : jobs) {
    auto r = c.await(j.id, 120000);
    if (j.id == damaged.id) {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().kind, ErrorKind::kInternal);
      EXPECT_NE(r.error().message.find("lost"), std::string::npos) << r.error().message;
    } else {
      ASSERT_TRUE(r.ok()) << "job " << j.id << ": " << r.error().message << "\n" << d.log_text();
      EXPECT_TRUE(verifies(r.value(), j.size, j.seed));
    }
  }
  auto fresh = c.submit(demo(kSmallSize, 11));
  ASSERT_TRUE(fresh.ok());
  EXPECT_GT(fresh.value().id, jobs.back().id);
  EXPECT_LT(fresh.value().id, 999u) << "the torn record's id must not count";
  std::string log = d.log_text();
  EXPECT_NE(log.find("torn last record"), std::string::npos) << log;
  EXPECT_NE(log.find("job input unusable"), std::string::npos) << log;
}

TEST_F(JournalE2E, GracefulStopLeavesQueuedJobsToTheNextStart) {
  Submitted running{}, queued{};
  {
    Daemon d(dir_, "first");
    rpc::Client c(d.addr());
    auto r = c.submit(demo(kBlockerSize, 12, "run"));
    ASSERT_TRUE(r.ok()) << r.error().message;
    wait_running(c, r.value().id);
    running = {r.value().id, kBlockerSize, 12};
    auto q = c.submit(demo(kSmallSize, 13, "wait"));
    ASSERT_TRUE(q.ok());
    ASSERT_EQ(q.value().state, JobState::kQueued);
    queued = {q.value().id, kSmallSize, 13};
    d.signal(SIGTERM);
    // The drain still tells this client the queued job will not run now...
    auto stopped = c.await(queued.id, 10000);
    ASSERT_FALSE(stopped.ok());
    EXPECT_EQ(stopped.error().kind, ErrorKind::kShuttingDown);
    // ...and says what it is: still queued, left for the next start - not cancelled.
    auto left = find_job(c.status(), queued.id);
    ASSERT_TRUE(left.has_value());
    EXPECT_EQ(left->state, JobState::kQueued);
    EXPECT_EQ(left->stage, "left queued for the next start");
    auto done = c.await(running.id, 60000);
    ASSERT_TRUE(done.ok()) << done.error().message;
    EXPECT_EQ(d.wait_exit(30s), 0) << d.log_text();
    const std::string log = d.log_text();
    EXPECT_NE(log.find("job left queued for the next start"), std::string::npos) << log;
    EXPECT_EQ(log.find("job cancelled"), std::string::npos) << log;
  }
  // ...but it stays accepted, and runs at the next start; the finished one
  // is still awaitable.
  Daemon d(dir_, "second");
  rpc::Client c(d.addr());
  auto q = c.await(std::string("wait"), 60000);
  ASSERT_TRUE(q.ok()) << q.error().message << "\n" << d.log_text();
  EXPECT_EQ(q.value().job.id, queued.id);
  EXPECT_TRUE(verifies(q.value(), queued.size, queued.seed));
  auto r = c.await(running.id, 1000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(verifies(r.value(), running.size, running.seed));
}

TEST_F(JournalE2E, ASecondDaemonOnTheSameStateDirRefusesToStart) {
  Daemon first(dir_, "first");
  Daemon second(dir_, "second", Daemon::Wait::kNothing);
  EXPECT_EQ(second.wait_exit(20s), 1) << second.log_text();
  EXPECT_NE(second.log_text().find("another cuzkd uses the state directory"), std::string::npos) << second.log_text();
  // The first one is unaffected.
  rpc::Client c(first.addr());
  auto r = c.prove(demo(kSmallSize, 1), 60000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(verifies(r.value(), kSmallSize, 1));
}

}  // namespace
}  // namespace cuzk
