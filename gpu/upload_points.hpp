// Upload of host affine points into the device's packed layout (internal to
// cuzk_gpu and cuzk_gpu_groth16): coordinates only, the identity as zeros
// (on neither curve), Montgomery limbs unchanged (see gpu/ff/field.cuh).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "gpu/cuda_rt.hpp"

namespace cuzk::gpu::detail {

// Points packed per pinned staging chunk.
inline constexpr std::size_t kUploadStagePoints = std::size_t{1} << 16;

// Packs `points` and copies them to dst (2 * sizeof(x) bytes per point) on
// stream s; returns when the copies are done. Two pinned stages alternate so
// that packing one chunk overlaps the copy of the previous one.
template <class HostPoint>
void upload_points(cudaStream_t s, std::span<const HostPoint> points, std::uint32_t* dst) {
  constexpr std::size_t kCoordBytes = sizeof(points[0].x);
  constexpr std::size_t kPointLimbs = 2 * kCoordBytes / 4;
  if (points.empty()) return;
  const std::size_t stage_points = std::min(points.size(), kUploadStagePoints);
  PinnedBuffer<std::uint32_t> stages[2] = {PinnedBuffer<std::uint32_t>(stage_points * kPointLimbs),
                                           PinnedBuffer<std::uint32_t>(stage_points * kPointLimbs)};
  Event copied[2];
  for (std::size_t off = 0, k = 0; off < points.size(); off += stage_points, ++k) {
    const std::size_t count = std::min(stage_points, points.size() - off);
    PinnedBuffer<std::uint32_t>& stage = stages[k % 2];
    if (k >= 2) copied[k % 2].sync();  // the copy two chunks ago read this stage
    for (std::size_t i = 0; i < count; ++i) {
      const HostPoint& p = points[off + i];
      std::uint32_t* out = stage.get() + i * kPointLimbs;
      if (p.infinity) {
        std::memset(out, 0, 2 * kCoordBytes);
      } else {
        std::memcpy(out, &p.x, kCoordBytes);
        std::memcpy(out + kPointLimbs / 2, &p.y, kCoordBytes);
      }
    }
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst + off * kPointLimbs, stage.get(), count * kPointLimbs * 4,
                                    cudaMemcpyHostToDevice, s));
    copied[k % 2].record(s);
  }
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // the stages die here
}

}  // namespace cuzk::gpu::detail
