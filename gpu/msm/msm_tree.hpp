// Affine pairwise-tree bucket accumulation (MsmAlgorithm::kAffineTree): host
// launcher for gpu/msm/msm.cu's chunk loop. The kernels and the design are in
// gpu/msm/msm_tree.cu; the index rules and the buffer layout in msm_plan.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/msm/msm_plan.hpp"

namespace cuzk::gpu::kernels::tree {

// One chunk's sorted entries (msm.cu's digits + sort + bounds steps). All
// device pointers; arena is the MSM's scratch base (plan's tree offsets).
struct ChunkArgs {
  const void* bases = nullptr;          // the chunk's packed affine points
  const std::uint32_t* vals = nullptr;  // point index | sign << 31, in key order
  const std::uint32_t* start = nullptr; // per key: first entry (0 / 0 when absent)
  const std::uint32_t* end = nullptr;   // per key: one past the last entry
  std::uint64_t chunk_points = 0;
  void* buckets = nullptr;              // running XYZZ buckets (window-major)
  unsigned char* arena = nullptr;
  // With plan.tree_sets = 2: odd slabs run on `side`, forked from and joined
  // back into the MSM's stream by the two events.
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
};

// Adds the chunk's points into the running XYZZ buckets (G1: Fp; G2: Fp2),
// slab by slab, plan.tree_slab_windows windows at a time. Asynchronous on s
// (and args.side, joined back into s).
void accumulate_g1(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& args);
void accumulate_g2(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& args);

// CUB's scan scratch for the plan's slab (bytes), checked against the plan's
// reservation; local memory per thread of the kernels (thread stacks).
std::size_t scan_temp_bytes(std::uint64_t buckets);
std::size_t local_bytes_per_thread(bool g2);

}  // namespace cuzk::gpu::kernels::tree
