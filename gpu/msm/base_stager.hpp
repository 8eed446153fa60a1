// Chunks of packed bases made available on the device for a kernel on the
// compute stream, from a PointSource (gpu/msm/point_source.hpp): a chunk in
// the source's device prefix is used in place; any other is copied into one of
// two device staging slots on a copy stream, so that the copy of chunk k + 1
// runs while the compute stream works on chunk k. Ordering is by CUDA events
// only (no host synchronization per chunk):
//   copy stream:    [wait freed[k%2]] copy chunk k -> slot k%2, record loaded[k%2]
//   compute stream: ... [wait loaded[k%2]] kernels reading slot k%2, record freed[k%2]
// freed[k%2] is last recorded by chunk k - 2, the previous user of the slot.
// The first two copies wait for everything queued on the compute stream before
// the stager was made (an earlier MSM on the same arena may still read the
// slots when callers fence instead of synchronizing).
//
// Usage per chunk k (ascending, contiguous [lo, hi)): p = load(k, lo, hi)
// early (enqueues the copy), wait(k) right before the first kernel reading p,
// release(k) right after the last. Internal to cuzk_gpu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda_rt.hpp"
#include "gpu/msm/point_source.hpp"

namespace cuzk::gpu::detail {

class BaseStager {
 public:
  // staging[i]: device slots of at least the largest chunk's points each
  // (may be null when every chunk lies in the device prefix).
  BaseStager(cudaStream_t compute, cudaStream_t copy, const PointSource& source, std::size_t limbs_per_point,
             std::uint32_t* staging0, std::uint32_t* staging1)
      : compute_(compute), copy_(copy), source_(source), limbs_(limbs_per_point), slots_{staging0, staging1} {
    queued_before_.record(compute_);
  }
  BaseStager(const BaseStager&) = delete;
  BaseStager& operator=(const BaseStager&) = delete;
  // The slots' last readers are queued on the compute stream: a caller that
  // waits for (or fences) the compute stream covers them.
  ~BaseStager() = default;

  const std::uint32_t* load(std::size_t k, std::size_t lo, std::size_t hi) {
    const std::size_t slot = k % 2;
    if (source_.on_device(hi)) {
      staged_[slot] = false;
      return source_.device + lo * limbs_;
    }
    if (slots_[slot] == nullptr) std::abort();  // the caller planned no staging for a streamed source
    staged_[slot] = true;
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(copy_, used_[slot] ? freed_[slot].get() : queued_before_.get(), 0));
    std::uint32_t* dst = slots_[slot];
    // [lo, hi) may straddle the end of the device prefix: its device part
    // device-to-device, the rest from pinned host memory.
    std::size_t at = lo;
    if (at < source_.device_points) {
      const std::size_t count = source_.device_points - at;
      CUZK_CUDA_CHECK(
          cudaMemcpyAsync(dst, source_.device + at * limbs_, count * limbs_ * 4, cudaMemcpyDeviceToDevice, copy_));
      at += count;
    }
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst + (at - lo) * limbs_, source_.host + (at - source_.device_points) * limbs_,
                                    (hi - at) * limbs_ * 4, cudaMemcpyHostToDevice, copy_));
    loaded_[slot].record(copy_);
    return dst;
  }

  void wait(std::size_t k) {
    if (staged_[k % 2]) CUZK_CUDA_CHECK(cudaStreamWaitEvent(compute_, loaded_[k % 2].get(), 0));
  }

  void release(std::size_t k) {
    const std::size_t slot = k % 2;
    if (!staged_[slot]) return;
    freed_[slot].record(compute_);
    used_[slot] = true;
  }

 private:
  cudaStream_t compute_, copy_;
  PointSource source_;
  std::size_t limbs_;
  std::uint32_t* slots_[2];
  bool staged_[2] = {false, false};
  bool used_[2] = {false, false};
  Event queued_before_, loaded_[2], freed_[2];
};

}  // namespace cuzk::gpu::detail
