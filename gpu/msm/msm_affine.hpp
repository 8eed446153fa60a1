// Batch-affine bucket accumulation (MsmAlgorithm::kBatchAffine): host
// launchers for gpu/msm/msm.cu's chunk loop. The kernels and the design are in
// gpu/msm/msm_affine.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cuzk::gpu::kernels::affine {

// One chunk's sorted entries (the output of msm.cu's digits + sort + bounds
// steps) and the arrays the accumulation reads and writes. All device pointers.
struct ChunkArgs {
  const std::uint32_t* bases = nullptr;     // the chunk's packed affine points
  const std::uint32_t* keys = nullptr;      // sorted keys (w << c | digit; sentinel last)
  const std::uint32_t* vals = nullptr;      // point index | sign << 31, in key order
  const std::uint32_t* start = nullptr;     // per key: first entry (0 / 0 when absent)
  const std::uint32_t* end = nullptr;       // per key: one past the last entry
  const std::uint32_t* nonzero = nullptr;   // entries before the sentinel keys
  std::uint64_t total = 0;                  // entries of the chunk, sentinels included
  int window_bits = 0;                      // c
  std::uint32_t windows = 0;
  std::uint32_t buckets_per_window = 0;
  std::size_t runs_max = 0;                 // slots in first_partials
  void* buckets = nullptr;                  // running XYZZ buckets (window-major)
  void* first_partials = nullptr;           // runs_max slots of at least one affine point
  void* bucket_sums = nullptr;              // one affine point per bucket
};

// Adds the chunk's points into the running XYZZ buckets (G1: 12-limb Fp
// coordinates; G2: Fp2). Asynchronous on s.
void accumulate_g1(cudaStream_t s, const ChunkArgs& args);
void accumulate_g2(cudaStream_t s, const ChunkArgs& args);

// Local memory (bytes per thread) of the batch-affine kernels, for the MSM's
// reservation of thread stacks.
std::size_t local_bytes_per_thread(bool g2);

}  // namespace cuzk::gpu::kernels::affine
