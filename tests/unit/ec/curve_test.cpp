// Group-law tests for G1 and G2 on random points, typed over the coordinate field.
#include "ec/curve.hpp"

#include "ec/subgroup.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace cuzk::ec {
namespace {

template <class F>
Affine<F> generator();
template <>
Affine<Fp> generator<Fp>() {
  return kG1Generator;
}
template <>
Affine<Fp2> generator<Fp2>() {
  return kG2Generator;
}

template <class F>
class CurveTest : public ::testing::Test {
 protected:
  std::mt19937_64 rng_{0xC0FFEE ^ sizeof(F)};
  // Random subgroup point [k]G.
  Jacobian<F> random_point() { return mul(generator<F>(), Fr::random(rng_).to_int()); }
};

using Fields = ::testing::Types<Fp, Fp2>;
TYPED_TEST_SUITE(CurveTest, Fields);

TYPED_TEST(CurveTest, GeneratorOnCurve) {
  EXPECT_TRUE(is_on_curve(generator<TypeParam>()));
  EXPECT_TRUE(is_on_curve(from_affine(generator<TypeParam>())));
  Affine<TypeParam> bad = generator<TypeParam>();
  bad.y += TypeParam::one();
  EXPECT_FALSE(is_on_curve(bad));
  EXPECT_TRUE(is_on_curve(Affine<TypeParam>::identity()));
}

TYPED_TEST(CurveTest, GroupLaws) {
  using J = Jacobian<TypeParam>;
  const J o = J::identity();
  for (int it = 0; it < 8; ++it) {
    J a = this->random_point(), b = this->random_point(), c = this->random_point();
    ASSERT_TRUE(is_on_curve(a));
    EXPECT_TRUE(eq(add(a, b), add(b, a)));                  // commutative
    EXPECT_TRUE(eq(add(add(a, b), c), add(a, add(b, c))));  // associative
    EXPECT_TRUE(eq(add(a, o), a));                          // identity
    EXPECT_TRUE(eq(add(o, a), a));
    EXPECT_TRUE(add(a, neg(a)).is_identity());  // inverse
    EXPECT_TRUE(eq(dbl(a), add(a, a)));         // P == Q path
    EXPECT_TRUE(is_on_curve(add(a, b)));
    EXPECT_TRUE(is_on_curve(dbl(a)));
    EXPECT_FALSE(eq(a, b));
    EXPECT_FALSE(eq(a, o));
    // A rescaled representative of the same point is still equal.
    TypeParam l = TypeParam::random(this->rng_);
    J a2{a.x * l.square(), a.y * l.square() * l, a.z * l};
    EXPECT_TRUE(eq(a, a2));
    EXPECT_TRUE(eq(add(a2, b), add(a, b)));
    EXPECT_TRUE(eq(add(a, a2), dbl(a)));  // P == Q with different Z
    // Mixed addition agrees with full addition, including its special cases.
    Affine<TypeParam> ba = to_affine(b);
    EXPECT_TRUE(eq(add_mixed(a, ba), add(a, b)));
    EXPECT_TRUE(eq(add_mixed(a2, to_affine(a)), dbl(a)));
    EXPECT_TRUE(add_mixed(a2, neg(to_affine(a))).is_identity());
    EXPECT_TRUE(eq(add_mixed(o, ba), b));
    EXPECT_TRUE(eq(add_mixed(a, Affine<TypeParam>::identity()), a));
    EXPECT_TRUE(eq(sub(add(a, b), b), a));
  }
  EXPECT_TRUE(dbl(o).is_identity());
  EXPECT_TRUE(add(o, o).is_identity());
}

TYPED_TEST(CurveTest, AffineRoundTripAndBatch) {
  using J = Jacobian<TypeParam>;
  std::vector<J> pts;
  for (int i = 0; i < 9; ++i) pts.push_back(this->random_point());
  pts[3] = J::identity();
  pts.push_back(J::identity());
  std::vector<Affine<TypeParam>> aff(pts.size());
  batch_to_affine<TypeParam>(pts, aff);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(aff[i], to_affine(pts[i])) << i;
    EXPECT_TRUE(eq(from_affine(aff[i]), pts[i])) << i;
    EXPECT_TRUE(is_on_curve(aff[i]));
  }
  EXPECT_TRUE(aff[3].infinity);
  EXPECT_EQ(neg(neg(aff[0])), aff[0]);
  EXPECT_TRUE(eq(from_affine(neg(aff[0])), neg(pts[0])));
}

TYPED_TEST(CurveTest, ScalarMulLinearity) {
  using J = Jacobian<TypeParam>;
  const J g = from_affine(generator<TypeParam>());
  for (int it = 0; it < 4; ++it) {
    Fr a = Fr::random(this->rng_), b = Fr::random(this->rng_);
    J p = this->random_point();
    EXPECT_TRUE(eq(mul(p, a + b), add(mul(p, a), mul(p, b))));
    EXPECT_TRUE(eq(mul(p, a * b), mul(mul(p, b), a)));
    EXPECT_TRUE(eq(mul(g, -a), neg(mul(g, a))));
  }
  // Small scalars against repeated addition.
  J acc = J::identity();
  for (std::uint64_t k = 0; k < 40; ++k) {
    EXPECT_TRUE(eq(mul(g, Fr::from_u64(k)), acc)) << k;
    EXPECT_TRUE(eq(mul(generator<TypeParam>(), ff::from_u64<4>(k)), acc)) << k;
    acc = add(acc, g);
  }
  EXPECT_TRUE(mul(J::identity(), Fr::from_u64(5)).is_identity());
}

// mul(P, Fr) goes through the endomorphism decomposition; the BigInt form is
// plain wNAF. They must agree on subgroup points for random and edge scalars
// (digits of the base-|x| decomposition at 0 and at their maximum |x| - 1).
TYPED_TEST(CurveTest, EndomorphismMulMatchesPlainMul) {
  using J = Jacobian<TypeParam>;
  const Fr x = Fr::from_u64(kBlsXAbs), x2 = x * x, x3 = x2 * x;
  std::vector<Fr> ks = {Fr::zero(), Fr::one(),      Fr::from_u64(2),         -Fr::one(), x - Fr::one(),
                        x,          x + Fr::one(),  x2 - Fr::one(),          x2,         x2 + x,
                        x3,         x3 - Fr::one(), x3 + x2 + x + Fr::one(), -x3,        -x2};
  for (int i = 0; i < 6; ++i) ks.push_back(Fr::random(this->rng_));
  J p = this->random_point();
  for (const Fr& k : ks) {
    EXPECT_TRUE(eq(mul(p, k), mul(p, k.to_int()))) << k.to_int().limb[0];
  }
  EXPECT_TRUE(mul(J::identity(), x).is_identity());
}

TYPED_TEST(CurveTest, OrderIsR) {
  // r G == O and (r - 1) G == -G: r is the generator's order.
  EXPECT_TRUE(mul(generator<TypeParam>(), Fr::kModulus).is_identity());
  EXPECT_TRUE(
      eq(mul(generator<TypeParam>(), ff::sub_small(Fr::kModulus, 1)), neg(from_affine(generator<TypeParam>()))));
  EXPECT_TRUE(mul(this->random_point(), Fr::kModulus).is_identity());
}

}  // namespace
}  // namespace cuzk::ec
