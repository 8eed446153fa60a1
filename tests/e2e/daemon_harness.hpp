// Shared harness of the end-to-end tests: a real cuzkd process started in a
// temp dir (its own config, socket and log), polled until its socket answers
// a status call, and killed with SIGKILL when the handle goes away; plus the
// demo-job helpers every e2e test uses (request, proof check, job lookup).
// Each test file wraps DaemonProcess in its own small `Daemon` with the
// config and readiness policy it needs. Header-only: each e2e test is one
// translation unit and defines CUZKD_BINARY.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "circuits/demo.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "rpc/client.hpp"

namespace cuzk::e2e {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// How to start one cuzkd; its files are <dir>/<name>.{toml,sock,log}.
struct DaemonLaunch {
  std::string config;                                    // TOML text
  std::filesystem::path state_dir;                       // --state-dir
  std::vector<std::pair<std::string, std::string>> env;  // set in the child before exec
  // Runs in the child after stderr goes to the log, right before exec; a
  // false return ends the child with status 126 (e.g. a seccomp filter).
  bool (*before_exec)() = nullptr;
};

// One cuzkd child process. Starting it does not wait: call wait_ready().
class DaemonProcess {
 public:
  DaemonProcess(const std::filesystem::path& dir, const std::string& name, const DaemonLaunch& launch) {
    socket_ = dir / (name + ".sock");
    log_ = dir / (name + ".log");
    config_ = dir / (name + ".toml");
    std::ofstream(config_) << launch.config;
    addr_ = "unix://" + socket_.string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test leaves no daemon behind
      for (const auto& [k, v] : launch.env) ::setenv(k.c_str(), v.c_str(), 1);
      FILE* log = std::freopen(log_.c_str(), "w", stderr);
      (void)log;
      if (launch.before_exec != nullptr && !launch.before_exec()) std::_Exit(126);
      ::execl(CUZKD_BINARY, "cuzkd", "--config", config_.c_str(), "--listen", addr_.c_str(), "--state-dir",
              launch.state_dir.c_str(), static_cast<char*>(nullptr));
      std::_Exit(127);
    }
  }
  ~DaemonProcess() { kill9(); }
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Ready = the socket accepts a status call. With `stop_on_exit`, a daemon
  // that exits meanwhile ends the wait at once (and is reaped).
  bool wait_ready(std::chrono::milliseconds timeout, bool stop_on_exit) {
    using namespace std::chrono_literals;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::filesystem::exists(socket_)) {
        try {
          rpc::Client c(addr_);
          c.status();
          return true;
        } catch (const rpc::ClientError&) {
        }
      }
      if (stop_on_exit) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          return false;
        }
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  const std::string& addr() const { return addr_; }
  const std::filesystem::path& socket() const { return socket_; }
  const std::filesystem::path& config_path() const { return config_; }
  void signal(int signo) {
    if (pid_ > 0) ::kill(pid_, signo);
  }
  // The crash the journal is for: no drain, no destructor, no flush.
  void kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // Exit status (128 + signal when killed), or -1 if it did not exit within `timeout`.
  int wait_exit(std::chrono::milliseconds timeout) {
    using namespace std::chrono_literals;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }
  std::string log_text() const { return read_file(log_); }
  // The last 4000 bytes of the log: enough context for a failure message.
  std::string log_tail() const {
    std::string all = log_text();
    return all.size() > 4000 ? all.substr(all.size() - 4000) : all;
  }

 private:
  std::filesystem::path socket_, log_, config_;
  std::string addr_;
  pid_t pid_ = -1;
};

// Base of a suite whose tests share one temp dir and one daemon: the suite's
// SetUpTestSuite makes the dir (make_suite_dir) and starts `daemon_`; both go
// when the suite ends.
template <class DaemonT>
class SharedDaemonSuite : public ::testing::Test {
 protected:
  // A fresh /tmp/<prefix>-XXXXXX as dir_; false if mkdtemp failed.
  static bool make_suite_dir(const char* prefix) {
    std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return false;
    dir_ = new std::filesystem::path(tmpl);
    return true;
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
    if (dir_ == nullptr) return;
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete dir_;
    dir_ = nullptr;
  }

  inline static std::filesystem::path* dir_ = nullptr;
  inline static DaemonT* daemon_ = nullptr;
};

// A datagram socket standing in for systemd's notify socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::filesystem::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{0, 100'000};  // receiving polls in 100 ms steps
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~NotifySocket() { ::close(fd_); }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // The next datagram, whatever it says, or "" after `timeout`.
  std::string receive_next(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline)
      if (auto msg = receive_once()) return *msg;
    return "";
  }
  // The next datagram containing `needle`, skipping others, or "" after `timeout`.
  std::string receive(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline)
      if (auto msg = receive_once(); msg && msg->find(needle) != std::string::npos) return *msg;
    return "";
  }
  // Discards what is queued.
  void drain() {
    char buf[512];
    while (::recv(fd_, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
  }

 private:
  // One datagram, or nullopt when none came within the 100 ms receive timeout.
  std::optional<std::string> receive_once() {
    char buf[512];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }
  int fd_;
};

inline engine::JobRequest demo(std::uint32_t size, std::uint64_t seed, std::string request_id = "",
                               std::optional<engine::Priority> priority = std::nullopt) {
  engine::JobRequest r;
  r.kind = engine::ProofKind::kGroth16Demo;
  r.demo_log_domain = size;
  r.demo_seed = seed;
  r.request_id = std::move(request_id);
  r.priority = priority;
  return r;
}

// The proof verifies under the returned key for x_0 = seed, y = chain(x_0)
// (the statement is recomputed here, not taken from the daemon).
inline ::testing::AssertionResult proof_verifies(const engine::JobOutcome& o, std::uint32_t size, std::uint64_t seed) {
  groth16::VerifyingKey vk = groth16::decode_vk(o.output.vk_bytes);
  std::string why;
  auto proofs = groth16::decode_proofs(o.output.proof, &why);
  if (!proofs || proofs->size() != 1) return ::testing::AssertionFailure() << "bad proof bytes: " << why;
  ff::Fr x0 = ff::Fr::from_u64(seed);
  ff::Fr y = circuits::demo_chain(x0, circuits::DemoCircuit::rounds_for_log_domain(size));
  std::vector<ff::Fr> inputs = {x0, y};
  auto verdict = groth16::verify(groth16::prepare_verifying_key(vk), proofs->at(0), inputs);
  if (verdict != groth16::VerifyResult::kValid)
    return ::testing::AssertionFailure() << "verify: " << groth16::to_string(verdict);
  return ::testing::AssertionSuccess();
}

// As proof_verifies, and the outcome's public inputs are exactly (x_0, y).
inline ::testing::AssertionResult verifies(const engine::JobOutcome& o, std::uint32_t size, std::uint64_t seed) {
  ff::Fr x0 = ff::Fr::from_u64(seed);
  ff::Fr y = circuits::demo_chain(x0, circuits::DemoCircuit::rounds_for_log_domain(size));
  std::array<ff::Fr, 2> inputs = {x0, y};
  if (o.output.public_inputs.size() != 2) return ::testing::AssertionFailure() << "want 2 public inputs";
  for (std::size_t i = 0; i < 2; ++i) {
    std::array<std::uint8_t, 32> le{};
    inputs[i].to_bytes_le(le);
    if (le != o.output.public_inputs[i])
      return ::testing::AssertionFailure() << "public input " << i << " is not the requested statement";
  }
  return proof_verifies(o, size, seed);
}

inline std::optional<engine::JobView> find_job(const rpc::ClientStatus& s, engine::JobId id) {
  for (const auto& j : s.engine.jobs)
    if (j.id == id) return j;
  return std::nullopt;
}

// Waits until `id` is running (a blocker job has reached the worker).
inline void wait_running(rpc::Client& c, engine::JobId id, std::chrono::milliseconds timeout) {
  using namespace std::chrono_literals;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto j = find_job(c.status(), id);
    ASSERT_TRUE(j.has_value());
    if (j->state == engine::JobState::kRunning) return;
    std::this_thread::sleep_for(5ms);
  }
  FAIL() << "job " << id << " never started";
}

}  // namespace cuzk::e2e
