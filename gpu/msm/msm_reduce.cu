// The bucket reduction sum_b b B_b of G1 and G2 MSMs (gpu/msm/msm.cu's last
// step: the running XYZZ buckets of three or more chunks, or the 2^h XYZZ
// points per window the tree reduction leaves), with the accumulator in
// shared memory.
//
// Slot layout: quad q (4 limbs, 16 B) of Fp slot k of thread t is the uint4 at
// (k * 3 + q) * kThreads + t, so a warp's access to one quad is 512
// consecutive bytes (4 wavefronts, no bank conflict). The accumulator and two
// temporaries live in slots; each Fp or Fp2 operation loads its operands from
// the slots, computes in registers and stores the result back, so besides the
// operands of the Fp product in flight only a few partials are live and the
// adds inline without the call ABI's local memory.
#include "gpu/msm/msm_reduce.hpp"

#include <algorithm>

#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"

namespace cuzk::gpu::kernels::smem_reduce {
namespace {

using dev::Fp;
using dev::Fp2;
using dev::u32;
using u64 = std::uint64_t;

constexpr int kQuads = 3;  // uint4 per Fp (12 limbs)

template <class Shape>
constexpr std::size_t shared_bytes() {
  return std::size_t(Shape::kSlots) * kQuads * Shape::kThreads * sizeof(uint4);
}

// A thread's slots. Loads and stores are volatile asm so that the compiler
// neither keeps a loaded operand live in registers in place of a second load
// (which is the point of the slots) nor reorders them among themselves.
template <int kThreads>
struct Slots {
  u32 base;  // shared address of the thread's quad 0 of slot 0

  __device__ __forceinline__ Fp ld(int k) const {
    Fp r;
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      const u32 a = base + u32((k * kQuads + q) * kThreads * 16);
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(r.l[4 * q]), "=r"(r.l[4 * q + 1]), "=r"(r.l[4 * q + 2]), "=r"(r.l[4 * q + 3])
                   : "r"(a));
    }
    return r;
  }
  __device__ __forceinline__ void st(int k, const Fp& v) const {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      const u32 a = base + u32((k * kQuads + q) * kThreads * 16);
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.l[4 * q]), "r"(v.l[4 * q + 1]),
                   "r"(v.l[4 * q + 2]), "r"(v.l[4 * q + 3])
                   : "memory");
    }
  }
  __device__ __forceinline__ Fp2 ld2(int k) const { return {ld(k), ld(k + 1)}; }
  __device__ __forceinline__ void st2(int k, const Fp2& v) const {
    st(k, v.c0);
    st(k + 1, v.c1);
  }
};

// Global Fp at 16-byte-aligned p (3 quads).
__device__ __forceinline__ Fp load_fp(const uint4* p) {
  Fp r;
#pragma unroll
  for (int q = 0; q < kQuads; ++q) {
    const uint4 v = p[q];
    r.l[4 * q] = v.x;
    r.l[4 * q + 1] = v.y;
    r.l[4 * q + 2] = v.z;
    r.l[4 * q + 3] = v.w;
  }
  return r;
}
__device__ __forceinline__ void store_fp(uint4* p, const Fp& a) {
#pragma unroll
  for (int q = 0; q < kQuads; ++q) p[q] = make_uint4(a.l[4 * q], a.l[4 * q + 1], a.l[4 * q + 2], a.l[4 * q + 3]);
}

// Fp2 products (Fp2 = Fp[u]/(u^2 + 1), Karatsuba) with operands in slots;
// each operand's limbs are loaded again for the Karatsuba sums instead of
// being kept live across the first two products. CUZK_FP2_MUL picks the form:
// lazily reduced (Fp2::mul_lazy_from: 3 double-width products, 2 reductions,
// 744 product pairs) or three full Montgomery products (900).
// a (registers) * slot b.
template <class S>
__device__ __forceinline__ Fp2 mul(const Fp2& a, const S& s, int b) {
  if constexpr (dev::kFp2MulForm == dev::Fp2MulForm::kLazy) {
    return Fp2::mul_lazy_from([&] { return a.c0; }, [&] { return a.c1; }, [&] { return s.ld(b); },
                              [&] { return s.ld(b + 1); });
  } else {
    const Fp v0 = a.c0 * s.ld(b);
    const Fp v1 = a.c1 * s.ld(b + 1);
    const Fp v2 = (a.c0 + a.c1) * (s.ld(b) + s.ld(b + 1));
    return {v0 - v1, v2 - v0 - v1};
  }
}
// slot a * slot b.
template <class S>
__device__ __forceinline__ Fp2 mul(const S& s, int a, int b) {
  if constexpr (dev::kFp2MulForm == dev::Fp2MulForm::kLazy) {
    return Fp2::mul_lazy_from([&] { return s.ld(a); }, [&] { return s.ld(a + 1); }, [&] { return s.ld(b); },
                              [&] { return s.ld(b + 1); });
  } else {
    const Fp v0 = s.ld(a) * s.ld(b);
    const Fp v1 = s.ld(a + 1) * s.ld(b + 1);
    const Fp v2 = (s.ld(a) + s.ld(a + 1)) * (s.ld(b) + s.ld(b + 1));
    return {v0 - v1, v2 - v0 - v1};
  }
}
// slot a squared: (a0 + a1)(a0 - a1) + 2 a0 a1 u (2 Fp mul).
template <class S>
__device__ __forceinline__ Fp2 sqr(const S& s, int a) {
  const Fp c0 = (s.ld(a) + s.ld(a + 1)) * (s.ld(a) - s.ld(a + 1));
  const Fp c1 = (s.ld(a) * s.ld(a + 1)).dbl();
  return {c0, c1};
}

// ---- the reduction ----------------------------------------------------------
//
// Why slots: a kernel that keeps two XYZZ points (sum, acc) in registers and
// calls the out-of-line Xyzz::add twice per bucket crosses the call ABI
// through local memory. G2 (ptxas, sm_90): 255 registers, 1248 B stack
// frame, 88 B spill; 4 blocks of 64 = 8 warps per SM; on the H200 it took
// 58.3 of G2 2^23's 254.3 ms. G1: 144 registers and a 576 B frame (7 blocks
// of 64 = 14 warps); 14.5 of G1 2^24's 117.5 ms, ~50% of the multiply's rate (its frames,
// 576 B x 448 threads = 252 KiB per SM, about fill the SM's 256 KiB of L1 +
// shared memory, which the streamed buckets also pass through). Its 53248
// segments at c = 20 are also 1.6 waves of G2's 33792 resident threads (0.9
// of G1's 59136: 6 or 7 blocks per SM).
//
// Here one accumulator lives in slots and the other operand of every add is
// read from global memory, so a segment [lo, hi] of a window runs in three
// passes over its buckets (6 slots per Fp or Fp2 element of the point field:
// the accumulator's 4 and kA, kB):
//   1. suffix sums S_b = B_hi + ... + B_b, written over B_b (the buckets are
//      dead after the reduction; each thread touches only its own segment);
//   2. acc = S_lo + ... + S_hi = sum_b (b - lo + 1) B_b, stored to seg_out;
//   3. kx = (lo - 1) S_lo by double-and-add (S_lo = the segment's sum), then
//      kx + acc = sum_b b B_b, stored to seg_out.
// The adds are the same as the register kernel's (2 per bucket + the c-step
// double-and-add); the extra global traffic is one write and one read of the
// buckets (2 x 2.6 GB at c = 20 for G2, 2 x 1.3 GB for G1: ~1.2 / ~0.6 ms at
// HBM rate). Segment lengths need not be powers of two: the count is the
// largest whole number of resident waves that the plan's seg_out region holds.

// Slots seen as elements of the point field F: element e occupies Fp slots
// e * kDeg .. e * kDeg + kDeg - 1 (kDeg = 1 for Fp, 2 for Fp2).
constexpr int kEX = 0, kEY = 1, kEZZ = 2, kEZZZ = 3;
constexpr int kEA = 4, kEB = 5;  // P then PPP then Q - X3 (kEA); R or M (kEB)
constexpr int kReduceElems = 6;

template <class F, int kThreads>
struct FieldSlots {
  using Field = F;
  static constexpr int kDeg = int(sizeof(F) / sizeof(Fp));
  static_assert(kDeg == 1 || kDeg == 2);
  Slots<kThreads> s;

  __device__ __forceinline__ F ld(int e) const {
    if constexpr (kDeg == 1) {
      return s.ld(e);
    } else {
      return s.ld2(2 * e);
    }
  }
  __device__ __forceinline__ void st(int e, const F& v) const {
    if constexpr (kDeg == 1) {
      s.st(e, v);
    } else {
      s.st2(2 * e, v);
    }
  }
  // a (registers) * element e; the Fp2 forms are the free functions above.
  __device__ __forceinline__ F mul(const F& a, int e) const {
    if constexpr (kDeg == 1) {
      return a * s.ld(e);
    } else {
      return smem_reduce::mul(a, s, 2 * e);
    }
  }
  __device__ __forceinline__ F mul(int a, int b) const {
    if constexpr (kDeg == 1) {
      return s.ld(a) * s.ld(b);
    } else {
      return smem_reduce::mul(s, 2 * a, 2 * b);
    }
  }
  __device__ __forceinline__ F sqr(int e) const {
    if constexpr (kDeg == 1) {
      return s.ld(e).sqr();
    } else {
      return smem_reduce::sqr(s, 2 * e);
    }
  }
};

// Shapes of segment_smem_kernel<F> (ptxas, sm_90, CUDA 13.0):
// - G2: blocks of 64, 12 Fp slots (36 KiB per block), at most 168 registers
//   (uses 168; 48 B stack, 144 B spill stores with the lazy Fp2 product):
//   6 blocks per SM (216 KiB shared, 64512 registers) = 12 warps; the largest
//   shared-memory carveout. One wave (50688 threads on 132 SMs) fits c = 20's
//   53248 segments.
// - G1: blocks of 64, 6 Fp slots (18 KiB per block), at most 168 registers
//   (uses 134, no stack, no spill: 7 blocks would fit), capped at 6 blocks
//   per SM (12 warps) with a carveout for just those (6 x 19 KiB -> the
//   132 KiB configuration, leaving ~124 KiB of L1 for the operands' reloads).
//   More warps cannot be fed: the plan's seg_out holds at most 2^16 segments
//   (53248 at c = 20, 49152 at c = 21-22: 372-403 per SM), and a partial wave
//   of 7 blocks per SM would leave some SMs with 6 and the rest with 7. 12
//   warps ran a per-run G1 XYZZ accumulation at 83% of the multiply's rate.
template <class F>
struct ReduceShape;
template <>
struct ReduceShape<Fp2> {
  static constexpr int kThreads = 64;
  static constexpr int kSlots = kReduceElems * 2;
  static constexpr int kMaxRegisters = 168;
  static constexpr int kBlocksPerSmMax = 0;  // as many as fit, the largest carveout
};
template <>
struct ReduceShape<Fp> {
  static constexpr int kThreads = 64;
  static constexpr int kSlots = kReduceElems;
  static constexpr int kMaxRegisters = 168;
  static constexpr int kBlocksPerSmMax = 6;
};

// Element e of the XYZZ point at g, with plain loads: pass 2 reads what pass
// 1 of the same thread wrote, so not through the non-coherent cache.
template <class F>
__device__ __forceinline__ F gld(const uint4* g, int e) {
  if constexpr (sizeof(F) == sizeof(Fp)) {
    return load_fp(g + e * kQuads);
  } else {
    return {load_fp(g + 2 * e * kQuads), load_fp(g + (2 * e + 1) * kQuads)};
  }
}

// Quads of an XYZZ point over F (24 for G2, 12 for G1).
template <class F>
constexpr int point_quads() {
  return 4 * int(sizeof(F) / sizeof(Fp)) * kQuads;
}

// Accumulator (not the identity) <- 2 * accumulator (EFD dbl-2008-s-1):
// U = 2Y, V = U^2, W = U V, S = X V, M = 3 X^2, X3 = M^2 - 2S,
// Y3 = M (S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ. M in kEB, U then W in kEA.
// Returns whether the result is the identity (ZZ3 = 0: Y = 0, a 2-torsion
// point, never a sum of subgroup points of odd order r; checked so that
// `empty` stays exact).
template <class E>
__device__ __noinline__ bool dbl_slots(const E e) {
  {
    const typename E::Field x2 = e.sqr(kEX);
    e.st(kEB, x2.dbl() + x2);  // M = 3 X^2
  }
  e.st(kEA, e.ld(kEY).dbl());  // U = 2Y
  {
    const typename E::Field v = e.sqr(kEA);  // V = U^2
    e.st(kEZZ, e.mul(v, kEZZ));              // ZZ3 = V ZZ
    e.st(kEX, e.mul(v, kEX));                // S = X V
    e.st(kEA, e.mul(v, kEA));                // W = U V
  }
  e.st(kEZZZ, e.mul(kEZZZ, kEA));                             // ZZZ3 = W ZZZ
  e.st(kEY, e.mul(kEY, kEA));                                 // W Y
  const typename E::Field x3 = e.sqr(kEB) - e.ld(kEX).dbl();  // X3 = M^2 - 2S
  e.st(kEA, e.ld(kEX) - x3);                                  // S - X3
  e.st(kEX, x3);
  e.st(kEY, e.mul(kEB, kEA) - e.ld(kEY));  // Y3 = M (S - X3) - W Y
  return e.ld(kEZZ).is_zero();
}

// Accumulator <- the XYZZ point at g (plain loads).
template <class E>
__device__ __forceinline__ void copy_to_slots(const E e, const uint4* g) {
#pragma unroll
  for (int k = 0; k < 4 * E::kDeg; ++k) e.s.st(k, load_fp(g + k * kQuads));
}
// The XYZZ point at g <- accumulator (all zeros when empty: the identity).
template <class E>
__device__ __forceinline__ void store_from_slots(const E e, bool empty, uint4* g) {
#pragma unroll
  for (int k = 0; k < 4 * E::kDeg; ++k) store_fp(g + k * kQuads, empty ? Fp::zero() : e.s.ld(k));
}

// Accumulator (`empty` = identity) += the XYZZ point at g (EFD add-2008-s:
// U1 = X1 ZZ2, S1 = Y1 ZZZ2, P = X2 ZZ1 - U1, R = Y2 ZZZ1 - S1,
// ZZ1' = ZZ1 ZZ2, ZZZ1' = ZZZ1 ZZZ2, then the mixed add's tail with X1 = U1,
// Y1 = S1: X3 = R^2 - PPP - 2Q, Y3 = R (Q - X3) - S1 PPP; 12M + 2S). The
// operand's coordinates are reloaded from global memory (L1/L2) where each
// product needs them. Exceptional cases exact: either side the identity; equal
// points (P = R = 0): the operand is copied in and doubled; opposite points:
// identity. Returns the new `empty`. Out of line: the kernel calls it from four
// places and the call passes only the slot base, g and a flag (the points are
// in shared and global memory), while four inlined G2 copies made ptxas take
// ~5 minutes for this file and spill 764 B.
template <class E>
__device__ __noinline__ bool add_full(const E e, const uint4* g, bool empty) {
  using F = typename E::Field;
  const F zz2 = gld<F>(g, kEZZ);
  if (zz2.is_zero()) return empty;  // adding the identity
  if (empty) {
    copy_to_slots(e, g);
    return false;
  }
  e.st(kEX, e.mul(zz2, kEX));                           // U1 = X1 ZZ2
  e.st(kEY, e.mul(gld<F>(g, kEZZZ), kEY));              // S1 = Y1 ZZZ2
  const F p = e.mul(gld<F>(g, kEX), kEZZ) - e.ld(kEX);  // P = X2 ZZ1 - U1
  const bool p_zero = p.is_zero();
  e.st(kEA, p);
  const F r = e.mul(gld<F>(g, kEY), kEZZZ) - e.ld(kEY);  // R = Y2 ZZZ1 - S1
  const bool r_zero = r.is_zero();
  e.st(kEB, r);
  if (p_zero) {
    if (r_zero) {
      copy_to_slots(e, g);  // the accumulator equals the operand
      return dbl_slots(e);
    }
    return true;  // the operand is minus the accumulator
  }
  e.st(kEZZ, e.mul(gld<F>(g, kEZZ), kEZZ));               // ZZ1 ZZ2
  e.st(kEZZZ, e.mul(gld<F>(g, kEZZZ), kEZZZ));            // ZZZ1 ZZZ2
  const F pp = e.sqr(kEA);                                // PP = P^2
  e.st(kEZZ, e.mul(pp, kEZZ));                            // ZZ3 = ZZ1 ZZ2 PP
  e.st(kEX, e.mul(pp, kEX));                              // Q = U1 PP
  e.st(kEA, e.mul(pp, kEA));                              // PPP = P PP
  e.st(kEZZZ, e.mul(kEZZZ, kEA));                         // ZZZ3 = ZZZ1 ZZZ2 PPP
  e.st(kEY, e.mul(kEY, kEA));                             // S1 PPP
  const F x3 = e.sqr(kEB) - e.ld(kEA) - e.ld(kEX).dbl();  // X3 = R^2 - PPP - 2Q
  e.st(kEA, e.ld(kEX) - x3);                              // Q - X3
  e.st(kEX, x3);
  e.st(kEY, e.mul(kEB, kEA) - e.ld(kEY));  // Y3 = R (Q - X3) - S1 PPP
  return false;
}

// Thread t: segment g = t % segs_per_window of window w = t / segs_per_window,
// buckets lo..hi (values; bucket b at index b - 1 of the window), the three
// passes above.
template <class F>
__global__ void __maxnreg__(ReduceShape<F>::kMaxRegisters)
    segment_smem_kernel(uint4* buckets, u32 buckets_per_window, u32 seg_len, u32 segs_per_window, u32 segments,
                        uint4* seg_out) {
  constexpr int kPoint = point_quads<F>();
  extern __shared__ uint4 slots_mem[];
  const FieldSlots<F, ReduceShape<F>::kThreads> e{
      Slots<ReduceShape<F>::kThreads>{u32(__cvta_generic_to_shared(slots_mem + threadIdx.x))}};
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= segments) return;
  const u32 w = t / segs_per_window;
  const u32 lo = (t % segs_per_window) * seg_len + 1;  // <= buckets_per_window (host: segs_per_window)
  const u32 hi = min(lo + seg_len - 1, buckets_per_window);
  uint4* bw = buckets + u64(w) * buckets_per_window * kPoint;
  uint4* out = seg_out + u64(t) * kPoint;
  bool empty = true;
  for (u32 b = hi; b >= lo; --b) {  // pass 1: S_b over B_b
    uint4* g = bw + u64(b - 1) * kPoint;
    empty = add_full(e, g, empty);
    store_from_slots(e, empty, g);
  }
  empty = true;
  for (u32 b = lo; b <= hi; ++b) empty = add_full(e, bw + u64(b - 1) * kPoint, empty);  // pass 2
  store_from_slots(e, empty, out);
  // Pass 3: kx = (lo - 1) S_lo from the top bit down, then + acc.
  const uint4* sum = bw + u64(lo - 1) * kPoint;
  const u32 k = lo - 1;
  empty = true;
  for (int bit = k == 0 ? -1 : 31 - __clz(k); bit >= 0; --bit) {
    if (!empty) empty = dbl_slots(e);
    if ((k >> bit) & 1u) empty = add_full(e, sum, empty);
  }
  empty = add_full(e, out, empty);
  store_from_slots(e, empty, out);
}

// Resident threads of a kernel with kThreads-thread blocks and kSharedBytes
// of dynamic shared memory per block (sets the kernel's shared-memory
// attributes first: 36-72 KiB is above the 48 KiB default or needs the
// largest carveout). blocks_per_sm_max > 0 caps the count at that many blocks
// per SM and asks for a carveout of just their shared memory, leaving the
// rest of the SM's 256 KiB to L1.
template <int kThreads, std::size_t kSharedBytes>
std::size_t resident_threads(const void* kernel, int blocks_per_sm_max = 0) {
  CUZK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSharedBytes)));
  int ordinal = 0, sm_count = 0, blocks_per_sm = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&ordinal));
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  int carveout_percent = cudaSharedmemCarveoutMaxShared;
  if (blocks_per_sm_max > 0) {
    int shared_per_sm = 0, reserved_per_block = 0;
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal));
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&reserved_per_block, cudaDevAttrReservedSharedMemoryPerBlock, ordinal));
    const std::size_t need = std::size_t(blocks_per_sm_max) * (kSharedBytes + std::size_t(reserved_per_block));
    carveout_percent = int(std::min<std::size_t>(100, (100 * need + shared_per_sm - 1) / std::size_t(shared_per_sm)));
  }
  CUZK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout_percent));
  CUZK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, kThreads, kSharedBytes));
  if (blocks_per_sm_max > 0) blocks_per_sm = std::min(blocks_per_sm, blocks_per_sm_max);
  return std::size_t(std::max(1, blocks_per_sm)) * std::size_t(sm_count) * kThreads;
}

// The reduction's launch for point field F: the segment count is the largest
// whole number of resident waves within the seg_out region (at most one
// segment per bucket); with less than one wave, every slot of the region.
template <class F>
std::uint32_t launch_reduce(cudaStream_t s, const ReduceArgs& a) {
  using Shape = ReduceShape<F>;
  constexpr int kThreads = Shape::kThreads;
  constexpr std::size_t kSharedBytes = shared_bytes<Shape>();
  const std::size_t resident = resident_threads<kThreads, kSharedBytes>(
      reinterpret_cast<const void*>(&segment_smem_kernel<F>), Shape::kBlocksPerSmMax);
  const std::size_t fit = a.segments_max >= resident ? a.segments_max / resident * resident : a.segments_max;
  const u32 per_window_target = u32(std::clamp<std::size_t>(fit / a.windows, 1, a.buckets_per_window));
  const u32 seg_len = (a.buckets_per_window + per_window_target - 1) / per_window_target;
  const u32 segs_per_window = (a.buckets_per_window + seg_len - 1) / seg_len;  // <= per_window_target
  const u32 segments = segs_per_window * a.windows;
  segment_smem_kernel<F><<<detail::grid_for(segments, kThreads), kThreads, kSharedBytes, s>>>(
      static_cast<uint4*>(a.buckets), a.buckets_per_window, seg_len, segs_per_window, segments,
      static_cast<uint4*>(a.seg_out));
  CUZK_CUDA_CHECK_LAUNCH();
  return segs_per_window;
}

}  // namespace

std::uint32_t reduce_segments(cudaStream_t s, const ReduceArgs& a, PointGroup group) {
  return group == PointGroup::kG1 ? launch_reduce<Fp>(s, a) : launch_reduce<Fp2>(s, a);
}

std::size_t local_bytes_per_thread(PointGroup group) {
  if (group == PointGroup::kG1) {
    return detail::max_local_bytes({reinterpret_cast<const void*>(&segment_smem_kernel<Fp>)});
  }
  return detail::max_local_bytes({reinterpret_cast<const void*>(&segment_smem_kernel<Fp2>)});
}

}  // namespace cuzk::gpu::kernels::smem_reduce
