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

// A parameter file being read now (ParamStore::read_params_file and the demo
// loads): how far the read and the decoding have come.
struct ParamsLoadView {
  std::string file;  // file name, no directory
  std::uint64_t file_bytes = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t decoded_bytes = 0;
  std::uint64_t elapsed_ms = 0;
};

// A job's stage times. For the partitioned kinds: synthesis_ms is the
// request's preparation plus every partition's synthesis, prove_ms every
// partition's device wait and prove, verify_ms every partition's
// verification plus the kind's final check (summed: partitions overlap, so
// the sums exceed the wall time total_ms - queue_ms when the GPU is busy).
struct Timings {
  std::uint64_t queue_ms = 0, params_ms = 0, synthesis_ms = 0, prove_ms = 0, verify_ms = 0, total_ms = 0;
};

struct ProofOutput {
  std::vector<std::uint8_t> proof;                          // 192 B per proof
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
  std::uint64_t deadline_unix_ms = 0;  // the request's; 0: none
  // Ended after the deadline, or still unfinished past it.
  bool deadline_missed = false;
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

// One proving back end (a GPU, or the CPU) and what it is doing.
struct DeviceWorkerView {
  std::uint32_t index = 0;    // GPU index in the daemon (the CPU back end: after the GPUs)
  std::string name;           // "cpu" or "cuda:<ordinal> <device name>"
  std::int32_t ordinal = -1;  // CUDA ordinal; -1 for the CPU
  std::optional<JobId> job;   // the job proving there now
  std::optional<std::uint32_t> partition;
  std::string stage;  // "idle", "prove", "setup", "srs upload" (a preload's)
  std::uint32_t jobs_placed = 0;
  std::uint64_t proofs_done = 0;
  std::uint64_t verify_failures = 0;  // proofs that failed verification (retried on the CPU)
  std::string resident_srs;           // parameters resident on the device ("" none)
  std::uint64_t resident_srs_bytes = 0;
  // The R1CS matrices kept on the device beside the SRS for the device
  // evaluation of a, b, c (DeviceBackend::abc_matrices_device_bytes; 0: none).
  std::uint64_t r1cs_matrices_bytes = 0;
  // The GPU's MSM scratch arena: the device bytes it holds now and the limit
  // it may grow to (DeviceBackend::msm_scratch_device_bytes and
  // msm_scratch_limit_bytes; 0 for the CPU).
  std::uint64_t msm_scratch_bytes = 0, msm_scratch_limit_bytes = 0;
  std::uint64_t memory_total_bytes = 0, memory_free_bytes = 0;  // device memory (0 for the CPU)
  // The GPU prover's own stage inside a prove ("evaluate", "h_ntt", "h_msm",
  // "l_msm", "a_msm", "b_msm"...; "" when none is running or the back end
  // does not report it), since when, and on which CUDA stream.
  std::string prover_stage;
  std::uint64_t prover_stage_ms = 0;                    // elapsed in the stage
  std::uint64_t prover_stream = 0;                      // the stream's handle value (0: the default stream)
  std::uint32_t prover_streams = 0, prover_events = 0;  // CUDA streams and events the prover owns (0: unknown)
};

// Where a parameter set (SRS) is held: tier "host" (the engine's copy in
// memory), "device" (the part a GPU keeps in its memory) or "pinned" (the
// rest of that GPU's copy, in page-locked host memory streamed to it by
// every proof; charged to the memory budget).
struct SrsResidencyView {
  std::string srs;  // circuit id or parameter file
  std::string tier;
  std::int32_t device = -1;  // device index for tiers "device" and "pinned"
  std::uint64_t bytes = 0;
};

// The host-memory budget (policy/memory_budget.hpp).
struct MemoryBudgetView {
  std::uint64_t total_bytes = 0, reserved_bytes = 0, available_bytes = 0, peak_reserved_bytes = 0;
  std::uint32_t waiting = 0;  // requests queued for memory
  std::uint64_t waiting_bytes = 0;
  // Of reserved_bytes: witness memory kept for the next run (KeptWitnesses).
  std::uint64_t kept_witness_bytes = 0;
};

struct EngineStatus {
  std::uint64_t uptime_ms = 0;
  bool draining = false;
  std::array<std::uint32_t, kNumPriorities> queued{};  // indexed by Priority
  std::uint32_t queue_capacity = 0;
  std::vector<JobView> jobs;  // every job in the table, finished ones until they expire
  std::vector<WorkerView> workers;
  std::vector<ParamsEntry> loaded_params;
  std::vector<ParamsLoadView> loading_params;  // files being read now
  std::uint64_t resident_bytes = 0;
  std::uint64_t completed_total = 0, failed_total = 0, cancelled_total = 0;
  std::vector<DeviceWorkerView> devices;  // GPUs first, then the CPU back end
  std::vector<SrsResidencyView> srs;
  MemoryBudgetView memory;
  std::uint64_t cpu_retries_total = 0;  // GPU proofs re-proved on the CPU after failing verification
};

struct ParamsInfo {
  bool already_loaded = false;
  std::uint64_t load_ms = 0;
  // This call generated DEVELOPMENT parameters (no file was found); false:
  // resident already, or read from a file.
  bool generated = false;
  // GPU back ends (one per device and worker, as status lists them) and how
  // many of them hold the set's SRS once the preload returns; fewer than
  // `gpus` when an upload failed (logged): those upload it with their first
  // job. Both 0 without GPUs.
  std::uint32_t gpus = 0;
  std::uint32_t gpus_holding = 0;
};

}  // namespace cuzk::engine
