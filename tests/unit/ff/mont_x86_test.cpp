// The x86-64 mulx/adx Montgomery multiplication and the add/sub kernels
// (mont_x86.hpp) must agree with the portable code / a BigInt reference bit for
// bit, on random and on edge operands.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ff/fp.hpp"

namespace cuzk::ff {
namespace {

template <class F>
class MontX86 : public ::testing::Test {};
using Fields = ::testing::Types<Fp, Fr>;
TYPED_TEST_SUITE(MontX86, Fields);

// Raw Montgomery words that stress the carry chains: 0, 1, 2, p-1, p-2,
// (p-1)/2, (p+1)/2, R mod p (the Montgomery one), words of all-ones limbs
// below p, and p minus a small power of two in each limb position.
template <class F>
std::vector<typename F::Int> edge_values() {
  using Int = typename F::Int;
  constexpr std::size_t N = F::kLimbs;
  std::vector<Int> v;
  v.push_back(Int{});
  v.push_back(from_u64<N>(1));
  v.push_back(from_u64<N>(2));
  v.push_back(sub_small(F::kModulus, 1));
  v.push_back(sub_small(F::kModulus, 2));
  v.push_back(shr1(sub_small(F::kModulus, 1)));
  v.push_back(shr1(add_small(F::kModulus, 1)));
  v.push_back(F::kR);
  v.push_back(F::kR2);
  for (std::size_t limb = 0; limb < N; ++limb) {
    Int d{};
    d.limb[limb] = 1;
    Int x{};
    sub_with_borrow(x, F::kModulus, d);  // p - 2^(64*limb)
    v.push_back(x);
    Int ones{};
    for (std::size_t j = 0; j < limb + 1 && j < N - 1; ++j) ones.limb[j] = ~u64{0};
    v.push_back(ones);  // all-ones low limbs, < p
  }
  for (const Int& x : v) EXPECT_TRUE(less_than(x, F::kModulus));
  return v;
}

TYPED_TEST(MontX86, MatchesPortableOnEdgeValues) {
  using F = TypeParam;
  if (!CUZK_FF_X86_MONT) GTEST_SKIP() << "built without the x86-64 mulx/adx path";
  auto edges = edge_values<F>();
  for (const auto& a : edges) {
    for (const auto& b : edges) {
      typename F::Int want{};
      F::mont_mul_portable(want, a, b);
      F got = F::from_raw_mont(a) * F::from_raw_mont(b);
      ASSERT_EQ(got.mont(), want);
    }
  }
}

TYPED_TEST(MontX86, MatchesPortableOnRandomInputs) {
  using F = TypeParam;
  if (!CUZK_FF_X86_MONT) GTEST_SKIP() << "built without the x86-64 mulx/adx path";
  std::mt19937_64 rng(42);
  auto edges = edge_values<F>();
  for (int i = 0; i < 20000; ++i) {
    F a = F::random(rng), b = F::random(rng);
    typename F::Int want{};
    F::mont_mul_portable(want, a.mont(), b.mont());
    ASSERT_EQ((a * b).mont(), want);
    // Random against edge, both argument orders.
    const auto& e = edges[std::size_t(i) % edges.size()];
    F::mont_mul_portable(want, a.mont(), e);
    ASSERT_EQ((a * F::from_raw_mont(e)).mont(), want);
    ASSERT_EQ((F::from_raw_mont(e) * a).mont(), want);
  }
}

// Reference a +- b mod p on raw words with BigInt arithmetic and a branchy
// conditional correction: independent of both field implementations.
template <class F>
typename F::Int ref_add(const typename F::Int& a, const typename F::Int& b) {
  typename F::Int t{};
  add_with_carry(t, a, b);  // < 2p < 2^(64N)
  if (!less_than(t, F::kModulus)) sub_with_borrow(t, t, F::kModulus);
  return t;
}
template <class F>
typename F::Int ref_sub(const typename F::Int& a, const typename F::Int& b) {
  typename F::Int t{};
  if (sub_with_borrow(t, a, b) != 0) add_with_carry(t, t, F::kModulus);
  return t;
}

TYPED_TEST(MontX86, AddSubMatchReference) {
  using F = TypeParam;
  std::mt19937_64 rng(9);
  auto edges = edge_values<F>();
  for (const auto& a : edges) {
    for (const auto& b : edges) {
      ASSERT_EQ((F::from_raw_mont(a) + F::from_raw_mont(b)).mont(), ref_add<F>(a, b));
      ASSERT_EQ((F::from_raw_mont(a) - F::from_raw_mont(b)).mont(), ref_sub<F>(a, b));
    }
  }
  for (int i = 0; i < 20000; ++i) {
    F a = F::random(rng), b = F::random(rng);
    const auto& e = edges[std::size_t(i) % edges.size()];
    ASSERT_EQ((a + b).mont(), ref_add<F>(a.mont(), b.mont()));
    ASSERT_EQ((a - b).mont(), ref_sub<F>(a.mont(), b.mont()));
    ASSERT_EQ((a + F::from_raw_mont(e)).mont(), ref_add<F>(a.mont(), e));
    ASSERT_EQ((F::from_raw_mont(e) - a).mont(), ref_sub<F>(e, a.mont()));
  }
  // Aliased operands.
  F a = F::random(rng);
  F x = a;
  x += x;
  EXPECT_EQ(x.mont(), ref_add<F>(a.mont(), a.mont()));
  x -= x;
  EXPECT_TRUE(x.is_zero());
}

TYPED_TEST(MontX86, OutputMayAliasInputs) {
  using F = TypeParam;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100; ++i) {
    F a = F::random(rng), b = F::random(rng);
    F prod = a * b;
    F x = a;
    x *= b;
    EXPECT_EQ(x, prod);
    F y = a;
    y *= y;
    EXPECT_EQ(y, a * a);
  }
}

// The constexpr path stays the portable code; it must agree with run time.
TEST(MontX86, ConstexprAgreesWithRuntime) {
  constexpr Fp kA = Fp::from_u64(123456789);
  constexpr Fp kB = Fp::from_hex("0x1234567890abcdef1234567890abcdef1234567890abcdef");
  constexpr Fp kProd = kA * kB;
  volatile u64 a_raw = 123456789;
  Fp a = Fp::from_u64(a_raw);
  EXPECT_EQ(a * kB, kProd);
  constexpr Fr kC = Fr::from_u64(987654321);
  constexpr Fr kSq = kC * kC;
  volatile u64 c_raw = 987654321;
  EXPECT_EQ(Fr::from_u64(c_raw).square(), kSq);
}

}  // namespace
}  // namespace cuzk::ff
