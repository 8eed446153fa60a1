// Balanced-runs accumulation (G2) and bucket reduction (G1 and G2) with the
// accumulator in shared memory (MsmAlgorithm::kBalancedSmem / kBalancedSmem12):
// host launchers for gpu/msm/msm.cu's chunk loop and reduction. The kernels
// and the design are in gpu/msm/msm_g2_smem.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cuzk::gpu::kernels::g2smem {

// One chunk's sorted entries (msm.cu's digits + sort + bounds steps) and the
// arrays the accumulation writes. All device pointers.
struct RunsArgs {
  const void* bases = nullptr;             // the chunk's affine G2 points (x.c0, x.c1, y.c0, y.c1)
  const std::uint32_t* keys = nullptr;     // sorted keys (w << c | digit; sentinel last)
  const std::uint32_t* vals = nullptr;     // point index | sign << 31, in key order
  const std::uint32_t* nonzero = nullptr;  // entries before the sentinel keys
  std::uint64_t total = 0;                 // entries of the chunk, sentinels included
  int window_bits = 0;                     // c
  std::uint32_t buckets_per_window = 0;
  std::size_t runs_max = 0;                // slots in first_partials
  void* buckets = nullptr;                 // running XYZZ buckets (window-major)
  void* first_partials = nullptr;          // runs_max XYZZ slots
};

// The kernel's two shapes (gpu/msm/msm_g2_smem.cu): 7 blocks of 64 threads
// per SM with R in registers, or 3 blocks of 128 with R in shared memory.
enum class SmemShape { k14Warps, k12Warps };

// Accumulates the chunk's entries into the buckets and first_partials exactly
// as msm.cu's accumulate_runs_kernel does (same msm::run_flush decisions), so
// msm.cu's fixup_runs_kernel completes the straddling buckets. Picks its own
// run length (at most runs_max runs, a whole number of resident waves when
// runs_max allows) and returns it; the fix-up must use the same. Asynchronous.
std::uint32_t accumulate_runs(cudaStream_t s, const RunsArgs& args, SmemShape shape);

// The group whose points a reduction or reservation is for: G1 (XYZZ over Fp,
// 192 B) or G2 (over Fp2, 384 B).
enum class PointGroup { kG1, kG2 };

// The bucket reduction's first step under the smem algorithms: per window,
// segments of consecutive buckets, each reduced to sum_b b B_b (b the bucket's
// digit) in seg_out (window-major, segs_per_window per window), as msm.cu's
// segment_kernel does, for its window_sum_kernel.
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

// Local memory (bytes per thread) of the group's kernels here, for the MSM's
// reservation of thread stacks.
std::size_t local_bytes_per_thread(PointGroup group);

}  // namespace cuzk::gpu::kernels::g2smem
