// G2 balanced-runs accumulation with the accumulators in shared memory
// (MsmAlgorithm::kBalancedSmem / kBalancedSmem12): host launcher for gpu/msm/msm.cu's chunk
// loop. The kernel and the design are in gpu/msm/msm_g2_smem.cu.
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

// Local memory (bytes per thread) of the kernel, for the MSM's reservation of
// thread stacks.
std::size_t local_bytes_per_thread();

}  // namespace cuzk::gpu::kernels::g2smem
