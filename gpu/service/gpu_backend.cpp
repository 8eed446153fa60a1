#include "gpu/service/gpu_backend.hpp"

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

struct GpuBackend::State {
  State(int ordinal, ThreadPool& math) : device(ordinal), prover(device, math) {}
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

GpuBackend::GpuBackend(int ordinal, ThreadPool& math)
    : ordinal_(ordinal), math_(math), runner_(std::make_unique<runtime::WorkerPool>(1)) {
  state_ = on_device([this] { return std::make_unique<State>(ordinal_, math_); });
  const gpu::DeviceInfo& info = state_->device.info();
  std::ostringstream n;
  n << "cuda:" << ordinal_ << ' ' << info.name;
  name_ = n.str();
  total_bytes_ = info.global_memory_bytes;
  free_bytes_ = on_device([this] { return static_cast<std::uint64_t>(state_->device.free_memory_bytes()); });
  // Status shows the stage a proof is in (called on the device thread).
  on_device([this] {
    state_->prover.set_stage_observer([this](std::string_view stage, std::uintptr_t stream) {
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

void GpuBackend::release_resident_srs() { state_->prover.release_cached_srs(); }

std::optional<engine::ProverStage> GpuBackend::prover_stage() const {
  std::lock_guard lock(stage_mu_);
  return stage_;
}

GpuBackend::~GpuBackend() {
  // The device's resources are released on the thread that used them.
  if (state_) on_device([this] { state_.reset(); });
  runner_->join();
}

engine::BackendMemory GpuBackend::memory() const { return {total_bytes_.load(), free_bytes_.load()}; }

std::uint64_t GpuBackend::srs_device_bytes(const groth16::Parameters& params) const {
  return gpu::ResidentSrs::bytes_for(params);
}

std::uint64_t GpuBackend::host_bytes_per_instance(const groth16::R1cs& r1cs) const {
  // a, b, c = A.w, B.w, C.w over the domain, on the host (gpu_prover.hpp step
  // 1), plus one witness MSM's scalar split at a time (index of each one,
  // index and value of each other non-zero scalar: up to 4 + 4 + 32 B per
  // variable). 32 GiB PoRep: 12.9 GB + 5.2 GB.
  const std::uint64_t variables = static_cast<std::uint64_t>(r1cs.num_inputs()) + r1cs.num_aux();
  return 3 * groth16::domain_size(r1cs) * sizeof(ff::Fr) + variables * (4 + 4 + sizeof(ff::Fr));
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
  std::vector<groth16::Proof> proofs = state_->prover.prove(params, r1cs, witnesses, blinding);
  free_bytes_ = state_->device.free_memory_bytes();
  if (breakdown) {
    const gpu::GpuProveStats& s = state_->prover.last_stats();
    breakdown->evaluate_ms = s.evaluate_ms;
    breakdown->h_ms = s.h_ms;
    breakdown->h_msm_ms = s.h_msm_ms;
    breakdown->l_msm_ms = s.l_msm_ms;
    breakdown->a_msm_ms = s.a_msm_ms;
    breakdown->b_msm_ms = s.b_msm_ms;
    breakdown->assemble_ms = s.assemble_ms;
    breakdown->srs_uploaded = state_->prover.srs_uploads() != uploads_before;
  }
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
                                                                      ThreadPool& math, runtime::Logger& log) {
  std::vector<std::shared_ptr<engine::DeviceBackend>> out;
  for (int ordinal : select_devices(setting)) {
    for (std::uint32_t w = 0; w < std::max<std::uint32_t>(1, workers_per_device); ++w) {
      try {
        auto b = std::make_shared<GpuBackend>(ordinal, math);
        log.info("gpu back end", {{"device", b->name()},
                                  {"memory_bytes", b->memory().total_bytes},
                                  {"free_bytes", b->memory().free_bytes},
                                  {"worker", w},
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
