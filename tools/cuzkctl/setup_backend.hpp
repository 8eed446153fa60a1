// Where `cuzkctl setup` and `cuzkctl porep setup` run the fixed-base
// multiplications of a development setup: `--gpu auto|on|off`. auto uses
// CUDA device 0 when one is present, else the CPU; on requires a device.
// Both back ends produce the same Parameters for the same toxic waste (the
// GPU generator shares the CPU's scalar code; tests/gpu/setup_test.cpp).
// Builds without CUDA (CUZK_HAVE_CUDA undefined) always use the CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "util/thread_pool.hpp"
#ifdef CUZK_HAVE_CUDA
#include "gpu/gpu.hpp"
#include "gpu/setup/gpu_setup.hpp"
#endif

namespace cuzkctl {

enum class SetupDevice { kAuto, kOn, kOff };

inline std::optional<SetupDevice> parse_setup_device(const std::string& s) {
  if (s == "auto") return SetupDevice::kAuto;
  if (s == "on") return SetupDevice::kOn;
  if (s == "off") return SetupDevice::kOff;
  return std::nullopt;
}

// `--gpu on` without a usable device (or without CUDA in this build).
class SetupBackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SetupBackend {
 public:
  // Opens device 0 for kOn (throws SetupBackendError when there is none) and
  // for kAuto when one is present.
  explicit SetupBackend(SetupDevice mode) {
#ifdef CUZK_HAVE_CUDA
    if (mode == SetupDevice::kOff) {
      description_ = "CPU (--gpu off)";
      return;
    }
    if (cuzk::gpu::device_count() == 0) {
      if (mode == SetupDevice::kOn) throw SetupBackendError("--gpu on: no CUDA device");
      description_ = "CPU (no CUDA device)";
      return;
    }
    try {
      device_ = std::make_unique<cuzk::gpu::Device>(0);
    } catch (const cuzk::gpu::Error& e) {
      if (mode == SetupDevice::kOn) throw SetupBackendError(std::string("--gpu on: ") + e.what());
      description_ = std::string("CPU (CUDA device 0 unusable: ") + e.what() + ")";
      return;
    }
    description_ = "GPU 0 (" + device_->info().name + ")";
#else
    if (mode == SetupDevice::kOn) throw SetupBackendError("--gpu on: this cuzkctl was built without CUDA");
    description_ = "CPU (built without CUDA)";
#endif
  }

  bool on_gpu() const {
#ifdef CUZK_HAVE_CUDA
    return device_ != nullptr;
#else
    return false;
#endif
  }
  const std::string& description() const { return description_; }

  // groth16::generate_parameters on the chosen back end. The GPU path throws
  // SetupBackendError when the device runs out of memory (gpu::Error).
  cuzk::groth16::Parameters generate(const cuzk::groth16::R1cs& r1cs, const cuzk::groth16::ToxicWaste& tw,
                                     cuzk::ThreadPool& pool,
                                     const std::function<void(std::uint64_t, std::uint64_t)>& progress = {}) {
#ifdef CUZK_HAVE_CUDA
    if (device_ != nullptr) {
      try {
        return cuzk::gpu::generate_parameters(*device_, r1cs, tw, pool, progress);
      } catch (const cuzk::gpu::Error& e) {
        throw SetupBackendError(std::string("gpu: ") + e.what());
      }
    }
#endif
    return cuzk::groth16::generate_parameters(r1cs, tw, pool, progress);
  }

 private:
#ifdef CUZK_HAVE_CUDA
  std::unique_ptr<cuzk::gpu::Device> device_;
#endif
  std::string description_;
};

}  // namespace cuzkctl
