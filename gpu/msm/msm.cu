// Pippenger MSM over G1 (Fp) and G2 (Fp2), one template over the point field.
//
// The points are processed in chunks that fit the scratch arena (window choice
// and layout: gpu/msm/msm_plan.hpp); the buckets live across the chunks.
// Per chunk:
// 1. digits: each scalar (from Montgomery form) is cut into W = ceil(256/c)
//    signed c-bit digits in [-2^(c-1), 2^(c-1)] (a digit above 2^(c-1) becomes
//    digit - 2^c with a carry into the next window). Bit 255 of a scalar < r is
//    0, so the top window never carries out. Entry (window w, point i) gets the
//    key w << c | |digit| (the sentinel W << c for digit 0, which sorts last)
//    and the value i | sign << 31, i the index within the chunk.
// 2. CUB radix sort of the m*W (key, value) pairs (each window's entries on
//    their own on the digit's c bits when that saves radix passes) groups
//    points by bucket; a pass over the sorted keys records each bucket's
//    [start, end).
// 3. accumulation by the affine pairwise tree (gpu/msm/msm_tree.cu): every
//    bucket's points added in pairs, round after round, each round one batch
//    of independent affine adds sharing inversions (Montgomery's trick).
// After the last chunk:
// 4. reduction sum_b b * B_b per window. With at most two chunks the buckets
//    are affine and the weighted sum splits into group sums computed as two
//    more trees (msm::TreeReduceShape), leaving 2^h XYZZ points per window;
//    otherwise the running XYZZ buckets are reduced directly. Either way
//    gpu/msm/msm_reduce.cu's kernel runs the running-sum trick over segments
//    of buckets, and one block per window adds the segment results. The W
//    window sums go back to the host, which combines them by Horner's rule
//    (c doublings per window): one GPU thread took ~7 ms for that chain of
//    ~250 dependent doublings, the host takes well under 1 ms.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/field.cuh"
#include "gpu/kernels.hpp"
#include "gpu/msm/base_stager.hpp"
#include "gpu/msm/msm_reduce.hpp"
#include "gpu/msm/msm_plan.hpp"
#include "gpu/msm/msm_tree.hpp"

namespace cuzk::gpu::kernels {
namespace {

using dev::Fr;
using u64 = std::uint64_t;

constexpr u32 kSignBit = 0x80000000u;
constexpr int kWindowSumThreads = 64;

__global__ void digits_kernel(const Fr* scalars, u64 n, int c, int windows, u32* keys, u32* vals) {
  const u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Fr s = scalars[i].from_mont();
  const u32 full = 1u << c;
  const u32 half = full >> 1;
  const u32 sentinel = u32(windows) << c;
  u32 carry = 0;
  for (int w = 0; w < windows; ++w) {
    const int bit = w * c;
    const int limb = bit >> 5;
    const int sh = bit & 31;
    u64 v = 0;
    if (limb < 8) {
      v = s.l[limb] >> sh;
      if (sh + c > 32 && limb + 1 < 8) v |= u64(s.l[limb + 1]) << (32 - sh);
    }
    u32 d = u32(v & (full - 1)) + carry;
    const bool neg = d > half;
    if (neg) d = full - d;  // digit d - 2^c, magnitude 2^c - d
    carry = neg ? 1u : 0u;
    keys[u64(w) * n + i] = d == 0 ? sentinel : ((u32(w) << c) | d);
    vals[u64(w) * n + i] = u32(i) | (neg ? kSignBit : 0u);
  }
}

// Bucket bounds over the sorted keys, and nonzero[0] = the number of entries
// before the sentinel keys (digit 0), written by exactly one thread.
__global__ void bucket_bounds_kernel(const u32* keys, u64 total, u32 sentinel, u32* start, u32* end, u32* nonzero) {
  const u64 p = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= total) return;
  const u32 k = keys[p];
  if (k == sentinel) {
    if (p == 0 || keys[p - 1] != sentinel) *nonzero = u32(p);
    return;
  }
  if (p == 0 || keys[p - 1] != k) start[k] = u32(p);
  if (p + 1 == total || keys[p + 1] != k) end[k] = u32(p + 1);
  if (p + 1 == total) *nonzero = u32(total);
}

template <class F>
__global__ void window_sum_kernel(const dev::Xyzz<F>* segs, u32 segs_per_window, dev::Xyzz<F>* window_out) {
  __shared__ dev::Xyzz<F> partial[kWindowSumThreads];
  const u32 w = blockIdx.x;
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u32 j = threadIdx.x; j < segs_per_window; j += kWindowSumThreads) acc.add(segs[u64(w) * segs_per_window + j]);
  partial[threadIdx.x] = acc;
  dev::block_fold<kWindowSumThreads>(partial);
  if (threadIdx.x == 0) window_out[w] = partial[0];
}

// CUB's scratch for sorting `entries` pairs on the low key_bits bits.
std::size_t sort_temp_bytes(std::size_t entries, int key_bits, cudaStream_t s) {
  cub::DoubleBuffer<u32> dk(nullptr, nullptr), dv(nullptr, nullptr);
  std::size_t bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, int(entries), 0, key_bits, s));
  return bytes;
}

std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

// Device memory the MSM's kernels may need for thread stacks (local memory):
// the runtime sizes it at launch for every thread that can be resident
// (SMs * max threads per SM), and a launch fails when it does not fit, so the
// plan leaves it free (counted again when already reserved: a few hundred MiB
// at most).
template <class F>
std::size_t local_memory_margin_bytes(int ordinal, int sm_count) {
  int threads_per_sm = 0;
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal));
  constexpr bool kG2 = sizeof(F) != sizeof(dev::Fp);
  std::size_t per_thread = detail::max_local_bytes({reinterpret_cast<const void*>(&window_sum_kernel<F>)});
  per_thread = std::max(per_thread, smem_reduce::local_bytes_per_thread(kG2 ? smem_reduce::PointGroup::kG2
                                                                            : smem_reduce::PointGroup::kG1));
  per_thread += tree::local_bytes_per_thread(kG2);
  return per_thread * std::size_t(sm_count) * std::size_t(threads_per_sm);
}

// staged_point_bytes: bytes per point of the staging slots (0: bases on the device).
template <class F>
msm::Plan plan_for(cudaStream_t s, std::size_t n, const MsmConfig& config, MsmScratch& scratch,
                   std::size_t staged_point_bytes) {
  const std::size_t xyzz_bytes = sizeof(dev::Xyzz<F>);
  const int c_given = config.window_bits;
  if (c_given != 0 && (c_given < msm::kMinWindowBits || c_given > msm::kMaxWindowBits)) {
    throw Error(ErrorKind::kInvalidArgument, "msm: window bits " + std::to_string(c_given) + " out of 2..24");
  }
  int ordinal = 0, sm_count = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&ordinal));
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  std::size_t free_bytes = 0, total_bytes = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // The arena's own memory is available to this call (it is reallocated to grow).
  const std::size_t usable = free_bytes + scratch.capacity_bytes();
  const std::size_t keep = detail::kDeviceMemoryReserveBytes + local_memory_margin_bytes<F>(ordinal, sm_count);
  const std::size_t available = usable > keep ? usable - keep : 0;
  const std::size_t limit = std::min(config.scratch_limit_bytes, available);
  const auto sort_temp = [s](std::size_t entries, int key_bits) { return sort_temp_bytes(entries, key_bits, s); };
  msm::Plan p =
      msm::plan(n, xyzz_bytes, c_given, limit, msm::resident_threads(sm_count), sort_temp, staged_point_bytes);
  if (p.total_bytes == 0) {
    std::size_t need = SIZE_MAX;
    for (int c = c_given ? c_given : msm::kAutoWindowBitsMin; c <= (c_given ? c_given : msm::kAutoWindowBitsMax); ++c) {
      need = std::min(need, msm::minimum_bytes(c, n, xyzz_bytes, sort_temp, staged_point_bytes));
    }
    throw Error(ErrorKind::kOutOfDeviceMemory, "msm of " + std::to_string(n) + " points needs at least " + mib(need) +
                                                   " of device scratch; limit " + mib(config.scratch_limit_bytes) +
                                                   ", " + mib(free_bytes) + " free + " + mib(scratch.capacity_bytes()) +
                                                   " arena (" + mib(keep) +
                                                   " kept for the CUDA context and thread stacks)");
  }
  return p;
}

// The tree reduction (gpu/msm/msm_tree.hpp): the chunks' affine buckets to
// 2^h XYZZ points per window whose running-sum reduction is the window's sum;
// segment sums into segs, returns segments per window.
template <class F>
u32 reduce_trees(cudaStream_t s, const msm::Plan& plan, unsigned char* arena, MsmScratch& scratch, dev::Xyzz<F>* segs) {
  tree::ReduceArgs t;
  if (plan.tree_sets > 1) {
    auto& side = scratch.side();
    t.side = side.stream.get();
    t.fork = side.fork.get();
    t.join = side.join.get();
  }
  t.affine_buckets = arena + plan.buckets_off;
  t.index = reinterpret_cast<u32*>(arena + plan.tree_reduce_index_off);
  t.e_out = arena + plan.tree_reduce_e_off;
  t.arena = arena;
  constexpr bool kG1 = sizeof(F) == sizeof(dev::Fp);
  if constexpr (kG1) {
    tree::reduce_g1(s, plan, t);
  } else {
    tree::reduce_g2(s, plan, t);
  }
  smem_reduce::ReduceArgs r;
  r.buckets = t.e_out;
  r.buckets_per_window = u32(1) << msm::tree_reduce_shape(plan.window_bits, plan.tree_reduce_chunks).h;
  r.windows = u32(plan.windows);
  r.segments_max = plan.segments;
  r.seg_out = segs;
  return smem_reduce::reduce_segments(s, r, kG1 ? smem_reduce::PointGroup::kG1 : smem_reduce::PointGroup::kG2);
}

// Segment sums of the running XYZZ buckets' reduction (three or more chunks)
// into segs; returns segments per window.
template <class F>
u32 reduce_segments(cudaStream_t s, const msm::Plan& plan, dev::Xyzz<F>* buckets, dev::Xyzz<F>* segs) {
  smem_reduce::ReduceArgs a;
  a.buckets = buckets;
  a.buckets_per_window = u32(plan.buckets_per_window);
  a.windows = u32(plan.windows);
  a.segments_max = plan.segments;
  a.seg_out = segs;
  return smem_reduce::reduce_segments(
      s, a, sizeof(F) == sizeof(dev::Fp) ? smem_reduce::PointGroup::kG1 : smem_reduce::PointGroup::kG2);
}

template <class F>
MsmWindows msm_run(cudaStream_t s, const PointSource& source, const u32* scalars_raw, std::size_t n,
                   const MsmConfig& config, MsmScratch& scratch, MsmPhaseMs* phases) {
  using Point = dev::Xyzz<F>;
  MsmWindows out;
  if (n == 0) return out;
  scratch.after_last_use(s);  // an MSM enqueued on another stream may still use the arena
  const bool streamed = !source.on_device(n);
  if (streamed && source.host == nullptr) {
    throw Error(ErrorKind::kInvalidArgument, "msm: bases beyond the device prefix but no host copy");
  }
  // A limit lowered since the arena grew: give the excess back first.
  if (scratch.capacity_bytes() > config.scratch_limit_bytes) scratch.release();
  const msm::Plan plan = plan_for<F>(s, n, config, scratch, streamed ? sizeof(dev::Affine<F>) : 0);
  unsigned char* arena = scratch.reserve(plan.total_bytes);
  const int c = plan.window_bits;
  const int windows = plan.windows;
  const u32 sentinel = u32(msm::sentinel_key(c));
  auto* buckets = reinterpret_cast<Point*>(arena + plan.buckets_off);
  auto* start = reinterpret_cast<u32*>(arena + plan.starts_off);
  auto* end = reinterpret_cast<u32*>(arena + plan.ends_off);
  auto* nonzero = reinterpret_cast<u32*>(arena + plan.nonzero_off);
  auto* segs = reinterpret_cast<Point*>(arena + plan.segs_off);
  auto* window_sums = reinterpret_cast<Point*>(arena + plan.window_sums_off);
  u32* keys[2] = {reinterpret_cast<u32*>(arena + plan.keys_off[0]), reinterpret_cast<u32*>(arena + plan.keys_off[1])};
  u32* vals[2] = {reinterpret_cast<u32*>(arena + plan.vals_off[0]), reinterpret_cast<u32*>(arena + plan.vals_off[1])};
  unsigned char* sort_temp = arena + plan.sort_temp_off;
  const auto* scalars = reinterpret_cast<const Fr*>(scalars_raw);
  // Chunk k's bases: in place when on the device, else copied into a staging
  // slot on the copy stream while the previous chunk accumulates.
  detail::BaseStager stager(s, streamed ? scratch.copy_stream() : s, source, sizeof(dev::Affine<F>) / sizeof(u32),
                            streamed ? reinterpret_cast<u32*>(arena + plan.staging_off[0]) : nullptr,
                            streamed ? reinterpret_cast<u32*>(arena + plan.staging_off[1]) : nullptr);

  // Phase events: 4 per chunk (digits, sort, accumulate, end) and 2 for the reduction.
  std::vector<detail::Event> ev(phases != nullptr ? 4 * plan.chunks + 2 : 0);
  auto mark = [&](std::size_t i) {
    if (phases != nullptr) ev[i].record(s);
  };

  // With the tree reduction every bucket of every chunk is written (affine,
  // one array per chunk); otherwise the chunks accumulate into the XYZZ
  // buckets from the identity.
  const bool tree_reduce = plan.tree_reduce_chunks > 0;
  if (!tree_reduce) {
    CUZK_CUDA_CHECK(cudaMemsetAsync(buckets, 0, plan.bucket_count * sizeof(Point), s));  // all identity (ZZ = 0)
  }
  for (std::size_t k = 0; k < plan.chunks; ++k) {
    const std::size_t off = k * plan.chunk_points;
    const std::size_t m = std::min(plan.chunk_points, n - off);
    const u64 total = u64(m) * windows;
    const auto* chunk_bases = reinterpret_cast<const dev::Affine<F>*>(stager.load(k, off, off + m));
    mark(4 * k);
    digits_kernel<<<detail::grid_for(m, 256), 256, 0, s>>>(scalars + off, m, c, windows, keys[0], vals[0]);
    CUZK_CUDA_CHECK_LAUNCH();
    mark(4 * k + 1);
    cub::DoubleBuffer<u32> dk(keys[0], keys[1]);
    cub::DoubleBuffer<u32> dv(vals[0], vals[1]);
    std::size_t temp_bytes = plan.sort_temp_bytes;
    if (msm::tree_sorts_by_window(c)) {
      // The digits are window-major, so each window's entries sort on their
      // own on the digit's c bits: ceil(c / 8) radix passes instead of
      // ceil(key_bits / 8) (c = 22: 3 instead of 4; H200, G1 2^27 sort 47.7
      // -> 39.1 ms, 2^26 23.7 -> 19.5). Zero digits (the
      // sentinel, whose low c bits are 0) then lead each window's run instead
      // of closing the whole array; only the bucket bounds are used after.
      for (int w = 0; w < windows; ++w) {
        cub::DoubleBuffer<u32> wk(keys[0] + u64(w) * m, keys[1] + u64(w) * m);
        cub::DoubleBuffer<u32> wv(vals[0] + u64(w) * m, vals[1] + u64(w) * m);
        CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp, temp_bytes, wk, wv, int(m), 0, c, s));
        dk.selector = wk.selector;  // the same pass count for every window
        dv.selector = wv.selector;
      }
    } else {
      CUZK_CUDA_CHECK(
          cub::DeviceRadixSort::SortPairs(sort_temp, temp_bytes, dk, dv, int(total), 0, msm::key_bits(c), s));
    }
    CUZK_CUDA_CHECK(cudaMemsetAsync(start, 0, plan.key_count * 4, s));
    CUZK_CUDA_CHECK(cudaMemsetAsync(end, 0, plan.key_count * 4, s));
    bucket_bounds_kernel<<<detail::grid_for(total, 256), 256, 0, s>>>(dk.Current(), total, sentinel, start, end,
                                                                      nonzero);
    CUZK_CUDA_CHECK_LAUNCH();
    mark(4 * k + 2);
    stager.wait(k);
    {
      tree::ChunkArgs a;
      a.bases = chunk_bases;
      a.vals = dv.Current();
      a.start = start;
      a.end = end;
      a.chunk_points = m;
      a.buckets = buckets;
      a.arena = arena;
      if (tree_reduce) {
        a.affine_buckets = buckets;
        a.chunk = std::uint32_t(k);
      }
      if (plan.tree_sets > 1) {
        auto& side = scratch.side();
        a.side = side.stream.get();
        a.fork = side.fork.get();
        a.join = side.join.get();
      }
      if constexpr (sizeof(F) == sizeof(dev::Fp)) {
        tree::accumulate_g1(s, plan, a);
      } else {
        tree::accumulate_g2(s, plan, a);
      }
    }
    stager.release(k);
    mark(4 * k + 3);
  }

  mark(4 * plan.chunks);
  const u32 segs_per_window =
      tree_reduce ? reduce_trees<F>(s, plan, arena, scratch, segs) : reduce_segments<F>(s, plan, buckets, segs);
  window_sum_kernel<F><<<unsigned(windows), kWindowSumThreads, 0, s>>>(segs, segs_per_window, window_sums);
  CUZK_CUDA_CHECK_LAUNCH();
  out.window_bits = c;
  out.windows = windows;
  out.chunks = plan.chunks;
  out.reduced_by_trees = tree_reduce;
  // Enqueued (msm_g1_enqueue): the sums go straight to the caller's pinned
  // buffer and the arena stays busy until the stream gets there (record_use);
  // the caller learns it from a fence. Otherwise into out.sums, and wait.
  u32* sums_out = config.window_sums_out;
  if (sums_out != nullptr && windows > kMsmMaxWindows) std::abort();  // msm::windows_for(kMinWindowBits) bounds it
  if (sums_out == nullptr) {
    out.sums.resize(windows * sizeof(Point) / sizeof(u32));
    sums_out = out.sums.data();
  }
  CUZK_CUDA_CHECK(cudaMemcpyAsync(sums_out, window_sums, windows * sizeof(Point), cudaMemcpyDeviceToHost, s));
  mark(4 * plan.chunks + 1);
  scratch.record_use(s);
  if (config.window_sums_out != nullptr) {
    if (phases != nullptr) std::abort();  // phase times need the stream to finish: msm_g1 / msm_g2
    return out;
  }
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  if (phases != nullptr) {
    *phases = MsmPhaseMs{};
    auto elapsed = [&](std::size_t a, std::size_t b) {
      float ms = 0;
      CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[a].get(), ev[b].get()));
      return ms;
    };
    for (std::size_t k = 0; k < plan.chunks; ++k) {
      phases->digits_ms += elapsed(4 * k, 4 * k + 1);
      phases->sort_ms += elapsed(4 * k + 1, 4 * k + 2);
      phases->accumulate_ms += elapsed(4 * k + 2, 4 * k + 3);
    }
    phases->reduce_ms = elapsed(4 * plan.chunks, 4 * plan.chunks + 1);
  }
  return out;
}

}  // namespace

MsmWindows msm_g1(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n, const MsmConfig& config,
                  MsmScratch& scratch, MsmPhaseMs* phases) {
  return msm_run<dev::Fp>(s, bases, scalars, n, config, scratch, phases);
}

MsmWindows msm_g2(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n, const MsmConfig& config,
                  MsmScratch& scratch, MsmPhaseMs* phases) {
  return msm_run<dev::Fp2>(s, bases, scalars, n, config, scratch, phases);
}

MsmWindows msm_g1_enqueue(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n,
                          const MsmConfig& config, MsmScratch& scratch, u32* window_sums_out) {
  MsmConfig c = config;
  c.window_sums_out = window_sums_out;
  return msm_run<dev::Fp>(s, bases, scalars, n, c, scratch, nullptr);
}

MsmWindows msm_g2_enqueue(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n,
                          const MsmConfig& config, MsmScratch& scratch, u32* window_sums_out) {
  MsmConfig c = config;
  c.window_sums_out = window_sums_out;
  return msm_run<dev::Fp2>(s, bases, scalars, n, c, scratch, nullptr);
}

}  // namespace cuzk::gpu::kernels
