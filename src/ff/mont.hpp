// Prime fields in Montgomery form with N 64-bit limbs.
//
// Representation: an element x is stored as x*R mod p with R = 2^(64N), fully
// reduced (always < p), so equality is limb equality and serialization is a
// single from-Montgomery multiplication.
//
// Multiplication is CIOS without the extra carry word ("no-carry" CIOS): valid
// because both BLS12-381 moduli leave the top bit of their top limb clear
// (p: 0x1a01.. of 6 limbs, r: 0x73ed.. of 4 limbs), so the running sum fits in
// N limbs plus the two carry words and a + b never overflows N limbs. The final subtraction is branch-free, so mul, add
// and sub are constant time; pow over a public exponent is too, which covers the Fermat inverse used on secrets (toxic
// waste, r and s).
#pragma once

#include <cstring>
#include <span>
#include <type_traits>

#include "ff/bigint.hpp"
#include "ff/mont_x86.hpp"

namespace cuzk::ff {

namespace detail {

// -p^{-1} mod 2^64 by Newton iteration (each step doubles the correct bits).
constexpr u64 mont_inv64(u64 p0) {
  u64 inv = 1;
  for (int i = 0; i < 7; ++i) inv *= 2 - p0 * inv;
  return ~inv + 1;
}

// 2^k mod p by repeated modular doubling (compile time only).
template <std::size_t N>
constexpr BigInt<N> pow2_mod(const BigInt<N>& p, std::size_t k) {
  BigInt<N> r = from_u64<N>(1);
  for (std::size_t i = 0; i < k; ++i) {
    BigInt<N> d{};
    u64 carry = add_with_carry(d, r, r);
    BigInt<N> s{};
    u64 borrow = sub_with_borrow(s, d, p);
    r = (carry || !borrow) ? s : d;
  }
  return r;
}

}  // namespace detail

// P provides: kLimbs, kModulus (BigInt<kLimbs>), kTwoAdicNonResidue (a small
// quadratic non-residue used by Tonelli-Shanks).
template <class P>
class MontField {
 public:
  static constexpr std::size_t kLimbs = P::kLimbs;
  using Int = BigInt<kLimbs>;
  static constexpr Int kModulus = P::kModulus;
  static constexpr u64 kInv = detail::mont_inv64(P::kModulus.limb[0]);
  static constexpr Int kR = detail::pow2_mod(P::kModulus, 64 * kLimbs);
  static constexpr Int kR2 = detail::pow2_mod(P::kModulus, 128 * kLimbs);
  static constexpr std::size_t kBits = P::kModulus.bit_length();
  static constexpr std::size_t kBytes = (kBits + 7) / 8;
  // p - 1 = 2^kTwoAdicity * kTrace with kTrace odd.
  static constexpr std::size_t kTwoAdicity = trailing_zeros(sub_small(P::kModulus, 1));
  static constexpr Int kTrace = shr(sub_small(P::kModulus, 1), kTwoAdicity);

  static_assert(P::kModulus.limb[kLimbs - 1] < 0x7ffffffffffffffeull,
                "no-carry CIOS needs a spare bit in the top limb");

  constexpr MontField() = default;

  static constexpr MontField zero() { return MontField(); }
  static constexpr MontField one() { return from_raw_mont(kR); }
  // Wraps limbs that already hold a Montgomery value (x*R mod p, < p).
  static constexpr MontField from_raw_mont(const Int& mont) {
    MontField f;
    f.v_ = mont;
    return f;
  }
  // Standard integer x < p to field element. Callers must have range-checked x.
  static constexpr MontField from_int(const Int& x) { return from_raw_mont(x) * from_raw_mont(kR2); }
  static constexpr MontField from_u64(u64 x) { return from_int(ff::from_u64<kLimbs>(x)); }
  // Reduces an arbitrary N-limb integer modulo p (by repeated subtraction is
  // not possible in general; here x < 2^(64N) < 2^k p with k small for our moduli).
  static constexpr MontField from_int_reduce(Int x) {
    while (!less_than(x, kModulus)) sub_with_borrow(x, x, kModulus);
    return from_int(x);
  }
  static constexpr MontField from_hex(std::string_view s) { return from_int(ff::from_hex<kLimbs>(s)); }

  // Montgomery limbs (x*R mod p).
  constexpr const Int& mont() const { return v_; }
  // Standard integer value.
  constexpr Int to_int() const {
    MontField t = *this * from_raw_mont(ff::from_u64<kLimbs>(1));
    return t.v_;
  }

  constexpr bool is_zero() const { return v_.is_zero(); }
  constexpr bool is_one() const { return v_ == kR; }
  constexpr bool operator==(const MontField&) const = default;

  // "Lexicographically largest" as zcash uses for the y sign bit: x > (p-1)/2.
  constexpr bool is_lexicographically_largest() const {
    constexpr Int kHalf = shr1(sub_small(P::kModulus, 1));
    return less_than(kHalf, to_int());
  }

  friend constexpr MontField operator+(const MontField& a, const MontField& b) {
    MontField r;
#if CUZK_FF_X86_MONT
    if constexpr (x86::kHasMontMul<kLimbs>) {
      if (!std::is_constant_evaluated()) {
        x86::add_mod<MontField>(r.v_, a.v_, b.v_);
        return r;
      }
    }
#endif
    add_with_carry(r.v_, a.v_, b.v_);  // < 2p < 2^(64N): no carry out
    r.reduce_once();
    return r;
  }
  friend constexpr MontField operator-(const MontField& a, const MontField& b) {
    MontField r;
#if CUZK_FF_X86_MONT
    if constexpr (x86::kHasMontMul<kLimbs>) {
      if (!std::is_constant_evaluated()) {
        x86::sub_mod<MontField>(r.v_, a.v_, b.v_);
        return r;
      }
    }
#endif
    u64 borrow = sub_with_borrow(r.v_, a.v_, b.v_);
    // Add p back when we borrowed, without branching.
    u64 mask = u64{0} - borrow;
    u64 carry = 0;
    for (std::size_t i = 0; i < kLimbs; ++i) {
      u128 t = u128(r.v_.limb[i]) + (kModulus.limb[i] & mask) + carry;
      r.v_.limb[i] = u64(t);
      carry = u64(t >> 64);
    }
    return r;
  }
  constexpr MontField operator-() const { return zero() - *this; }
  friend constexpr MontField operator*(const MontField& a, const MontField& b) {
    MontField r;
    mont_mul(r.v_, a.v_, b.v_);
    return r;
  }
  constexpr MontField& operator+=(const MontField& b) { return *this = *this + b; }
  constexpr MontField& operator-=(const MontField& b) { return *this = *this - b; }
  constexpr MontField& operator*=(const MontField& b) { return *this = *this * b; }

  constexpr MontField dbl() const { return *this + *this; }
  constexpr MontField square() const { return *this * *this; }

  // x^e for a public exponent; square-and-multiply, time depends only on e.
  template <std::size_t M>
  constexpr MontField pow(const BigInt<M>& e) const {
    MontField acc = one();
    for (std::size_t i = e.bit_length(); i-- > 0;) {
      acc = acc.square();
      if (e.bit(i)) acc *= *this;
    }
    return acc;
  }
  constexpr MontField pow(u64 e) const { return pow(ff::from_u64<1>(e)); }

  // Fermat inverse x^(p-2): constant time, safe for secrets. Zero maps to zero.
  constexpr MontField inverse() const { return pow(sub_small(kModulus, 2)); }

  // Legendre symbol: 0 for zero, 1 for a non-zero square, -1 otherwise.
  constexpr int legendre() const {
    MontField t = pow(shr1(sub_small(kModulus, 1)));
    if (t.is_zero()) return 0;
    return t.is_one() ? 1 : -1;
  }

  // Square root; returns false when none exists. Tonelli-Shanks in general,
  // the single exponentiation x^((p+1)/4) when p = 3 mod 4 (BLS12-381's Fp).
  constexpr bool sqrt(MontField& out) const {
    if (is_zero()) {
      out = zero();
      return true;
    }
    if constexpr (kTwoAdicity == 1) {
      MontField r = pow(shr(add_small(kModulus, 1), 2));
      if (r.square() != *this) return false;
      out = r;
      return true;
    } else {
      if (legendre() != 1) return false;
      // x = a^((t+1)/2), b = a^t, z = g^t with g a non-residue.
      MontField z = from_u64(P::kTwoAdicNonResidue).pow(kTrace);
      MontField x = pow(shr1(add_small(kTrace, 1)));
      MontField b = pow(kTrace);
      std::size_t m = kTwoAdicity;
      while (!b.is_one()) {
        std::size_t i = 0;
        MontField b2 = b;
        while (!b2.is_one()) {
          b2 = b2.square();
          ++i;
        }
        MontField c = z;
        for (std::size_t j = 0; j + i + 1 < m; ++j) c = c.square();
        z = c.square();
        x *= c;
        b *= z;
        m = i;
      }
      out = x;
      return true;
    }
  }

  // Big-endian bytes of the standard value (kBytes long).
  void to_bytes_be(std::span<std::uint8_t> out) const {
    Int x = to_int();
    for (std::size_t i = 0; i < kBytes; ++i) {
      out[kBytes - 1 - i] = std::uint8_t(x.limb[i / 8] >> (8 * (i % 8)));
    }
  }
  void to_bytes_le(std::span<std::uint8_t> out) const {
    Int x = to_int();
    for (std::size_t i = 0; i < kBytes; ++i) out[i] = std::uint8_t(x.limb[i / 8] >> (8 * (i % 8)));
  }
  // Parses kBytes big-endian bytes; false when the value is >= p (non-canonical).
  static bool from_bytes_be(std::span<const std::uint8_t> in, MontField& out) {
    Int x{};
    for (std::size_t i = 0; i < kBytes; ++i) {
      x.limb[i / 8] |= u64(in[kBytes - 1 - i]) << (8 * (i % 8));
    }
    if (!less_than(x, kModulus)) return false;
    out = from_int(x);
    return true;
  }
  static bool from_bytes_le(std::span<const std::uint8_t> in, MontField& out) {
    Int x{};
    for (std::size_t i = 0; i < kBytes; ++i) x.limb[i / 8] |= u64(in[i]) << (8 * (i % 8));
    if (!less_than(x, kModulus)) return false;
    out = from_int(x);
    return true;
  }

  // Uniform element from a 64-bit generator (rejection sampling on kBits bits).
  template <class Rng>
  static MontField random(Rng& rng) {
    for (;;) {
      Int x{};
      for (auto& l : x.limb) l = u64(rng());
      constexpr std::size_t top = kBits % 64;
      if constexpr (top != 0) x.limb[kLimbs - 1] &= (u64{1} << top) - 1;
      if (less_than(x, kModulus)) return from_int(x);
    }
  }

 private:
  constexpr void reduce_once() {
    Int s{};
    u64 borrow = sub_with_borrow(s, v_, kModulus);
    u64 keep = u64{0} - borrow;  // all ones when v < p
    for (std::size_t i = 0; i < kLimbs; ++i) v_.limb[i] = (v_.limb[i] & keep) | (s.limb[i] & ~keep);
  }

  static constexpr void mont_mul(Int& out, const Int& a, const Int& b) {
#if CUZK_FF_X86_MONT
    if constexpr (x86::kHasMontMul<kLimbs>) {
      if (!std::is_constant_evaluated()) return x86::mont_mul<MontField>(out, a, b);
    }
#endif
    mont_mul_portable(out, a, b);
  }

  Int v_{};

 public:
  // The portable CIOS below; public so tests can check the asm path against it.
  static constexpr void mont_mul_portable(Int& out, const Int& a, const Int& b);
};

// Portable no-carry CIOS. An x86-64 mulx/adx specialisation may replace it for
// a given limb count (see mont_x86.hpp); both are tested against each other.
template <class P>
constexpr void MontField<P>::mont_mul_portable(Int& out, const Int& a, const Int& b) {
  constexpr std::size_t N = kLimbs;
  u64 t[N] = {};
  for (std::size_t i = 0; i < N; ++i) {
    u128 s = u128(a.limb[0]) * b.limb[i] + t[0];
    u64 A = u64(s >> 64);
    u64 t0 = u64(s);
    u64 m = t0 * kInv;
    u128 c = u128(m) * kModulus.limb[0] + t0;
    u64 C = u64(c >> 64);
    for (std::size_t j = 1; j < N; ++j) {
      s = u128(a.limb[j]) * b.limb[i] + t[j] + A;
      A = u64(s >> 64);
      c = u128(m) * kModulus.limb[j] + u64(s) + C;
      C = u64(c >> 64);
      t[j - 1] = u64(c);
    }
    t[N - 1] = C + A;
  }
  for (std::size_t i = 0; i < N; ++i) out.limb[i] = t[i];
  MontField tmp;
  tmp.v_ = out;
  tmp.reduce_once();
  out = tmp.v_;
}

// Replaces every element of xs by its inverse with one field inversion
// (Montgomery's trick). Zeros stay zero. `scratch` must hold xs.size() elements.
template <class F>
void batch_inverse(std::span<F> xs, std::span<F> scratch) {
  F acc = F::one();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    scratch[i] = acc;
    if (!xs[i].is_zero()) acc *= xs[i];
  }
  F inv = acc.inverse();
  for (std::size_t i = xs.size(); i-- > 0;) {
    if (xs[i].is_zero()) continue;
    F x = xs[i];
    xs[i] = inv * scratch[i];
    inv *= x;
  }
}

}  // namespace cuzk::ff
