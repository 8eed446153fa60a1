// Vocabulary of the job engine: priorities, job states, typed errors, and the
// request a client submits. Shared by the engine, the RPC translation layer
// and cuzkctl; no I/O, no asio.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace cuzk::engine {

using JobId = std::uint64_t;

// Ordered: a larger value is served first.
enum class Priority : std::uint8_t { kLow = 0, kNormal = 1, kHigh = 2, kCritical = 3 };
inline constexpr int kNumPriorities = 4;
std::string_view to_string(Priority p);
std::optional<Priority> parse_priority(std::string_view s);  // "low" .. "critical"

enum class JobState : std::uint8_t { kQueued, kRunning, kDone, kFailed, kCancelled };
std::string_view to_string(JobState s);
constexpr bool is_finished(JobState s) {
  return s == JobState::kDone || s == JobState::kFailed || s == JobState::kCancelled;
}

// What a client should do about an error (see rpc/cuzk.capnp ErrorKind).
enum class ErrorKind : std::uint8_t {
  kInvalidInput,
  kNotFound,
  kOverloaded,
  kCancelled,
  kUnimplemented,
  kInternal,
  kTimeout,
  kShuttingDown,
};
std::string_view to_string(ErrorKind k);

struct Error {
  ErrorKind kind;
  std::string message;
  bool operator==(const Error&) const = default;
};

// A value or a typed error.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

enum class ProofKind : std::uint8_t {
  kGroth16Demo,  // built-in demo circuit (src/circuits/demo.hpp)
  kPoRepC2,      // PoRep commit phase 2: C1 JSON in, partitions x 192 B out
  kWindowPost,
  kWinningPost,
  kSnapDeals,
};
std::string_view to_string(ProofKind k);

struct JobRequest {
  std::string request_id;            // idempotency key; empty: the engine assigns "job-<id>"
  std::optional<Priority> priority;  // nullopt: the kind's default
  ProofKind kind = ProofKind::kGroth16Demo;
  std::uint32_t demo_log_domain = 0;  // kGroth16Demo: size = log2 of the domain (rounds fill it)
  std::uint64_t demo_seed = 0;        // kGroth16Demo: witness x_0
  // The input of a Filecoin kind, parsed by the job on a worker thread (a
  // 32 GiB C1 is tens of MB and must not stall the loop):
  //   kPoRepC2: the SealCommitPhase1Output JSON;
  //   kWindowPost, kWinningPost, kSnapDeals: the request's fields encoded by
  //   engine/filecoin_request.hpp (vanilla proofs, randomness, commitments).
  std::string input;
  // When the proof is due (wall clock, ms since the Unix epoch); 0: none. A
  // job that ends after it is still proved, and counted as late (status,
  // metrics: cuzk_deadline_missed_total). Not journaled.
  std::uint64_t deadline_unix_ms = 0;
  // Same proof wanted: the idempotency check compares requests with this.
  bool same_work(const JobRequest& o) const {
    return kind == o.kind && demo_log_domain == o.demo_log_domain && demo_seed == o.demo_seed && input == o.input;
  }
};

Priority default_priority(ProofKind k);

// Either a job id or a client request id.
using JobKey = std::variant<JobId, std::string>;

}  // namespace cuzk::engine
