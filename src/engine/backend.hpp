// Proving back ends of the engine: one per device (each GPU, and the CPU).
//
// The engine never sees CUDA: a GPU back end (gpu/service/gpu_backend.hpp,
// linked by cuzkd only when CUDA is built) implements this interface around
// gpu::Device + gpu::GpuProver. Each back end names the WorkerPool its prove()
// runs on (runner()): a GPU back end owns a pool of ONE thread, so the device
// region is serialized per device and never runs on the loop thread; the
// engine reaches it with runtime::run_on(backend.runner(), ...), which posts
// the completion back to the loop.
//
// One instance can also be proved in three steps (engine/staged_prove.hpp
// awaits them): prepare() on a host worker without the device lock, start()
// on runner() under the lock, which queues the device work and returns (the
// back end calls `done` when the device is finished: a GPU back end from a
// CUDA callback, so no thread waits for the device), and finish() on a host
// worker after the lock is released. So the host work of one instance
// overlaps the device work of another. The defaults run prove() in start().
//
// Tests plug a fake back end (tests/unit/engine/fake_backend.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "runtime/event_loop.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

struct BackendMemory {
  std::uint64_t total_bytes = 0;  // device memory (GPU) or 0 when not applicable (CPU)
  std::uint64_t free_bytes = 0;
};

// Where the SRS a back end keeps resident lies (keeps_srs_resident): device
// memory, and page-locked host memory the prover streams to the device on
// every proof when the device budget cannot hold all of it (a GPU back end's
// ResidentSrs placement). Both 0: nothing resident, or a back end that does
// not report.
struct ResidentSrsSplit {
  std::uint64_t device_bytes = 0;
  std::uint64_t pinned_host_bytes = 0;
};

// Wall-clock stage times of one prove() call, in milliseconds, summed over
// its instances (the GPU prover's GpuProveStats; zero where a back end does
// not measure a stage).
struct ProveBreakdown {
  double evaluate_ms = 0;  // host: a, b, c = A.w, B.w, C.w
  double h_ms = 0;         // NTTs and quotient
  double h_msm_ms = 0;
  double l_msm_ms = 0;
  double a_msm_ms = 0;
  double b_msm_ms = 0;  // B_G1 and B_G2
  double assemble_ms = 0;
  bool srs_uploaded = false;  // this call uploaded the SRS to the device first
};

// A stage of a running prove(), for status (DeviceWorkerView::prover_stage).
struct ProverStage {
  std::string name;                               // "evaluate", "h_ntt", "h_msm", ...
  std::chrono::steady_clock::time_point started;  // when the stage began
  std::uint64_t stream = 0;                       // CUDA stream handle value (0: default stream)
  std::uint32_t streams = 0, events = 0;          // owned by the prover (0: unknown)
};

// One instance's host-side state between the staged steps, made by a back end
// (make_staging) and reused for later instances by any back end whose
// can_use() accepts it (a GPU staging holds GiBs of page-locked memory).
class InstanceStaging {
 public:
  virtual ~InstanceStaging() = default;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // "cpu" or "cuda:<ordinal> <device name>".
  virtual std::string name() const = 0;
  // The GPU ordinal; nullopt for the CPU back end.
  virtual std::optional<std::uint32_t> ordinal() const = 0;
  // A card's critical lane (a GPU back end beside the card's workers, with
  // streams of the greatest priority): the engine proves only small
  // critical partitions there (a WinningPoSt racing a busy GPU), never a
  // job's partitions by the dispatch rule (DeviceSet::lane). Default: false.
  virtual bool critical_lane() const { return false; }
  // Thread-safe (a cached value: the device thread may be busy).
  virtual BackendMemory memory() const = 0;
  // Whether the SRS of the last Parameters object proved with stays on the
  // device for the next call (the engine then prefers this back end for jobs
  // of that circuit).
  virtual bool keeps_srs_resident() const = 0;
  // Device bytes the SRS of `params` occupies once resident (0 for the CPU):
  // with a device budget below the whole SRS, only the part placed on the
  // device (the rest is streamed from pinned host memory). Thread-safe.
  virtual std::uint64_t srs_device_bytes(const groth16::Parameters& params) const = 0;
  // The split of the SRS kept resident now (as left by the last prove or
  // start). Thread-safe (a cached value: the device thread may be busy); the
  // default reports nothing resident.
  virtual ResidentSrsSplit resident_srs_split() const { return {}; }
  // Whether the bases of `params` (this very object) are kept by the back
  // end, so that proving with them reads nothing of their host copy (a GPU:
  // its cached or side SRS, as left by the last start or release). The
  // engine may release the host copy of a set every GPU holds
  // (engine/host_srs.hpp). Thread-safe (a cached value); the default, and
  // the CPU's: false.
  virtual bool holds_srs(const groth16::Parameters& /*params*/) const { return false; }
  // Device bytes of the R1CS matrices (A, B, C in CSR) kept resident beside
  // the SRS for evaluating a, b, c on the device (a GPU back end with [gpu]
  // abc_on_device: 7.34 GB per GPU for a 32 GiB PoRep). Status only: they
  // are device memory the SRS figures do not show. Thread-safe (a cached
  // value); the default reports none.
  virtual std::uint64_t abc_matrices_device_bytes() const { return 0; }
  // Device bytes the back end's MSM scratch arena holds now (grown on demand,
  // kept between proofs: ~54 GiB on an H200 after a 32 GiB PoRep), and the
  // limit it may grow to. Status only; thread-safe (cached values); 0 for the CPU.
  virtual std::uint64_t msm_scratch_device_bytes() const { return 0; }
  virtual std::uint64_t msm_scratch_limit_bytes() const { return 0; }
  // Host bytes one prove() call allocates per instance besides the witness
  // (the GPU prover's a, b, c evaluations: 3 x domain x 32 B), for the
  // engine's memory budget.
  virtual std::uint64_t host_bytes_per_instance(const groth16::R1cs& r1cs) const = 0;

  // Blocking. Call only on runner(). Same contract as groth16::Prover::prove;
  // fills *breakdown when given.
  virtual std::vector<groth16::Proof> prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                            std::span<const groth16::Witness> witnesses,
                                            std::span<const groth16::Blinding> blinding, ProveBreakdown* breakdown) = 0;

  // Frees the SRS kept resident on the device (keeps_srs_resident back
  // ends): the engine evicts the parameter set it was uploaded from (policy
  // tier "device"). Blocking; call only on runner(), holding the device
  // lock. The default keeps nothing, so there is nothing to free.
  virtual void release_resident_srs() {}
  // Makes the SRS of `params` resident as the first prove of it would (a
  // GPU: uploaded and kept, with room left for r1cs's device evaluation of
  // a, b, c), without proving: the engine's preload, so that the set's
  // first job uploads nothing and its host copy may go at once. True when
  // the back end keeps it (holds_srs(params) then reports it); false when
  // it keeps nothing (the default, and the CPU's). Throws when the upload
  // fails (the SRS cached before may be gone too). Blocking; call only on
  // runner(), holding the device lock.
  virtual bool make_srs_resident(const groth16::Parameters& /*params*/, const groth16::R1cs& /*r1cs*/) { return false; }

  // Where prove() runs.
  virtual runtime::WorkerPool& runner() = 0;

  // The prover's current stage inside a prove() (GPU back ends: set by the
  // GpuProver's stage observer on the device thread). Thread-safe; the
  // default reports none.
  virtual std::optional<ProverStage> prover_stage() const { return std::nullopt; }

  // ---- One instance in three steps (see the top of this file) -------------
  // A staging this back end's prepare() accepts; any thread.
  virtual std::unique_ptr<InstanceStaging> make_staging() const;
  virtual bool can_use(const InstanceStaging& staging) const;
  // Optional, before 1 (host, a worker thread, no device lock): makes
  // `staging` ready to take an instance of r1cs without allocating in
  // prepare() (a GPU back end pins its host buffer: seconds for a 32 GiB
  // partition). The pipeline calls it when a run starts, beside the first
  // partitions' synthesis. The default has nothing to allocate.
  virtual void reserve_staging(InstanceStaging& /*staging*/, const groth16::R1cs& /*r1cs*/) {}
  // 1. Host, a worker thread, no device lock (another instance may be on the
  //    device meanwhile): everything the device step needs goes into
  //    `staging`. The default keeps references: params, r1cs and w must then
  //    outlive finish(). Throws on bad input. With kCheck the back end checks
  //    every constraint where it evaluates a, b, c (fused into that pass: a
  //    GPU back end here, the CPU back end in its device step) and throws
  //    groth16::UnsatisfiedError, from whichever step evaluates, when w does
  //    not satisfy r1cs.
  virtual void prepare(InstanceStaging& staging, const groth16::Parameters& params, const groth16::R1cs& r1cs,
                       const groth16::Witness& w, const groth16::Blinding& blinding, groth16::SatisfactionCheck check);
  // 2. On runner(), holding the device lock: queues the device work and
  //    returns. Either throws (nothing queued; `done` is never called) or
  //    calls done(nullptr) - or done(error) - exactly once, from any thread
  //    (possibly before start() returns), when the device no longer uses the
  //    staging. `done` must be cheap and must not throw. The default proves
  //    here, blocking runner(), and then calls done.
  virtual void start(InstanceStaging& staging, std::function<void(std::exception_ptr)> done);
  // 3. Host, a worker thread, after `done`, device lock released: the proof;
  //    fills *breakdown when given. Throws on failure.
  virtual groth16::Proof finish(InstanceStaging& staging, ProveBreakdown* breakdown);
};

// The CPU back end: groth16::CpuProver on the math pool, run from `runner`
// (the engine's stage pool).
class CpuBackend final : public DeviceBackend {
 public:
  CpuBackend(runtime::WorkerPool& runner, ThreadPool& math) : runner_(runner), math_(math) {}
  std::string name() const override { return "cpu"; }
  std::optional<std::uint32_t> ordinal() const override { return std::nullopt; }
  BackendMemory memory() const override { return {}; }
  bool keeps_srs_resident() const override { return false; }
  std::uint64_t srs_device_bytes(const groth16::Parameters&) const override { return 0; }
  std::uint64_t host_bytes_per_instance(const groth16::R1cs& r1cs) const override;
  std::vector<groth16::Proof> prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding, ProveBreakdown* breakdown) override;
  runtime::WorkerPool& runner() override { return runner_; }
  // The default staging's device step, with the prepared satisfaction check
  // fused into CpuProver's evaluation.
  void start(InstanceStaging& staging, std::function<void(std::exception_ptr)> done) override;

 private:
  runtime::WorkerPool& runner_;
  ThreadPool& math_;
};

// Development-parameter generation (PoRep "-dev" parameters on first use).
// Blocking; called from a worker thread. `progress(done, total)` counts
// fixed-base multiplications, as groth16::generate_parameters does (it may
// be called from any thread).
using SetupProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;
using DevParamsGenerator = std::function<groth16::Parameters(
    const groth16::R1cs& r1cs, const groth16::ToxicWaste& toxic, ThreadPool& pool, const SetupProgress& progress)>;

// Host bytes of a Parameters object's vectors (the SRS held in memory).
std::uint64_t params_host_bytes(const groth16::Parameters& params);
// The same for the parameters of `r1cs`, from its shape alone (before they
// are read or generated): |h| = m - 1, |l| = aux, |a| = inputs +
// popcount(a_aux), |b_g1| = |b_g2| = popcount(b_in) + popcount(b_aux),
// |ic| = inputs (groth16/params.hpp ExpectedShape).
std::uint64_t expected_params_host_bytes(const groth16::R1cs& r1cs);
// Host bytes of one witness of `r1cs` (inputs and aux, 32 B each).
std::uint64_t witness_bytes(const groth16::R1cs& r1cs);

}  // namespace cuzk::engine
