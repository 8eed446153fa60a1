// Fp2::sqrt (lives in ff/fp2.hpp; tested here because G2 decompression owns it).
#include <gtest/gtest.h>

#include <random>

#include "ff/fp2.hpp"

namespace cuzk::ff {
namespace {

TEST(Fp2Sqrt, SquaresHaveRootsThatSquareBack) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 50; ++i) {
    Fp2 a = Fp2::random(rng);
    Fp2 s = a.square(), r;
    ASSERT_TRUE(s.sqrt(r));
    EXPECT_EQ(r.square(), s);
    EXPECT_TRUE(r == a || r == -a);
  }
}

TEST(Fp2Sqrt, NonSquaresAreRejected) {
  // a is a square in Fp2 iff its norm is a square in Fp.
  std::mt19937_64 rng(4);
  int rejected = 0;
  for (int i = 0; i < 50; ++i) {
    Fp2 a = Fp2::random(rng), r;
    const bool is_square = a.norm().legendre() == 1;
    EXPECT_EQ(a.sqrt(r), is_square);
    if (is_square) {
      EXPECT_EQ(r.square(), a);
    }
    rejected += !is_square;
  }
  EXPECT_GT(rejected, 10);  // about half of the elements are non-squares
}

TEST(Fp2Sqrt, RealAndImaginaryEdgeCases) {
  std::mt19937_64 rng(5);
  Fp2 r;
  ASSERT_TRUE(Fp2::zero().sqrt(r));
  EXPECT_TRUE(r.is_zero());
  ASSERT_TRUE(Fp2::one().sqrt(r));
  EXPECT_EQ(r.square(), Fp2::one());
  // -1 = u^2.
  ASSERT_TRUE((-Fp2::one()).sqrt(r));
  EXPECT_EQ(r.square(), -Fp2::one());
  for (int i = 0; i < 20; ++i) {
    // Every element of Fp is a square in Fp2, residue or not.
    Fp2 a{Fp::random(rng), Fp::zero()};
    ASSERT_TRUE(a.sqrt(r));
    EXPECT_EQ(r.square(), a);
    // Purely imaginary elements b u: squares iff the norm b^2 is, i.e. always.
    Fp2 b{Fp::zero(), Fp::random(rng)};
    ASSERT_TRUE(b.sqrt(r));
    EXPECT_EQ(r.square(), b);
  }
}

}  // namespace
}  // namespace cuzk::ff
