// Sums of selected bases (the "scalar = 1" part of the witness MSMs) and the
// gather of the remaining bases for the tail MSM.
//
// The XYZZ sum runs in two kernels: every thread of a grid sized to fill the
// GPU walks a strided slice of the index list with XYZZ mixed additions (8M +
// 2S each) and writes one partial; one block then folds the partials (full
// XYZZ additions) and a shared-memory tree. Long lists first go through the
// MSM tree's pairwise affine rounds (tree::sum_list), which leave one point
// per 2^kListGroupLog; the same two kernels fold those. Why: the XYZZ
// partials ran at ~8 warps per SM (138 registers, a 288 B stack), latency-
// bound; the rounds run every add of a round independently, at ~6 products
// per add. Built into cuzk_gpu by the recursive *.cu glob of
// gpu/CMakeLists.txt.
#include <algorithm>
#include <cstring>
#include <utility>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/msm/base_stager.hpp"
#include "gpu/msm/msm_tree.hpp"

namespace cuzk::gpu::groth16_kernels {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr unsigned kPartialThreads = 128;
// Partials: at most this many threads (about 2 blocks per SM of an H200), and
// at least kMinAddsPerThread additions each so small sums do not pay for a
// large fold.
constexpr u64 kMaxPartials = 132 * 2 * kPartialThreads;
constexpr u64 kMinAddsPerThread = 32;
constexpr unsigned kFoldThreads = 64;

// bases[0] is the point of index idx_base (a chunk of streamed bases); no
// idx: bases[i] itself. With kAccumulate the partials keep running over
// several chunks (started as zeros: the identity), else each thread writes
// its fresh partial.
template <class F, bool kAccumulate>
__global__ void __launch_bounds__(kPartialThreads)
    partial_sums_kernel(const dev::Affine<F>* bases, const u32* idx, u64 count, u32 idx_base, dev::Xyzz<F>* partials) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  const u64 stride = u64(gridDim.x) * blockDim.x;
  if (kAccumulate && t >= count) return;  // nothing to add: the partial stays as it is
  dev::Xyzz<F> acc = kAccumulate ? partials[t] : dev::Xyzz<F>::identity();
  for (u64 i = t; i < count; i += stride) {
    const dev::Affine<F> a = bases[idx != nullptr ? idx[i] - idx_base : i];
    acc.add_affine(a.x, a.y);
  }
  partials[t] = acc;
}

template <class F>
__global__ void __launch_bounds__(kFoldThreads)
    fold_kernel(const dev::Xyzz<F>* partials, u64 count, dev::Xyzz<F>* out) {
  __shared__ dev::Xyzz<F> folded[kFoldThreads];
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u64 j = threadIdx.x; j < count; j += kFoldThreads) acc.add(partials[j]);
  folded[threadIdx.x] = acc;
  dev::block_fold<kFoldThreads>(folded);
  if (threadIdx.x == 0) out[0] = folded[0];
}

// bases[0] is the point of index idx_base.
__global__ void gather_kernel(const uint4* bases, const u32* idx, u64 count, u32 vecs_per_point, u32 idx_base,
                              uint4* out) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= count * vecs_per_point) return;
  const u64 i = t / vecs_per_point;
  out[t] = bases[u64(idx[i] - idx_base) * vecs_per_point + t % vecs_per_point];
}

// Threads of the partial sums for count additions.
u64 partial_threads(std::size_t count) {
  return std::max<u64>(1, std::min<u64>(kMaxPartials, count / kMinAddsPerThread));
}

// The partials (partial_count points), then the folded sum, in `scratch`
// (grown when too small: freeing waits for the device).
template <class F>
dev::Xyzz<F>* sum_scratch(detail::DeviceBuffer<unsigned char>& scratch, u64 partial_count) {
  const std::size_t need = (partial_count + 1) * sizeof(dev::Xyzz<F>);
  if (scratch.bytes() < need) {
    scratch.reset();  // cudaFree waits for the device: no earlier sum still reads it
    scratch = detail::DeviceBuffer<unsigned char>(need, "point sum partials");
  }
  return reinterpret_cast<dev::Xyzz<F>*>(scratch.get());
}

// The arena for a tree sum of count points (room for at least one piece), or
// {null, 0} for the XYZZ path. The arena is taken as it is when the list fits
// it (no reallocation, which waits for the device); else grown within its
// limit and the free memory (less the CUDA reserve and the tree kernels'
// thread stacks).
template <class F>
std::pair<unsigned char*, std::size_t> tree_arena(cudaStream_t s, std::size_t count, const PointSumOptions& o) {
  if (o.arena == nullptr || o.method == PointSumMethod::kXyzz) return {nullptr, 0};
  if (o.method == PointSumMethod::kAuto && count < kTreeSumMinPoints) return {nullptr, 0};
  constexpr bool kG2 = sizeof(F) != sizeof(dev::Fp);
  const std::size_t whole = kernels::tree::list_sum_bytes(kG2, count, count);
  // kAuto: pieces of kTreeSumMinPoints at least (shorter ones would mostly
  // pay for their launches); kTree (tests): one group.
  const std::size_t least_piece =
      o.method == PointSumMethod::kTree ? std::size_t{1} << kernels::tree::kListGroupLog : kTreeSumMinPoints;
  const std::size_t least = kernels::tree::list_sum_bytes(kG2, count, std::min(count, least_piece));
  std::size_t budget = std::min(o.arena->capacity_bytes(), o.arena_limit_bytes);
  if (budget < whole) {
    int ordinal = 0, sm_count = 0, threads_per_sm = 0;
    CUZK_CUDA_CHECK(cudaGetDevice(&ordinal));
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal));
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUZK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t usable = free_bytes + o.arena->capacity_bytes();
    const std::size_t keep = detail::kDeviceMemoryReserveBytes + kernels::tree::local_bytes_per_thread(kG2) *
                                                                     std::size_t(sm_count) *
                                                                     std::size_t(threads_per_sm);
    const std::size_t grown = std::min({whole, usable > keep ? usable - keep : 0, o.arena_limit_bytes});
    budget = std::max(budget, grown);
  }
  if (budget < least) return {nullptr, 0};
  o.arena->after_last_use(s);  // an MSM on another stream may still use the arena
  return {o.arena->reserve(budget), budget};
}

template <class F>
PointSumMethod sum_points(cudaStream_t s, const u32* bases_raw, const u32* idx, std::size_t count,
                          detail::DeviceBuffer<unsigned char>& scratch, const PointSumOptions& options, u32* host_out) {
  using Point = dev::Xyzz<F>;
  if (count == 0) {
    std::memset(host_out, 0, sizeof(Point));  // zz = 0: the identity
    return PointSumMethod::kXyzz;
  }
  const auto* points = reinterpret_cast<const dev::Affine<F>*>(bases_raw);
  const auto [arena, arena_bytes] = tree_arena<F>(s, count, options);
  if (arena != nullptr) {
    // The tree leaves one affine point per group: the partials fold those.
    kernels::tree::ListSumArgs a;
    a.bases = bases_raw;
    a.idx = idx;
    a.count = count;
    a.arena = arena;
    a.arena_bytes = arena_bytes;
    points = static_cast<const dev::Affine<F>*>(sizeof(F) == sizeof(dev::Fp) ? kernels::tree::sum_list_g1(s, a)
                                                                             : kernels::tree::sum_list_g2(s, a));
    idx = nullptr;
    count = kernels::tree::list_sum_groups(count);
  }
  const u64 threads = partial_threads(count);
  const unsigned blocks = static_cast<unsigned>((threads + kPartialThreads - 1) / kPartialThreads);
  const u64 partial_count = u64(blocks) * kPartialThreads;
  Point* partials = sum_scratch<F>(scratch, partial_count);
  Point* sum = partials + partial_count;
  partial_sums_kernel<F, false><<<blocks, kPartialThreads, 0, s>>>(points, idx, count, 0, partials);
  CUZK_CUDA_CHECK_LAUNCH();
  if (arena != nullptr) options.arena->record_use(s);  // the group sums are read
  fold_kernel<F><<<1, kFoldThreads, 0, s>>>(partials, partial_count, sum);
  CUZK_CUDA_CHECK_LAUNCH();
  CUZK_CUDA_CHECK(cudaMemcpyAsync(host_out, sum, sizeof(Point), cudaMemcpyDeviceToHost, s));
  return arena != nullptr ? PointSumMethod::kTree : PointSumMethod::kXyzz;
}

template <class F>
void sum_and_gather_streamed(const StreamedSplitPasses& a, detail::DeviceBuffer<unsigned char>& scratch,
                             u32* host_out) {
  using Point = dev::Xyzz<F>;
  constexpr std::size_t kLimbs = sizeof(dev::Affine<F>) / sizeof(u32);
  constexpr u32 kVecs = kLimbs / 4;
  const cudaStream_t s = a.stream;
  const u64 threads = partial_threads(a.n_ones);
  const unsigned blocks = static_cast<unsigned>((threads + kPartialThreads - 1) / kPartialThreads);
  const u64 partial_count = u64(blocks) * kPartialThreads;
  Point* partials = sum_scratch<F>(scratch, partial_count);
  Point* sum = partials + partial_count;
  CUZK_CUDA_CHECK(cudaMemsetAsync(partials, 0, partial_count * sizeof(Point), s));  // zz = 0: the identity
  const std::size_t streamed_points = a.n_points > a.bases.device_points ? a.n_points - a.bases.device_points : 0;
  if (streamed_points > 0 && a.chunk_points == 0) std::abort();  // a caller bug: no progress possible
  const std::size_t chunk_points = std::min(a.chunk_points, streamed_points);
  // Slots of chunk_points each, 256-byte aligned (the gather reads uint4).
  const std::size_t slot_bytes = (chunk_points * kLimbs * 4 + 255) / 256 * 256;
  a.arena->after_last_use(s);
  unsigned char* slots = chunk_points > 0 ? a.arena->reserve(2 * slot_bytes) : nullptr;
  detail::BaseStager stager(s, chunk_points > 0 ? a.arena->copy_stream() : s, a.bases, kLimbs,
                            reinterpret_cast<u32*>(slots), reinterpret_cast<u32*>(slots + slot_bytes));
  const auto first_at = [](const u32* xs, std::size_t n, std::size_t v) {
    return std::size_t(std::lower_bound(xs, xs + n, v, [](u32 x, std::size_t y) { return x < y; }) - xs);
  };
  // Pieces: the device prefix whole, then chunks of chunk_points; a piece that
  // no index falls in is not copied.
  std::size_t k = 0;
  for (std::size_t lo = 0; lo < a.n_points;) {
    const std::size_t hi = lo < a.bases.device_points ? std::min(a.n_points, a.bases.device_points)
                                                      : std::min(a.n_points, lo + chunk_points);
    const std::size_t o_lo = first_at(a.ones_host, a.n_ones, lo), o_hi = first_at(a.ones_host, a.n_ones, hi);
    const std::size_t t_lo = first_at(a.tail_idx_host, a.n_tail, lo);
    const std::size_t t_hi = first_at(a.tail_idx_host, a.n_tail, hi);
    if (o_hi > o_lo || t_hi > t_lo) {
      const u32* piece = stager.load(k, lo, hi);
      stager.wait(k);
      if (o_hi > o_lo) {
        partial_sums_kernel<F, true><<<blocks, kPartialThreads, 0, s>>>(reinterpret_cast<const dev::Affine<F>*>(piece),
                                                                        a.ones + o_lo, o_hi - o_lo, u32(lo), partials);
        CUZK_CUDA_CHECK_LAUNCH();
      }
      if (t_hi > t_lo) {
        gather_kernel<<<detail::grid_for((t_hi - t_lo) * kVecs, 256), 256, 0, s>>>(
            reinterpret_cast<const uint4*>(piece), a.tail_idx + t_lo, t_hi - t_lo, kVecs, u32(lo),
            reinterpret_cast<uint4*>(a.gathered + t_lo * kLimbs));
        CUZK_CUDA_CHECK_LAUNCH();
      }
      stager.release(k);
      ++k;
    }
    lo = hi;
  }
  a.arena->record_use(s);
  fold_kernel<F><<<1, kFoldThreads, 0, s>>>(partials, partial_count, sum);
  CUZK_CUDA_CHECK_LAUNCH();
  CUZK_CUDA_CHECK(cudaMemcpyAsync(host_out, sum, sizeof(Point), cudaMemcpyDeviceToHost, s));
}

}  // namespace

void sum_and_gather_streamed_g1(const StreamedSplitPasses& passes, detail::DeviceBuffer<unsigned char>& scratch,
                                u32* host_out) {
  sum_and_gather_streamed<dev::Fp>(passes, scratch, host_out);
}

void sum_and_gather_streamed_g2(const StreamedSplitPasses& passes, detail::DeviceBuffer<unsigned char>& scratch,
                                u32* host_out) {
  sum_and_gather_streamed<dev::Fp2>(passes, scratch, host_out);
}

PointSumMethod sum_points_g1(cudaStream_t stream, const u32* bases, const u32* idx, std::size_t count,
                             detail::DeviceBuffer<unsigned char>& scratch, const PointSumOptions& options,
                             u32* host_out) {
  return sum_points<dev::Fp>(stream, bases, idx, count, scratch, options, host_out);
}

PointSumMethod sum_points_g2(cudaStream_t stream, const u32* bases, const u32* idx, std::size_t count,
                             detail::DeviceBuffer<unsigned char>& scratch, const PointSumOptions& options,
                             u32* host_out) {
  return sum_points<dev::Fp2>(stream, bases, idx, count, scratch, options, host_out);
}

void gather_points(cudaStream_t stream, const u32* bases, const u32* idx, std::size_t count,
                   std::size_t limbs_per_point, u32* out) {
  if (count == 0) return;
  const u32 vecs = static_cast<u32>(limbs_per_point / 4);
  gather_kernel<<<detail::grid_for(count * vecs, 256), 256, 0, stream>>>(reinterpret_cast<const uint4*>(bases), idx,
                                                                         count, vecs, 0, reinterpret_cast<uint4*>(out));
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace cuzk::gpu::groth16_kernels
