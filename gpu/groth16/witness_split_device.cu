// The witness MSMs' selection + split on the device: see witness_split_device.hpp.
// Built into cuzk_gpu by the recursive *.cu glob of gpu/CMakeLists.txt.
#include "gpu/groth16/witness_split_device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_scan.cuh>

#include "gpu/ff/field.cuh"

namespace cuzk::gpu::groth16_kernels {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr unsigned kWarps = kSplitBlockThreads / 32;

struct Count3 {
  u32 selected, ones, tail;
};
struct AddCount3 {
  __host__ __device__ Count3 operator()(const Count3& a, const Count3& b) const {
    return {a.selected + b.selected, a.ones + b.ones, a.tail + b.tail};
  }
};

enum Class : int { kNotSelected = 0, kZero, kOne, kTail };

u64 blocks_for(const SplitSource& s) { return (s.end - s.begin + kSplitBlockThreads - 1) / kSplitBlockThreads; }

// A source the kernels cannot read safely is a caller's bug.
void check_source(const SplitSource& s) {
  const bool inputs_in_range = s.begin < std::min(s.end, s.n_inputs);
  const bool aux_in_range = s.end > std::max(s.begin, s.n_inputs);
  if (s.end < s.begin || (s.end > s.begin && s.witness == nullptr) ||
      (inputs_in_range && !s.every_input && s.density_inputs == nullptr) ||
      (aux_in_range && !s.every_aux && s.density_aux == nullptr) || s.end - s.begin >= (u64{1} << 32)) {
    std::fprintf(stderr, "cuzk: witness split source misused: [%llu, %llu) of %llu inputs\n",
                 static_cast<unsigned long long>(s.begin), static_cast<unsigned long long>(s.end),
                 static_cast<unsigned long long>(s.n_inputs));
    std::abort();
  }
}

__device__ __forceinline__ bool bit(const u64* words, u64 j) { return (words[j >> 6] >> (j & 63)) & 1u; }

// The class of witness element i, and its limbs when selected.
__device__ __forceinline__ int classify(const SplitSource& s, u64 i, uint4& lo, uint4& hi) {
  if (i >= s.end) return kNotSelected;
  const bool selected =
      i < s.n_inputs ? s.every_input || bit(s.density_inputs, i) : s.every_aux || bit(s.density_aux, i - s.n_inputs);
  if (!selected) return kNotSelected;
  const uint4* p = reinterpret_cast<const uint4*>(s.witness + i * 8);
  lo = p[0];
  hi = p[1];
  const u32 l[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  u32 any = 0, diff_one = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    any |= l[k];
    diff_one |= l[k] ^ dev::FrParams::one(k);  // Montgomery form: one is R mod r
  }
  if (any == 0) return kZero;
  return diff_one == 0 ? kOne : kTail;
}

__global__ void __launch_bounds__(kSplitBlockThreads) count_kernel(SplitSource s, Count3* counts) {
  const u64 i = s.begin + u64(blockIdx.x) * kSplitBlockThreads + threadIdx.x;
  uint4 lo, hi;
  const int c = classify(s, i, lo, hi);
  // Block-wide predicate counts (each is a barrier): no shared memory needed.
  const u32 selected = __syncthreads_count(c != kNotSelected);
  const u32 ones = __syncthreads_count(c == kOne);
  const u32 tail = __syncthreads_count(c == kTail);
  if (threadIdx.x == 0) counts[blockIdx.x] = {selected, ones, tail};
}

__global__ void __launch_bounds__(kSplitBlockThreads)
    fill_kernel(SplitSource s, const Count3* offsets, bool split, u32* ones, u32* tail_idx, uint4* values) {
  __shared__ u32 warp_counts[3][kWarps];
  const u64 i = s.begin + u64(blockIdx.x) * kSplitBlockThreads + threadIdx.x;
  uint4 lo{}, hi{};
  const int c = classify(s, i, lo, hi);
  const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const u32 below = (1u << lane) - 1u;
  const u32 b_sel = __ballot_sync(~0u, c != kNotSelected);
  const u32 b_one = __ballot_sync(~0u, c == kOne);
  const u32 b_tail = __ballot_sync(~0u, c == kTail);
  if (lane == 0) {
    warp_counts[0][warp] = __popc(b_sel);
    warp_counts[1][warp] = __popc(b_one);
    warp_counts[2][warp] = __popc(b_tail);
  }
  __syncthreads();
  if (c == kNotSelected) return;
  Count3 at = offsets[blockIdx.x];
  for (u32 w = 0; w < warp; ++w) {
    at.selected += warp_counts[0][w];
    at.ones += warp_counts[1][w];
    at.tail += warp_counts[2][w];
  }
  const u32 sel = at.selected + __popc(b_sel & below);
  if (!split) {
    values[2 * u64(sel)] = lo;
    values[2 * u64(sel) + 1] = hi;
  } else if (c == kOne) {
    ones[at.ones + __popc(b_one & below)] = sel;
  } else if (c == kTail) {
    const u64 k = at.tail + __popc(b_tail & below);
    tail_idx[k] = sel;
    values[2 * k] = lo;
    values[2 * k + 1] = hi;
  }
}

}  // namespace

std::size_t split_counts_words(const SplitSource& source) { return 2 * (blocks_for(source) + 1) * 3; }

std::size_t split_scan_temp_bytes(const SplitSource& source) {
  std::size_t bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, bytes, static_cast<const Count3*>(nullptr),
                                                 static_cast<Count3*>(nullptr), AddCount3{}, Count3{0, 0, 0},
                                                 int(blocks_for(source) + 1)));
  return bytes;
}

void count_witness_split(cudaStream_t stream, const SplitSource& source, u32* counts, void* temp,
                         std::size_t temp_bytes, u32* host_totals) {
  check_source(source);
  const u64 blocks = blocks_for(source);
  auto* per_block = reinterpret_cast<Count3*>(counts);
  auto* offsets = per_block + blocks + 1;
  // The scan runs over blocks + 1 entries, the last zero: offsets[blocks] is the total.
  CUZK_CUDA_CHECK(cudaMemsetAsync(per_block + blocks, 0, sizeof(Count3), stream));
  if (blocks > 0) {
    count_kernel<<<unsigned(blocks), kSplitBlockThreads, 0, stream>>>(source, per_block);
    CUZK_CUDA_CHECK_LAUNCH();
  }
  std::size_t bytes = temp_bytes;
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp, bytes, per_block, offsets, AddCount3{}, Count3{0, 0, 0},
                                                 int(blocks + 1), stream));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(host_totals, offsets + blocks, sizeof(Count3), cudaMemcpyDeviceToHost, stream));
}

void fill_witness_split(cudaStream_t stream, const SplitSource& source, const u32* counts, bool split, u32* ones,
                        u32* tail_idx, u32* values) {
  const u64 blocks = blocks_for(source);
  if (blocks == 0) return;
  const auto* offsets = reinterpret_cast<const Count3*>(counts) + blocks + 1;
  fill_kernel<<<unsigned(blocks), kSplitBlockThreads, 0, stream>>>(source, offsets, split, ones, tail_idx,
                                                                   reinterpret_cast<uint4*>(values));
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace cuzk::gpu::groth16_kernels
