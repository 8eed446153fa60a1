// Fixed-base multiplication k_i * G for many scalars (development setup).
//
// Each thread owns up to K points i = t, t + T, t + 2T, ... (T threads in the
// grid, so neighbouring threads touch neighbouring points). Per point it
// accumulates the 32 table entries selected by the scalar's bytes with XYZZ
// mixed adds (8M + 2S each; the add handles P = Q and P = -Q, so any scalar
// works), parks the XYZZ point in scratch and writes the running product of
// the ZZZ coordinates into the output slot's x (scratch until the back pass).
// One Fermat inversion per thread then yields every 1/ZZZ_j by Montgomery's
// trick walking back: 1/ZZZ_j = prefix_j / prefix_{j+1}. With ZZ = Z^2 and
// ZZZ = Z^3: 1/Z = ZZ / ZZZ, x = X / ZZ = X (1/Z)^2, y = Y / ZZZ.
//
// Cost per point: 32 mixed adds (~2.9k Fp products for G1) plus 3-4 products
// of the batch trick and 1/K of an inversion (~150k Fp products for p - 2 by
// square-and-multiply), so K = 16 keeps the inversion near 10%.
#include <algorithm>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/field.cuh"
#include "gpu/setup/fixed_base_kernel.hpp"

namespace cuzk::gpu::kernels {
namespace {

using dev::Fp;
using dev::Fp2;
using dev::Fr;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr int kThreadsPerBlock = 128;
constexpr int kMaxPointsPerThread = 16;
// Below this many threads (132 SMs x 4 blocks x 128) a launch starves the
// H200, so small batches get fewer points per thread.
constexpr u64 kTargetThreads = u64{1} << 16;

static_assert(sizeof(Fp) == 48 && sizeof(Fp2) == 96 && sizeof(Fr) == 32);
static_assert(sizeof(dev::Affine<Fp>) == kG1AffineBytes && sizeof(dev::Xyzz<Fp>) == kG1XyzzBytes);
static_assert(sizeof(dev::Affine<Fp2>) == kG2AffineBytes && sizeof(dev::Xyzz<Fp2>) == kG2XyzzBytes);

// a^(p-2) = a^-1 (a != 0), square-and-multiply over the bits of p - 2.
__device__ __noinline__ Fp inverse(const Fp& a) {
  Fp r = Fp::one();
  for (int limb = 11; limb >= 0; --limb) {
    const u32 e = limb == 0 ? dev::FpParams::p(0) - 2 : dev::FpParams::p(limb);  // p(0) is odd and > 2: no borrow
    for (int bit = 31; bit >= 0; --bit) {
      r = r.sqr();
      if ((e >> bit) & 1u) r = r * a;
    }
  }
  return r;
}

// 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2), since u^2 = -1.
__device__ __noinline__ Fp2 inverse(const Fp2& a) {
  const Fp t = inverse(a.c0.sqr() + a.c1.sqr());
  return {a.c0 * t, -(a.c1 * t)};
}

__device__ __forceinline__ Fp square(const Fp& a) { return a.sqr(); }
__device__ __forceinline__ Fp2 square(const Fp2& a) { return a.sqr(); }

template <class F>
__global__ void __launch_bounds__(kThreadsPerBlock)
    fixed_base_kernel(const dev::Affine<F>* table, const Fr* scalars, u64 n, int per_thread, dev::Xyzz<F>* scratch,
                      dev::Affine<F>* out) {
  const u64 threads = u64(gridDim.x) * blockDim.x;
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  F prefix = F::one();  // product of the ZZZ of this thread's non-identity points so far
  int count = 0;
  for (int j = 0; j < per_thread; ++j) {
    const u64 i = t + u64(j) * threads;
    if (i >= n) break;
    const Fr k = scalars[i].from_mont();
    dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
#pragma unroll 1
    for (int w = 0; w < kFixedBaseWindows; ++w) {
      const u32 d = (k.l[w >> 2] >> ((w & 3) * kFixedBaseWindowBits)) & 0xffu;
      if (d == 0) continue;
      const dev::Affine<F> q = table[w * kFixedBaseDigits + int(d) - 1];
      // The hot loop: inline for G1 (as the MSM does); G2's body is too large to inline.
      if constexpr (sizeof(F) == sizeof(Fp)) {
        acc.add_affine_inline(q.x, q.y);
      } else {
        acc.add_affine(q.x, q.y);
      }
    }
    scratch[i] = acc;
    out[i].x = prefix;
    if (!acc.is_identity()) prefix = prefix * acc.zzz;
    ++count;
  }
  if (count == 0) return;
  F inv = inverse(prefix);  // 1 / prefix_count
  for (int j = count - 1; j >= 0; --j) {
    const u64 i = t + u64(j) * threads;
    const dev::Xyzz<F> p = scratch[i];
    if (p.is_identity()) {
      out[i].x = F::zero();
      out[i].y = F::zero();
      continue;
    }
    const F zzz_inv = inv * out[i].x;  // prefix_j / prefix_{j+1}
    inv = inv * p.zzz;                 // now 1 / prefix_j
    const F z_inv = p.zz * zzz_inv;
    out[i].x = p.x * square(z_inv);
    out[i].y = p.y * zzz_inv;
  }
}

template <class F>
void launch(cudaStream_t s, const u32* table, const u32* scalars, std::size_t n, u32* scratch, u32* out) {
  if (n == 0) return;
  const u64 per_thread =
      std::min<u64>(kMaxPointsPerThread, std::max<u64>(1, (u64(n) + kTargetThreads - 1) / kTargetThreads));
  const u64 threads = (u64(n) + per_thread - 1) / per_thread;
  fixed_base_kernel<F><<<detail::grid_for(threads, kThreadsPerBlock), kThreadsPerBlock, 0, s>>>(
      reinterpret_cast<const dev::Affine<F>*>(table), reinterpret_cast<const Fr*>(scalars), u64(n), int(per_thread),
      reinterpret_cast<dev::Xyzz<F>*>(scratch), reinterpret_cast<dev::Affine<F>*>(out));
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace

void fixed_base_g1(cudaStream_t s, const u32* table, const u32* scalars, std::size_t n, u32* scratch, u32* out) {
  launch<Fp>(s, table, scalars, n, scratch, out);
}

void fixed_base_g2(cudaStream_t s, const u32* table, const u32* scalars, std::size_t n, u32* scratch, u32* out) {
  launch<Fp2>(s, table, scalars, n, scratch, out);
}

}  // namespace cuzk::gpu::kernels
