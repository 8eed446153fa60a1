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
// 2. CUB radix sort of the m*W (key, value) pairs on the low key_bits bits
//    groups points by bucket; a pass over the sorted keys records each
//    bucket's [start, end) and where the digit-0 entries begin.
// 3. accumulation into the running buckets with XYZZ mixed adds (8M + 2S),
//    negating y for negative digits, by one of two schemes (MsmAlgorithm):
//    one thread per bucket, or equal runs of sorted entries per thread plus a
//    fix-up pass for the buckets that straddle runs; or (kBatchAffine) equal
//    runs with affine accumulators sharing one inversion per thread block,
//    merged into the XYZZ buckets (gpu/msm/msm_affine.cu); or
//    (kBalancedSmem / kBalancedSmem12, G2; G1 runs the balanced kernel) equal
//    runs with the accumulator in shared memory (gpu/msm/msm_g2_smem.cu); or (kAffineTree) every bucket's
//    points added in pairs, round after round, with affine adds batched
//    around shared inversions (gpu/msm/msm_tree.cu).
// After the last chunk:
// 4. reduction sum_b b * B_b per window (G1 and G2 under the smem algorithms
//    and the affine tree: gpu/msm/msm_g2_smem.cu's variant of the same steps): threads own segments of seg_len
//    buckets and run the running-sum trick from the top bucket down, which
//    gives sum (b - lo + 1) B_b; adding (lo - 1) * (sum of the segment) by
//    double-and-add makes it exact. Then one block per window adds the
//    segment results. The W window sums go back to the host, which combines
//    them by Horner's rule (c doublings per window): one GPU thread took ~7 ms
//    for that chain of ~250 dependent doublings, the host takes well under 1 ms.
//    The affine tree with at most two chunks reduces by trees instead
//    (msm::TreeReduceShape): the weighted sum splits into group sums of the
//    affine buckets, leaving 2^h XYZZ points per window for the steps above.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/field.cuh"
#include "gpu/kernels.hpp"
#include "gpu/msm/base_stager.hpp"
#include "gpu/msm/msm_affine.hpp"
#include "gpu/msm/msm_g2_smem.hpp"
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

// Bucket index of a (non-sentinel) key w << c | d: window-major, digit d at d - 1.
__device__ __forceinline__ u64 bucket_index(u32 key, int c, u32 buckets_per_window) {
  return u64(key >> c) * buckets_per_window + (key & ((1u << c) - 1)) - 1;
}

// kLowReg selects the mixed add ordered for fewer live registers (G1 only;
// G2's add stays out of line, its body is too large to inline).
template <bool kLowReg, class F>
__device__ __forceinline__ void add_entry(dev::Xyzz<F>& acc, const dev::Affine<F>* bases, u32 v) {
  const dev::Affine<F> a = bases[v & ~kSignBit];
  const F y = (v & kSignBit) ? -a.y : a.y;
  if constexpr (sizeof(F) != sizeof(dev::Fp)) {
    acc.add_affine(a.x, y);
  } else if constexpr (kLowReg) {
    acc.add_affine_lowreg(a.x, y);
  } else {
    acc.add_affine_inline(a.x, y);
  }
}

// One thread per (window, bucket): loads the running bucket, adds this chunk's
// points, stores it. Thread t serves window W - 1 - t / buckets_per_window:
// the top window (fewest digits, so the most points per bucket) starts first.
// ptxas gives the G1 version 158 registers (130 before it loaded the running
// bucket): 3 blocks of 128 threads per SM either way (<= 170 registers).
// Capping the 130-register version at 4 or 5 blocks per SM (__launch_bounds__)
// was measured 13% slower on H200 (2^24: 279 ms vs 248 ms of accumulation).
template <class F>
__global__ void __launch_bounds__(128)
    accumulate_buckets_kernel(const dev::Affine<F>* bases, const u32* vals, const u32* start, const u32* end, int c,
                              u32 buckets_per_window, u32 windows, dev::Xyzz<F>* buckets) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= u64(windows) * buckets_per_window) return;
  const u32 w = windows - 1 - u32(t / buckets_per_window);
  const u32 b = u32(t % buckets_per_window) + 1;
  const u32 key = (w << c) | b;
  const u32 e = end[key];
  u32 p = start[key];
  if (p == e) return;  // no point of this chunk (bounds were zeroed)
  const u64 idx = u64(w) * buckets_per_window + (b - 1);
  dev::Xyzz<F> acc = buckets[idx];
  for (; p < e; ++p) add_entry<false>(acc, bases, vals[p]);
  buckets[idx] = acc;
}

// Balanced accumulation: thread j takes the sorted entries [lo, hi) =
// [j L, min(j L + L, nz)). It keeps one accumulator and, when its bucket ends
// (or the run does), stores it where msm::run_flush says:
//   bucket starts in the run -> the bucket itself (the accumulator began from
//                               the running bucket value; complete unless the
//                               bucket goes on into later runs);
//   bucket started before    -> first_partials[j] (began at 0), added to the
//                               bucket by fixup_runs_kernel.
// Whether a bucket started before the run is read off the neighbouring key,
// so the kernel needs no bucket bounds and few live registers besides the
// point arithmetic. One flat loop over the run (not a loop per bucket) keeps
// the warp's threads converged on the add whatever their bucket boundaries;
// only the flush (a load and a store) diverges. G1 uses the low-register
// mixed add; __launch_bounds__(128, 4) asks ptxas for <= 128 registers
// (4 blocks = 16 warps per SM instead of 12; ptxas: 128 registers, 32 B spill).
template <class F>
__global__ void __launch_bounds__(128, sizeof(F) == sizeof(dev::Fp) ? 4 : 1)
    accumulate_runs_kernel(const dev::Affine<F>* bases, const u32* keys, const u32* vals, const u32* nonzero,
                           u32 run_len, int c, u32 buckets_per_window, dev::Xyzz<F>* buckets,
                           dev::Xyzz<F>* first_partials) {
  const u64 j = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  const u32 nz = *nonzero;
  if (j * run_len >= nz) return;
  const u32 lo = u32(j * run_len);
  const u32 hi = min(lo + run_len, nz);  // lo < nz < 2^31 and run_len < 2^31: no wrap
  u32 cur = keys[lo];
  bool started_before = lo > 0 && keys[lo - 1] == cur;
  dev::Xyzz<F> acc = msm::run_loads_bucket(started_before) ? buckets[bucket_index(cur, c, buckets_per_window)]
                                                           : dev::Xyzz<F>::identity();
  for (u32 q = lo; q < hi; ++q) {
    const u32 k = keys[q];
    if (k != cur) {
      if (msm::run_flush(started_before) == msm::RunFlush::kFirstPartial) {
        first_partials[j] = acc;
      } else {
        buckets[bucket_index(cur, c, buckets_per_window)] = acc;
      }
      cur = k;
      started_before = false;  // k starts at q > lo
      acc = buckets[bucket_index(k, c, buckets_per_window)];
    }
    add_entry<true>(acc, bases, vals[q]);
  }
  if (msm::run_flush(started_before) == msm::RunFlush::kFirstPartial) {
    first_partials[j] = acc;
  } else {
    buckets[bucket_index(cur, c, buckets_per_window)] = acc;
  }
}

// For every bucket straddling runs j0 < ... < j1: the run j0 holding its
// start adds first_partials[j0 + 1 .. j1] to the bucket (full adds, one per
// run the bucket covers; the bucket already holds run j0's part).
template <class F>
__global__ void fixup_runs_kernel(const u32* keys, const u32* start, const u32* end, const u32* nonzero, u32 run_len,
                                  int c, u32 buckets_per_window, dev::Xyzz<F>* buckets,
                                  const dev::Xyzz<F>* first_partials) {
  const u64 j = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  const u32 nz = *nonzero;
  const u64 lo = j * run_len;
  if (lo >= nz) return;
  const u64 hi = min(lo + run_len, u64(nz));
  const u32 k = keys[hi - 1];
  const u32 s = start[k], e = end[k];
  if (!msm::run_owns_straddler(s, e, lo, hi)) return;
  const u64 idx = bucket_index(k, c, buckets_per_window);
  dev::Xyzz<F> acc = buckets[idx];
  for (u64 jj = j + 1; jj * run_len < e; ++jj) acc.add(first_partials[jj]);
  buckets[idx] = acc;
}

template <class F>
__global__ void segment_kernel(const dev::Xyzz<F>* buckets, u32 buckets_per_window, u32 seg_len, u32 segments_total,
                               int c, dev::Xyzz<F>* seg_out) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= segments_total) return;
  const u32 segs_per_window = buckets_per_window / seg_len;
  const u32 w = t / segs_per_window;
  const u32 g = t % segs_per_window;
  const u32 lo = g * seg_len + 1;  // bucket values lo .. lo + seg_len - 1
  const dev::Xyzz<F>* bw = buckets + u64(w) * buckets_per_window;
  dev::Xyzz<F> sum = dev::Xyzz<F>::identity();
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u32 b = lo + seg_len - 1; b >= lo; --b) {
    sum.add(bw[b - 1]);  // sum = B_hi + ... + B_b
    acc.add(sum);        // acc gains one more copy of each B_b' with b' >= b
  }
  // acc = sum_b (b - lo + 1) B_b; add (lo - 1) * sum to weight bucket b by b.
  const u32 k = lo - 1;
  dev::Xyzz<F> kx = dev::Xyzz<F>::identity();
  for (int bit = c - 1; bit >= 0; --bit) {
    kx = kx.dbl();
    if ((k >> bit) & 1u) kx.add(sum);
  }
  acc.add(kx);
  seg_out[t] = acc;
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
  std::size_t per_thread = detail::max_local_bytes({reinterpret_cast<const void*>(&accumulate_buckets_kernel<F>),
                                                    reinterpret_cast<const void*>(&accumulate_runs_kernel<F>),
                                                    reinterpret_cast<const void*>(&fixup_runs_kernel<F>),
                                                    reinterpret_cast<const void*>(&segment_kernel<F>),
                                                    reinterpret_cast<const void*>(&window_sum_kernel<F>)});
  per_thread = std::max(per_thread, g2smem::local_bytes_per_thread(sizeof(F) == sizeof(dev::Fp)
                                                                       ? g2smem::PointGroup::kG1
                                                                       : g2smem::PointGroup::kG2));
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
  std::size_t keep = detail::kDeviceMemoryReserveBytes + local_memory_margin_bytes<F>(ordinal, sm_count);
  if (config.algorithm == MsmAlgorithm::kBatchAffine) {
    // Its lanes live in local memory (~2 KiB per thread, gpu/msm/msm_affine.cu).
    int threads_per_sm = 0;
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal));
    keep += affine::local_bytes_per_thread(sizeof(F) != sizeof(dev::Fp)) * std::size_t(sm_count) *
            std::size_t(threads_per_sm);
  }
  if (config.algorithm == MsmAlgorithm::kAffineTree) {
    int threads_per_sm = 0;
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal));
    keep += tree::local_bytes_per_thread(sizeof(F) != sizeof(dev::Fp)) * std::size_t(sm_count) *
            std::size_t(threads_per_sm);
  }
  const std::size_t available = usable > keep ? usable - keep : 0;
  const std::size_t limit = std::min(config.scratch_limit_bytes, available);
  const auto sort_temp = [s](std::size_t entries, int key_bits) { return sort_temp_bytes(entries, key_bits, s); };
  msm::Plan p = msm::plan(n, xyzz_bytes, c_given, config.algorithm, limit, msm::resident_threads(sm_count), sort_temp,
                          staged_point_bytes);
  if (p.total_bytes == 0) {
    std::size_t need = SIZE_MAX;
    for (int c = c_given ? c_given : msm::kAutoWindowBitsMin; c <= (c_given ? c_given : msm::kAutoWindowBitsMax); ++c) {
      need = std::min(need, msm::minimum_bytes(c, n, xyzz_bytes, config.algorithm, sort_temp, staged_point_bytes));
    }
    throw Error(ErrorKind::kOutOfDeviceMemory,
                "msm of " + std::to_string(n) + " points needs at least " + mib(need) + " of device scratch; limit " +
                    mib(config.scratch_limit_bytes) + ", " + mib(free_bytes) + " free + " +
                    mib(scratch.capacity_bytes()) + " arena (" + mib(keep) +
                    " kept for the CUDA context and thread stacks)");
  }
  return p;
}

// The tree reduction (gpu/msm/msm_tree.hpp): the chunks' affine buckets to
// 2^h XYZZ points per window whose running-sum reduction is the window's sum;
// segment sums into segs, returns segments per window.
template <class F>
u32 reduce_trees(cudaStream_t s, const msm::Plan& plan, unsigned char* arena, MsmScratch& scratch,
                 dev::Xyzz<F>* segs) {
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
  g2smem::ReduceArgs r;
  r.buckets = t.e_out;
  r.buckets_per_window = u32(1) << msm::tree_reduce_shape(plan.window_bits, plan.tree_reduce_chunks).h;
  r.windows = u32(plan.windows);
  r.segments_max = plan.segments;
  r.seg_out = segs;
  return g2smem::reduce_segments(s, r, kG1 ? g2smem::PointGroup::kG1 : g2smem::PointGroup::kG2);
}

// Segment sums of the reduction into segs; returns segments per window. Under
// the smem algorithms and the affine tree (G1 and G2): gpu/msm/msm_g2_smem.cu's kernel
// (accumulator in shared memory, its own segment count); otherwise
// segment_kernel.
template <class F>
u32 reduce_segments(cudaStream_t s, const msm::Plan& plan, MsmAlgorithm algorithm, dev::Xyzz<F>* buckets,
                    dev::Xyzz<F>* segs) {
  if (algorithm == MsmAlgorithm::kBalancedSmem || algorithm == MsmAlgorithm::kBalancedSmem12 ||
      algorithm == MsmAlgorithm::kAffineTree) {
    g2smem::ReduceArgs a;
    a.buckets = buckets;
    a.buckets_per_window = u32(plan.buckets_per_window);
    a.windows = u32(plan.windows);
    a.segments_max = plan.segments;
    a.seg_out = segs;
    return g2smem::reduce_segments(
        s, a, sizeof(F) == sizeof(dev::Fp) ? g2smem::PointGroup::kG1 : g2smem::PointGroup::kG2);
  }
  segment_kernel<F><<<detail::grid_for(plan.segments, 64), 64, 0, s>>>(
      buckets, u32(plan.buckets_per_window), u32(plan.seg_len), u32(plan.segments), plan.window_bits, segs);
  CUZK_CUDA_CHECK_LAUNCH();
  return u32(plan.segments / plan.windows);
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
  const u32 bpw = u32(plan.buckets_per_window);
  const u32 sentinel = u32(msm::sentinel_key(c));
  auto* buckets = reinterpret_cast<Point*>(arena + plan.buckets_off);
  auto* start = reinterpret_cast<u32*>(arena + plan.starts_off);
  auto* end = reinterpret_cast<u32*>(arena + plan.ends_off);
  auto* nonzero = reinterpret_cast<u32*>(arena + plan.nonzero_off);
  auto* segs = reinterpret_cast<Point*>(arena + plan.segs_off);
  auto* window_sums = reinterpret_cast<Point*>(arena + plan.window_sums_off);
  auto* first_partials = reinterpret_cast<Point*>(arena + plan.first_partials_off);
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

  // The affine tree with its tree reduction writes every bucket of every
  // chunk (affine, one array per chunk); the other paths accumulate into the
  // XYZZ buckets from the identity.
  const bool tree_reduce = config.algorithm == MsmAlgorithm::kAffineTree && plan.tree_reduce_chunks > 0;
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
    if (config.algorithm == MsmAlgorithm::kAffineTree && msm::tree_sorts_by_window(c)) {
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
    const bool smem =
        config.algorithm == MsmAlgorithm::kBalancedSmem || config.algorithm == MsmAlgorithm::kBalancedSmem12;
    const bool g2_smem = sizeof(F) != sizeof(dev::Fp) && smem;
    if (config.algorithm == MsmAlgorithm::kBalancedRuns || smem) {
      u64 run_len = (total + plan.runs_max - 1) / plan.runs_max;
      if (g2_smem) {
        g2smem::RunsArgs a;
        a.bases = chunk_bases;
        a.keys = dk.Current();
        a.vals = dv.Current();
        a.nonzero = nonzero;
        a.total = total;
        a.window_bits = c;
        a.buckets_per_window = bpw;
        a.runs_max = plan.runs_max;
        a.buckets = buckets;
        a.first_partials = first_partials;
        run_len = g2smem::accumulate_runs(s, a,  // its own run length (whole waves)
                                          config.algorithm == MsmAlgorithm::kBalancedSmem
                                              ? g2smem::SmemShape::k14Warps
                                              : g2smem::SmemShape::k12Warps);
      } else {
        accumulate_runs_kernel<F><<<detail::grid_for((total + run_len - 1) / run_len, 128), 128, 0, s>>>(
            chunk_bases, dk.Current(), dv.Current(), nonzero, u32(run_len), c, bpw, buckets, first_partials);
        CUZK_CUDA_CHECK_LAUNCH();
      }
      const u64 runs = (total + run_len - 1) / run_len;
      fixup_runs_kernel<F><<<detail::grid_for(runs, 64), 64, 0, s>>>(dk.Current(), start, end, nonzero, u32(run_len),
                                                                      c, bpw, buckets, first_partials);
      CUZK_CUDA_CHECK_LAUNCH();
    } else if (config.algorithm == MsmAlgorithm::kBatchAffine) {
      affine::ChunkArgs a;
      a.bases = reinterpret_cast<const u32*>(chunk_bases);
      a.keys = dk.Current();
      a.vals = dv.Current();
      a.start = start;
      a.end = end;
      a.nonzero = nonzero;
      a.total = total;
      a.window_bits = c;
      a.windows = u32(windows);
      a.buckets_per_window = bpw;
      a.runs_max = plan.runs_max;
      a.buckets = buckets;
      a.first_partials = first_partials;
      a.bucket_sums = arena + plan.affine_sums_off;
      if constexpr (sizeof(F) == sizeof(dev::Fp)) {
        affine::accumulate_g1(s, a);
      } else {
        affine::accumulate_g2(s, a);
      }
    } else if (config.algorithm == MsmAlgorithm::kAffineTree) {
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
    } else {
      accumulate_buckets_kernel<F><<<detail::grid_for(plan.bucket_count, 128), 128, 0, s>>>(
          chunk_bases, dv.Current(), start, end, c, bpw, u32(windows), buckets);
      CUZK_CUDA_CHECK_LAUNCH();
    }
    stager.release(k);
    mark(4 * k + 3);
  }

  mark(4 * plan.chunks);
  const u32 segs_per_window = tree_reduce ? reduce_trees<F>(s, plan, arena, scratch, segs)
                                          : reduce_segments<F>(s, plan, config.algorithm, buckets, segs);
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

MsmWindows msm_g1(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n,
                  const MsmConfig& config, MsmScratch& scratch, MsmPhaseMs* phases) {
  return msm_run<dev::Fp>(s, bases, scalars, n, config, scratch, phases);
}

MsmWindows msm_g2(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n,
                  const MsmConfig& config, MsmScratch& scratch, MsmPhaseMs* phases) {
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
