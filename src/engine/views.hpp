// Plain results the engine reports (and the RPC client returns): no asio,
// no capnp, so cuzkctl and tests can use them without the engine.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/types.hpp"

namespace cuzk::engine {

struct ParamsEntry {
  std::string circuit_id;
  std::uint64_t bytes = 0;
};

struct Timings {
  std::uint64_t queue_ms = 0, params_ms = 0, synthesis_ms = 0, prove_ms = 0, verify_ms = 0, total_ms = 0;
};

struct ProofOutput {
  std::vector<std::uint8_t> proof;                         // 192 B per proof
  std::vector<std::array<std::uint8_t, 32>> public_inputs;  // little-endian Fr, ONE excluded
  std::vector<std::uint8_t> vk_bytes;                       // bellperson .vk encoding
  Timings timings;
};

struct JobView {
  JobId id = 0;
  std::string request_id;
  ProofKind kind = ProofKind::kGroth16Demo;
  Priority priority = Priority::kNormal;
  JobState state = JobState::kQueued;
  std::string stage;
  std::uint32_t queue_position = 0;
  bool deduplicated = false;
  std::uint64_t age_ms = 0;
};

struct JobOutcome {
  JobView job;
  ProofOutput output;
};

struct JobEvent {
  JobId id = 0;
  std::string request_id;
  JobState state = JobState::kQueued;
  std::string stage;
  std::uint64_t elapsed_ms = 0;
  std::optional<Error> error;
};

struct WorkerView {
  std::uint32_t id = 0;
  std::optional<JobId> job;
};

struct EngineStatus {
  std::uint64_t uptime_ms = 0;
  bool draining = false;
  std::array<std::uint32_t, kNumPriorities> queued{};  // indexed by Priority
  std::uint32_t queue_capacity = 0;
  std::vector<JobView> jobs;  // every job in the table, finished ones until they expire
  std::vector<WorkerView> workers;
  std::vector<ParamsEntry> loaded_params;
  std::uint64_t resident_bytes = 0;
  std::uint64_t completed_total = 0, failed_total = 0, cancelled_total = 0;
};

struct ParamsInfo {
  bool already_loaded = false;
  std::uint64_t load_ms = 0;
};

}  // namespace cuzk::engine
