// End to end: a real cuzkd process on a Unix socket in a temp dir, driven by
// real clients (rpc::Client and the raw capability). CPU only, tiny demo
// sizes. A "blocker" job (a larger size seen for the first time, so it also
// generates parameters) keeps the single worker busy for seconds while the
// test queues jobs behind it; every test checks that precondition explicitly
// instead of trusting timing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "rpc/client.hpp"
#include "rpc/client_impl.hpp"
#include "rpc/convert.hpp"
#include "daemon_harness.hpp"

namespace cuzk {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using engine::ErrorKind;
using engine::JobRequest;
using engine::JobState;
using engine::Priority;

constexpr char kConfig[] = R"(
[daemon]
max_message_bytes = 1048576
drain_timeout_ms = 20000
# A Unix connection must make its first call within this (see
# UnixPeersThatNeverCallAreClosed).
auth_timeout_ms = 3000
[engine]
max_concurrent_jobs = 1
# No CRITICAL-only worker: PrioritiesOverloadTimeoutCancelAndWatch checks the
# queue order of every priority behind one busy worker (the critical lane is
# covered by FilecoinEngine.CriticalWinningPostOvertakesAPorepHoldingTheWorker).
critical_workers = 0
queue_capacity = 4
urgent_reserve = 1
max_demo_log_domain = 14
# Several daemons share this state dir at once (for its parameters); the job
# journal admits one daemon per state dir (journal_e2e_test covers it).
journal = false
[cpu]
math_threads = 2
# PoRep partitions synthesized with a pool per lane (the parallel-challenge
# path; the default is one thread per partition).
[porep]
synthesis_threads = 2
[logging]
level = "debug"
)";

// The blocker's size: 2^14 rows; first use generates parameters (~2.5 s on 2
// cores) and proving takes ~1.4 s more, against milliseconds for the queued
// jobs' submissions.
constexpr std::uint32_t kBlockerSize = 14;
constexpr std::uint32_t kSmallSize = 5;

// A cuzkd on <dir>/state (shared by all daemons of the suite, for its
// parameters). notify_socket: when set, the daemon's sd_notify messages go there.
class Daemon : public e2e::DaemonProcess {
 public:
  Daemon(const fs::path& dir, const std::string& name, const std::string& notify_socket = "")
      : DaemonProcess(dir, name, launch(dir, notify_socket)) {
    if (!wait_ready(20s, /*stop_on_exit=*/false)) ADD_FAILURE() << "cuzkd did not become ready; log:\n" << log_tail();
  }

 private:
  static e2e::DaemonLaunch launch(const fs::path& dir, const std::string& notify_socket) {
    e2e::DaemonLaunch l{kConfig, dir / "state", {}, nullptr};
    if (!notify_socket.empty()) l.env.emplace_back("NOTIFY_SOCKET", notify_socket);
    return l;
  }
};

using e2e::demo;
using e2e::find_job;
using e2e::verifies;

// Waits until `id` is running (the blocker has reached the worker).
void wait_running(rpc::Client& c, engine::JobId id) { e2e::wait_running(c, id, 10s); }

class DaemonE2E : public e2e::SharedDaemonSuite<Daemon> {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(make_suite_dir("cuzkd-e2e"));
    daemon_ = new Daemon(*dir_, "shared");
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- cuzkd log tail ---\n%s\n", daemon_->log_tail().c_str());
  }
  static const std::string& addr() { return daemon_->addr(); }
};

TEST_F(DaemonE2E, SocketIsGroupOnly) {
  struct stat st {};
  ASSERT_EQ(::stat(daemon_->socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

// A Unix peer that connects and never completes a call (silent, or stuck
// half-way through a message) is closed after auth_timeout_ms, as TCP peers
// that never log in are; a client that calls is not affected.
TEST_F(DaemonE2E, UnixPeersThatNeverCallAreClosed) {
  auto connect_raw = [] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", daemon_->socket().c_str());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    timeval tv{15, 0};  // bounded: a daemon that never closes fails the test, not hangs it
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  };
  int silent = connect_raw();
  int partial = connect_raw();
  const std::uint8_t half_frame[4] = {0, 0, 0, 0};  // a segment count, then nothing
  ASSERT_EQ(::send(partial, half_frame, sizeof half_frame, MSG_NOSIGNAL), 4);
  rpc::Client busy(addr());
  EXPECT_EQ(busy.status().schema_version, 1u);
  for (int fd : {silent, partial}) {
    char byte;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the idle Unix connection was not closed";
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 14s);
    ::close(fd);
  }
  // The client that called keeps its connection past the deadline.
  EXPECT_EQ(busy.status().schema_version, 1u);
}

TEST_F(DaemonE2E, ConcurrentClientsGetProofsThatVerify) {
  constexpr int kClients = 3, kPerClient = 2;
  std::vector<std::vector<engine::Result<engine::JobOutcome>>> results(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([c, &results] {
      rpc::Client client(addr());
      for (int i = 0; i < kPerClient; ++i)
        results[static_cast<std::size_t>(c)].push_back(
            client.prove(demo(kSmallSize, 100 + static_cast<std::uint64_t>(c * kPerClient + i)), 30000));
    });
  }
  for (auto& t : threads) t.join();
  std::set<engine::JobId> ids;
  for (int c = 0; c < kClients; ++c) {
    for (int i = 0; i < kPerClient; ++i) {
      const auto& r = results[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)];
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ(r.value().job.state, JobState::kDone);
      EXPECT_TRUE(verifies(r.value(), kSmallSize, 100 + static_cast<std::uint64_t>(c * kPerClient + i)));
      ids.insert(r.value().job.id);
    }
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kClients * kPerClient));
}

TEST_F(DaemonE2E, ResubmittingARequestIdReturnsTheSameJob) {
  rpc::Client c(addr());
  auto first = c.submit(demo(kSmallSize, 7, "idem-1"));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first.value().deduplicated);
  auto again = c.submit(demo(kSmallSize, 7, "idem-1"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().id, first.value().id);
  EXPECT_TRUE(again.value().deduplicated);
  // Same id, different work: refused rather than silently aliased.
  auto clash = c.submit(demo(kSmallSize, 8, "idem-1"));
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().kind, ErrorKind::kInvalidInput);
  auto by_request = c.await(std::string("idem-1"), 30000);
  ASSERT_TRUE(by_request.ok()) << by_request.error().message;
  auto by_id = c.await(first.value().id, 30000);
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_request.value().output.proof, by_id.value().output.proof);
  EXPECT_TRUE(verifies(by_id.value(), kSmallSize, 7));
  // After completion a resubmit still returns the finished job (no re-proving).
  auto late = c.submit(demo(kSmallSize, 7, "idem-1"));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late.value().id, first.value().id);
  EXPECT_EQ(late.value().state, JobState::kDone);
  std::string metrics = c.metrics();
  EXPECT_NE(metrics.find("cuzk_jobs_deduplicated_total 2"), std::string::npos) << metrics;
}

// Records watch events delivered to the client.
class Recorder final : public rpc::schema::EventSink::Server {
 public:
  explicit Recorder(std::vector<engine::JobEvent>& out) : out_(out) {}
  kj::Promise<void> event(EventContext ctx) override {
    auto e = ctx.getParams().getEvent();
    engine::JobEvent ev;
    ev.id = e.getJobId();
    ev.request_id = e.getRequestId().cStr();
    ev.state = rpc::from_wire(e.getState());
    ev.stage = e.getStage().cStr();
    if (e.hasError()) ev.error = rpc::read(e.getError());
    out_.push_back(ev);
    return kj::READY_NOW;
  }

 private:
  std::vector<engine::JobEvent>& out_;
};

TEST_F(DaemonE2E, PrioritiesOverloadTimeoutCancelAndWatch) {
  rpc::Client c(addr());
  std::vector<engine::JobEvent> events;
  auto watch = c.impl().cap.watchRequest();
  watch.setSink(kj::heap<Recorder>(events));
  auto handle = watch.send().wait(c.impl().ws()).getHandle();

  auto blocker = c.submit(demo(kBlockerSize, 1, "blocker"));
  ASSERT_TRUE(blocker.ok()) << blocker.error().message;
  wait_running(c, blocker.value().id);

  // Capacity 4 with 1 slot reserved for HIGH/CRITICAL.
  auto low = c.submit(demo(kSmallSize, 11, "", Priority::kLow));
  auto normal = c.submit(demo(kSmallSize, 12, "", Priority::kNormal));
  auto high = c.submit(demo(kSmallSize, 13, "", Priority::kHigh));
  auto normal2 = c.submit(demo(kSmallSize, 14, "", Priority::kNormal));
  auto critical = c.submit(demo(kSmallSize, 15, "", Priority::kCritical));
  auto critical2 = c.submit(demo(kSmallSize, 16, "", Priority::kCritical));
  for (auto* r : {&low, &normal, &high, &critical}) {
    ASSERT_TRUE(r->ok()) << r->error().message;
    EXPECT_EQ(r->value().state, JobState::kQueued);
  }
  ASSERT_FALSE(normal2.ok());
  EXPECT_EQ(normal2.error().kind, ErrorKind::kOverloaded);
  ASSERT_FALSE(critical2.ok());
  EXPECT_EQ(critical2.error().kind, ErrorKind::kOverloaded);

  rpc::ClientStatus s = c.status();
  ASSERT_EQ(find_job(s, blocker.value().id)->state, JobState::kRunning)
      << "the blocker finished before the queue was built; the ordering checks below would be void";
  EXPECT_EQ(find_job(s, critical.value().id)->queue_position, 0u);
  EXPECT_EQ(find_job(s, high.value().id)->queue_position, 1u);
  EXPECT_EQ(find_job(s, normal.value().id)->queue_position, 2u);
  EXPECT_EQ(find_job(s, low.value().id)->queue_position, 3u);
  EXPECT_EQ(s.engine.queued[static_cast<int>(Priority::kCritical)], 1u);
  EXPECT_EQ(s.engine.queued[static_cast<int>(Priority::kLow)], 1u);
  EXPECT_EQ(s.engine.queue_capacity, 4u);
  ASSERT_EQ(s.engine.workers.size(), 1u);
  EXPECT_EQ(s.engine.workers[0].job, blocker.value().id);
  EXPECT_GT(s.engine.resident_bytes, 0u);
  EXPECT_EQ(s.schema_version, 1u);

  // Await with a timeout on a queued job: typed timeout, the job continues.
  auto timed = c.await(normal.value().id, 50);
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.error().kind, ErrorKind::kTimeout);

  // Cancel a queued job: immediate.
  auto cancelled = c.cancel(low.value().id);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled.value().state, JobState::kCancelled);
  auto low_result = c.await(low.value().id, 1000);
  ASSERT_FALSE(low_result.ok());
  EXPECT_EQ(low_result.error().kind, ErrorKind::kCancelled);

  // Cancel the running blocker: cooperative, at its next stage boundary.
  auto stopping = c.cancel(blocker.value().id);
  ASSERT_TRUE(stopping.ok());
  auto blocker_result = c.await(blocker.value().id, 30000);
  ASSERT_FALSE(blocker_result.ok());
  EXPECT_EQ(blocker_result.error().kind, ErrorKind::kCancelled);

  for (auto [r, seed] : {std::pair{&critical, 15}, {&high, 13}, {&normal, 12}}) {
    auto out = c.await(r->value().id, 30000);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_TRUE(verifies(out.value(), kSmallSize, static_cast<std::uint64_t>(seed)));
  }
  // Start order from the watch stream: critical, high, normal.
  std::vector<engine::JobId> started;
  for (const auto& e : events)
    if (e.stage == "params") started.push_back(e.id);
  std::vector<engine::JobId> expect = {blocker.value().id, critical.value().id, high.value().id, normal.value().id};
  EXPECT_EQ(started, expect);
  bool saw_low_cancel = false;
  for (const auto& e : events)
    saw_low_cancel |=
        e.id == low.value().id && e.state == JobState::kCancelled && e.error && e.error->kind == ErrorKind::kCancelled;
  EXPECT_TRUE(saw_low_cancel);

  std::string m = c.metrics();
  EXPECT_NE(m.find("cuzk_jobs_rejected_total{reason=\"overloaded\"} 2"), std::string::npos) << m;
  EXPECT_NE(m.find("# TYPE cuzk_job_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(m.find("cuzk_queue_capacity 4"), std::string::npos);
  // Parameters of both sizes are resident now.
  s = c.status();
  std::set<std::string> loaded;
  for (const auto& p : s.engine.loaded_params) loaded.insert(p.circuit_id);
  EXPECT_TRUE(loaded.count("demo-14") && loaded.count("demo-5"));
  EXPECT_GE(s.engine.cancelled_total, 2u);
}

TEST_F(DaemonE2E, MalformedRequestsGetTypedErrorsWhileOtherJobsComplete) {
  rpc::Client good(addr());
  auto pending = good.submit(demo(kSmallSize, 42));
  ASSERT_TRUE(pending.ok());

  rpc::Client c(addr());
  for (std::uint32_t size : {0u, 2u, 15u, 99u}) {
    auto r = c.submit(demo(size, 1));
    ASSERT_FALSE(r.ok()) << size;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << size;
  }
  for (auto kind : {engine::ProofKind::kWindowPost, engine::ProofKind::kWinningPost, engine::ProofKind::kSnapDeals}) {
    JobRequest req;
    req.kind = kind;
    auto r = c.submit(req);  // no vanilla proofs, no commitments
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << r.error().message;
  }
  {
    JobRequest req;  // PoRep C2 without its C1 output
    req.kind = engine::ProofKind::kPoRepC2;
    auto r = c.submit(req);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  }
  auto missing = c.await(engine::JobId{999999}, 100);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(c.cancel(std::string("no-such-request")).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(c.preload("porep-32g").error().kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(c.evict("demo-9").error().kind, ErrorKind::kNotFound);

  // Raw wire values no engine type can express.
  {
    auto call = c.impl().cap.awaitRequest();
    call.initJob().setRequestId("");
    auto answer = call.send().wait(c.impl().ws());  // owns the message r points into
    auto r = answer.getResponse();
    ASSERT_TRUE(r.isError());
    EXPECT_EQ(r.getError().getKind(), rpc::schema::ErrorKind::INVALID_INPUT);
  }
  {
    auto call = c.impl().cap.submitRequest();
    auto req = call.initRequest();
    req.setPriority(static_cast<rpc::schema::Priority>(17));
    auto g = req.initKind().initGroth16();
    g.setSize(kSmallSize);
    auto answer = call.send().wait(c.impl().ws());  // owns the message r points into
    auto r = answer.getResponse();
    ASSERT_TRUE(r.isError());
    EXPECT_EQ(r.getError().getKind(), rpc::schema::ErrorKind::INVALID_INPUT);
    EXPECT_NE(std::string(r.getError().getMessage().cStr()).find("priority"), std::string::npos);
  }
  // A message above max_message_bytes (1 MiB here) ends that connection only.
  {
    rpc::Client big(addr());
    auto call = big.impl().cap.submitRequest();
    auto porep = call.initRequest().initKind().initPorepC2();
    porep.initVanillaProof(2 << 20);
    EXPECT_THROW(call.send().wait(big.impl().ws()), kj::Exception);
  }
  // A client that hangs up while its await is pending: the daemon answers
  // into the void and carries on.
  {
    rpc::Client quitter(addr());
    auto call = quitter.impl().cap.awaitRequest();
    call.initJob().setJobId(pending.value().id);
    auto promise = call.send();
    quitter.status();  // make sure the await reached the daemon
  }
  // Meanwhile the good client's job completes, and the daemon still serves.
  auto done = good.await(pending.value().id, 30000);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(verifies(done.value(), kSmallSize, 42));
  auto after = rpc::Client(addr()).prove(demo(kSmallSize, 43), 30000);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(verifies(after.value(), kSmallSize, 43));
}

TEST_F(DaemonE2E, SigtermDrainsRunningWorkCancelsQueuedAndExitsZero) {
  // A second daemon on the same state dir (parameters are shared files).
  Daemon d(*dir_, "drain");
  rpc::Client c(d.addr());
  auto running = c.submit(demo(13, 5));  // first use of 13 in this state dir
  ASSERT_TRUE(running.ok());
  wait_running(c, running.value().id);
  auto queued = c.submit(demo(kSmallSize, 6));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued.value().state, JobState::kQueued);

  d.signal(SIGTERM);
  // The listening socket goes away first; this connection keeps working.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!c.status().engine.draining && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(c.status().engine.draining);
  EXPECT_FALSE(fs::exists(d.socket()));
  auto refused = c.submit(demo(kSmallSize, 7));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kShuttingDown);
  auto queued_result = c.await(queued.value().id, 5000);
  ASSERT_FALSE(queued_result.ok());
  EXPECT_EQ(queued_result.error().kind, ErrorKind::kShuttingDown);
  // The running job finishes within the drain timeout and is delivered.
  auto result = c.await(running.value().id, 30000);
  ASSERT_TRUE(result.ok()) << result.error().message << "\n" << d.log_tail();
  EXPECT_TRUE(verifies(result.value(), 13, 5));
  EXPECT_EQ(d.wait_exit(30s), 0) << d.log_tail();
  std::string log = d.log_tail();
  EXPECT_NE(log.find("engine drained"), std::string::npos) << log;
}

using e2e::NotifySocket;

TEST_F(DaemonE2E, IdleDaemonStopsPromptlyOnSigint) {
  NotifySocket notify(*dir_ / "notify.sock");
  Daemon d(*dir_, "idle", (*dir_ / "notify.sock").string());
  EXPECT_NE(notify.receive_next().find("READY=1"), std::string::npos);
  {
    rpc::Client c(d.addr());
    auto r = c.prove(demo(kSmallSize, 1), 30000);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  auto t0 = std::chrono::steady_clock::now();
  d.signal(SIGINT);
  // Nothing runs, so the drain must not wait for drain_timeout_ms (20 s here).
  EXPECT_EQ(d.wait_exit(5s), 0) << d.log_tail();
  EXPECT_NE(notify.receive_next().find("STOPPING=1"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_FALSE(fs::exists(d.socket()));
}

TEST_F(DaemonE2E, SecondSigtermCancelsRunningJobsAndStillExitsZero) {
  Daemon d(*dir_, "hard-stop");
  rpc::Client c(d.addr());
  auto running = c.submit(demo(kBlockerSize, 9));
  ASSERT_TRUE(running.ok());
  wait_running(c, running.value().id);
  d.signal(SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!c.status().engine.draining && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(c.status().engine.draining);
  d.signal(SIGTERM);
  auto result = c.await(running.value().id, 30000);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ErrorKind::kCancelled) << result.error().message;
  EXPECT_EQ(d.wait_exit(30s), 0) << d.log_tail();
}

#ifdef CUZKCTL_BINARY
// cuzkctl against the daemon: exit statuses and the one-line typed error.
struct CliRun {
  int status;
  std::string out;
};
CliRun run_cuzkctl(const std::string& args) {
  std::string cmd = std::string(CUZKCTL_BINARY) + " " + args + " 2>&1";
  CliRun r{-1, ""};
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST_F(DaemonE2E, CuzkctlProvesVerifiesAndReportsTypedErrors) {
  if (!fs::exists(CUZKCTL_BINARY)) GTEST_SKIP() << CUZKCTL_BINARY << " not built";
  std::string a = "--addr " + addr() + " ";
  CliRun prove = run_cuzkctl(a + "--json prove --circuit demo --size 5 --count 2 --seed 77");
  EXPECT_EQ(prove.status, 0) << prove.out;
  EXPECT_NE(prove.out.find("\"all_valid\":true"), std::string::npos) << prove.out;
  CliRun submit = run_cuzkctl(a + "submit --size 5 --request-id ctl-1 --priority high");
  EXPECT_EQ(submit.status, 0) << submit.out;
  CliRun await = run_cuzkctl(a + "--json await --request-id ctl-1 --timeout-ms 30000");
  EXPECT_EQ(await.status, 0) << await.out;
  EXPECT_NE(await.out.find("\"state\":\"done\""), std::string::npos) << await.out;
  CliRun bad = run_cuzkctl(a + "submit --size 99");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out.rfind("error: invalid_input: ", 0), 0u) << bad.out;
  CliRun missing = run_cuzkctl(a + "cancel --job 999999");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("error: not_found"), std::string::npos) << missing.out;
  CliRun status = run_cuzkctl(a + "--json status");
  EXPECT_EQ(status.status, 0);
  EXPECT_NE(status.out.find("\"schema_version\":1"), std::string::npos) << status.out;
  // Device R1CS matrices travel daemon -> wire -> cuzkctl (the CPU back end keeps none).
  EXPECT_NE(status.out.find("\"r1cs_matrices_bytes\":0"), std::string::npos) << status.out;
  // So does the MSM scratch arena and its limit (none on the CPU).
  EXPECT_NE(status.out.find("\"msm_scratch_bytes\":0"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("\"msm_scratch_limit_bytes\":0"), std::string::npos) << status.out;
  CliRun metrics = run_cuzkctl(a + "metrics");
  EXPECT_EQ(metrics.status, 0);
  EXPECT_NE(metrics.out.find("cuzk_jobs_finished_total{outcome=\"done\"}"), std::string::npos);
  EXPECT_NE(metrics.out.find("cuzk_device_r1cs_matrices_bytes{device=\"cpu\"} 0"), std::string::npos) << metrics.out;
  EXPECT_NE(metrics.out.find("cuzk_device_msm_scratch_bytes{device=\"cpu\"} 0"), std::string::npos) << metrics.out;
  EXPECT_NE(metrics.out.find("cuzk_device_msm_scratch_limit_bytes{device=\"cpu\"} 0"), std::string::npos)
      << metrics.out;
  CliRun nowhere = run_cuzkctl("--addr unix://" + (*dir_ / "nobody.sock").string() + " status");
  EXPECT_EQ(nowhere.status, 3);
  EXPECT_EQ(nowhere.out.rfind("error: unavailable: ", 0), 0u) << nowhere.out;
}

// WindowPoSt through cuzkctl and the daemon, from the generator's directory
// and from the vanilla proof files with their public data as flags (the form
// a proving host gets from its node); each proof is checked locally. Other
// randomness than the vanilla proofs answer is refused as invalid_input.
TEST_F(DaemonE2E, CuzkctlProvesWindowPostFromADirectoryAndFromFiles) {
  if (!fs::exists(CUZKCTL_BINARY)) GTEST_SKIP() << CUZKCTL_BINARY << " not built";
  const fs::path w = *dir_ / "window-2k";
  CliRun gen =
      run_cuzkctl("post gen --kind window --sector-size 2KiB --sectors 2 --seed 9 --actor-id 1234 --out " + w.string());
  ASSERT_EQ(gen.status, 0) << gen.out;
  std::ifstream manifest(w / "post.json");
  const std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("\"randomness\"");
  ASSERT_NE(at, std::string::npos) << text;
  const std::size_t open = text.find('"', text.find(':', at)) + 1;
  const std::string randomness = text.substr(open, text.find('"', open) - open);
  ASSERT_EQ(randomness.size(), 64u) << text;
  std::string files;
  for (const auto& e : fs::directory_iterator(w))
    if (e.path().extension() == ".bin") files += " " + e.path().string();

  const std::string a = "--addr " + addr() + " --json prove --window-post ";
  CliRun from_dir = run_cuzkctl(a + w.string() + " --proof " + (*dir_ / "w1.proof").string());
  ASSERT_EQ(from_dir.status, 0) << from_dir.out;
  EXPECT_NE(from_dir.out.find("\"valid\":true"), std::string::npos) << from_dir.out;
  const std::string flags = " --sector-size 2KiB --prover-id 1234 --partition 0 --randomness ";
  CliRun from_files = run_cuzkctl(a + files + flags + randomness + " --proof " + (*dir_ / "w2.proof").string());
  ASSERT_EQ(from_files.status, 0) << from_files.out;
  EXPECT_NE(from_files.out.find("\"valid\":true"), std::string::npos) << from_files.out;
  CliRun other = run_cuzkctl(a + files + flags + std::string(63, '0') + "1");
  EXPECT_EQ(other.status, 1) << other.out;
  EXPECT_NE(other.out.find("invalid_input"), std::string::npos) << other.out;
  CliRun no_flags = run_cuzkctl(a + files);
  EXPECT_EQ(no_flags.status, 2) << no_flags.out;
  EXPECT_NE(no_flags.out.find("--randomness"), std::string::npos) << no_flags.out;
}

// `prove --count K` beyond what the queue holds (capacity 4, one place kept
// for urgent jobs): the refused submission ends the batch, and the jobs it
// had submitted are cancelled rather than left queued for nobody.
TEST_F(DaemonE2E, CuzkctlBatchBeyondTheQueueCancelsWhatItSubmitted) {
  if (!fs::exists(CUZKCTL_BINARY)) GTEST_SKIP() << CUZKCTL_BINARY << " not built";
  rpc::Client c(addr());
  auto blocker = c.submit(demo(kBlockerSize, 31));
  ASSERT_TRUE(blocker.ok());
  wait_running(c, blocker.value().id);
  CliRun batch = run_cuzkctl("--addr " + addr() + " prove --circuit demo --size 5 --count 10 --request-id orph");
  EXPECT_EQ(batch.status, 1) << batch.out;
  EXPECT_EQ(batch.out.rfind("error: overloaded: ", 0), 0u) << batch.out;
  int seen = 0;
  for (const engine::JobView& j : c.status().engine.jobs) {
    if (j.request_id.rfind("orph-", 0) != 0) continue;
    ++seen;
    EXPECT_EQ(j.state, JobState::kCancelled) << j.request_id << " left " << engine::to_string(j.state);
  }
  EXPECT_GE(seen, 1) << "the queue took no job of the batch";  // 3 when nothing else is queued
  c.cancel(blocker.value().id);
  (void)c.await(blocker.value().id, 60000);
}
#endif

// PoRep C2 ------------------------------------------------------------------

namespace fc = circuits::filecoin;

JobRequest porep(std::string c1_json) {
  JobRequest r;
  r.kind = engine::ProofKind::kPoRepC2;
  r.input = std::move(c1_json);
  return r;
}

// The message parse_c1 itself gives for `json` (empty if it parses).
std::string c1_error_of(const std::string& json) {
  try {
    fc::parse_c1(json);
  } catch (const fc::C1Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(DaemonE2E, MalformedPorepC1IsInvalidInputAndTheDaemonStaysUp) {
  rpc::Client c(addr());
  // Valid JSON of the wrong shape, and text that is not JSON at all.
  for (std::string bad :
       {std::string(R"({"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": 7})"), std::string("{not json")}) {
    const std::string expected = c1_error_of(bad);
    ASSERT_FALSE(expected.empty()) << bad;
    auto out = c.prove(porep(bad), 30000);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_EQ(out.error().kind, ErrorKind::kInvalidInput) << out.error().message;
    EXPECT_NE(out.error().message.find(expected), std::string::npos)
        << "daemon said: " << out.error().message << "\nparse_c1 says: " << expected;
  }
  auto empty = c.submit(porep(""));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::kInvalidInput);
  // Still serving: a demo proof completes and verifies.
  auto demo_out = c.prove(demo(kSmallSize, 11), 30000);
  ASSERT_TRUE(demo_out.ok()) << demo_out.error().message;
  EXPECT_TRUE(verifies(demo_out.value(), kSmallSize, 11));
#ifdef CUZKCTL_BINARY
  if (fs::exists(CUZKCTL_BINARY)) {
    fs::path file = *dir_ / "bad-c1.json";
    std::ofstream(file) << "{not json";
    CliRun cli = run_cuzkctl("--addr " + addr() + " prove --porep-c1 " + file.string());
    EXPECT_EQ(cli.status, 1) << cli.out;
    // Stage progress lines may precede it on stderr; the error is the one
    // line "error: <kind>: ..." and the last.
    const std::size_t error_at = cli.out.find("error: ");
    EXPECT_EQ(cli.out.find("error: invalid_input: "), error_at) << cli.out;
    EXPECT_TRUE(error_at == 0 || (error_at != std::string::npos && cli.out[error_at - 1] == '\n')) << cli.out;
    EXPECT_EQ(cli.out.find('\n', error_at), cli.out.size() - 1) << cli.out;
  }
#endif
}

// One genuine 2 KiB sector, end to end: the first PoRep job of the daemon
// compiles the partition circuit and generates development parameters under
// <state-dir>/params (minutes on 2 cores), proves, and the test verifies the
// returned bytes itself against public inputs it derives from the C1's public
// data.
TEST_F(DaemonE2E, PorepC2Of2KiBSectorIsProvedThroughTheDaemonAndVerifies) {
  const fc::SealProof sp = fc::SealProof::StackedDrg2KiBV1_1;
  fc::SyntheticSealInputs in;
  in.sector_id = 17;
  in.prover_id[0] = 3;
  in.ticket[1] = 8;
  in.seed[2] = 6;
  in.data_seed = 5;
  const fc::C1Output c1 = fc::make_synthetic_c1(sp, in);
  const std::string c1_json = fc::to_json(c1);
  const std::size_t partitions = fc::seal_proof_info(sp).partitions;

  std::vector<std::uint8_t> proof;
  std::vector<std::uint8_t> vk_bytes;
#ifdef CUZKCTL_BINARY
  const bool via_cli = fs::exists(CUZKCTL_BINARY);
#else
  const bool via_cli = false;
#endif
  if (via_cli) {
#ifdef CUZKCTL_BINARY
    // Through `cuzkctl prove --porep-c1` (which also verifies locally).
    fs::path c1_file = *dir_ / "c1.json", proof_file = *dir_ / "c2.proof";
    std::ofstream(c1_file) << c1_json;
    CliRun cli = run_cuzkctl("--addr " + addr() + " --json prove --porep-c1 " + c1_file.string() + " --proof " +
                             proof_file.string());
    ASSERT_EQ(cli.status, 0) << cli.out;
    EXPECT_NE(cli.out.find("\"valid\":true"), std::string::npos) << cli.out;
    std::ifstream pf(proof_file, std::ios::binary);
    proof.assign(std::istreambuf_iterator<char>(pf), std::istreambuf_iterator<char>());
    // The key the daemon generated, read from its state dir.
    fs::path vk_file = *dir_ / "state" / "params" / fc::dev_param_names(sp).vk;
    ASSERT_TRUE(fs::exists(vk_file)) << vk_file;
    std::ifstream vf(vk_file, std::ios::binary);
    vk_bytes.assign(std::istreambuf_iterator<char>(vf), std::istreambuf_iterator<char>());
#endif
  } else {
    rpc::Client c(addr());
    auto out = c.prove(porep(c1_json), 0);
    ASSERT_TRUE(out.ok()) << out.error().message;
    proof = out.value().output.proof;
    vk_bytes = out.value().output.vk_bytes;
  }
  ASSERT_EQ(proof.size(), partitions * groth16::kProofBytes);
  EXPECT_TRUE(fs::exists(*dir_ / "state" / "params" / fc::dev_param_names(sp).params));

  auto pvk = groth16::prepare_verifying_key(groth16::decode_vk(vk_bytes));
  auto inputs = fc::porep_public_inputs(sp, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  std::string detail;
  EXPECT_EQ(fc::verify_porep_proof(pvk, proof, inputs, &detail), groth16::VerifyResult::kValid) << detail;
  // The check can fail: the same proof for another seed's statement is rejected.
  auto other = fc::porep_public_inputs(sp, c1.replica_id, c1.comm_d, c1.comm_r, c1.ticket);
  EXPECT_NE(fc::verify_porep_proof(pvk, proof, other), groth16::VerifyResult::kValid);
}

}  // namespace
}  // namespace cuzk
