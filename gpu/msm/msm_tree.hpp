// Affine pairwise-tree bucket accumulation (every MSM's accumulation): host
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
  const void* bases = nullptr;           // the chunk's packed affine points
  const std::uint32_t* vals = nullptr;   // point index | sign << 31, in key order
  const std::uint32_t* start = nullptr;  // per key: first entry (0 / 0 when absent)
  const std::uint32_t* end = nullptr;    // per key: one past the last entry
  std::uint64_t chunk_points = 0;
  void* buckets = nullptr;  // running XYZZ buckets (window-major)
  unsigned char* arena = nullptr;
  // With plan.tree_sets = 2: odd slabs run on `side`, forked from and joined
  // back into the MSM's stream by the two events.
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  // Tree reduction (plan.tree_reduce_chunks > 0): the chunk's bucket sums go,
  // affine, into array `chunk` of affine_buckets (plan.bucket_count points
  // each) instead of into the XYZZ buckets.
  void* affine_buckets = nullptr;
  std::uint32_t chunk = 0;
};

// Adds the chunk's points into the running XYZZ buckets (G1: Fp; G2: Fp2),
// slab by slab, plan.tree_slab_windows windows at a time. Asynchronous on s
// (and args.side, joined back into s).
void accumulate_g1(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& args);
void accumulate_g2(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& args);

// The bucket reduction as trees (msm::TreeReduceShape; needs
// plan.tree_reduce_chunks > 0 and every chunk accumulated with
// affine_buckets): sums the groups C and D of the chunks' affine buckets and
// writes each window's 2^h XYZZ points E (window-major) to e_out, whose
// running-sum reduction is the window's sum. Windows run in slabs of
// plan.tree_reduce_slab_windows on the buffer sets and streams as in
// accumulate. Asynchronous on s (and args.side, joined back into s).
struct ReduceArgs {
  const void* affine_buckets = nullptr;  // the chunks' arrays, back to back
  std::uint32_t* index = nullptr;        // plan: tree_reduce_index_off
  void* e_out = nullptr;                 // plan: tree_reduce_e_off
  unsigned char* arena = nullptr;
  cudaStream_t side = nullptr;  // as ChunkArgs' (plan.tree_sets = 2)
  cudaEvent_t fork = nullptr, join = nullptr;
};
void reduce_g1(cudaStream_t s, const msm::Plan& plan, const ReduceArgs& args);
void reduce_g2(cudaStream_t s, const msm::Plan& plan, const ReduceArgs& args);

// Sum of a long list of affine points picked by index (the witness MSMs'
// "scalar = 1" bases, gpu/groth16/point_sum.cu) on the same round kernels:
// the list in groups of 2^kListGroupLog entries, each summed exactly by
// kListGroupLog rounds of pairwise affine adds (~6 products per add where an
// XYZZ mixed add takes 10), in pieces that fit the arena. The group sums
// (affine, list_sum_groups(count) points at the arena's start) are left for
// the caller to fold. Asynchronous on s; the arena is the caller's until s
// passes.
inline constexpr int kListGroupLog = 9;
struct ListSumArgs {
  const void* bases = nullptr;         // packed affine points
  const std::uint32_t* idx = nullptr;  // count indices into bases, each < 2^31
  std::uint64_t count = 0;
  unsigned char* arena = nullptr;
  std::size_t arena_bytes = 0;  // at least list_sum_bytes(g2, count, 2^kListGroupLog)
};
std::uint64_t list_sum_groups(std::uint64_t count);
// Arena bytes for a list of count entries summed in pieces of piece_entries.
std::size_t list_sum_bytes(bool g2, std::uint64_t count, std::uint64_t piece_entries);
// The largest piece (whole groups, or the whole list) that fits arena_bytes; 0 if none.
std::uint64_t list_piece_entries(bool g2, std::uint64_t count, std::size_t arena_bytes);
// Returns the group sums (device, in the arena).
const void* sum_list_g1(cudaStream_t s, const ListSumArgs& args);
const void* sum_list_g2(cudaStream_t s, const ListSumArgs& args);

// CUB's scan scratch for the plan's slab (bytes), checked against the plan's
// reservation; local memory per thread of the kernels (thread stacks).
std::size_t scan_temp_bytes(std::uint64_t buckets);
std::size_t local_bytes_per_thread(bool g2);

}  // namespace cuzk::gpu::kernels::tree
