// The proving pipeline of one job, partition by partition, on the loop:
//
//   lanes (<= synthesis_lanes, on the synthesis pool)      one prover coroutine
//   reserve 2 x witness --> synthesize k --> check k -->   queue --> device lock
//   (shrink to 1 x witness once synthesized)                     --> prove k (back end's thread)
//                                                                --> verify k (retry on the CPU once)
//                                                                --> free k's reservation
//
// so synthesis of partitions N+1.. overlaps the proving of partition N, and
// the partitions in memory are bounded twice: by max_in_flight (synthesizing
// or waiting or proving) and by the host-memory budget (each partition holds
// a reservation sized from its real witness until it is proved). The prover's
// own host working set (host_bytes_per_instance) is reserved once per job
// BEFORE any lane starts: reserved later it could wait forever behind the
// witnesses it is meant to consume.
//
// Every proof is verified right after it is proved, while its witness is
// still in memory: a GPU proof that does not verify is proved again on the CPU
// back end (logged and counted); a CPU proof that does not verify, or a back
// end that throws (device out of memory...), fails the job as internal.
//
// Also here: MemoryGate (the MemoryBudget awaited from coroutines) and
// DeviceSet (the back ends, their loop-side locks, placement and activity).
// Loop-thread only, like the engine.
#pragma once

#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "engine/backend.hpp"
#include "engine/types.hpp"
#include "engine/views.hpp"
#include "groth16/verifier.hpp"
#include "policy/memory_budget.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/log.hpp"
#include "runtime/notifier.hpp"

namespace cuzk::engine {

// policy::MemoryBudget on the loop, with waiting as a co_await.
class MemoryGate {
 public:
  MemoryGate(asio::any_io_executor loop, std::uint64_t total_bytes);
  ~MemoryGate();  // every reservation must be gone
  MemoryGate(const MemoryGate&) = delete;
  MemoryGate& operator=(const MemoryGate&) = delete;

  // Waits, by priority, until `bytes` are reserved. Errors: kInternal when the
  // request exceeds the budget less what charge() holds for good (it could
  // only wait forever: a configuration error), kOverloaded when the wait
  // queue is full, kCancelled when `cancel` was set meanwhile (polled).
  asio::awaitable<Result<policy::Reservation>> reserve(std::uint64_t bytes, Priority priority,
                                                      const std::atomic<bool>& cancel);
  // Charges memory that is already in use and stays (loaded parameters), at
  // once, even past the total. Empty (untracked) only when a CRITICAL waiter
  // is queued.
  policy::Reservation charge(std::uint64_t bytes);
  // Like charge() for memory that may be given back (an evictable parameter
  // set, engine.cpp "SRS residency"): not counted as held for good.
  policy::Reservation charge_evictable(std::uint64_t bytes);
  policy::MemoryBudget& budget() { return budget_; }
  policy::BudgetStats stats() const { return budget_.stats(); }
  std::uint64_t total_bytes() const { return budget_.total_bytes(); }

 private:
  policy::MemoryBudget budget_;
  runtime::Notifier ready_;
  std::uint64_t permanent_bytes_ = 0;  // charged by charge(): never given back while the engine runs
};

// The back ends: GPUs (index 0..n-1 in the order given) and the CPU.
class DeviceSet {
 public:
  struct Slot {
    Slot(asio::any_io_executor loop, std::shared_ptr<DeviceBackend> b, std::uint32_t i)
        : backend(std::move(b)), index(i), freed(std::move(loop)) {}
    std::shared_ptr<DeviceBackend> backend;
    std::uint32_t index;
    bool busy = false;  // a prove (or GPU setup) holds the device
    runtime::Notifier freed;
    std::uint32_t jobs = 0;  // jobs placed here and not finished (load)
    // Activity, for status.
    std::optional<JobId> job;
    std::optional<std::uint32_t> partition;
    std::string stage = "idle";
    std::uint64_t proofs_done = 0;
    std::uint64_t verify_failures = 0;  // proofs that did not verify (then retried on the CPU)
    std::uint64_t prove_errors = 0;     // prove() threw (then retried on the CPU)
    // The SRS left on the device by the last prove (keeps_srs_resident back ends).
    std::string resident_srs;
    std::uint64_t resident_srs_bytes = 0;
  };

  // The device lock: held across a prove; RAII.
  class Lock {
   public:
    Lock() = default;
    explicit Lock(Slot* s) : slot_(s) {}
    Lock(Lock&& o) noexcept : slot_(std::exchange(o.slot_, nullptr)) {}
    Lock& operator=(Lock&& o) noexcept;
    ~Lock() { unlock(); }
    void unlock();

   private:
    Slot* slot_ = nullptr;
  };

  // Placement for the lifetime of a job (RAII): counts the job on its slot.
  class Placement {
   public:
    Placement() = default;
    explicit Placement(Slot* s) : slot_(s) { ++slot_->jobs; }
    Placement(Placement&& o) noexcept : slot_(std::exchange(o.slot_, nullptr)) {}
    Placement& operator=(Placement&&) = delete;
    ~Placement() {
      if (slot_) --slot_->jobs;
    }
    Slot& slot() const { return *slot_; }

   private:
    Slot* slot_ = nullptr;
  };

  DeviceSet(asio::any_io_executor loop, std::shared_ptr<DeviceBackend> cpu,
            std::vector<std::shared_ptr<DeviceBackend>> gpus);
  ~DeviceSet();

  bool has_gpu() const { return !gpus_.empty(); }
  std::size_t gpu_count() const { return gpus_.size(); }
  Slot& gpu(std::size_t i) { return *gpus_.at(i); }
  Slot& cpu() { return *cpu_; }
  // A GPU where `srs_key` is resident (the least loaded such) unless another
  // GPU has fewer jobs placed, then that least loaded GPU; the CPU when there
  // is no GPU.
  Placement place(const std::string& srs_key);
  asio::awaitable<Lock> lock(Slot& slot);

  std::vector<DeviceWorkerView> views() const;
  std::uint64_t cpu_retries() const { return cpu_retries_; }
  void count_cpu_retry() { ++cpu_retries_; }

 private:
  std::vector<std::unique_ptr<Slot>> gpus_;
  std::unique_ptr<Slot> cpu_;
  std::uint64_t cpu_retries_ = 0;
};

// Measured per partition (the structured timing log and the job's timings).
struct PartitionTiming {
  std::uint32_t partition = 0;
  std::string device;
  double synthesis_ms = 0, check_ms = 0, device_wait_ms = 0, prove_ms = 0, verify_ms = 0;
  ProveBreakdown breakdown;
  bool retried_on_cpu = false;
};

struct PartitionPlan {
  JobId job = 0;
  Priority priority = Priority::kNormal;
  std::string srs_key;  // identifies the parameters (residency)
  std::uint32_t partitions = 1;
  std::uint64_t witness_bytes = 0;  // one partition's witness (host)
  std::size_t synthesis_lanes = 1;  // partitions synthesized at once
  std::size_t max_in_flight = 2;    // partitions reserved and not yet proved (>= lanes)
  const groth16::Parameters* params = nullptr;
  const groth16::R1cs* r1cs = nullptr;
  const groth16::PreparedVerifyingKey* pvk = nullptr;
  // Per partition, ONE excluded, derived from public data (PoRep). Empty:
  // each proof is verified against its own witness's inputs (demo circuit).
  std::vector<std::vector<ff::Fr>> public_inputs;
  // On the synthesis pool: partition k's witness, or a typed error.
  std::function<Result<groth16::Witness>(std::uint32_t k)> synthesize;
  // On the synthesis pool after synthesize: cheap checks (shape, inputs,
  // satisfaction); nullopt when fine. May be empty.
  std::function<std::optional<Error>(std::uint32_t k, const groth16::Witness& w)> check;
  // On the loop, at every stage change of a partition (job stage for status).
  std::function<void(std::uint32_t k, std::string_view stage)> on_stage;
};

struct PipelineOutcome {
  std::vector<groth16::Proof> proofs;  // partition order, each verified
  std::vector<std::vector<ff::Fr>> public_inputs;  // what each proof was verified against
  std::vector<PartitionTiming> timings;
  std::uint32_t cpu_retries = 0;
  std::size_t peak_in_flight = 0;
};

struct PipelineDeps {
  runtime::WorkerPool& synthesis;  // lanes run here
  runtime::WorkerPool& cpu;        // verification
  DeviceSet& devices;
  MemoryGate& memory;
  runtime::Logger& log;
};

// Runs the plan. Errors: the first partition's failure (synthesis, checks,
// budget, a proof invalid even on the CPU), or kCancelled once `cancel` is
// set (checked between stages; every reservation is given back on return).
asio::awaitable<Result<PipelineOutcome>> run_partition_pipeline(PipelineDeps deps, const PartitionPlan& plan,
                                                                const std::atomic<bool>& cancel);

// Peak resident set size of the process (VmHWM), bytes; 0 if unknown.
std::uint64_t peak_resident_bytes();

// Whether an exception is asio's operation_aborted: the engine's coroutines
// are being torn down (shutdown), not a failure of the work.
bool is_cancellation(const std::system_error& e);

}  // namespace cuzk::engine
