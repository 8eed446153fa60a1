// Laws of the pairing tower Fp6 = Fp2[v]/(v^3 - xi), Fp12 = Fp6[w]/(w^2 - v).
#include <gtest/gtest.h>

#include <random>

#include "ff/fp12.hpp"

namespace cuzk::ff {
namespace {

constexpr Fp2 kXi = {Fp::one(), Fp::one()};

template <class F>
class TowerLaws : public ::testing::Test {};
using TowerFields = ::testing::Types<Fp6, Fp12>;
TYPED_TEST_SUITE(TowerLaws, TowerFields);

TYPED_TEST(TowerLaws, RingAxiomsOnRandomInputs) {
  using F = TypeParam;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 50; ++i) {
    F a = F::random(rng), b = F::random(rng), c = F::random(rng);
    EXPECT_EQ(a + b, b + a);
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ((a * b) * c, a * (b * c));
    EXPECT_EQ(a * (b + c), a * b + a * c);
    EXPECT_EQ(a + (-a), F::zero());
    EXPECT_EQ(a * F::one(), a);
    EXPECT_EQ(a * F::zero(), F::zero());
    EXPECT_EQ(a.square(), a * a);
    EXPECT_EQ(a * a.inverse(), F::one());
  }
  EXPECT_EQ(F::zero().inverse(), F::zero());
  EXPECT_TRUE(F::one().is_one());
  EXPECT_FALSE(F::zero().is_one());
}

// Frobenius maps agree with plain exponentiation by p, and composing them
// gives the higher powers; p^6 on Fp12 is conjugation, p^6 on Fp6 is identity.
TYPED_TEST(TowerLaws, FrobeniusIsPowerOfP) {
  using F = TypeParam;
  std::mt19937_64 rng(12);
  for (int i = 0; i < 4; ++i) {
    F a = F::random(rng);
    F f1 = a.frobenius(1);
    EXPECT_EQ(f1, a.pow(Fp::kModulus));
    EXPECT_EQ(a.frobenius(2), f1.frobenius(1));
    EXPECT_EQ(a.frobenius(3), f1.frobenius(1).frobenius(1));
    F f6 = a.frobenius(3).frobenius(3);
    if constexpr (std::is_same_v<F, Fp12>) {
      EXPECT_EQ(f6, a.conjugate());
      EXPECT_EQ(f6.frobenius(3).frobenius(3), a);
    } else {
      EXPECT_EQ(f6, a);  // Fp6 has degree 6 over Fp: x^(p^6) = x.
      EXPECT_NE(a.frobenius(3), a);
    }
    // Frobenius is a ring homomorphism.
    F b = F::random(rng);
    EXPECT_EQ((a * b).frobenius(1), a.frobenius(1) * b.frobenius(1));
  }
}

TEST(Tower, FrobeniusConstantIsXiToTheSixthRoot) {
  // gamma_1 = xi^((p - 1)/6), written out in fp6.hpp.
  BigInt<6> e = detail::div_small(sub_small(Fp::kModulus, 1), 6);
  EXPECT_EQ(kXi.pow(e), detail::kFrobeniusGamma1);
  // gamma_1^6 = xi^(p-1) = xi^p / xi = conj(xi)/xi.
  Fp2 g = detail::kFrobeniusGamma1;
  Fp2 g6 = g.square() * g.square() * g.square();
  EXPECT_EQ(g6 * kXi, kXi.conjugate());
  // gamma_2 = gamma_1^(1+p) = xi^((p^2-1)/6) lies in Fp.
  Fp2 g2 = g * g.pow(Fp::kModulus);
  EXPECT_EQ(g2, detail::kTowerFrobenius.coeff[1][1]);
  EXPECT_TRUE(g2.c1.is_zero());
  // The tower is a field: xi is neither a square (xi^((p^2-1)/2) = gamma_2^3 != 1)
  // nor a cube (xi^((p^2-1)/3) = gamma_2^2 != 1) in Fp2, so w^6 - xi is irreducible.
  EXPECT_FALSE((g2.square() * g2).is_one());
  EXPECT_FALSE(g2.square().is_one());
}

TEST(Tower, Fp6SparseAndStructuredProducts) {
  std::mt19937_64 rng(13);
  const Fp6 v = {Fp2::zero(), Fp2::one(), Fp2::zero()};
  // v^3 = xi.
  EXPECT_EQ(v * v * v, (Fp6{kXi, Fp2::zero(), Fp2::zero()}));
  for (int i = 0; i < 20; ++i) {
    Fp6 a = Fp6::random(rng);
    Fp2 b0 = Fp2::random(rng), b1 = Fp2::random(rng), s = Fp2::random(rng);
    EXPECT_EQ(a.mul_by_v(), a * v);
    EXPECT_EQ(a.mul_by_01(b0, b1), a * Fp6({b0, b1, Fp2::zero()}));
    EXPECT_EQ(a.mul_by_1(b1), a * Fp6({Fp2::zero(), b1, Fp2::zero()}));
    EXPECT_EQ(a.mul_by_fp2(s), a * Fp6({s, Fp2::zero(), Fp2::zero()}));
    EXPECT_EQ(a.dbl(), a + a);
  }
}

TEST(Tower, Fp12StructureAndSparseLineProduct) {
  std::mt19937_64 rng(14);
  const Fp12 w = {Fp6::zero(), Fp6::one()};
  const Fp12 v = {{Fp2::zero(), Fp2::one(), Fp2::zero()}, Fp6::zero()};
  EXPECT_EQ(w.square(), v);
  // w^6 = xi.
  EXPECT_EQ(w.pow(from_u64<1>(6)), (Fp12{{kXi, Fp2::zero(), Fp2::zero()}, Fp6::zero()}));
  for (int i = 0; i < 20; ++i) {
    Fp12 a = Fp12::random(rng);
    Fp2 l0 = Fp2::random(rng), l1 = Fp2::random(rng), l4 = Fp2::random(rng);
    Fp12 line = {{l0, l1, Fp2::zero()}, {Fp2::zero(), l4, Fp2::zero()}};
    EXPECT_EQ(a.mul_by_014(l0, l1, l4), a * line);
    // Slots 0, 1, 4 of the coefficient order are w^0, w^2, w^3.
    Fp12 w2 = w.square(), w3 = w2 * w;
    Fp12 l0e = {{l0, Fp2::zero(), Fp2::zero()}, Fp6::zero()};
    Fp12 l1e = {{l1, Fp2::zero(), Fp2::zero()}, Fp6::zero()};
    Fp12 l4e = {{l4, Fp2::zero(), Fp2::zero()}, Fp6::zero()};
    EXPECT_EQ(line, l0e + l1e * w2 + l4e * w3);
  }
}

// Maps a random element into the cyclotomic subgroup: f^((p^6 - 1)(p^2 + 1)).
Fp12 random_unitary(std::mt19937_64& rng) {
  Fp12 f = Fp12::random(rng);
  Fp12 t = f.conjugate() * f.inverse();  // f^(p^6 - 1)
  return t.frobenius(2) * t;             // ^(p^2 + 1)
}

TEST(Tower, CyclotomicSquareAndPow) {
  std::mt19937_64 rng(15);
  for (int i = 0; i < 10; ++i) {
    Fp12 u = random_unitary(rng);
    // Unitary: u * conj(u) = 1.
    EXPECT_EQ(u * u.conjugate(), Fp12::one());
    EXPECT_EQ(u.cyclotomic_square(), u.square());
    EXPECT_EQ(u.cyclotomic_square().cyclotomic_square(), u.square().square());
    const u64 e = 0xd201000000010000ull;
    EXPECT_EQ(u.cyclotomic_pow(e), u.pow(from_u64<1>(e)));
    EXPECT_EQ(u.cyclotomic_pow(1), u);
    EXPECT_EQ(u.cyclotomic_pow(0), Fp12::one());
  }
  // Outside the subgroup the shortcut is wrong, which is why callers must
  // only use it after the easy part (this documents that it is not a plain square).
  Fp12 f = Fp12::random(rng);
  EXPECT_NE(f.cyclotomic_square(), f.square());
}

TEST(Tower, CoefficientOrder) {
  std::mt19937_64 rng(16);
  Fp12 a = Fp12::random(rng);
  auto c = a.coefficients();
  EXPECT_EQ(c[0], a.c0.c0.c0);
  EXPECT_EQ(c[1], a.c0.c0.c1);
  EXPECT_EQ(c[2], a.c0.c1.c0);
  EXPECT_EQ(c[5], a.c0.c2.c1);
  EXPECT_EQ(c[6], a.c1.c0.c0);
  EXPECT_EQ(c[11], a.c1.c2.c1);
  EXPECT_EQ(Fp12::from_coefficients(c), a);
}

}  // namespace
}  // namespace cuzk::ff
