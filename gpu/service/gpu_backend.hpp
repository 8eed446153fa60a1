// The engine's DeviceBackend on one CUDA device (library cuzk_gpu_service,
// linked by cuzkd only when CUDA is built): a gpu::Device and a
// gpu::GpuProver, owned by one dedicated thread. Every use of the device -
// proving, development setup, memory queries - runs on that thread, so the
// device region is serialized and never runs on the loop; the engine posts
// prove() there with runtime::run_on(runner(), ...).
//
// The prover keeps the SRS of the last Parameters object resident on the
// device (GpuProver's cache), so consecutive jobs of one circuit upload it
// once.
//
// Staged proofs (engine/backend.hpp): prepare() runs GpuProver::prepare on
// the caller's (host) thread into a gpu::ProveStaging; start() queues the
// device work on the device thread and returns; the fence's CUDA callback
// calls `done`. A staging is device-agnostic host memory, so one prepared
// with any GpuBackend may start on any other.
//
// No CUDA types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "gpu/fence.hpp"
#include "runtime/log.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu {
class ResidentSrs;
}  // namespace cuzk::gpu

namespace cuzk::gpu_service {

struct GpuBackendOptions {
  // [gpu] abc_on_device: a, b, c = A.w, B.w, C.w evaluated on the device
  // from the R1CS's matrices kept there (gpu::AbcSource::kDevice: ~16
  // thread-s of host work and 8.7 GB of PCIe less per 32 GiB PoRep
  // partition, 7.4 GB of device memory more), the satisfaction check with
  // it. Matrices that do not fit beside the SRS and the workspace fall back
  // to the host evaluation (logged), never failing the proof.
  bool abc_on_device = true;
  // [gpu] msm_scratch: the device memory the prover's MSMs may use as
  // scratch (gpu::Device::MsmTuning::scratch_limit_bytes); 0 keeps the
  // Device's default (gpu::default_msm_scratch_bytes: 58.2 GiB on an H200,
  // where G1 2^27 takes 585 ms against 619 in 32 GiB and 816 in 8).
  std::uint64_t msm_scratch_bytes = 0;
  // [gpu] srs_device_budget: device memory for the prover's SRS, the rest
  // streamed from pinned host memory each proof (gpu::GpuProverOptions::
  // srs_device_budget_bytes; 0 streams it all). Empty: auto, the whole SRS
  // when it fits beside the working set (an H200 holds the 32 GiB PoRep SRS).
  std::optional<std::uint64_t> srs_device_budget_bytes = std::nullopt;
  // This back end is its card's critical lane ([gpu] critical_lane; made by
  // make_gpu_backends beside the card's workers, for the engine's
  // DeviceSet::lane): a second gpu::Device object on the card (its own MSM
  // arena and NTT tables) whose prover's streams run at the device's
  // greatest priority, a, b, c evaluated on the host (small circuits), and
  // host steps on a pool of its own (kLaneThreads: the math pool runs one
  // parallel_for at a time, a partition's among them). So a WinningPoSt
  // proves while the card's worker runs a PoRep partition, instead of
  // waiting up to that partition's device time (~1.0-1.4 s).
  bool critical_lane = false;
  // Where the back end logs (the matrices' upload, host fallbacks); null: nowhere.
  runtime::Logger* log = nullptr;
};

class GpuBackend final : public engine::DeviceBackend {
 public:
  // Opens device `ordinal` on the backend's thread; throws gpu::Error
  // (kNoDevice) when it cannot. `math` (host work of the prover and the
  // setup) and options.log must outlive the back end.
  GpuBackend(int ordinal, ThreadPool& math, GpuBackendOptions options = {});
  ~GpuBackend() override;
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  // Host threads of a critical lane's prover (a, b, c of a 2^19 domain and
  // the witness MSMs' selection).
  static constexpr std::size_t kLaneThreads = 4;
  // A critical lane's MSM arena limit, whatever [gpu] msm_scratch says: a
  // WinningPoSt's MSMs (at most 2^19 points) fit in one chunk, and a full
  // 80 GB card (80.3 of 81.6 GB in use after a warm PoRep run on an H100)
  // has little room beside its worker.
  static constexpr std::uint64_t kLaneMsmScratchBytes = std::uint64_t{1} << 30;

  std::string name() const override { return name_; }
  std::optional<std::uint32_t> ordinal() const override { return static_cast<std::uint32_t>(ordinal_); }
  bool critical_lane() const override { return options_.critical_lane; }
  engine::BackendMemory memory() const override;
  bool keeps_srs_resident() const override { return true; }
  // The resident SRS's device part when `params` is the set resident now,
  // else the placement the prover would make (gpu::srs_device_budget_for and
  // gpu::place_srs) from the device's free memory measured with no SRS and no
  // workspace held (at open and after release_resident_srs; another worker
  // on the same device may have taken some since).
  std::uint64_t srs_device_bytes(const groth16::Parameters& params) const override;
  // Cached on the device thread after each prove / start / release.
  engine::ResidentSrsSplit resident_srs_split() const override;
  bool holds_srs(const groth16::Parameters& params) const override;
  // One staging's page-locked bytes: gpu::ProveStaging::host_bytes_bound
  // for the path prepare() takes now (the witness with abc_on_device, a, b,
  // c without, or once the R1cs's matrices did not fit this device).
  std::uint64_t host_bytes_per_instance(const groth16::R1cs& r1cs) const override;
  // Device bytes of the R1CS matrices resident for the device evaluation of
  // a, b, c (0: none, or abc_on_device off). Thread-safe (the device thread
  // updates it after each start / prove / release).
  std::uint64_t abc_matrices_device_bytes() const override { return abc_matrices_bytes_.load(); }
  bool abc_on_device() const { return options_.abc_on_device; }
  // The device's MSM scratch arena (gpu::Device::msm_scratch, used by the
  // prover's MSMs): its bytes now, cached on the device thread after each
  // start / prove / release, and its limit as set at open. Thread-safe.
  std::uint64_t msm_scratch_device_bytes() const override { return msm_scratch_bytes_.load(); }
  std::uint64_t msm_scratch_limit_bytes() const override { return msm_scratch_limit_bytes_; }
  std::vector<groth16::Proof> prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding,
                                    engine::ProveBreakdown* breakdown) override;
  // Drops the prover's resident SRS (runner thread, device lock held).
  void release_resident_srs() override;
  // The prover's cache_srs(params, &r1cs), as start() and prove() do before
  // their first instance of a set, then the same bookkeeping (runner thread,
  // device lock held). The R1CS's matrices (abc_on_device) go up with the
  // first instance: the upload leaves room for them. Throws what cache_srs
  // throws.
  bool make_srs_resident(const groth16::Parameters& params, const groth16::R1cs& r1cs) override;
  runtime::WorkerPool& runner() override { return *runner_; }
  // The prover's stage while prove() runs (its stage observer), else none.
  std::optional<engine::ProverStage> prover_stage() const override;

  std::unique_ptr<engine::InstanceStaging> make_staging() const override;
  void reserve_staging(engine::InstanceStaging& staging, const groth16::R1cs& r1cs) override;
  bool can_use(const engine::InstanceStaging& staging) const override;
  void prepare(engine::InstanceStaging& staging, const groth16::Parameters& params, const groth16::R1cs& r1cs,
               const groth16::Witness& w, const groth16::Blinding& blinding, groth16::SatisfactionCheck check) override;
  void start(engine::InstanceStaging& staging, std::function<void(std::exception_ptr)> done) override;
  groth16::Proof finish(engine::InstanceStaging& staging, engine::ProveBreakdown* breakdown) override;

  // Development parameters on this device (gpu/setup when built, else the
  // CPU's groth16::generate_parameters). Blocking: runs on the device
  // thread and waits, so call it from any thread but that one.
  groth16::Parameters generate_parameters(const groth16::R1cs& r1cs, const groth16::ToxicWaste& toxic, ThreadPool& pool,
                                          const engine::SetupProgress& progress);
  // Whether generate_parameters runs on the GPU in this build.
  static bool has_gpu_setup();

 private:
  struct State;  // Device + GpuProver, touched only on the runner thread
  template <class F>
  auto on_device(F&& f);

  // start()'s enqueue from one step to the next (`more`: once `fence` has
  // passed, on the device thread), then the bookkeeping and `done` after the
  // instance's fence.
  void continue_start(engine::InstanceStaging& staging, gpu::Fence fence, bool more,
                      std::function<void(std::exception_ptr)> done);
  // After each enqueue on the device thread: the matrices' bytes (logged when
  // they change) and, from the staging's stats, a host fallback.
  void note_abc_matrices();
  // On the device thread, beside note_abc_matrices: the arena's bytes now.
  void note_msm_scratch();

  int ordinal_;
  ThreadPool& math_;
  GpuBackendOptions options_;
  std::atomic<std::uint64_t> abc_matrices_bytes_{0};
  std::string name_;
  std::unique_ptr<runtime::WorkerPool> runner_;  // one thread
  std::unique_ptr<State> state_;
  std::atomic<std::uint64_t> total_bytes_{0}, free_bytes_{0};
  // The prover's cached SRS as seen by the device thread (note_resident_srs),
  // for the loop's queries: its split, and the Parameters object it came
  // from (compared by address and size only, never dereferenced).
  void note_resident_srs();
  // The prover's cache_srs on this thread, then note_resident_srs (also when
  // the upload throws: it may have dropped the SRS cached before).
  const gpu::ResidentSrs& cache_srs(const groth16::Parameters& params, const groth16::R1cs* r1cs);
  mutable std::mutex srs_mu_;
  engine::ResidentSrsSplit srs_split_;                    // guarded by srs_mu_
  const groth16::Parameters* srs_params_ = nullptr;       // guarded by srs_mu_
  const groth16::Parameters* side_srs_params_ = nullptr;  // guarded by srs_mu_: the small one beside
  std::uint64_t srs_total_bytes_ = 0;                     // guarded by srs_mu_: both tiers
  std::atomic<std::uint64_t> clean_free_bytes_{0};        // free device memory with no SRS or workspace held
  std::uint64_t msm_scratch_limit_bytes_ = 0;             // the device's MSM tuning, read at open
  std::atomic<std::uint64_t> msm_scratch_bytes_{0};       // the arena's capacity (note_msm_scratch)
  bool compact_h_logged_ = false;                         // device thread only: warned once
  mutable std::mutex stage_mu_;                           // CUDA's callback thread writes, status() reads
  std::optional<engine::ProverStage> stage_;              // the device's stage; guarded by stage_mu_
};

// The GPUs named by a config value: "auto" (every device), "none", or a
// comma-separated list of ordinals ("0,1"). Throws std::invalid_argument on
// a malformed list.
std::vector<int> select_devices(const std::string& setting);

// One back end per selected device and per worker, plus with
// `critical_lane` one lane per device (GpuBackendOptions::critical_lane);
// devices that fail to open are logged and skipped. Empty when there is no
// usable GPU. `options` for each (their log set to `log`).
std::vector<std::shared_ptr<engine::DeviceBackend>> make_gpu_backends(const std::string& setting,
                                                                      std::uint32_t workers_per_device,
                                                                      bool critical_lane, GpuBackendOptions options,
                                                                      ThreadPool& math, runtime::Logger& log);

// A generator of development parameters running on `backend`'s device.
engine::DevParamsGenerator gpu_dev_params_generator(std::shared_ptr<engine::DeviceBackend> backend);

}  // namespace cuzk::gpu_service
