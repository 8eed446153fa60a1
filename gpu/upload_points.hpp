// Upload of host affine points into the device's packed layout (internal to
// cuzk_gpu and cuzk_gpu_groth16): coordinates only, the identity as zeros
// (on neither curve), Montgomery limbs unchanged (see gpu/ff/field.cuh).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "gpu/cuda_rt.hpp"

namespace cuzk::gpu::detail {

// Points packed per pinned staging chunk.
inline constexpr std::size_t kUploadStagePoints = std::size_t{1} << 16;

// 32-bit limbs of one packed point (x, y) of HostPoint: 24 for G1, 48 for G2.
template <class HostPoint>
inline constexpr std::size_t kPackedPointLimbs = 2 * sizeof(HostPoint{}.x) / 4;

// points -> the device's packed layout at dst (host memory, e.g. a pinned copy
// that MSMs stream from): x then y per point, the identity as zeros.
template <class HostPoint>
void pack_points(std::span<const HostPoint> points, std::uint32_t* dst) {
  constexpr std::size_t kCoordBytes = sizeof(points[0].x);
  constexpr std::size_t kPointLimbs = kPackedPointLimbs<HostPoint>;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const HostPoint& p = points[i];
    std::uint32_t* out = dst + i * kPointLimbs;
    if (p.infinity) {
      std::memset(out, 0, 2 * kCoordBytes);
    } else {
      std::memcpy(out, &p.x, kCoordBytes);
      std::memcpy(out + kPointLimbs / 2, &p.y, kCoordBytes);
    }
  }
}

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
    pack_points(points.subspan(off, count), stage.get());
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(dst + off * kPointLimbs, stage.get(), count * kPointLimbs * 4, cudaMemcpyHostToDevice, s));
    copied[k % 2].record(s);
  }
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // the stages die here
}

}  // namespace cuzk::gpu::detail
