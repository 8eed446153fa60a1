#include "engine/types.hpp"

namespace cuzk::engine {

std::string_view to_string(Priority p) {
  switch (p) {
    case Priority::kLow:
      return "low";
    case Priority::kNormal:
      return "normal";
    case Priority::kHigh:
      return "high";
    case Priority::kCritical:
      return "critical";
  }
  return "?";
}

std::optional<Priority> parse_priority(std::string_view s) {
  for (int i = 0; i < kNumPriorities; ++i) {
    auto p = static_cast<Priority>(i);
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

std::string_view to_string(JobState s) {
  switch (s) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "?";
}

std::string_view to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::kInvalidInput:
      return "invalid_input";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kOverloaded:
      return "overloaded";
    case ErrorKind::kCancelled:
      return "cancelled";
    case ErrorKind::kUnimplemented:
      return "unimplemented";
    case ErrorKind::kInternal:
      return "internal";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kShuttingDown:
      return "shutting_down";
  }
  return "?";
}

std::string_view to_string(ProofKind k) {
  switch (k) {
    case ProofKind::kGroth16Demo:
      return "groth16_demo";
    case ProofKind::kPoRepC2:
      return "porep_c2";
    case ProofKind::kWindowPost:
      return "window_post";
    case ProofKind::kWinningPost:
      return "winning_post";
    case ProofKind::kSnapDeals:
      return "snap_deals";
  }
  return "?";
}

Priority default_priority(ProofKind k) {
  // Filecoin's deadlines: WinningPoSt must land within a block time, WindowPoSt
  // within its deadline window; sealing proofs can wait.
  switch (k) {
    case ProofKind::kWinningPost:
      return Priority::kCritical;
    case ProofKind::kWindowPost:
      return Priority::kHigh;
    default:
      return Priority::kNormal;
  }
}

}  // namespace cuzk::engine
