// Short-Weierstrass points (a = 0) on the device, in affine and XYZZ form.
//
// XYZZ (Chudnovsky-like, "extended Jacobian"): (X, Y, ZZ, ZZZ) stands for
// x = X/ZZ, y = Y/ZZZ with ZZ^3 = ZZZ^2; ZZ = 0 is the identity. A mixed add
// costs 8M + 2S and needs no doubling-formula guard except P = Q, which the
// add detects (P = R = 0) and routes to the doubling. Formulas: EFD
// "madd-2008-s", "add-2008-s", "dbl-2008-s-1", "mdbl-2008-s-1".
//
// The three group operations are __noinline__: each is 2-4k instructions for
// G1 (three times that for G2), and inlining them into every kernel made cicc
// take many minutes per build; a call costs little next to the body.
//
// Affine points keep the host layout (x then y, Montgomery limbs); the
// identity is x = y = 0, which is not on y^2 = x^3 + b for b != 0.
#pragma once

#include "gpu/ff/field.cuh"

namespace cuzk::gpu::dev {

template <class F>
struct Affine {
  F x, y;
  __device__ __forceinline__ bool is_identity() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct Xyzz {
  F x, y, zz, zzz;

  __device__ __forceinline__ static Xyzz identity() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
  __device__ __forceinline__ bool is_identity() const { return zz.is_zero(); }
  __device__ __forceinline__ Xyzz neg() const { return {x, -y, zz, zzz}; }

  // 2 * (x, y) for an affine point: U = 2y, V = U^2, W = U V, S = x V,
  // M = 3 x^2, X3 = M^2 - 2S, Y3 = M (S - X3) - W y, ZZ3 = V, ZZZ3 = W.
  __device__ __forceinline__ static Xyzz dbl_affine(const F& ax, const F& ay) {
    const F u = ay.dbl();
    const F v = u.sqr();
    const F w = u * v;
    const F s = ax * v;
    const F x2 = ax.sqr();
    const F m = x2.dbl() + x2;
    Xyzz r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * ay;
    r.zz = v;
    r.zzz = w;
    return r;
  }

  // 2 * this: U = 2Y, V = U^2, W = U V, S = X V, M = 3 X^2, X3 = M^2 - 2S,
  // Y3 = M (S - X3) - W Y, ZZ3 = V ZZ, ZZZ3 = W ZZZ. (6M + 3S)
  __device__ __noinline__ Xyzz dbl() const {
    if (is_identity()) return *this;
    const F u = y.dbl();
    const F v = u.sqr();
    const F w = u * v;
    const F s = x * v;
    const F x2 = x.sqr();
    const F m = x2.dbl() + x2;
    Xyzz r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * y;
    r.zz = v * zz;
    r.zzz = w * zzz;
    return r;
  }

  // this + (ax, ay). U2 = ax ZZ, S2 = ay ZZZ, P = U2 - X, R = S2 - Y,
  // PP = P^2, PPP = P PP, Q = X PP, X3 = R^2 - PPP - 2Q,
  // Y3 = R (Q - X3) - Y PPP, ZZ3 = ZZ PP, ZZZ3 = ZZZ PPP. (8M + 2S)
  __device__ __forceinline__ void add_affine_inline(const F& ax, const F& ay) {
    if (ax.is_zero() && ay.is_zero()) return;  // adding the identity
    if (is_identity()) {
      x = ax;
      y = ay;
      zz = F::one();
      zzz = F::one();
      return;
    }
    const F u2 = ax * zz;
    const F s2 = ay * zzz;
    const F p = u2 - x;
    const F r = s2 - y;
    if (p.is_zero()) {
      if (r.is_zero()) {
        *this = dbl_affine(ax, ay);
      } else {
        *this = identity();  // Q = -P
      }
      return;
    }
    const F pp = p.sqr();
    const F ppp = p * pp;
    const F q = x * pp;
    const F x3 = r.sqr() - ppp - q.dbl();
    y = r * (q - x3) - y * ppp;
    x = x3;
    zz = zz * pp;
    zzz = zzz * ppp;
  }

  // Out-of-line copy of add_affine_inline (see the note at the top).
  __device__ __noinline__ void add_affine(const F& ax, const F& ay) { add_affine_inline(ax, ay); }

  // this + o. U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2, S2 = Y2 ZZZ1, P = U2 - U1,
  // R = S2 - S1, PP = P^2, PPP = P PP, Q = U1 PP, X3 = R^2 - PPP - 2Q,
  // Y3 = R (Q - X3) - S1 PPP, ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP. (12M + 2S)
  __device__ __noinline__ void add(const Xyzz& o) {
    if (o.is_identity()) return;
    if (is_identity()) {
      *this = o;
      return;
    }
    const F u1 = x * o.zz;
    const F u2 = o.x * zz;
    const F s1 = y * o.zzz;
    const F s2 = o.y * zzz;
    const F p = u2 - u1;
    const F r = s2 - s1;
    if (p.is_zero()) {
      if (r.is_zero()) {
        *this = dbl();
      } else {
        *this = identity();
      }
      return;
    }
    const F pp = p.sqr();
    const F ppp = p * pp;
    const F q = u1 * pp;
    const F x3 = r.sqr() - ppp - q.dbl();
    y = r * (q - x3) - s1 * ppp;
    x = x3;
    zz = zz * o.zz * pp;
    zzz = zzz * o.zzz * ppp;
  }
};

// Folds one XYZZ point per thread of a block of kThreads (a power of two)
// into part[0]: each thread stores its own point in part[threadIdx.x], then
// every thread of the block calls this (it holds barriers: before the tree,
// and after each level, so part[0] is ready for all threads on return).
template <unsigned kThreads, class F>
__device__ __forceinline__ void block_fold(Xyzz<F>* part) {
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      Xyzz<F> a = part[threadIdx.x];
      a.add(part[threadIdx.x + stride]);
      part[threadIdx.x] = a;
    }
    __syncthreads();
  }
}

}  // namespace cuzk::gpu::dev
