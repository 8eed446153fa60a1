// Affine pairwise-tree bucket accumulation: the MSM's accumulation step.
//
// Why: the XYZZ mixed add costs 8M + 2S (~2868 products for G1) and a
// per-run XYZZ accumulation ran it at ~83% of the multiply's measured rate
// (bench/gpu/NOTES.md), so G1 2^24 cannot reach 90 ms with it. An affine add
// costs 2M + 1S once 1 / (x2 - x1) is known, and Montgomery's trick shares one
// inversion among many adds at 3M each: ~5M + 1S (~1800 products), -35%.
// Batching the affine adds per thread block, with one thread inverting while
// the block waited, lost that gain to latency (G1 2^24 224.7 ms against 202.9
// for XYZZ runs). Here no thread ever waits for an inversion: every bucket's
// points are added in pairs, round after round, and each round is one batch
// of independent adds run as separate kernels.
//
// One round (a list of points sorted by bucket, len_b points for bucket b):
//  1. halve:    len'_b = ceil(len_b / 2) for len_b >= 2, else 0;
//  2. scan:     start'_b = exclusive sum of len' (CUB); the total is start'[B];
//  3. map:      a bucket with len_b = 1 is final: its point is kept aside
//               (sums, added into the running XYZZ bucket after the last
//               round) and leaves the lists; the others write, per output,
//               where its inputs are (pair_in);
//  4. forward:  output j of bucket b pairs inputs 2j, 2j + 1 (the last one
//               alone when len_b is odd); each thread slot runs the product of
//               its outputs' denominators and stores the running prefix per
//               output (output_prefix);
//  5. invert:   the slots' products, a few hundred per warp, by one more
//               prefix product and one inversion (binary Euclid) per warp;
//  6. backward: each slot walks its outputs back: 1/d = inv * prefix, and the
//               affine add (or doubling) completes into the output list (G2:
//               the walk and the adds as two kernels, inverse_walk_norm_kernel
//               and point_kernel, for register room).
// G2 inverts the denominators' norms in Fp instead of the denominators in Fp2
// (1 / d = conj(d) / N(d); ForwardTerms has the numbers).
// After the planned rounds (msm::tree_rounds: enough for the longest bucket
// random scalars make likely) a finish kernel adds whatever is left of each
// bucket into it one by one, and a bucket with more than kSerialLeftover
// points left (skewed scalars) by a block of threads: exact for every input.
//
// Round 0 reads the sorted entries' points from the bases (sign applied) in
// place; rounds >= 1 read the previous round's list. The windows run in slabs
// (msm::Plan::tree_slab_windows) so the lists stay within kTreeSlabEntries,
// and with two buffer sets (Plan::tree_sets) consecutive slabs alternate
// between the MSM's stream and a side stream: one slab's latency-bound steps
// (per-warp inversions, per-bucket kernels, short last rounds) run beside the
// other's products. H200, G1 2^24 accumulation: 95.0 ms for one-window slabs
// on one stream, 75.9 for four-window slabs on two.
//
// Exceptional pairs, each exact: an identity point (0, 0) (the other point is
// the sum), x1 == x2 with y1 == y2 != 0 (doubling: d = 2y, lambda = 3x^2 / d),
// x1 == x2 otherwise (P + (-P): the identity). Only ordinary adds and
// doublings enter the products, so every product is nonzero.
//
// Memory traffic per add (G1): forward reads two x (96 B) and writes a prefix
// (48 B); backward reads both points and the previous prefix (240 B) and
// writes the sum (96 B): ~480 B per add, about 24 ms of HBM at 2^24 x 13
// windows, against ~50 ms of products at the multiply's measured rate.
#include "gpu/msm/msm_tree.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdlib>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/field.cuh"
#include "gpu/ff/inverse.cuh"

namespace cuzk::gpu::kernels::tree {
namespace {

using dev::Fp;
using dev::Fp2;
using dev::u32;
using dev::inversion::inverse;
using u64 = std::uint64_t;

constexpr u32 kSignBit = 0x80000000u;
constexpr int kOutputs = msm::kTreeOutputsPerThread;
constexpr int kThreads = 128;

// A round's input points: the bases through the sorted entries (round 0, the
// entry's sign applied to y) or the previous round's list.
template <class F, bool kFromBases>
struct Source {
  const dev::Affine<F>* points;
  const u32* vals;  // round 0 only: point index | sign << 31
  __device__ __forceinline__ F x(u32 i) const {
    if constexpr (kFromBases) {
      return points[vals[i] & ~kSignBit].x;
    } else {
      return points[i].x;
    }
  }
  __device__ __forceinline__ F y(u32 i) const {
    if constexpr (kFromBases) {
      const u32 v = vals[i];
      const F y = points[v & ~kSignBit].y;
      return (v & kSignBit) ? -y : y;  // -(0) = 0: the identity stays (0, 0)
    } else {
      return points[i].y;
    }
  }
  __device__ __forceinline__ dev::Affine<F> point(u32 i) const { return {x(i), y(i)}; }
};

enum class Kind : u32 { kTake1, kTake2, kZero, kAdd, kDbl };
__device__ __forceinline__ bool needs_inverse(Kind k) { return k == Kind::kAdd || k == Kind::kDbl; }

// What output (p1, p2) is, or p1 alone (has2 false). y1 / y2 are fetched only
// when the decision needs them (the forward pass reads x only for ordinary
// adds); the backward pass passes values it holds, so both passes decide the
// same. Sets d, the denominator, for kAdd / kDbl.
template <class F, class Y1, class Y2>
__device__ __forceinline__ Kind classify(const F& x1, const F& x2, bool has2, Y1 y1, Y2 y2, F& d) {
  if (!has2) return Kind::kTake1;
  if (x1.is_zero() && y1().is_zero()) return Kind::kTake2;  // p1 = O
  if (x2.is_zero() && y2().is_zero()) return Kind::kTake1;  // p2 = O
  if (x1 != x2) {
    d = x2 - x1;
    return Kind::kAdd;
  }
  const F a = y1();
  if (a == y2() && !a.is_zero()) {
    d = a.dbl();
    return Kind::kDbl;
  }
  return Kind::kZero;  // p2 = -p1
}

// Round 0's lengths and starts from the chunk's bucket bounds (per key), and
// every bucket's final point cleared to the identity (0, 0).
template <class F>
__global__ void init_kernel(const u32* start, const u32* end, int c, u32 buckets_per_window, u32 w0, u32 buckets,
                            u32* len0, u32* start0, dev::Affine<F>* sums) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= buckets) return;
  const u32 key = ((w0 + b / buckets_per_window) << c) | (b % buckets_per_window + 1);
  const u32 s = start[key];
  start0[b] = s;
  len0[b] = end[key] - s;
  sums[b].x = F::zero();
  sums[b].y = F::zero();
}

// len_next[b] for b < buckets, and 0 at [buckets] so that the exclusive scan's
// last element is the next list's length.
__global__ void halve_kernel(const u32* len, u32 buckets, u32* len_next) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > buckets) return;
  len_next[b] = b < buckets ? msm::tree_next_len(len[b]) : 0;
}

// Output j of a bucket whose inputs start at s (len of them): inputs s + 2j
// and, when kHasPair is set, s + 2j + 1. Input indices stay below 2^31 (a
// chunk's entries: msm::kMaxEntries).
constexpr u32 kHasPair = 0x80000000u;

// A bucket down to one point is final: the point goes to sums[b] (added into
// the XYZZ bucket by finish_kernel; keeping the mixed add out of this kernel
// keeps it a light memory pass).
template <class F, bool kFromBases>
__global__ void map_kernel(Source<F, kFromBases> src, const u32* len, const u32* start, const u32* len_next,
                           const u32* start_next, u32 buckets, dev::Affine<F>* sums, u32* pair_in_next) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= buckets) return;
  const u32 n = len[b];
  if (n == 0) return;
  const u32 s = start[b];
  if (n == 1) {
    sums[b] = src.point(s);
    return;
  }
  const u32 out = start_next[b];
  const u32 m = len_next[b];
  for (u32 j = 0; j < m; ++j) pair_in_next[out + j] = (s + 2 * j) | (2 * j + 1 < n ? kHasPair : 0u);
}

// Where output o's inputs are: i1 and, when has2, i1 + 1.
struct Pair {
  u32 i1;
  bool has2;
};
__device__ __forceinline__ Pair pair_of(u64 o, const u32* pair_in) {
  const u32 v = pair_in[o];
  return {v & ~kHasPair, (v & kHasPair) != 0};
}

// Output o's kind and, for kAdd / kDbl, its denominator d, from its inputs'
// x (y only where the decision needs it): the forward pass and G2's inverse
// walk, which decide as the passes that hold whole points do.
template <class F, bool kFromBases>
__device__ __forceinline__ Kind classify_output(const Source<F, kFromBases>& src, u64 o, const u32* pair_in, F& d) {
  const Pair p = pair_of(o, pair_in);
  const F x1 = src.x(p.i1);
  const F x2 = p.has2 ? src.x(p.i1 + 1) : x1;
  return classify(
      x1, x2, p.has2, [&] { return src.y(p.i1); }, [&] { return src.y(p.i1 + 1); }, d);
}

// G2's rounds invert norms, not denominators: 1 / d = conj(d) / N(d) with
// N(d) = d0^2 + d1^2 in Fp (Fp2::norm; nonzero for every d != 0). The
// forward product, the per-warp inversions and the inverse walk then run in
// Fp (288 products per step instead of the Fp2 product's 744), and the walk
// reads the norms the forward stored instead of both points' x (memory per
// add ~1340 -> ~1060 B); the point kernel pays 2 Fp products for conj(d) /
// N(d). Products per add 4320 -> ~3990. H200: G2 2^25 468.3 -> 398.5 ms
// (accumulation 437.0 -> 370.8), 2^23 137.3 -> 116.9; the walk dropped to
// 68 registers. G2's output o owns two Fp slots of the F-sized prefix array:
// prefix[2o] (the running product through o, then 1 / N(d_o)) and
// prefix[2o + 1] (N(d_o); zero when o needs no inverse).
//
// What the forward step multiplies up per output (a term of type D) and what
// it stores: G1 the denominator and its running prefix; G2 the norm, and the
// prefix beside the norm.
template <class F>
struct ForwardTerms {
  using D = F;
  static __device__ __forceinline__ D term(const F& d) { return d; }
  static __device__ __forceinline__ void store(D* prefix, u64 o, const D& run, const D&) { prefix[o] = run; }
};
template <>
struct ForwardTerms<Fp2> {
  using D = Fp;
  static __device__ __forceinline__ D term(const Fp2& d) { return d.norm(); }
  static __device__ __forceinline__ void store(D* prefix, u64 o, const D& run, const D& n) {
    prefix[2 * o] = run;
    prefix[2 * o + 1] = n;
  }
};

template <class F, bool kFromBases>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(Source<F, kFromBases> src, const u32* pair_in, const u32* start_next, u32 buckets,
                   typename ForwardTerms<F>::D* prefix, typename ForwardTerms<F>::D* slot_product) {
  using T = ForwardTerms<F>;
  using D = typename T::D;
  const u64 outputs = start_next[buckets];
  const u64 slots = msm::tree_slots(outputs);
  for (u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x; t < slots; t += u64(gridDim.x) * blockDim.x) {
    D run = D::one();
    bool any = false;
#pragma unroll 1
    for (int k = 0; k < kOutputs; ++k) {
      const u64 o = msm::tree_output(t, k);
      if (o >= outputs) break;
      F d;
      const Kind kind = classify_output(src, o, pair_in, d);
      // backward / the walk read the prefix (and G2's norm) back
      if (needs_inverse(kind)) {
        const D n = T::term(d);
        run = any ? run * n : n;
        any = true;
        T::store(prefix, o, run, n);
      } else {
        T::store(prefix, o, run, D::zero());
      }
    }
    slot_product[t] = run;
  }
}

// Each slot's outputs walked back: norm_prefix[2o] <- 1 / N(d_o) for the
// outputs with a nonzero norm (the points are not read at all).
__global__ void __launch_bounds__(kThreads)
    inverse_walk_norm_kernel(const u32* start_next, u32 buckets, Fp* norm_prefix, const Fp* slot_inverse) {
  const u64 outputs = start_next[buckets];
  const u64 slots = msm::tree_slots(outputs);
  for (u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x; t < slots; t += u64(gridDim.x) * blockDim.x) {
    Fp inv = slot_inverse[t];
#pragma unroll 1
    for (int k = kOutputs - 1; k >= 0; --k) {
      const u64 o = msm::tree_output(t, k);
      if (o >= outputs) continue;
      const Fp n = norm_prefix[2 * o + 1];
      if (n.is_zero()) continue;
      Fp inv_n = inv;
      if (k > 0) {
        inv_n = inv * norm_prefix[2 * msm::tree_output(t, k - 1)];
        inv = inv * n;
      }
      norm_prefix[2 * o] = inv_n;  // o's own prefix was read at output k + 1
    }
  }
}

// Warp shuffles of a field element, word by word (op shuffles one word).
template <class F, class Op>
__device__ __forceinline__ F shuffle_words(const F& v, Op op) {
  F r;
  const u32* a = reinterpret_cast<const u32*>(&v);
  u32* b = reinterpret_cast<u32*>(&r);
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 4); ++i) b[i] = op(a[i]);
  return r;
}
template <class F>
__device__ __forceinline__ F shfl_up(const F& v, u32 delta) {
  return shuffle_words(v, [delta](u32 w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}
template <class F>
__device__ __forceinline__ F shfl_down(const F& v, u32 delta) {
  return shuffle_words(v, [delta](u32 w) { return __shfl_down_sync(0xffffffffu, w, delta); });
}
template <class F>
__device__ __forceinline__ F shfl(const F& v, int lane) {
  return shuffle_words(v, [lane](u32 w) { return __shfl_sync(0xffffffffu, w, lane); });
}

// slot_product[t] <- 1 / slot_product[t], one inversion per warp: each lane
// multiplies up a range of slots (prefixes in `prefix`), the warp scans the
// lanes' products both ways with shuffles, every lane inverts the warp's total
// (the same value: no divergence in the variable-time inversion, which a
// thread-per-range layout suffered: 45.8 of 134.8 ms at 2^24), and each lane
// walks its range back.
template <class F>
__global__ void __launch_bounds__(kThreads)
    invert_kernel(const u32* start_next, u32 buckets, F* slot_product, F* prefix) {
  const u64 slots = msm::tree_slots(start_next[buckets]);
  const u64 warps = u64(gridDim.x) * (kThreads / 32);
  const u64 per_warp = (slots + warps - 1) / warps;
  const u64 per_lane = (per_warp + 31) / 32;
  const u64 warp = (u64(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const u32 lane = threadIdx.x & 31u;
  const u64 warp_lo = warp * per_warp;
  if (warp_lo >= slots) return;  // the whole warp
  const u64 warp_hi = min(warp_lo + per_warp, slots);
  const u64 lo = min(warp_lo + lane * per_lane, warp_hi);
  const u64 hi = min(lo + per_lane, warp_hi);
  F own = F::one();  // this lane's product
  for (u64 t = lo; t < hi; ++t) {
    own = t == lo ? slot_product[t] : own * slot_product[t];
    prefix[t] = own;
  }
  // Inclusive prefix (lanes 0..l) and suffix (lanes l..31) products.
  F pre = own, suf = own;
#pragma unroll
  for (u32 d = 1; d < 32; d <<= 1) {
    const F a = shfl_up(pre, d);
    const F b = shfl_down(suf, d);
    if (lane >= d) pre = a * pre;
    if (lane + d < 32) suf = suf * b;
  }
  const F total_inv = inverse(shfl(pre, 31));
  // 1 / own = (lanes before) * (lanes after) / total.
  F inv = total_inv;
  const F before = shfl_up(pre, 1);
  const F after = shfl_down(suf, 1);
  if (lane > 0) inv = inv * before;
  if (lane < 31) inv = inv * after;
  if (lo >= hi) return;
  for (u64 t = hi - 1; t > lo; --t) {
    const F p = slot_product[t];
    slot_product[t] = inv * prefix[t - 1];
    inv = inv * p;
  }
  slot_product[lo] = inv;
}

// Output (a, b) of kind `kind` once 1 / d is known (inv_d; unused unless kAdd / kDbl).
template <class F>
__device__ __forceinline__ dev::Affine<F> complete(Kind kind, const dev::Affine<F>& a, const dev::Affine<F>& b,
                                                   const F& inv_d) {
  if (kind == Kind::kTake1) return a;
  if (kind == Kind::kTake2) return b;
  dev::Affine<F> r;
  if (kind == Kind::kZero) {
    r.x = F::zero();
    r.y = F::zero();
    return r;
  }
  F num;
  if (kind == Kind::kDbl) {
    const F xx = a.x.sqr();
    num = xx.dbl() + xx;  // 3 x^2 (curve a = 0)
  } else {
    num = b.y - a.y;
  }
  const F lambda = num * inv_d;
  r.x = lambda.sqr() - a.x - b.x;  // b.x = a.x when doubling
  r.y = lambda * (a.x - r.x) - a.y;
  return r;
}

// G2's backward step as two kernels: the inverse walk over norms
// (inverse_walk_norm_kernel), then each output's point on a thread of its
// own. One G2 backward kernel holding both points, the running inverse and
// the prefix at once took 254 registers (8 warps per SM); split, the point
// kernel runs at 3 blocks of 128 per SM (168 registers, 144 B of stack):
// H200, G2 2^25 487.4 -> 467.9 ms. The point kernel at 2 blocks (no spill)
// gave 480.6; G1 split too lost (G1 2^27 588 -> 640 ms: its one kernel
// already runs 16 warps), so G1 keeps backward_kernel.
template <bool kFromBases>
__global__ void __launch_bounds__(kThreads, 3)
    point_kernel(Source<Fp2, kFromBases> src, const u32* pair_in, const u32* start_next, u32 buckets,
                 const Fp* norm_prefix, dev::Affine<Fp2>* out) {
  const u64 outputs = start_next[buckets];
  for (u64 o = u64(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs; o += u64(gridDim.x) * blockDim.x) {
    const Pair p = pair_of(o, pair_in);
    const dev::Affine<Fp2> a = src.point(p.i1);
    const dev::Affine<Fp2> b = p.has2 ? src.point(p.i1 + 1) : a;
    Fp2 d;
    const Kind kind = classify(
        a.x, b.x, p.has2, [&] { return a.y; }, [&] { return b.y; }, d);
    out[o] = complete(kind, a, b, needs_inverse(kind) ? d.inverse_from_norm(norm_prefix[2 * o]) : Fp2::zero());
  }
}

template <class F, bool kFromBases>
__global__ void __launch_bounds__(kThreads)
    backward_kernel(Source<F, kFromBases> src, const u32* pair_in, const u32* start_next, u32 buckets,
                    const F* output_prefix, dev::Affine<F>* out, const F* slot_inverse) {
  const u64 outputs = start_next[buckets];
  const u64 slots = msm::tree_slots(outputs);
  for (u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x; t < slots; t += u64(gridDim.x) * blockDim.x) {
    F inv = slot_inverse[t];  // 1 / (product of the slot's denominators so far)
#pragma unroll 1
    for (int k = kOutputs - 1; k >= 0; --k) {
      const u64 o = msm::tree_output(t, k);
      if (o >= outputs) continue;
      const Pair p = pair_of(o, pair_in);
      const dev::Affine<F> a = src.point(p.i1);
      const dev::Affine<F> b = p.has2 ? src.point(p.i1 + 1) : a;
      F d;
      const Kind kind = classify(
          a.x, b.x, p.has2, [&] { return a.y; }, [&] { return b.y; }, d);
      F inv_d = inv;
      if (needs_inverse(kind) && k > 0) {
        inv_d = inv * output_prefix[msm::tree_output(t, k - 1)];  // the prefix before o
        inv = inv * d;
      }
      out[o] = complete(kind, a, b, inv_d);
    }
  }
}

// A bucket the planned rounds left longer than this (skewed scalars: many
// equal digits, e.g. a witness full of 2s) is not summed by its own thread
// but by a block of finish_long_kernel: one thread adding thousands of points
// in a row kept the whole GPU waiting (H200, the partition bench's L tail,
// where ~208k scalars equal 2: ~30 ms).
constexpr u32 kSerialLeftover = 16;

// Defers bucket b to finish_long_kernel when its leftover list is long.
__device__ __forceinline__ bool defer_long(u32 n, u32 b, u32* long_list, u32* long_count) {
  if (n <= kSerialLeftover) return false;
  long_list[atomicAdd(long_count, 1u)] = b;
  return true;
}

// After the last round: each bucket's final point, and whatever is left of
// its list when the rounds did not suffice, go into the running XYZZ bucket
// (one mixed add each; a copy into an empty bucket, as in the first chunk).
template <class F>
__global__ void finish_kernel(Source<F, false> src, const u32* len, const u32* start, u32 buckets,
                              const dev::Affine<F>* sums, dev::Xyzz<F>* slab_buckets, u32* long_list, u32* long_count) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= buckets) return;
  const u32 n = len[b];
  const dev::Affine<F> sum = sums[b];
  if (n == 0 && sum.is_identity()) return;
  if (defer_long(n, b, long_list, long_count)) return;
  dev::Xyzz<F> acc = slab_buckets[b];
  acc.add_affine(sum.x, sum.y);  // the identity adds nothing
  for (u32 i = start[b]; i < start[b] + n; ++i) {
    const dev::Affine<F> p = src.point(i);
    acc.add_affine(p.x, p.y);
  }
  slab_buckets[b] = acc;
}

// The affine value of an XYZZ point (identity -> (0, 0)): one inversion of
// ZZ ZZZ gives both 1 / ZZ and 1 / ZZZ.
template <class F>
__device__ __forceinline__ dev::Affine<F> to_affine(const dev::Xyzz<F>& p) {
  if (p.is_identity()) return {F::zero(), F::zero()};
  const F t = inverse(p.zz * p.zzz);
  return {p.x * (t * p.zzz), p.y * (t * p.zz)};
}

// finish_kernel for the tree reduction: each bucket's sum stays affine, in
// this chunk's array. A bucket is done when its list ran out (its point is in
// sums) or is down to one point; a longer leftover list (rounds too few for a
// skewed bucket) is summed in XYZZ and brought back by one inversion.
template <class F>
__global__ void finish_affine_kernel(Source<F, false> src, const u32* len, const u32* start, u32 buckets,
                                     const dev::Affine<F>* sums, dev::Affine<F>* out, u32* long_list, u32* long_count) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= buckets) return;
  const u32 n = len[b];
  if (n == 0) {
    out[b] = sums[b];
  } else if (n == 1) {
    out[b] = src.point(start[b]);
  } else if (!defer_long(n, b, long_list, long_count)) {
    dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
    for (u32 i = start[b]; i < start[b] + n; ++i) {
      const dev::Affine<F> p = src.point(i);
      acc.add_affine(p.x, p.y);
    }
    out[b] = to_affine(acc);
  }
}

// The deferred long buckets, a block each: the threads sum strided parts of
// the list in XYZZ, a shared-memory tree folds them, and thread 0 completes
// the bucket as the finish kernel would (kAffine: into out, affine; else
// into the running XYZZ bucket).
constexpr unsigned kLongThreads = 64;
template <class F, bool kAffine>
__global__ void __launch_bounds__(kLongThreads)
    finish_long_kernel(Source<F, false> src, const u32* len, const u32* start, const dev::Affine<F>* sums,
                       const u32* long_list, const u32* long_count, dev::Xyzz<F>* slab_buckets, dev::Affine<F>* out) {
  __shared__ dev::Xyzz<F> part[kLongThreads];
  const u32 count = *long_count;
  for (u32 k = blockIdx.x; k < count; k += gridDim.x) {
    const u32 b = long_list[k];
    const u32 s = start[b], e = start[b] + len[b];
    dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
    for (u32 i = s + threadIdx.x; i < e; i += kLongThreads) {
      const dev::Affine<F> p = src.point(i);
      acc.add_affine(p.x, p.y);
    }
    part[threadIdx.x] = acc;
    dev::block_fold<kLongThreads>(part);
    if (threadIdx.x == 0) {
      dev::Xyzz<F> r = part[0];
      r.add_affine(sums[b].x, sums[b].y);  // the identity unless the list also ran down once
      if constexpr (kAffine) {
        out[b] = to_affine(r);
      } else {
        dev::Xyzz<F> bucket = slab_buckets[b];
        bucket.add(r);
        slab_buckets[b] = bucket;
      }
    }
    __syncthreads();  // part is reused by the next bucket
  }
}

// The reduction's entries: entry e of window w is chunk k's bucket d
// (msm::tree_reduce_entry), i.e. index k * bucket_count + w * bpw + d - 1 of
// the chunks' affine arrays.
__global__ void reduce_index_kernel(msm::TreeReduceShape shape, u32 windows, u64 bucket_count, u32 bpw, u32* index) {
  const u64 e = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= u64(windows) * shape.window_entries) return;
  const u64 w = e / shape.window_entries;
  const msm::TreeReduceEntry x = msm::tree_reduce_entry(shape, e % shape.window_entries);
  index[e] = u32(x.chunk * bucket_count + w * bpw + x.digit - 1);
}

// Round 0's lengths and starts of the reduction's groups (window-major).
template <class F>
__global__ void reduce_init_kernel(msm::TreeReduceShape shape, u32 groups, u32* len0, u32* start0,
                                   dev::Affine<F>* sums) {
  const u32 g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const u32 w = g / shape.window_groups;
  const msm::TreeReduceGroup grp = msm::tree_reduce_group(shape, g % shape.window_groups);
  start0[g] = u32(w * shape.window_entries + grp.start);
  len0[g] = grp.len;
  sums[g].x = F::zero();
  sums[g].y = F::zero();
}

// A group's sum after rounds that suffice for every group (len <= 1 left).
template <class F>
__device__ __forceinline__ dev::Affine<F> group_sum(const u32* len, const u32* start, const dev::Affine<F>* list,
                                                    const dev::Affine<F>* sums, u32 g) {
  const u32 n = len[g];
  if (n == 0) return sums[g];
  if (n != 1) __trap();  // shape.rounds are exact: a longer list is a bug
  return list[start[g]];
}

// E_k = D_k + 2^h C_k (k = 1 .. 2^h; D_{2^h} and C_k for k > A absent) into
// window w's XYZZ bucket k - 1, for the running-sum reduction.
template <class F>
__global__ void reduce_combine_kernel(msm::TreeReduceShape shape, u32 windows, const u32* len, const u32* start,
                                      const dev::Affine<F>* list, const dev::Affine<F>* sums, dev::Xyzz<F>* e_out) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (windows << shape.h)) return;
  const u32 low = 1u << shape.h;
  const u32 w = t >> shape.h;
  const u32 k = (t & (low - 1)) + 1;
  const u32 g0 = w * shape.window_groups;
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  if (k <= shape.a_max) {
    const dev::Affine<F> c = group_sum(len, start, list, sums, g0 + k - 1);
    acc.add_affine(c.x, c.y);
    for (int i = 0; i < shape.h; ++i) acc = acc.dbl();
  }
  if (k < low) {
    const dev::Affine<F> d = group_sum(len, start, list, sums, g0 + shape.a_max + k - 1);
    acc.add_affine(d.x, d.y);
  }
  e_out[t] = acc;
}

// List sums (sum_list): group g of a piece holds its entries
// [g 2^log, min((g + 1) 2^log, entries)), round 0's lengths and starts.
template <class F>
__global__ void list_init_kernel(u64 entries, int group_log, u32 groups, u32* len0, u32* start0, dev::Affine<F>* sums) {
  const u32 g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const u64 s = u64(g) << group_log;
  start0[g] = u32(s);
  len0[g] = u32(min(entries - s, u64(1) << group_log));
  sums[g].x = F::zero();
  sums[g].y = F::zero();
}

// After the rounds (exact for every group): each group's sum to out[g].
template <class F>
__global__ void list_collect_kernel(const u32* len, const u32* start, const dev::Affine<F>* list,
                                    const dev::Affine<F>* sums, u32 groups, dev::Affine<F>* out) {
  const u32 g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  out[g] = group_sum(len, start, list, sums, g);
}

// Where one buffer set's arrays lie, from the start of the set.
struct SetOffsets {
  std::size_t list[2], pair_in[2], len[2], start[2];
  std::size_t output_prefix, sums, slot_product, prefix, scan_temp, scan_temp_bytes;
};

SetOffsets offsets_of(const msm::Plan& p) {
  SetOffsets o{};
  for (int i = 0; i < 2; ++i) {
    o.list[i] = p.tree_list_off[i];
    o.pair_in[i] = p.tree_pair_in_off[i];
    o.len[i] = p.tree_len_off[i];
    o.start[i] = p.tree_start_off[i];
  }
  o.output_prefix = p.tree_output_prefix_off;
  o.sums = p.tree_sums_off;
  o.slot_product = p.tree_slot_off;
  o.prefix = p.tree_prefix_off;
  o.scan_temp = p.tree_scan_temp_off;
  o.scan_temp_bytes = p.tree_scan_temp_bytes;
  return o;
}

// The arena's tree buffers, typed.
template <class F>
struct Buffers {
  dev::Affine<F>* list[2];
  u32* pair_in[2];
  u32* len[2];
  u32* start[2];
  F* output_prefix;
  dev::Affine<F>* sums;
  F* slot_product;
  F* prefix;
  void* scan_temp;
  std::size_t scan_temp_bytes;

  // base: where the set starts (the scratch arena plus the set's stride).
  Buffers(const SetOffsets& o, unsigned char* base) {
    for (int i = 0; i < 2; ++i) {
      list[i] = reinterpret_cast<dev::Affine<F>*>(base + o.list[i]);
      pair_in[i] = reinterpret_cast<u32*>(base + o.pair_in[i]);
      len[i] = reinterpret_cast<u32*>(base + o.len[i]);
      start[i] = reinterpret_cast<u32*>(base + o.start[i]);
    }
    output_prefix = reinterpret_cast<F*>(base + o.output_prefix);
    sums = reinterpret_cast<dev::Affine<F>*>(base + o.sums);
    slot_product = reinterpret_cast<F*>(base + o.slot_product);
    prefix = reinterpret_cast<F*>(base + o.prefix);
    scan_temp = base + o.scan_temp;
    scan_temp_bytes = o.scan_temp_bytes;
  }
  Buffers(const msm::Plan& p, unsigned char* base) : Buffers(offsets_of(p), base) {}
};

struct Grid {
  unsigned per_output;  // blocks of kThreads for the forward / backward kernels
  unsigned invert;      // blocks of kThreads for the invert kernel
  unsigned per_point;   // blocks of kThreads for G2's point_kernel (a thread per output)
};

// Grids for a round whose list has at most `outputs` elements: grid-stride
// kernels, at most 32 blocks per SM (8 resident waves at ~128 registers; the
// finer split evens out the last wave: H200, G1 2^26 317.4 -> 314.7 ms
// against 16 blocks, 2^24 87.4 -> 87.2).
Grid grid_for_round(u64 outputs, int sm_count) {
  const u64 slots = msm::tree_slots(outputs);
  const u64 cap = u64(sm_count) * 32;
  const u64 blocks = std::max<u64>(1, std::min<u64>(detail::grid_for(slots, kThreads), cap));
  // Invert: a warp per >= 128 slots (4 per lane), at most 16 warps per SM:
  // fewer inversions than at 64 (H200, with the grid above: G1 2^26 314.7 ->
  // 314.2 ms, 2^24 87.2 -> 86.8).
  const u64 inv_warps = std::clamp<u64>(slots / 128, 1, u64(sm_count) * 16);
  const u64 point_blocks = std::max<u64>(1, std::min<u64>(detail::grid_for(outputs, kThreads), cap));
  return {unsigned(blocks), unsigned(detail::grid_for(inv_warps * 32, kThreads)), unsigned(point_blocks)};
}

template <class F, bool kFromBases>
void launch_round(cudaStream_t s, Source<F, kFromBases> src, Buffers<F>& buf, int cur, int out_list, u32 buckets,
                  const Grid& grid) {
  const int nxt = 1 - cur;
  halve_kernel<<<detail::grid_for(buckets + 1, 256), 256, 0, s>>>(buf.len[cur], buckets, buf.len[nxt]);
  CUZK_CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = buf.scan_temp_bytes;
  CUZK_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(buf.scan_temp, temp_bytes, buf.len[nxt], buf.start[nxt], int(buckets + 1), s));
  map_kernel<F, kFromBases><<<detail::grid_for(buckets, 128), 128, 0, s>>>(
      src, buf.len[cur], buf.start[cur], buf.len[nxt], buf.start[nxt], buckets, buf.sums, buf.pair_in[out_list]);
  CUZK_CUDA_CHECK_LAUNCH();
  // G2: norms in Fp, in the F-sized arrays (two Fp per output, one per slot).
  using D = typename ForwardTerms<F>::D;
  D* prefix = reinterpret_cast<D*>(buf.output_prefix);
  D* slot_product = reinterpret_cast<D*>(buf.slot_product);
  forward_kernel<F, kFromBases>
      <<<grid.per_output, kThreads, 0, s>>>(src, buf.pair_in[out_list], buf.start[nxt], buckets, prefix, slot_product);
  CUZK_CUDA_CHECK_LAUNCH();
  invert_kernel<D>
      <<<grid.invert, kThreads, 0, s>>>(buf.start[nxt], buckets, slot_product, reinterpret_cast<D*>(buf.prefix));
  CUZK_CUDA_CHECK_LAUNCH();
  if constexpr (sizeof(F) == sizeof(Fp)) {
    backward_kernel<F, kFromBases><<<grid.per_output, kThreads, 0, s>>>(
        src, buf.pair_in[out_list], buf.start[nxt], buckets, buf.output_prefix, buf.list[out_list], buf.slot_product);
  } else {
    inverse_walk_norm_kernel<<<grid.per_output, kThreads, 0, s>>>(buf.start[nxt], buckets, prefix, slot_product);
    CUZK_CUDA_CHECK_LAUNCH();
    point_kernel<kFromBases><<<grid.per_point, kThreads, 0, s>>>(src, buf.pair_in[out_list], buf.start[nxt], buckets,
                                                                 prefix, buf.list[out_list]);
  }
  CUZK_CUDA_CHECK_LAUNCH();
}

// The planned rounds of one slab on its stream and buffer set: round 0 reads
// `first` (entries through their bucket order), later rounds the previous
// round's list. `entries` bounds the slab's inputs. Returns which len / start
// pair holds the lengths after the last round (its list: list[(rounds - 1) % 2]).
template <class F>
int run_rounds(cudaStream_t st, Source<F, true> first, Buffers<F>& buf, u32 buckets, u64 entries, int rounds,
               int sm_count) {
  u64 bound = entries;
  int cur = 0;
  for (int r = 0; r < rounds; ++r) {
    bound = msm::tree_list_max(bound);
    const Grid grid = grid_for_round(bound, sm_count);
    const int out_list = r % 2;
    if (r == 0) {
      launch_round<F, true>(st, first, buf, cur, out_list, buckets, grid);
    } else {
      launch_round<F, false>(st, Source<F, false>{buf.list[1 - out_list], nullptr}, buf, cur, out_list, buckets, grid);
    }
    cur = 1 - cur;
  }
  return cur;
}

int current_sm_count() {
  int ordinal = 0, sm_count = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&ordinal));
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  return sm_count;
}

template <class F>
void accumulate(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& a) {
  if (plan.tree_slab_windows <= 0 || a.chunk_points == 0) return;
  const u64 buckets_max = plan.tree_buckets;
  // The plan's scan reservation is an estimate of CUB's need: a shortfall is a bug.
  if (scan_temp_bytes(buckets_max) > plan.tree_scan_temp_bytes) std::abort();
  const int sets = plan.tree_sets;
  if (sets < 1 || sets > 2 || (sets == 2 && a.side == nullptr)) std::abort();
  const int sm_count = current_sm_count();
  const auto* bases = static_cast<const dev::Affine<F>*>(a.bases);
  auto* xyzz = static_cast<dev::Xyzz<F>*>(a.buckets);
  // Tree reduction: this chunk's buckets stay affine, in its own array.
  dev::Affine<F>* affine = nullptr;
  if (a.affine_buckets != nullptr) {
    if (a.chunk >= plan.tree_reduce_chunks) std::abort();
    affine = static_cast<dev::Affine<F>*>(a.affine_buckets) + u64(a.chunk) * plan.bucket_count;
  }
  const u32 bpw = u32(plan.buckets_per_window);
  if (sets == 2) {
    CUZK_CUDA_CHECK(cudaEventRecord(a.fork, s));
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(a.side, a.fork, 0));
  }
  int slab = 0;
  for (int w0 = 0; w0 < plan.windows; w0 += plan.tree_slab_windows, ++slab) {
    // Slab i on set i % sets and its stream: a set is reused only by the slab
    // two later, on the same stream, so stream order guards it.
    const int set = slab % sets;
    const cudaStream_t st = set == 0 ? s : a.side;
    Buffers<F> buf(plan, a.arena + std::size_t(set) * plan.tree_set_bytes);
    const int nwin = std::min(plan.tree_slab_windows, plan.windows - w0);
    const u32 buckets = u32(nwin) * bpw;
    dev::Xyzz<F>* slab_buckets = xyzz + u64(w0) * bpw;
    const int rounds = msm::tree_rounds(a.chunk_points, plan.window_bits, w0 + nwin == plan.windows);
    init_kernel<F><<<detail::grid_for(buckets, 256), 256, 0, st>>>(a.start, a.end, plan.window_bits, bpw, u32(w0),
                                                                   buckets, buf.len[0], buf.start[0], buf.sums);
    CUZK_CUDA_CHECK_LAUNCH();
    // The slab's entries: at most its windows times the chunk's points.
    const int cur =
        run_rounds<F>(st, Source<F, true>{bases, a.vals}, buf, buckets, u64(nwin) * a.chunk_points, rounds, sm_count);
    const Source<F, false> last{buf.list[(rounds - 1) % 2], nullptr};
    // The previous round's lengths and starts are dead: they hold the long
    // buckets' count and list.
    u32* long_count = buf.len[1 - cur];
    u32* long_list = buf.start[1 - cur];
    CUZK_CUDA_CHECK(cudaMemsetAsync(long_count, 0, sizeof(u32), st));
    if (affine != nullptr) {
      finish_affine_kernel<F><<<detail::grid_for(buckets, 128), 128, 0, st>>>(
          last, buf.len[cur], buf.start[cur], buckets, buf.sums, affine + u64(w0) * bpw, long_list, long_count);
      CUZK_CUDA_CHECK_LAUNCH();
      finish_long_kernel<F, true><<<unsigned(sm_count) * 4, kLongThreads, 0, st>>>(
          last, buf.len[cur], buf.start[cur], buf.sums, long_list, long_count, nullptr, affine + u64(w0) * bpw);
    } else {
      finish_kernel<F><<<detail::grid_for(buckets, 128), 128, 0, st>>>(last, buf.len[cur], buf.start[cur], buckets,
                                                                       buf.sums, slab_buckets, long_list, long_count);
      CUZK_CUDA_CHECK_LAUNCH();
      finish_long_kernel<F, false><<<unsigned(sm_count) * 4, kLongThreads, 0, st>>>(
          last, buf.len[cur], buf.start[cur], buf.sums, long_list, long_count, slab_buckets, nullptr);
    }
    CUZK_CUDA_CHECK_LAUNCH();
  }
  if (sets == 2) {
    CUZK_CUDA_CHECK(cudaEventRecord(a.join, a.side));
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, a.join, 0));
  }
}

template <class F>
void reduce(cudaStream_t s, const msm::Plan& plan, const ReduceArgs& a) {
  const msm::TreeReduceShape shape = msm::tree_reduce_shape(plan.window_bits, plan.tree_reduce_chunks);
  const int slab_windows = plan.tree_reduce_slab_windows;
  // The plan's fit check (msm::set_tree_reduce) guarantees these.
  if (plan.tree_reduce_chunks == 0 || slab_windows < 1 ||
      u64(slab_windows) * shape.window_entries > plan.tree_entries ||
      u64(slab_windows) * shape.window_groups > plan.tree_buckets) {
    std::abort();
  }
  const int sets = plan.tree_sets;
  if (sets < 1 || sets > 2 || (sets == 2 && a.side == nullptr)) std::abort();
  const int sm_count = current_sm_count();
  const u32 windows = u32(plan.windows);
  const u64 all_entries = u64(windows) * shape.window_entries;
  reduce_index_kernel<<<detail::grid_for(all_entries, 256), 256, 0, s>>>(shape, windows, plan.bucket_count,
                                                                         u32(plan.buckets_per_window), a.index);
  CUZK_CUDA_CHECK_LAUNCH();
  if (sets == 2) {
    CUZK_CUDA_CHECK(cudaEventRecord(a.fork, s));
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(a.side, a.fork, 0));
  }
  const auto* points = static_cast<const dev::Affine<F>*>(a.affine_buckets);
  auto* e_out = static_cast<dev::Xyzz<F>*>(a.e_out);
  int slab = 0;
  for (u32 w0 = 0; w0 < windows; w0 += u32(slab_windows), ++slab) {
    // As in accumulate: slab i on set i % sets and its stream.
    const int set = slab % sets;
    const cudaStream_t st = set == 0 ? s : a.side;
    Buffers<F> buf(plan, a.arena + std::size_t(set) * plan.tree_set_bytes);
    const u32 nwin = std::min(u32(slab_windows), windows - w0);
    const u32 groups = nwin * shape.window_groups;
    reduce_init_kernel<F>
        <<<detail::grid_for(groups, 256), 256, 0, st>>>(shape, groups, buf.len[0], buf.start[0], buf.sums);
    CUZK_CUDA_CHECK_LAUNCH();
    const Source<F, true> entries{points, a.index + u64(w0) * shape.window_entries};
    const int cur = run_rounds<F>(st, entries, buf, groups, u64(nwin) * shape.window_entries, shape.rounds, sm_count);
    reduce_combine_kernel<F><<<detail::grid_for(u64(nwin) << shape.h, 64), 64, 0, st>>>(
        shape, nwin, buf.len[cur], buf.start[cur], buf.list[(shape.rounds - 1) % 2], buf.sums,
        e_out + (u64(w0) << shape.h));
    CUZK_CUDA_CHECK_LAUNCH();
  }
  if (sets == 2) {
    CUZK_CUDA_CHECK(cudaEventRecord(a.join, a.side));
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, a.join, 0));
  }
}

constexpr std::size_t align_256(std::size_t b) { return (b + 255) / 256 * 256; }

// One list-sum piece's buffer set for `entries` (groups of 2^kListGroupLog),
// placed after `base_off` bytes; returns the end. Round 0 writes list 0 (at
// most entries / 2 + groups outputs: one odd point per group), round 1 list
// 1 (half that, + groups), later rounds less.
std::size_t list_set_offsets(std::uint64_t entries, std::size_t affine_bytes, std::size_t base_off, SetOffsets& o) {
  const u64 groups = (entries + (u64(1) << kListGroupLog) - 1) >> kListGroupLog;
  const u64 out0 = entries / 2 + groups;
  const u64 lens[2] = {out0, out0 / 2 + groups};
  const std::size_t field_bytes = affine_bytes / 2;
  std::size_t off = base_off;
  const auto take = [&off](std::size_t bytes) {
    const std::size_t at = off;
    off += align_256(bytes);
    return at;
  };
  for (int i = 0; i < 2; ++i) {
    o.list[i] = take(lens[i] * affine_bytes);
    o.pair_in[i] = take(lens[i] * 4);
    o.len[i] = take((groups + 1) * 4);
    o.start[i] = take((groups + 1) * 4);
  }
  o.output_prefix = take(out0 * field_bytes);
  o.sums = take(groups * affine_bytes);
  o.slot_product = take(msm::tree_slots(out0) * field_bytes);
  o.prefix = take(msm::tree_slots(out0) * field_bytes);
  o.scan_temp_bytes = align_256(scan_temp_bytes(groups));
  o.scan_temp = take(o.scan_temp_bytes);
  return off;
}

// The arena's layout for a list sum in pieces of piece_entries: the group
// sums of the whole list, then one buffer set (offsets from the arena's start).
std::size_t list_layout(std::uint64_t count, std::uint64_t piece_entries, std::size_t affine_bytes, SetOffsets& set) {
  const std::size_t sums_bytes = align_256(list_sum_groups(count) * affine_bytes);
  return list_set_offsets(std::min<u64>(count, piece_entries), affine_bytes, sums_bytes, set);
}

template <class F>
const void* sum_list(cudaStream_t s, const ListSumArgs& a) {
  const u64 piece = list_piece_entries(sizeof(F) != sizeof(Fp), a.count, a.arena_bytes);
  if (a.count == 0 || piece == 0) std::abort();  // the caller sizes the arena for at least one piece
  SetOffsets set{};
  if (list_layout(a.count, piece, sizeof(dev::Affine<F>), set) > a.arena_bytes) std::abort();
  Buffers<F> buf(set, a.arena);
  auto* group_sums = reinterpret_cast<dev::Affine<F>*>(a.arena);
  const auto* bases = static_cast<const dev::Affine<F>*>(a.bases);
  const int sm_count = current_sm_count();
  for (u64 lo = 0; lo < a.count; lo += piece) {
    const u64 n = std::min(piece, a.count - lo);
    const u32 groups = u32(list_sum_groups(n));
    list_init_kernel<F>
        <<<detail::grid_for(groups, 256), 256, 0, s>>>(n, kListGroupLog, groups, buf.len[0], buf.start[0], buf.sums);
    CUZK_CUDA_CHECK_LAUNCH();
    // At least one round: it moves a lone point into sums.
    const int rounds = std::max(1, msm::tree_rounds_for(std::min<u64>(n, u64(1) << kListGroupLog)));
    const int cur = run_rounds<F>(s, Source<F, true>{bases, a.idx + lo}, buf, groups, n, rounds, sm_count);
    list_collect_kernel<F><<<detail::grid_for(groups, 128), 128, 0, s>>>(
        buf.len[cur], buf.start[cur], buf.list[(rounds - 1) % 2], buf.sums, groups, group_sums + (lo >> kListGroupLog));
    CUZK_CUDA_CHECK_LAUNCH();
  }
  return group_sums;
}

template <class F>
std::size_t local_bytes() {
  // The backward step: one kernel for G1, the walk over norms and the point kernel for G2 (launch_round).
  std::size_t backward = 0;
  if constexpr (sizeof(F) == sizeof(Fp)) {
    backward = detail::max_local_bytes({reinterpret_cast<const void*>(&backward_kernel<F, true>),
                                        reinterpret_cast<const void*>(&backward_kernel<F, false>)});
  } else {
    backward = detail::max_local_bytes({reinterpret_cast<const void*>(&inverse_walk_norm_kernel),
                                        reinterpret_cast<const void*>(&point_kernel<true>),
                                        reinterpret_cast<const void*>(&point_kernel<false>)});
  }
  return std::max(
      backward,
      detail::max_local_bytes(
          {reinterpret_cast<const void*>(&map_kernel<F, true>), reinterpret_cast<const void*>(&map_kernel<F, false>),
           reinterpret_cast<const void*>(&forward_kernel<F, true>),
           reinterpret_cast<const void*>(&forward_kernel<F, false>),
           reinterpret_cast<const void*>(&invert_kernel<typename ForwardTerms<F>::D>),
           reinterpret_cast<const void*>(&finish_kernel<F>), reinterpret_cast<const void*>(&finish_affine_kernel<F>),
           reinterpret_cast<const void*>(&finish_long_kernel<F, true>),
           reinterpret_cast<const void*>(&finish_long_kernel<F, false>),
           reinterpret_cast<const void*>(&reduce_init_kernel<F>),
           reinterpret_cast<const void*>(&reduce_combine_kernel<F>),
           reinterpret_cast<const void*>(&list_init_kernel<F>),
           reinterpret_cast<const void*>(&list_collect_kernel<F>)}));
}

}  // namespace

void accumulate_g1(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& args) { accumulate<Fp>(s, plan, args); }
void accumulate_g2(cudaStream_t s, const msm::Plan& plan, const ChunkArgs& args) { accumulate<Fp2>(s, plan, args); }
void reduce_g1(cudaStream_t s, const msm::Plan& plan, const ReduceArgs& args) { reduce<Fp>(s, plan, args); }
void reduce_g2(cudaStream_t s, const msm::Plan& plan, const ReduceArgs& args) { reduce<Fp2>(s, plan, args); }

std::uint64_t list_sum_groups(std::uint64_t count) {
  return (count + (std::uint64_t{1} << kListGroupLog) - 1) >> kListGroupLog;
}

std::size_t list_sum_bytes(bool g2, std::uint64_t count, std::uint64_t piece_entries) {
  SetOffsets set{};
  return list_layout(count, piece_entries, g2 ? sizeof(dev::Affine<Fp2>) : sizeof(dev::Affine<Fp>), set);
}

std::uint64_t list_piece_entries(bool g2, std::uint64_t count, std::size_t arena_bytes) {
  if (count == 0) return 0;
  if (list_sum_bytes(g2, count, count) <= arena_bytes) return count;
  // The largest number of whole groups that fits (the layout grows with the piece).
  const u64 group = u64(1) << kListGroupLog;
  u64 lo = 0, hi = count / group;  // lo groups fit (0: vacuously); more than hi would be the whole list
  while (lo < hi) {
    const u64 mid = (lo + hi + 1) / 2;
    if (list_sum_bytes(g2, count, mid * group) <= arena_bytes) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo * group;
}

const void* sum_list_g1(cudaStream_t s, const ListSumArgs& args) { return sum_list<Fp>(s, args); }
const void* sum_list_g2(cudaStream_t s, const ListSumArgs& args) { return sum_list<Fp2>(s, args); }

std::size_t scan_temp_bytes(std::uint64_t buckets) {
  std::size_t bytes = 0;
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const u32*>(nullptr),
                                                static_cast<u32*>(nullptr), int(buckets + 1), cudaStream_t{}));
  return bytes;
}

std::size_t local_bytes_per_thread(bool g2) { return g2 ? local_bytes<Fp2>() : local_bytes<Fp>(); }

}  // namespace cuzk::gpu::kernels::tree
