// Inputs that stress the carry chains of the device field code, as raw
// Montgomery integers of the host MontField (all < p). Shared by the host
// emulation test (this directory) and the GPU test (tests/gpu/field_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "ff/fp.hpp"

namespace cuzk::gpu_ff_test {

template <class F>
typename F::Int pow2(int bits) {
  typename F::Int x{};
  x.limb[std::size_t(bits / 64)] = ff::u64{1} << (bits % 64);
  return x;
}
template <class F>
typename F::Int add(typename F::Int a, const typename F::Int& b) {
  ff::add_with_carry(a, a, b);
  return a;
}
template <class F>
typename F::Int sub(typename F::Int a, const typename F::Int& b) {
  ff::sub_with_borrow(a, a, b);
  return a;
}

// 0, 1, 2, 3, p-1, p-2, R mod p and its negation, (p -+ 1)/2, the top bit of p
// and one below it, values at and around every 32-bit limb boundary 2^(32k)
// (from below, above, and p - 2^(32k) (+1)), and all-ones limbs under p's top
// limb lowered by one.
template <class F>
std::vector<typename F::Int> edge_values() {
  using Int = typename F::Int;
  const Int p = F::kModulus, one = ff::from_u64<F::kLimbs>(1), two = ff::from_u64<F::kLimbs>(2);
  std::vector<Int> v = {Int{},
                        one,
                        two,
                        ff::from_u64<F::kLimbs>(3),
                        sub<F>(p, one),
                        sub<F>(p, two),
                        F::kR,
                        sub<F>(p, F::kR),
                        ff::shr1(sub<F>(p, one)),
                        ff::shr1(add<F>(p, one))};
  const int bits = int(p.bit_length());
  v.push_back(pow2<F>(bits - 1));
  v.push_back(sub<F>(pow2<F>(bits - 1), one));
  for (int k = 1; 32 * k < bits; ++k) {
    const Int b = pow2<F>(32 * k);
    v.push_back(sub<F>(b, one));
    v.push_back(b);
    v.push_back(add<F>(b, one));
    v.push_back(sub<F>(p, b));
    v.push_back(add<F>(sub<F>(p, b), one));
  }
  Int near_top{};
  for (auto& l : near_top.limb) l = ~ff::u64{0};
  near_top.limb[F::kLimbs - 1] = p.limb[F::kLimbs - 1] - (ff::u64{1} << 32);
  v.push_back(near_top);
  for (const Int& x : v) EXPECT_TRUE(ff::less_than(x, p));
  return v;
}

// A random integer below p whose 32-bit limbs are mostly 0, 1, 2^31 - 1, 2^31,
// 2^32 - 2 or 2^32 - 1 (long carry runs), the rest uniform.
template <class F, class Rng>
typename F::Int carry_heavy(Rng& rng) {
  using Int = typename F::Int;
  static constexpr std::uint32_t kPicks[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
  std::uint32_t w[F::kLimbs * 2];
  for (auto& x : w) {
    const auto pick = rng() % 8;
    x = pick < 6 ? kPicks[pick] : std::uint32_t(rng());
  }
  Int x;
  std::memcpy(x.limb.data(), w, sizeof w);
  const int top_bits = int(F::kModulus.bit_length()) % 64;
  x.limb[F::kLimbs - 1] &= (ff::u64{1} << top_bits) - 1;
  if (!ff::less_than(x, F::kModulus)) x = sub<F>(x, F::kModulus);  // x < 2^bits < 2p
  return x;
}

}  // namespace cuzk::gpu_ff_test
