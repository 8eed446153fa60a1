#include "gpu/service/gpu_backend.hpp"

#include <cstdlib>
#include <future>
#include <sstream>
#include <stdexcept>

#include "gpu/gpu.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "groth16/setup.hpp"

// gpu/setup (the GPU development setup) is another library of this tree; the
// build defines CUZK_HAVE_GPU_SETUP when it is there (gpu/service/CMakeLists.txt).
#if defined(CUZK_HAVE_GPU_SETUP) && __has_include("gpu/setup/gpu_setup.hpp")
#include "gpu/setup/gpu_setup.hpp"
#define CUZK_GPU_SETUP_ENABLED 1
#else
#define CUZK_GPU_SETUP_ENABLED 0
#endif

namespace cuzk::gpu_service {

namespace {

// The engine's view of a proof's stage times (GpuProveStats, device times
// from CUDA events, host times from clocks).
engine::ProveBreakdown breakdown_of(const gpu::GpuProveStats& s, bool srs_uploaded) {
  engine::ProveBreakdown b;
  b.evaluate_ms = s.evaluate_ms;
  b.h_ms = s.h_ms;
  b.h_msm_ms = s.h_msm_ms;
  b.l_msm_ms = s.l_msm_ms;
  b.a_msm_ms = s.a_msm_ms;
  b.b_msm_ms = s.b_msm_ms;
  b.assemble_ms = s.assemble_ms;
  b.srs_uploaded = srs_uploaded;
  return b;
}

}  // namespace

static gpu::GpuProverOptions prover_options(const GpuBackendOptions& o) {
  gpu::GpuProverOptions p;
  p.abc_source = o.abc_on_device && !o.critical_lane ? gpu::AbcSource::kDevice : gpu::AbcSource::kHost;
  p.high_priority_streams = o.critical_lane;
  if (o.srs_device_budget_bytes) p.srs_device_budget_bytes = std::size_t(*o.srs_device_budget_bytes);
  return p;
}

struct GpuBackend::State {
  State(int ordinal, ThreadPool& math, const GpuBackendOptions& o)
      : options(prover_options(o)),
        lane_pool(o.critical_lane ? std::make_unique<ThreadPool>(kLaneThreads) : nullptr),
        device(ordinal),
        prover(device, lane_pool ? *lane_pool : math, options) {
    const std::uint64_t scratch = o.critical_lane ? kLaneMsmScratchBytes : o.msm_scratch_bytes;
    if (scratch != 0) {  // the prover reads the tuning per call: set before the first
      gpu::Device::MsmTuning t = device.msm_tuning();
      t.scratch_limit_bytes = scratch;
      device.set_msm_tuning(t);
    }
  }
  gpu::GpuProverOptions options;          // also read by srs_device_bytes' estimate
  std::unique_ptr<ThreadPool> lane_pool;  // a critical lane's host steps
  gpu::Device device;
  gpu::GpuProver prover;
};

// Runs f on the device thread and waits for it (rethrowing its exception).
template <class F>
auto GpuBackend::on_device(F&& f) {
  using R = std::invoke_result_t<F&>;
  std::packaged_task<R()> task(std::forward<F>(f));
  std::future<R> done = task.get_future();
  asio::post(runner_->executor(), [&task] { task(); });
  return done.get();
}

GpuBackend::GpuBackend(int ordinal, ThreadPool& math, GpuBackendOptions options)
    : ordinal_(ordinal), math_(math), options_(options), runner_(std::make_unique<runtime::WorkerPool>(1)) {
  state_ = on_device([this] { return std::make_unique<State>(ordinal_, math_, options_); });
  const gpu::DeviceInfo& info = state_->device.info();
  std::ostringstream n;
  n << "cuda:" << ordinal_ << ' ' << info.name << (options_.critical_lane ? " (critical lane)" : "");
  name_ = n.str();
  total_bytes_ = info.global_memory_bytes;
  free_bytes_ = on_device([this] { return static_cast<std::uint64_t>(state_->device.free_memory_bytes()); });
  clean_free_bytes_ = free_bytes_.load();
  msm_scratch_limit_bytes_ = on_device([this] { return state_->device.msm_tuning().scratch_limit_bytes; });
  // Status shows the stage the DEVICE is in: device stages are reported by
  // CUDA's callback thread when the device reaches them (host stages,
  // reported from the prepare / finish threads, may belong to another
  // instance than the one on the device: not shown). A stage ends when the
  // next begins or the instance's fence passes.
  on_device([this] {
    state_->prover.set_stage_observer([this](std::string_view stage, std::uintptr_t stream) {
      if (stream == 0) return;
      engine::ProverStage s;
      s.name = std::string(stage);
      s.started = std::chrono::steady_clock::now();
      s.stream = stream;
      s.streams = gpu::GpuProver::kStreams;
      std::lock_guard lock(stage_mu_);
      stage_ = std::move(s);
    });
  });
}

void GpuBackend::release_resident_srs() {
  state_->prover.release_cached_srs();  // the R1CS matrices too (the workspace)
  note_resident_srs();
  note_abc_matrices();
  note_msm_scratch();
  // Nothing of the prover's is on the device now (the MSM arena went with the
  // workspace): the next upload's budget starts from here.
  free_bytes_ = state_->device.free_memory_bytes();
  clean_free_bytes_ = free_bytes_.load();
}

const gpu::ResidentSrs& GpuBackend::cache_srs(const groth16::Parameters& params, const groth16::R1cs* r1cs) {
  try {
    const gpu::ResidentSrs& srs = state_->prover.cache_srs(params, r1cs);
    note_resident_srs();
    return srs;
  } catch (...) {
    // A failed upload may have dropped the SRS cached before: holds_srs must
    // not report it (the engine then keeps or reads back the host copy).
    note_resident_srs();
    throw;
  }
}

bool GpuBackend::make_srs_resident(const groth16::Parameters& params, const groth16::R1cs& r1cs) {
  cache_srs(params, &r1cs);
  note_abc_matrices();
  note_msm_scratch();
  free_bytes_ = state_->device.free_memory_bytes();
  return true;
}

void GpuBackend::note_resident_srs() {
  const gpu::ResidentSrs* srs = state_->prover.cached_srs();
  std::lock_guard lock(srs_mu_);
  srs_split_ = srs ? engine::ResidentSrsSplit{srs->device_bytes(), srs->pinned_bytes()} : engine::ResidentSrsSplit{};
  srs_params_ = srs ? &srs->params() : nullptr;
  srs_total_bytes_ = srs ? srs->bytes() : 0;
  const gpu::ResidentSrs* side = state_->prover.side_srs();
  side_srs_params_ = side ? &side->params() : nullptr;
}

bool GpuBackend::holds_srs(const groth16::Parameters& params) const {
  std::lock_guard lock(srs_mu_);
  return srs_params_ == &params || side_srs_params_ == &params;
}

void GpuBackend::note_abc_matrices() {
  const std::uint64_t bytes = state_->prover.device_r1cs_bytes();
  const std::uint64_t before = abc_matrices_bytes_.exchange(bytes);
  if (bytes != before && options_.log != nullptr) {
    options_.log->info("r1cs matrices on device", {{"device", name_}, {"bytes", bytes}, {"before_bytes", before}});
  }
}

void GpuBackend::note_msm_scratch() {
  // The Device's own arena: every MSM the prover runs on this device grows it
  // and keeps it until release_msm_scratch.
  msm_scratch_bytes_ = state_->device.msm_scratch_bytes();
}

engine::ResidentSrsSplit GpuBackend::resident_srs_split() const {
  std::lock_guard lock(srs_mu_);
  return srs_split_;
}

std::optional<engine::ProverStage> GpuBackend::prover_stage() const {
  std::optional<engine::ProverStage> s;
  {
    std::lock_guard lock(stage_mu_);
    s = stage_;
  }
  // Stage reports and fences queued on the device and not reached yet.
  if (s) s->events = state_->prover.callbacks_in_flight();
  return s;
}

// ---- Staged proofs -----------------------------------------------------------

namespace {

struct GpuStaging final : engine::InstanceStaging {
  gpu::ProveStaging staging;
  const groth16::Parameters* params = nullptr;
  const groth16::R1cs* r1cs = nullptr;  // its device a, b, c get room beside the SRS (cache_srs)
  groth16::Blinding blinding;
  bool srs_uploaded = false;
};

// A failed enqueue step: reported once what it had queued is done with the
// staging (the engine may prepare it again at once); at once when nothing was.
void report_after_staging(const gpu::ProveStaging& staging, std::function<void(std::exception_ptr)> done,
                          std::exception_ptr e) {
  staging.fence().on_done([done = std::move(done), e] { done(e); });
}

GpuStaging& as_gpu(engine::InstanceStaging& s) {
  auto* g = dynamic_cast<GpuStaging*>(&s);
  if (g == nullptr) std::abort();  // the engine checks can_use() first
  return *g;
}

}  // namespace

std::unique_ptr<engine::InstanceStaging> GpuBackend::make_staging() const { return std::make_unique<GpuStaging>(); }

bool GpuBackend::can_use(const engine::InstanceStaging& staging) const {
  return dynamic_cast<const GpuStaging*>(&staging) != nullptr;
}

void GpuBackend::reserve_staging(engine::InstanceStaging& staging, const groth16::R1cs& r1cs) {
  // Host only, like prepare: safe beside the device thread's enqueue.
  state_->prover.reserve_staging(r1cs, as_gpu(staging).staging);
}

void GpuBackend::prepare(engine::InstanceStaging& staging, const groth16::Parameters& params, const groth16::R1cs& r1cs,
                         const groth16::Witness& w, const groth16::Blinding& blinding,
                         groth16::SatisfactionCheck check) {
  GpuStaging& g = as_gpu(staging);
  groth16::check_inputs(params, r1cs, w);
  g.params = nullptr;  // not prepared until prepare() returns (it throws on an unsatisfied witness)
  // Host only (the prover's pool): safe beside the device thread's enqueue.
  state_->prover.prepare(r1cs, w, g.staging, check);
  g.params = &params;
  g.r1cs = &r1cs;
  g.blinding = blinding;
  g.srs_uploaded = false;
}

void GpuBackend::start(engine::InstanceStaging& staging, std::function<void(std::exception_ptr)> done) {
  GpuStaging& g = as_gpu(staging);
  if (g.params == nullptr) std::abort();  // not prepared
  const std::size_t uploads_before = state_->prover.srs_uploads();
  const gpu::ResidentSrs& srs = cache_srs(*g.params, g.r1cs);
  g.srs_uploaded = state_->prover.srs_uploads() != uploads_before;
  gpu::GpuProver::EnqueueStep step;
  try {
    step = state_->prover.enqueue_start(srs, g.staging);
  } catch (...) {
    report_after_staging(g.staging, std::move(done), std::current_exception());
    return;
  }
  continue_start(g, std::move(step.fence), step.more, std::move(done));
}

// This thread never waits for the device: a step that needs the device's
// answer (the witness split's counts) resumes here when its fence passes.
// The engine holds the device until `done`, so nothing else queues on the
// prover meanwhile.
void GpuBackend::continue_start(engine::InstanceStaging& staging, gpu::Fence fence, bool more,
                                std::function<void(std::exception_ptr)> done) {
  GpuStaging& g = as_gpu(staging);
  if (more) {
    // CUDA's callback thread: only a post to this back end's thread.
    fence.on_done([this, &g, done = std::move(done)]() mutable {
      asio::post(runner_->executor(), [this, &g, done = std::move(done)]() mutable {
        gpu::GpuProver::EnqueueStep next;
        try {
          next = state_->prover.enqueue_continue(g.staging);
        } catch (...) {
          report_after_staging(g.staging, std::move(done), std::current_exception());
          return;
        }
        continue_start(g, std::move(next.fence), next.more, std::move(done));
      });
    });
    return;
  }
  note_abc_matrices();
  note_msm_scratch();
  if (g.staging.stats().abc_fallback && options_.log != nullptr) {
    // The witness was staged for the device evaluation, but the matrices do
    // not fit this device beside the SRS and the workspace.
    options_.log->warn("r1cs matrices do not fit the device: a, b, c evaluated on the host",
                       {{"device", name_},
                        {"free_bytes", state_->device.free_memory_bytes()},
                        {"evaluate_ms", g.staging.stats().evaluate_ms}});
  }
  if (g.staging.stats().compact_h && !compact_h_logged_ && options_.log != nullptr) {
    // Four m-vectors did not fit beside the SRS and the arena: proofs go on,
    // with b's and c's uploads no longer overlapping the transforms.
    compact_h_logged_ = true;
    options_.log->warn("H stage in two device vectors (device memory short)",
                       {{"device", name_}, {"free_bytes", state_->device.free_memory_bytes()}});
  }
  free_bytes_ = state_->device.free_memory_bytes();
  // CUDA's callback thread: no CUDA here, and `done` only posts to the loop.
  fence.on_done([this, done = std::move(done)] {
    {
      std::lock_guard lock(stage_mu_);
      stage_.reset();
    }
    done(nullptr);
  });
}

groth16::Proof GpuBackend::finish(engine::InstanceStaging& staging, engine::ProveBreakdown* breakdown) {
  GpuStaging& g = as_gpu(staging);
  if (g.params == nullptr) std::abort();  // not prepared
  groth16::Proof proof = state_->prover.finish(g.params->vk, g.staging, g.blinding);
  if (breakdown) *breakdown = breakdown_of(g.staging.stats(), g.srs_uploaded);
  g.params = nullptr;
  return proof;
}

GpuBackend::~GpuBackend() {
  // The device's resources are released on the thread that used them.
  if (state_) on_device([this] { state_.reset(); });
  runner_->join();
}

engine::BackendMemory GpuBackend::memory() const { return {total_bytes_.load(), free_bytes_.load()}; }

std::uint64_t GpuBackend::srs_device_bytes(const groth16::Parameters& params) const {
  const std::size_t total_bytes = gpu::ResidentSrs::bytes_for(params);
  {
    std::lock_guard lock(srs_mu_);
    if (srs_params_ == &params && srs_total_bytes_ == total_bytes) return srs_split_.device_bytes;
  }
  const std::size_t budget_bytes = gpu::srs_device_budget_for(params, state_->options.srs_device_budget_bytes,
                                                              clean_free_bytes_.load(), msm_scratch_limit_bytes_);
  return gpu::place_srs(gpu::ResidentSrs::points_for(params), budget_bytes).device_bytes();
}

std::uint64_t GpuBackend::host_bytes_per_instance(const groth16::R1cs& r1cs) const {
  // One staging: a, b, c over the domain (or, on the device path, the
  // witness) and the L, A, B splits, all in page-locked memory
  // (gpu::ProveStaging::host_bytes_bound: 40 B per selected scalar at most;
  // 32 GiB PoRep: 12.9 GB of a, b, c, or 4.2 GB of witness). The engine
  // reserves one per staging it holds, asking again for each: once the
  // matrices did not fit this device, prepare pins a, b, c again.
  return gpu::ProveStaging::host_bytes_bound(r1cs, state_->prover.abc_source_for(r1cs));
}

std::vector<groth16::Proof> GpuBackend::prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                              std::span<const groth16::Witness> witnesses,
                                              std::span<const groth16::Blinding> blinding,
                                              engine::ProveBreakdown* breakdown) {
  const std::size_t uploads_before = state_->prover.srs_uploads();
  struct ClearStage {  // also when prove() throws
    GpuBackend& b;
    ~ClearStage() {
      std::lock_guard lock(b.stage_mu_);
      b.stage_.reset();
    }
  } clear_stage{*this};
  std::vector<groth16::Proof> proofs;
  try {
    proofs = state_->prover.prove(params, r1cs, witnesses, blinding);
  } catch (...) {
    note_resident_srs();  // a failed upload may have dropped the cached SRS (holds_srs)
    throw;
  }
  note_resident_srs();
  note_abc_matrices();
  note_msm_scratch();
  free_bytes_ = state_->device.free_memory_bytes();
  if (breakdown) *breakdown = breakdown_of(state_->prover.last_stats(), state_->prover.srs_uploads() != uploads_before);
  return proofs;
}

bool GpuBackend::has_gpu_setup() { return CUZK_GPU_SETUP_ENABLED != 0; }

groth16::Parameters GpuBackend::generate_parameters(const groth16::R1cs& r1cs, const groth16::ToxicWaste& toxic,
                                                    ThreadPool& pool, const engine::SetupProgress& progress) {
#if CUZK_GPU_SETUP_ENABLED
  groth16::Parameters p =
      on_device([&] { return gpu::generate_parameters(state_->device, r1cs, toxic, pool, progress); });
  free_bytes_ = on_device([this] { return static_cast<std::uint64_t>(state_->device.free_memory_bytes()); });
  return p;
#else
  return groth16::generate_parameters(r1cs, toxic, pool, progress);
#endif
}

std::vector<int> select_devices(const std::string& setting) {
  std::vector<int> out;
  if (setting == "none") return out;
  if (setting == "auto" || setting.empty()) {
    for (int i = 0; i < gpu::device_count(); ++i) out.push_back(i);
    return out;
  }
  std::stringstream in(setting);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0) {
      throw std::invalid_argument("gpu.devices: '" + setting + "' is not \"auto\", \"none\" or a list like \"0,1\"");
    }
    out.push_back(v);
  }
  return out;
}

std::vector<std::shared_ptr<engine::DeviceBackend>> make_gpu_backends(const std::string& setting,
                                                                      std::uint32_t workers_per_device,
                                                                      bool critical_lane, GpuBackendOptions options,
                                                                      ThreadPool& math, runtime::Logger& log) {
  options.log = &log;
  std::vector<std::shared_ptr<engine::DeviceBackend>> out;
  for (int ordinal : select_devices(setting)) {
    const std::uint32_t workers = std::max<std::uint32_t>(1, workers_per_device);
    for (std::uint32_t w = 0; w < workers + (critical_lane ? 1 : 0); ++w) {
      try {
        GpuBackendOptions o = options;
        o.critical_lane = w == workers;
        auto b = std::make_shared<GpuBackend>(ordinal, math, o);
        log.info("gpu back end", {{"device", b->name()},
                                  {"memory_bytes", b->memory().total_bytes},
                                  {"free_bytes", b->memory().free_bytes},
                                  {"worker", w},
                                  {"critical_lane", o.critical_lane ? "yes" : "no"},
                                  {"abc_on_device", o.abc_on_device && !o.critical_lane ? "yes" : "no"},
                                  {"msm_scratch_bytes", b->msm_scratch_limit_bytes()},
                                  {"srs_device_budget", options.srs_device_budget_bytes
                                                            ? std::to_string(*options.srs_device_budget_bytes)
                                                            : std::string("auto")},
                                  {"gpu_setup", GpuBackend::has_gpu_setup() ? "yes" : "no (cpu)"}});
        out.push_back(std::move(b));
      } catch (const gpu::Error& e) {
        log.warn("cannot open gpu", {{"ordinal", ordinal}, {"error", e.what()}});
      }
    }
  }
  return out;
}

engine::DevParamsGenerator gpu_dev_params_generator(std::shared_ptr<engine::DeviceBackend> backend) {
  auto gpu = std::dynamic_pointer_cast<GpuBackend>(backend);
  if (!gpu) return {};
  return [gpu](const groth16::R1cs& r1cs, const groth16::ToxicWaste& toxic, ThreadPool& pool,
               const engine::SetupProgress& progress) { return gpu->generate_parameters(r1cs, toxic, pool, progress); };
}

}  // namespace cuzk::gpu_service
