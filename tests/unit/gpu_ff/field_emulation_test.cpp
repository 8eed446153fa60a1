// The device fields' multiplication, squaring and reduction (every named form
// in gpu/ff/field.cuh) run on the host with the PTX carry flag emulated,
// against the host MontField (src/ff) on edge values and random inputs. Needs
// nvcc, not a GPU: this is the CI check of the device arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ff/fp.hpp"
#include "ff/fp2.hpp"
#include "field_emulation.hpp"
#include "field_inputs.hpp"

namespace cuzk::gpu_ff_test {
namespace {

template <class F>
struct DeviceOf;
template <>
struct DeviceOf<ff::Fp> {
  static void op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) { fp_op(v, a, b, out); }
};
template <>
struct DeviceOf<ff::Fr> {
  static void op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) { fr_op(v, a, b, out); }
};

template <class F>
constexpr int kLimbs32 = int(F::kLimbs) * 2;

template <class F>
std::string hex(const typename F::Int& x) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (int i = int(F::kLimbs) - 1; i >= 0; --i) {
    s.width(16);
    s.fill('0');
    s << x.limb[std::size_t(i)];
  }
  return s.str();
}

// The device result of v on raw Montgomery integers a, b (host layout = device layout).
template <class F>
typename F::Int device(Variant v, const typename F::Int& a, const typename F::Int& b) {
  std::uint32_t a32[kLimbs32<F>], b32[kLimbs32<F>], r32[kLimbs32<F>];
  std::memcpy(a32, a.limb.data(), sizeof a32);
  std::memcpy(b32, b.limb.data(), sizeof b32);
  DeviceOf<F>::op(v, a32, b32, r32);
  typename F::Int r;
  std::memcpy(r.limb.data(), r32, sizeof r32);
  return r;
}

// The host's answer for v, in raw Montgomery limbs.
template <class F>
typename F::Int host(Variant v, const typename F::Int& a, const typename F::Int& b) {
  const F x = F::from_raw_mont(a), y = F::from_raw_mont(b);
  switch (v) {
    case Variant::kMulCios:
    case Variant::kMulEvenOdd:
    case Variant::kMulDefault:
      return (x * y).mont();
    case Variant::kSqrCios:
    case Variant::kSqrEvenOdd:
    case Variant::kSqrDefault:
      return x.square().mont();
    case Variant::kRedcCios:
    case Variant::kRedcEvenOdd:
      return x.to_int();
  }
  return {};
}

template <class F>
void expect_variant(Variant v, const typename F::Int& a, const typename F::Int& b) {
  ASSERT_EQ(hex<F>(device<F>(v, a, b)), hex<F>(host<F>(v, a, b)))
      << name(v) << " a=" << hex<F>(a) << " b=" << hex<F>(b);
}

template <class F>
void check_all_variants(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto edges = edge_values<F>();
  for (Variant v : kAllVariants) {
    SCOPED_TRACE(name(v));
    // Every pair of edge values (a = b included), then random pairs and squares.
    for (const auto& a : edges) {
      for (const auto& b : edges) ASSERT_NO_FATAL_FAILURE(expect_variant<F>(v, a, b));
    }
    for (int i = 0; i < 10000; ++i) {
      const auto a = i % 2 == 0 ? F::random(rng).mont() : carry_heavy<F>(rng);
      const auto b = i % 3 == 0 ? a : i % 3 == 1 ? F::random(rng).mont() : carry_heavy<F>(rng);
      ASSERT_NO_FATAL_FAILURE(expect_variant<F>(v, a, b));
    }
  }
}

// ---- Fp2 products ------------------------------------------------------------

using Fp2Pair = std::pair<ff::Fp::Int, ff::Fp::Int>;  // raw Montgomery (c0, c1)

std::string hex2(const Fp2Pair& x) { return "(" + hex<ff::Fp>(x.first) + ", " + hex<ff::Fp>(x.second) + ")"; }

Fp2Pair device2(Fp2Variant v, const Fp2Pair& a, const Fp2Pair& b) {
  constexpr int kN = kLimbs32<ff::Fp>;
  std::uint32_t a32[2 * kN], b32[2 * kN], r32[2 * kN];
  std::memcpy(a32, a.first.limb.data(), 4 * kN);
  std::memcpy(a32 + kN, a.second.limb.data(), 4 * kN);
  std::memcpy(b32, b.first.limb.data(), 4 * kN);
  std::memcpy(b32 + kN, b.second.limb.data(), 4 * kN);
  fp2_op(v, a32, b32, r32);
  Fp2Pair r;
  std::memcpy(r.first.limb.data(), r32, 4 * kN);
  std::memcpy(r.second.limb.data(), r32 + kN, 4 * kN);
  return r;
}

Fp2Pair host2(const Fp2Pair& a, const Fp2Pair& b) {
  using ff::Fp;
  const ff::Fp2 x{Fp::from_raw_mont(a.first), Fp::from_raw_mont(a.second)};
  const ff::Fp2 y{Fp::from_raw_mont(b.first), Fp::from_raw_mont(b.second)};
  const ff::Fp2 r = x * y;
  return {r.c0.mont(), r.c1.mont()};
}

void expect_fp2(Fp2Variant v, const Fp2Pair& a, const Fp2Pair& b) {
  const Fp2Pair got = device2(v, a, b), want = host2(a, b);
  ASSERT_EQ(hex2(got), hex2(want)) << name(v) << " a=" << hex2(a) << " b=" << hex2(b);
}

// Every Fp2 element built from two Fp edge values times the elements built
// from the ones that set the lazy product's bounds: 0, 1, p-1, p-2 (t0 - t1
// at its most negative, (a0 + a1)(b0 + b1) at its largest), R mod p, the top
// bit of p and the all-ones value under p's top limb (long carry runs); then
// 10k random pairs (uniform or carry-heavy coefficients, some with a0 = a1,
// a = b, or the swapped b = (a1, a0)).
void check_fp2_variant(Fp2Variant v, std::uint64_t seed) {
  using Int = ff::Fp::Int;
  const auto edges = edge_values<ff::Fp>();
  const Int p = ff::Fp::kModulus, one = ff::from_u64<ff::Fp::kLimbs>(1);
  const Int two = ff::from_u64<ff::Fp::kLimbs>(2);
  const std::vector<Int> bound_setters = {
      Int{},       one, sub<ff::Fp>(p, one), sub<ff::Fp>(p, two), ff::Fp::kR, pow2<ff::Fp>(int(p.bit_length()) - 1),
      edges.back()};
  for (const Int& a0 : edges) {
    for (const Int& a1 : edges) {
      for (const Int& b0 : bound_setters) {
        for (const Int& b1 : bound_setters) ASSERT_NO_FATAL_FAILURE(expect_fp2(v, {a0, a1}, {b0, b1}));
      }
    }
  }
  std::mt19937_64 rng(seed);
  auto coefficient = [&](int i) { return i % 2 == 0 ? ff::Fp::random(rng).mont() : carry_heavy<ff::Fp>(rng); };
  for (int i = 0; i < 10000; ++i) {
    const Int a0 = coefficient(i), a1 = i % 5 == 0 ? a0 : coefficient(i + 1);
    const Fp2Pair a{a0, a1};
    const Fp2Pair b = i % 7 == 0 ? a : i % 7 == 1 ? Fp2Pair{a1, a0} : Fp2Pair{coefficient(i / 2), coefficient(i / 3)};
    ASSERT_NO_FATAL_FAILURE(expect_fp2(v, a, b));
  }
}

TEST(GpuFieldEmulation, Fp2EveryProductFormMatchesHost) {
  for (Fp2Variant v : kAllFp2Variants) {
    SCOPED_TRACE(name(v));
    check_fp2_variant(v, 3);
  }
}

// G2's tree rounds invert norms (gpu/msm/msm_tree.cu): N(a) = a0^2 + a1^2
// against the host's norm, zero only for a = 0, and conj(a) / N(a) against
// the host's inverse, on the edge-value elements and random ones.
TEST(GpuFieldEmulation, Fp2NormAndInverseFromNormMatchHost) {
  using ff::Fp;
  using Int = Fp::Int;
  constexpr int kN = kLimbs32<Fp>;
  auto check = [&](const Int& a0, const Int& a1) {
    const ff::Fp2 x{Fp::from_raw_mont(a0), Fp::from_raw_mont(a1)};
    std::uint32_t a32[2 * kN], n32[kN], inv32[2 * kN], r32[2 * kN];
    std::memcpy(a32, a0.limb.data(), 4 * kN);
    std::memcpy(a32 + kN, a1.limb.data(), 4 * kN);
    fp2_norm(a32, n32);
    Int n;
    std::memcpy(n.limb.data(), n32, 4 * kN);
    ASSERT_EQ(hex<Fp>(n), hex<Fp>(x.norm().mont())) << "norm of " << hex2({a0, a1});
    ASSERT_EQ(Fp::from_raw_mont(n).is_zero(), x.is_zero()) << hex2({a0, a1});
    if (x.is_zero()) return;
    const Int n_inv = x.norm().inverse().mont();
    std::memcpy(inv32, n_inv.limb.data(), 4 * kN);
    fp2_inverse_from_norm(a32, inv32, r32);
    Fp2Pair r;
    std::memcpy(r.first.limb.data(), r32, 4 * kN);
    std::memcpy(r.second.limb.data(), r32 + kN, 4 * kN);
    const ff::Fp2 want = x.inverse();
    ASSERT_EQ(hex2(r), hex2({want.c0.mont(), want.c1.mont()})) << "inverse of " << hex2({a0, a1});
  };
  const auto edges = edge_values<Fp>();
  for (const Int& a0 : edges) {
    for (const Int& a1 : edges) ASSERT_NO_FATAL_FAILURE(check(a0, a1));
  }
  std::mt19937_64 rng(4);
  for (int i = 0; i < 2000; ++i) {
    const Int a0 = i % 2 == 0 ? Fp::random(rng).mont() : carry_heavy<Fp>(rng);
    ASSERT_NO_FATAL_FAILURE(check(a0, i % 5 == 0 ? a0 : Fp::random(rng).mont()));
  }
}

TEST(GpuFieldEmulation, FpEveryFormMatchesHost) { check_all_variants<ff::Fp>(1); }

TEST(GpuFieldEmulation, FrEveryFormMatchesHost) { check_all_variants<ff::Fr>(2); }

}  // namespace
}  // namespace cuzk::gpu_ff_test
