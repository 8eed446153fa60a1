// End to end, the daemon's transport and operations: a real cuzkd with a TCP
// listener (TLS with a self-signed certificate made by the openssl CLI at test
// time, plus a bearer token), driven by rpc::Client and cuzkctl.
//   - TLS + right token: proofs come back and verify;
//   - wrong or missing token: a typed `unauthenticated` refusal;
//   - plain TCP to the TLS port, or a TLS client that distrusts the
//     certificate: a clean transport error, the daemon keeps serving;
//   - an oversized message and raw garbage end only their own connection
//     while another client's job completes; the per-connection call cap
//     answers `overloaded` beyond its limit without touching other clients;
//   - SIGHUP applies the reloadable keys (visible in behaviour and logs) and
//     names the ones that need a restart; RELOADING=1/READY=1 and WATCHDOG=1
//     reach a test NOTIFY_SOCKET;
//   - io_uring refused by a seccomp filter (as Docker's default profile
//     does): the daemon still loads parameters (pread pool) and proves.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "circuits/demo.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "rpc/client.hpp"
#include "rpc/client_impl.hpp"
#include "daemon_harness.hpp"

namespace cuzk {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using engine::ErrorKind;
using engine::JobRequest;

constexpr std::uint32_t kSmallSize = 5;
constexpr char kToken[] = "7f3a9c2e51d84b06a1e2c3d4f5a6b7c8";  // 32 bytes

using e2e::demo;
using e2e::read_file;
// The proof alone is checked here (daemon_e2e_test checks the public inputs).
constexpr auto verifies = e2e::proof_verifies;

int run_shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// A seccomp filter that makes io_uring_setup fail with EPERM, exactly what a
// container runtime's default profile does. Installed in the forked child
// before exec (no_new_privs allows it without privileges).
bool deny_io_uring_setup() {
#if defined(__x86_64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  return false;
#endif
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// Whether the filter can be installed here and does refuse io_uring_setup.
bool seccomp_refusal_works() {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!deny_io_uring_setup()) std::_Exit(2);
    long rc = ::syscall(__NR_io_uring_setup, 4, nullptr);
    std::_Exit(rc < 0 && errno == EPERM ? 0 : 3);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct DaemonOptions {
  std::string config;                                    // TOML text
  std::vector<std::pair<std::string, std::string>> env;  // extra environment
  bool deny_io_uring = false;
};

// A cuzkd on <dir>/<name>-state; once ready, its TCP port (if it listens on
// one) is read from its log.
class Daemon : public e2e::DaemonProcess {
 public:
  Daemon(const fs::path& dir, const std::string& name, const DaemonOptions& opts)
      : DaemonProcess(
            dir, name,
            {opts.config, dir / (name + "-state"), opts.env, opts.deny_io_uring ? &deny_io_uring_setup : nullptr}) {
    if (!wait_ready(20s, /*stop_on_exit=*/false)) {
      ADD_FAILURE() << "cuzkd did not become ready; log:\n" << log();
      return;
    }
    parse_tcp_port();
  }
  std::string tcp_addr() const { return "tcp://127.0.0.1:" + std::to_string(tcp_port_); }
  int tcp_port() const { return tcp_port_; }
  std::string log() const { return log_text(); }
  // Waits until the log contains `needle` (true) or `timeout` passes.
  bool wait_log(const std::string& needle, std::chrono::milliseconds timeout = 10s) const {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (log().find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  void parse_tcp_port() {
    std::smatch m;
    std::string text = log();
    // The daemon listens on port 0 and logs the port the kernel chose.
    if (std::regex_search(text, m, std::regex("listening tcp.*port=([0-9]+)"))) tcp_port_ = std::stoi(m[1]);
  }
  int tcp_port_ = 0;
};

using e2e::NotifySocket;

class ServiceNetE2E : public e2e::SharedDaemonSuite<Daemon> {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(make_suite_dir("cuzkd-net"));
    // A self-signed certificate for "localhost" (and 127.0.0.1), and a second
    // one the daemon does not use (a CA the client must not accept).
    for (const char* name : {"server", "other"}) {
      std::string cmd =
          "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
          "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
          (*dir_ / (std::string(name) + ".key")).string() + " -out " + (*dir_ / (std::string(name) + ".crt")).string() +
          " 2>/dev/null";
      ASSERT_EQ(run_shell(cmd), 0) << "openssl could not make a certificate: " << cmd;
    }
    std::ofstream(*dir_ / "token") << kToken << "\n";  // a trailing newline is not part of the token
    daemon_ = new Daemon(*dir_, "tls", {tls_config(4), {}, false});
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- cuzkd log ---\n%s\n", daemon_->log().c_str());
  }

  static std::string tls_config(std::uint32_t max_calls, const std::string& level = "debug") {
    return "[daemon]\nlisten_tcp = \"tcp://127.0.0.1:0\"\n"
           "tls_cert_file = \"" +
           (*dir_ / "server.crt").string() +
           "\"\n"
           "tls_key_file = \"" +
           (*dir_ / "server.key").string() +
           "\"\n"
           "token_file = \"" +
           (*dir_ / "token").string() +
           "\"\n"
           "max_message_bytes = 1048576\nauth_timeout_ms = 2000\n"
           "max_calls_per_connection = " +
           std::to_string(max_calls) +
           "\n"
           "[engine]\nmax_concurrent_jobs = 1\nqueue_capacity = 16\nurgent_reserve = 1\nmax_demo_log_domain = 14\n"
           "[cpu]\nmath_threads = 2\n"
           "[logging]\nlevel = \"" +
           level + "\"\n";
  }
  static rpc::ClientOptions tls_options(std::string token = kToken) {
    rpc::ClientOptions o;
    o.tls_ca_file = (*dir_ / "server.crt").string();
    o.tls_server_name = "localhost";
    o.token = std::move(token);
    return o;
  }
};

TEST_F(ServiceNetE2E, TlsWithTheRightTokenProvesAndVerifies) {
  ASSERT_GT(daemon_->tcp_port(), 0) << "no 'listening tcp' line";
  rpc::Client c(daemon_->tcp_addr(), tls_options());
  auto r = c.prove(demo(kSmallSize, 11), 30000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(verifies(r.value(), kSmallSize, 11));
  EXPECT_EQ(c.status().max_message_bytes, 1048576u);
  EXPECT_TRUE(daemon_->wait_log("login peer=127.0.0.1:"));
}

// tcp://127.0.0.1 without a server name: the certificate's IP SAN
// (IP:127.0.0.1) is what authenticates the daemon; another address, or a
// certificate from another CA, is still refused.
TEST_F(ServiceNetE2E, TlsToAnIpAddressAcceptsAMatchingIpSan) {
  rpc::ClientOptions by_ip = tls_options();
  by_ip.tls_server_name.clear();
  rpc::Client c(daemon_->tcp_addr(), by_ip);
  auto r = c.prove(demo(kSmallSize, 12), 30000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(verifies(r.value(), kSmallSize, 12));
  rpc::ClientOptions other_ip = tls_options();
  other_ip.tls_server_name = "127.0.0.2";
  try {
    rpc::Client refused(daemon_->tcp_addr(), other_ip);
    ADD_FAILURE() << "a certificate for 127.0.0.1 was accepted for 127.0.0.2";
  } catch (const rpc::ClientError& e) {
    EXPECT_EQ(e.kind(), rpc::ClientErrorKind::kTransport) << e.what();
  }
  rpc::ClientOptions other_ca = by_ip;
  other_ca.tls_ca_file = (*dir_ / "other.crt").string();
  try {
    rpc::Client refused(daemon_->tcp_addr(), other_ca);
    ADD_FAILURE() << "an untrusted certificate was accepted";
  } catch (const rpc::ClientError& e) {
    EXPECT_EQ(e.kind(), rpc::ClientErrorKind::kTransport) << e.what();
  }
#ifdef CUZKCTL_BINARY
  if (fs::exists(CUZKCTL_BINARY)) {
    EXPECT_EQ(run_shell(std::string(CUZKCTL_BINARY) + " --addr " + daemon_->tcp_addr() + " --tls-ca " +
                        (*dir_ / "server.crt").string() + " --token-file " + (*dir_ / "token").string() +
                        " status >/dev/null 2>&1"),
              0);
  }
#endif
}

TEST_F(ServiceNetE2E, WrongOrMissingTokenIsATypedRefusal) {
  for (std::string token :
       {std::string("7f3a9c2e51d84b06a1e2c3d4f5a6b7c9"), std::string(), std::string(kToken) + "x"}) {
    try {
      rpc::Client c(daemon_->tcp_addr(), tls_options(token));
      ADD_FAILURE() << "token '" << token << "' was accepted";
    } catch (const rpc::ClientError& e) {
      EXPECT_EQ(e.kind(), rpc::ClientErrorKind::kUnauthenticated) << e.what();
    }
  }
  EXPECT_TRUE(daemon_->wait_log("login refused"));
  // The refused logins cost nothing: the right token still works.
  rpc::Client ok(daemon_->tcp_addr(), tls_options());
  EXPECT_EQ(ok.status().schema_version, 1u);
}

TEST_F(ServiceNetE2E, PlainTcpOrAnUntrustedCertificateFailsCleanly) {
  // Plain TCP to the TLS port: the daemon's handshake fails on capnp bytes
  // and closes; the client sees a transport error, not a hang.
  auto t0 = std::chrono::steady_clock::now();
  rpc::ClientOptions plain;
  plain.token = kToken;
  try {
    rpc::Client c(daemon_->tcp_addr(), plain);
    c.status();
    ADD_FAILURE() << "plain TCP was served on the TLS port";
  } catch (const rpc::ClientError& e) {
    EXPECT_EQ(e.kind(), rpc::ClientErrorKind::kTransport) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(daemon_->wait_log("TLS handshake failed"));
  // A client trusting another certificate refuses the daemon's.
  rpc::ClientOptions other = tls_options();
  other.tls_ca_file = (*dir_ / "other.crt").string();
  try {
    rpc::Client c(daemon_->tcp_addr(), other);
    ADD_FAILURE() << "an untrusted certificate was accepted";
  } catch (const rpc::ClientError& e) {
    EXPECT_EQ(e.kind(), rpc::ClientErrorKind::kTransport) << e.what();
  }
  // A name the certificate does not carry is refused too.
  rpc::ClientOptions wrong_name = tls_options();
  wrong_name.tls_server_name = "prover.example";
  EXPECT_THROW(rpc::Client(daemon_->tcp_addr(), wrong_name), rpc::ClientError);
  // A peer that connects and says nothing is closed after auth_timeout_ms (2 s).
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(daemon_->tcp_port()));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  timeval tv{6, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char byte;
  t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the silent connection was not closed";
  EXPECT_GT(std::chrono::steady_clock::now() - t0, 1500ms);
  ::close(fd);
  // And the daemon is still serving.
  rpc::Client ok(daemon_->tcp_addr(), tls_options());
  EXPECT_EQ(ok.status().schema_version, 1u);
}

TEST_F(ServiceNetE2E, OversizedAndGarbageMessagesEndOnlyTheirConnection) {
  rpc::Client good(daemon_->tcp_addr(), tls_options());
  auto pending = good.submit(demo(kSmallSize, 21));
  ASSERT_TRUE(pending.ok()) << pending.error().message;
  // 2 MiB in one message against max_message_bytes = 1 MiB.
  {
    rpc::Client big(daemon_->tcp_addr(), tls_options());
    auto call = big.impl().cap.submitRequest();
    call.initRequest().initKind().initPorepC2().initVanillaProof(2 << 20);
    EXPECT_THROW(call.send().wait(big.impl().ws()), kj::Exception);
  }
  // Whether the daemon logs "connection closed" depends on which side sees
  // the reset first (the RPC system may end the connection as a plain
  // disconnect): not asserted. What matters is asserted below: the daemon
  // keeps serving and the good client's job completes.
  // Raw garbage on the Unix socket: a segment table claiming 2^32-1 segments,
  // then a capnp frame claiming a 2^32-word segment.
  for (std::uint32_t words : {0xffffffffu, 0u}) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::string path = daemon_->addr().substr(7);
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    std::uint32_t frame[2] = {words == 0 ? 0u : words, 0xffffffffu};
    ASSERT_EQ(::send(fd, frame, sizeof frame, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof frame));
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[256];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {  // capnp may send an abort message first
    }
    EXPECT_EQ(n, 0) << "the daemon did not close a garbage connection";
    ::close(fd);
  }
  // The good client's job completes and verifies, and new clients are served.
  auto done = good.await(pending.value().id, 30000);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(verifies(done.value(), kSmallSize, 21));
  rpc::Client after(daemon_->tcp_addr(), tls_options());
  EXPECT_TRUE(after.prove(demo(kSmallSize, 22), 30000).ok());
}

// Pipelines `n` awaits of `job` on one connection; counts the answers that
// are `overloaded` (answered at once) and returns the pending promises' count
// via `pending`.
TEST_F(ServiceNetE2E, CallCapPerConnectionAnswersOverloadedAndSparesOthers) {
  rpc::Client flood(daemon_->tcp_addr(), tls_options());
  // A job that runs for a while: the first size-12 proof in this state dir
  // generates its parameters (~1 s on 2 cores).
  auto slow = flood.submit(demo(12, 31));
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  // 10 pipelined awaits against a cap of 4: 6 are refused at once.
  std::vector<capnp::RemotePromise<rpc::schema::ProvingV1::AwaitResults>> calls;
  for (int i = 0; i < 10; ++i) {
    auto call = flood.impl().cap.awaitRequest();
    call.initJob().setJobId(slow.value().id);
    call.setTimeoutMs(60000);
    calls.push_back(call.send());
  }
  // And 2000 immediate calls (not counted), pipelined without waiting.
  std::vector<capnp::RemotePromise<rpc::schema::ProvingV1::StatusResults>> statuses;
  for (int i = 0; i < 2000; ++i) statuses.push_back(flood.impl().cap.statusRequest().send());
  // Meanwhile another connection is served: its own calls are not capped by
  // the flood, and its job completes.
  auto t0 = std::chrono::steady_clock::now();
  rpc::Client other(daemon_->tcp_addr(), tls_options());
  auto t_login = std::chrono::steady_clock::now();
  EXPECT_EQ(other.status().schema_version, 1u);
  auto t_status = std::chrono::steady_clock::now();
  // (Queued behind the flood's size-12 job: one engine worker here.)
  auto mine = other.prove(demo(kSmallSize, 32), 60000);
  ASSERT_TRUE(mine.ok()) << mine.error().message;
  using ms = std::chrono::duration<double, std::milli>;
  std::printf("while another connection floods: TLS connect + login %.1f ms, one status call %.1f ms\n",
              ms(t_login - t0).count(), ms(t_status - t_login).count());
  EXPECT_TRUE(verifies(mine.value(), kSmallSize, 32));
  int overloaded = 0, proved = 0;
  for (auto& p : calls) {
    auto answer = p.wait(flood.impl().ws());
    auto r = answer.getResponse();
    if (r.isError()) {
      EXPECT_EQ(r.getError().getKind(), rpc::schema::ErrorKind::OVERLOADED) << r.getError().getMessage().cStr();
      ++overloaded;
    } else {
      ++proved;
    }
  }
  EXPECT_EQ(overloaded, 6);
  EXPECT_EQ(proved, 4);
  for (auto& p : statuses) EXPECT_EQ(p.wait(flood.impl().ws()).getStatus().getSchemaVersion(), 1u);
}

TEST_F(ServiceNetE2E, CuzkctlSpeaksTlsWithATokenFile) {
#ifndef CUZKCTL_BINARY
  GTEST_SKIP() << "cuzkctl not built";
#else
  if (!fs::exists(CUZKCTL_BINARY)) GTEST_SKIP() << "cuzkctl not built";
  std::string base = std::string(CUZKCTL_BINARY) + " --addr tcp://localhost:" + std::to_string(daemon_->tcp_port()) +
                     " --tls-ca " + (*dir_ / "server.crt").string();
  EXPECT_EQ(run_shell(base + " --token-file " + (*dir_ / "token").string() + " status >/dev/null 2>&1"), 0);
  std::ofstream(*dir_ / "bad-token") << "this-is-not-the-right-token\n";
  int rc = run_shell(base + " --token-file " + (*dir_ / "bad-token").string() + " status >" +
                     (*dir_ / "ctl.out").string() + " 2>&1");
  // A refused token is a typed failure (exit 1, kind unauthenticated), not an
  // unreachable daemon (exit 3, unavailable).
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(read_file(*dir_ / "ctl.out").rfind("error: unauthenticated: ", 0), 0u) << read_file(*dir_ / "ctl.out");
  // CUZK_TOKEN works like --token-file.
  EXPECT_EQ(run_shell("CUZK_TOKEN=" + std::string(kToken) + " " + base + " status >/dev/null 2>&1"), 0);
#endif
}

TEST_F(ServiceNetE2E, InsecureTcpIsRefusedOffLoopback) {
  DaemonOptions o;
  o.config = "[daemon]\nlisten_tcp = \"tcp://0.0.0.0:0\"\ntcp_insecure_loopback = true\n";
  fs::path log = *dir_ / "insecure.log";
  pid_t pid = ::fork();
  if (pid == 0) {
    std::ofstream(*dir_ / "insecure.toml") << o.config;
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    ::execl(CUZKD_BINARY, "cuzkd", "--config", (*dir_ / "insecure.toml").c_str(), "--listen",
            ("unix://" + (*dir_ / "insecure.sock").string()).c_str(), "--state-dir", (*dir_ / "insecure-state").c_str(),
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(read_file(log).find("non-loopback"), std::string::npos) << read_file(log);
}

TEST_F(ServiceNetE2E, InsecureLoopbackServesPlainTcpWithTheToken) {
  std::string config = "[daemon]\nlisten_tcp = \"tcp://127.0.0.1:0\"\ntcp_insecure_loopback = true\ntoken_file = \"" +
                       (*dir_ / "token").string() + "\"\n[cpu]\nmath_threads = 2\n";
  Daemon d(*dir_, "loopback", {config, {}, false});
  ASSERT_GT(d.tcp_port(), 0) << d.log();
  rpc::ClientOptions plain;
  plain.token = kToken;
  rpc::Client c(d.tcp_addr(), plain);
  auto r = c.prove(demo(kSmallSize, 41), 30000);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(verifies(r.value(), kSmallSize, 41));
  plain.token = "wrong";
  try {
    rpc::Client bad(d.tcp_addr(), plain);
    ADD_FAILURE() << "wrong token accepted on the loopback listener";
  } catch (const rpc::ClientError& e) {
    EXPECT_EQ(e.kind(), rpc::ClientErrorKind::kUnauthenticated);
  }
}

TEST_F(ServiceNetE2E, SighupReloadsAndWatchdogPings) {
  NotifySocket notify(*dir_ / "notify.sock");
  DaemonOptions o;
  o.config = tls_config(4, "info");
  // 200 ms watchdog: pings every 100 ms.
  o.env = {{"NOTIFY_SOCKET", (*dir_ / "notify.sock").string()}, {"WATCHDOG_USEC", "200000"}};
  Daemon d(*dir_, "reload", o);
  EXPECT_NE(notify.receive("READY=1"), "");
  // Watchdog: at least 5 pings in ~1 s, none more than ~3 periods apart.
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) ASSERT_NE(notify.receive("WATCHDOG=1", 400ms), "") << "ping " << i;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
  // A stopped process (as a stuck loop) sends none.
  d.signal(SIGSTOP);
  std::this_thread::sleep_for(50ms);  // the stop takes effect
  notify.drain();
  EXPECT_EQ(notify.receive("WATCHDOG=1", 500ms), "");
  d.signal(SIGCONT);
  EXPECT_NE(notify.receive("WATCHDOG=1", 1s), "");

  rpc::Client c(d.tcp_addr(), tls_options());
  // Before: debug lines are filtered out (level = info).
  ASSERT_TRUE(c.prove(demo(kSmallSize, 51), 30000).ok());
  EXPECT_EQ(d.log().find(" debug msg="), std::string::npos);
  // New config: debug logging, a call cap of 1, a smaller queue, and two keys
  // that need a restart.
  EXPECT_EQ(c.status().engine.queue_capacity, 16u);
  std::string next = tls_config(1, "debug");
  next.replace(next.find("queue_capacity = 16"), 19, "queue_capacity = 8");
  next.replace(next.find("auth_timeout_ms = 2000"), 22, "auth_timeout_ms = 3000");
  next.replace(next.find("max_concurrent_jobs = 1"), 23, "max_concurrent_jobs = 2");
  std::ofstream(d.config_path()) << next;
  notify.drain();
  d.signal(SIGHUP);
  EXPECT_NE(notify.receive("RELOADING=1"), "");
  EXPECT_NE(notify.receive("READY=1"), "");
  ASSERT_TRUE(d.wait_log("config reloaded")) << d.log();
  std::string log = d.log();
  EXPECT_NE(log.find("logging.level=debug"), std::string::npos) << log;
  EXPECT_NE(log.find("daemon.max_calls_per_connection=1"), std::string::npos) << log;
  EXPECT_NE(log.find("engine.queue_capacity=8"), std::string::npos) << log;
  EXPECT_NE(log.find("needs_restart=daemon.auth_timeout_ms,engine.max_concurrent_jobs"), std::string::npos) << log;
  EXPECT_EQ(c.status().engine.queue_capacity, 8u);
  // The new cap applies: of two pipelined awaits on one connection, one is refused.
  auto slow = c.submit(demo(12, 52));
  ASSERT_TRUE(slow.ok());
  std::vector<capnp::RemotePromise<rpc::schema::ProvingV1::AwaitResults>> calls;
  for (int i = 0; i < 2; ++i) {
    auto call = c.impl().cap.awaitRequest();
    call.initJob().setJobId(slow.value().id);
    calls.push_back(call.send());
  }
  int overloaded = 0;
  for (auto& p : calls) overloaded += p.wait(c.impl().ws()).getResponse().isError() ? 1 : 0;
  EXPECT_EQ(overloaded, 1);
  // And debug lines now appear.
  EXPECT_TRUE(d.wait_log(" debug msg=", 2s)) << d.log();
  // A config that does not parse changes nothing and says so.
  std::ofstream(d.config_path()) << "[daemon\n";
  d.signal(SIGHUP);
  EXPECT_TRUE(d.wait_log("config rejected")) << d.log();
  EXPECT_EQ(c.status().schema_version, 1u);
}

TEST_F(ServiceNetE2E, RefusedIoUringFallsBackToThePreadPoolAndProves) {
  if (!seccomp_refusal_works()) GTEST_SKIP() << "cannot install a seccomp filter here (or it does not refuse io_uring)";
  std::string config = "[cpu]\nmath_threads = 2\n[logging]\nlevel = \"debug\"\n";
  Daemon d(*dir_, "nouring", {config, {}, true});
  std::string log = d.log();
  EXPECT_NE(log.find("io_uring=\"Operation not permitted\""), std::string::npos) << log;
  EXPECT_NE(log.find("files_on_io_uring=no"), std::string::npos) << log;
  EXPECT_NE(log.find("sockets=epoll"), std::string::npos) << log;
  rpc::Client c(d.addr());
  auto first = c.prove(demo(kSmallSize, 61), 30000);  // generates and writes the parameters
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(c.evict("demo-" + std::to_string(kSmallSize)).ok());
  auto loaded = c.preload("demo-" + std::to_string(kSmallSize));  // reads the file back
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_FALSE(loaded.value().already_loaded);
  ASSERT_TRUE(d.wait_log("parameter file read")) << d.log();
  EXPECT_NE(d.log().find("backend=pread-pool"), std::string::npos) << d.log();
  auto second = c.prove(demo(kSmallSize, 62), 30000);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(verifies(second.value(), kSmallSize, 62));
}

}  // namespace
}  // namespace cuzk
