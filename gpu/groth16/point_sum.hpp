// Host launchers of the witness-scalar split's kernels (gpu/groth16/point_sum.cu).
// Internal to the GPU prover. Bases are packed affine points as cuzk_gpu
// uploads them (x then y, Montgomery limbs; the identity as zeros): 24 32-bit
// limbs per G1 point, 48 per G2 point. Indices are 32-bit.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/kernels.hpp"
#include "gpu/msm/point_source.hpp"

namespace cuzk::gpu::groth16_kernels {

// How sum_points adds: kXyzz, one XYZZ mixed add per point in per-thread
// partials; kTree, pairwise affine adds in batches on the MSM tree's round
// kernels (tree::sum_list: ~6 products per add instead of ~10, and every add
// of a round independent), in the MSM arena; kAuto, the tree for lists of at
// least kTreeSumMinPoints when the arena can hold a piece, else XYZZ.
enum class PointSumMethod { kAuto, kXyzz, kTree };
inline constexpr std::size_t kTreeSumMinPoints = std::size_t{1} << 16;
struct PointSumOptions {
  kernels::MsmScratch* arena = nullptr;  // null: kXyzz
  // The arena's bound (the MSM's scratch limit): the tree sums in pieces
  // when the list does not fit it, or the free device memory.
  std::size_t arena_limit_bytes = 0;
  PointSumMethod method = PointSumMethod::kAuto;
};

// Queues sum_i bases[idx[i]] for i < count on the stream without waiting;
// the sum reaches host_out (pinned: the copy is asynchronous) as one XYZZ
// point, x, y, zz, zzz of 12 limbs each for G1, 24 for G2, when the stream
// gets there (count = 0: the identity, written at once). scratch: device
// memory for the partial sums, grown here when too small (growing frees it,
// which waits for the device) and reused by later sums on the same stream.
// The tree's use of the arena is ordered like an MSM's (after_last_use /
// record_use on the stream). Indices must be below 2^31. Returns how it
// adds (kTree or kXyzz): kTree falls back to kXyzz when the arena cannot
// hold one group.
PointSumMethod sum_points_g1(cudaStream_t stream, const std::uint32_t* bases, const std::uint32_t* idx,
                             std::size_t count, detail::DeviceBuffer<unsigned char>& scratch,
                             const PointSumOptions& options, std::uint32_t* host_out);
PointSumMethod sum_points_g2(cudaStream_t stream, const std::uint32_t* bases, const std::uint32_t* idx,
                             std::size_t count, detail::DeviceBuffer<unsigned char>& scratch,
                             const PointSumOptions& options, std::uint32_t* host_out);

// out[i] = bases[idx[i]] for i < count; points of limbs_per_point limbs (24 or 48).
void gather_points(cudaStream_t stream, const std::uint32_t* bases, const std::uint32_t* idx, std::size_t count,
                   std::size_t limbs_per_point, std::uint32_t* out);

// The split's two passes when the bases are (partly) in pinned host memory:
// the vector's first n_points are walked once, the device prefix in place and
// the rest in chunks of chunk_points copied into two staging
// slots at the start of the MSM arena by its copy stream (the arena's use is
// ordered like an MSM's: after_last_use / record_use; the tail MSM that
// follows on the same stream reuses it) (gpu/msm/base_stager.hpp); per piece, the ones and tail entries
// whose indices fall in it (both index lists ascending: their host copies give
// the ranges) are summed into persistent partials / gathered into `gathered`
// (n_tail points). Queued without waiting: the ones' sum reaches host_out as
// sum_points_g1/g2's does (scratch as theirs); the caller keeps the host
// bases, the gathered buffer and the index arrays alive until the stream
// passes. Why stream the whole vector rather than gather the ones' and the
// tail's bases on the host: the host cores synthesize the next partitions
// meanwhile, a host gather reads 96-192 B at random addresses per entry
// (slow, and a pinned buffer as large as the entries), and PCIe moves the
// zeros' bases too but at ~50 GB/s with no host work; one mechanism
// (BaseStager) then serves the MSMs and these passes.
inline constexpr std::size_t kStreamedSplitChunkPoints = std::size_t{1} << 20;
struct StreamedSplitPasses {
  cudaStream_t stream = nullptr;
  PointSource bases;
  std::size_t n_points = 0;
  const std::uint32_t* ones = nullptr;       // device, n_ones ascending indices
  const std::uint32_t* ones_host = nullptr;  // the same on the host
  std::size_t n_ones = 0;
  const std::uint32_t* tail_idx = nullptr;       // device, n_tail ascending indices
  const std::uint32_t* tail_idx_host = nullptr;  // the same on the host
  std::size_t n_tail = 0;
  std::uint32_t* gathered = nullptr;                     // device, n_tail points
  kernels::MsmScratch* arena = nullptr;                  // staging slots and the copy stream
  std::size_t chunk_points = kStreamedSplitChunkPoints;  // streamed points per staging slot
};
void sum_and_gather_streamed_g1(const StreamedSplitPasses& passes, detail::DeviceBuffer<unsigned char>& scratch,
                                std::uint32_t* host_out);
void sum_and_gather_streamed_g2(const StreamedSplitPasses& passes, detail::DeviceBuffer<unsigned char>& scratch,
                                std::uint32_t* host_out);

}  // namespace cuzk::gpu::groth16_kernels
