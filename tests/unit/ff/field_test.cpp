#include <gtest/gtest.h>

#include <random>

#include "ff/fp2.hpp"

namespace cuzk::ff {
namespace {

template <class F>
class FieldLaws : public ::testing::Test {};
using Fields = ::testing::Types<Fp, Fr>;
TYPED_TEST_SUITE(FieldLaws, Fields);

TYPED_TEST(FieldLaws, RingAxiomsOnRandomInputs) {
  using F = TypeParam;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200; ++i) {
    F a = F::random(rng), b = F::random(rng), c = F::random(rng);
    EXPECT_EQ(a + b, b + a);
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ((a + b) + c, a + (b + c));
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ(a - a, F::zero());
    EXPECT_EQ(a + (-a), F::zero());
    EXPECT_EQ(a.square(), a * a);
    EXPECT_EQ(a * F::one(), a);
    if (!a.is_zero()) {
      EXPECT_EQ(a * a.inverse(), F::one());
    }
  }
}

TYPED_TEST(FieldLaws, EdgeValues) {
  using F = TypeParam;
  F pm1 = F::zero() - F::one();
  EXPECT_EQ(pm1 + F::one(), F::zero());
  EXPECT_EQ(pm1 * pm1, F::one());
  EXPECT_EQ(F::zero().inverse(), F::zero());
  EXPECT_EQ(F::from_int(F::kModulus.limb[0] == 0 ? typename F::Int{} : sub_small(F::kModulus, 1)), pm1);
  EXPECT_EQ(pm1.to_int(), sub_small(F::kModulus, 1));
  EXPECT_EQ(F::from_u64(5).to_int(), from_u64<F::kLimbs>(5));
}

TYPED_TEST(FieldLaws, SqrtAndLegendre) {
  using F = TypeParam;
  std::mt19937_64 rng(2);
  int non_squares = 0;
  for (int i = 0; i < 50; ++i) {
    F a = F::random(rng);
    F s;
    ASSERT_TRUE(a.square().sqrt(s));
    EXPECT_EQ(s.square(), a.square());
    EXPECT_EQ(a.square().legendre(), a.is_zero() ? 0 : 1);
    if (a.legendre() == -1) {
      ++non_squares;
      EXPECT_FALSE(a.sqrt(s));
    }
  }
  EXPECT_GT(non_squares, 5);
}

TYPED_TEST(FieldLaws, BytesRoundTripAndRejectNonCanonical) {
  using F = TypeParam;
  std::mt19937_64 rng(3);
  std::array<std::uint8_t, F::kBytes> buf{};
  for (int i = 0; i < 20; ++i) {
    F a = F::random(rng), b;
    a.to_bytes_be(buf);
    ASSERT_TRUE(F::from_bytes_be(buf, b));
    EXPECT_EQ(a, b);
    a.to_bytes_le(buf);
    ASSERT_TRUE(F::from_bytes_le(buf, b));
    EXPECT_EQ(a, b);
  }
  // p itself is not canonical.
  F tmp;
  auto p = F::kModulus;
  for (std::size_t i = 0; i < F::kBytes; ++i) buf[F::kBytes - 1 - i] = std::uint8_t(p.limb[i / 8] >> (8 * (i % 8)));
  EXPECT_FALSE(F::from_bytes_be(buf, tmp));
}

TEST(Fr, RootsOfUnity) {
  // 7^((r-1)/2^32) has order exactly 2^32.
  Fr w = Fr::from_u64(kFrGenerator).pow(Fr::kTrace);
  Fr x = w;
  for (int i = 0; i < 31; ++i) x = x.square();
  EXPECT_EQ(x, Fr::zero() - Fr::one());
  EXPECT_EQ(x.square(), Fr::one());
}

TEST(Fp2, FieldLaws) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 100; ++i) {
    Fp2 a = Fp2::random(rng), b = Fp2::random(rng), c = Fp2::random(rng);
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ(a.square(), a * a);
    EXPECT_EQ(a * a.inverse(), Fp2::one());
    EXPECT_EQ((a * b).conjugate(), a.conjugate() * b.conjugate());
  }
  Fp2 u{Fp::zero(), Fp::one()};
  EXPECT_EQ(u * u, -Fp2::one());
}

TEST(BatchInverse, MatchesSingleInverses) {
  std::mt19937_64 rng(5);
  std::vector<Fr> xs(37), scratch(37);
  for (auto& x : xs) x = Fr::random(rng);
  xs[3] = Fr::zero();
  auto orig = xs;
  batch_inverse<Fr>(xs, scratch);
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(xs[i], orig[i].inverse());
}

}  // namespace
}  // namespace cuzk::ff
