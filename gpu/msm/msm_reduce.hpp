// The bucket reduction of G1 and G2 MSMs with the accumulator in shared
// memory: host launcher for gpu/msm/msm.cu's last step. The kernel and the
// design are in gpu/msm/msm_reduce.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cuzk::gpu::kernels::smem_reduce {

// The group whose points a reduction or reservation is for: G1 (XYZZ over Fp,
// 192 B) or G2 (over Fp2, 384 B).
enum class PointGroup { kG1, kG2 };

// The bucket reduction's first step: per window, segments of consecutive
// buckets, each reduced to sum_b b B_b (b the bucket's digit) in seg_out
// (window-major, segs_per_window per window), for msm.cu's window_sum_kernel.
struct ReduceArgs {
  void* buckets = nullptr;  // XYZZ buckets of the group, window-major; overwritten (suffix sums)
  std::uint32_t buckets_per_window = 0;
  std::uint32_t windows = 0;
  std::size_t segments_max = 0;  // XYZZ slots in seg_out
  void* seg_out = nullptr;
};

// Picks the segment count (the largest whole number of resident waves that
// fits segments_max; segment lengths need not be powers of two), launches,
// and returns segs_per_window. Asynchronous.
std::uint32_t reduce_segments(cudaStream_t s, const ReduceArgs& args, PointGroup group);

// Local memory (bytes per thread) of the group's kernel here, for the MSM's
// reservation of thread stacks.
std::size_t local_bytes_per_thread(PointGroup group);

}  // namespace cuzk::gpu::kernels::smem_reduce
