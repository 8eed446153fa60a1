// Endomorphisms, subgroup checks, cofactor clearing and the constant-time
// scalar multiplication, each checked against the plain definitions.
#include "ec/subgroup.hpp"

#include <gtest/gtest.h>

#include <random>

namespace cuzk::ec {
namespace {

// Exact quotient (p - 1) / d for small d (checks the remainder is zero).
ff::BigInt<6> p_minus_1_over(std::uint64_t d) {
  ff::BigInt<6> e = ff::sub_small(Fp::kModulus, 1), q{};
  ff::u128 rem = 0;
  for (std::size_t i = 6; i-- > 0;) {
    rem = (rem << 64) | e.limb[i];
    q.limb[i] = ff::u64(rem / d);
    rem %= d;
  }
  EXPECT_EQ(rem, 0u);
  return q;
}

// |x|^2 as a 128-bit integer.
ff::BigInt<2> x_squared() {
  ff::u128 xx = ff::u128(kBlsXAbs) * kBlsXAbs;
  ff::BigInt<2> r{};
  r.limb[0] = ff::u64(xx);
  r.limb[1] = ff::u64(xx >> 64);
  return r;
}

TEST(Endomorphism, ConstantsMatchTheirDefinitions) {
  // beta: a primitive cube root of unity.
  EXPECT_FALSE(kG1Beta.is_one());
  EXPECT_TRUE((kG1Beta.square() * kG1Beta).is_one());
  EXPECT_EQ(kPsi2W, kG1Beta.square());
  const Fp2 xi{Fp::one(), Fp::one()};
  EXPECT_EQ(kPsiCx, xi.pow(p_minus_1_over(3)).inverse());
  EXPECT_EQ(kPsiCy, xi.pow(p_minus_1_over(2)).inverse());
  EXPECT_EQ(kPsiCx * kPsiCx.conjugate(), (Fp2{kPsi2W, Fp::zero()}));
}

TEST(Endomorphism, ActOnSubgroupsAsTheirEigenvalues) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 3; ++i) {
    G1Jacobian p = mul(kG1Generator, Fr::random(rng));
    // phi = [-x^2] on G1 (|x|^2 < r, so the scalar is plain |x|^2).
    EXPECT_TRUE(eq(phi(p), neg(mul(p, x_squared()))));
    EXPECT_TRUE(is_on_curve(phi(p)));
    G2Jacobian q = mul(kG2Generator, Fr::random(rng));
    // psi = [x] on G2, psi^2 = [x^2].
    EXPECT_TRUE(eq(psi(q), neg(mul(q, ff::from_u64<1>(kBlsXAbs)))));
    EXPECT_TRUE(eq(psi2(q), psi(psi(q))));
    EXPECT_TRUE(eq(psi2(q), mul(q, x_squared())));
    // psi maps the whole twist to itself, not just G2.
    G2Affine any = random_curve_point<Fp2>(rng);
    EXPECT_TRUE(is_on_curve(psi(from_affine(any))));
    EXPECT_TRUE(eq(mul_by_x(q), neg(mul(q, ff::from_u64<1>(kBlsXAbs)))));
  }
}

template <class F>
class SubgroupTest : public ::testing::Test {
 protected:
  std::mt19937_64 rng_{0x5EED + sizeof(F)};
};
using Fields = ::testing::Types<Fp, Fp2>;
TYPED_TEST_SUITE(SubgroupTest, Fields);

TYPED_TEST(SubgroupTest, FastCheckAgreesWithOrderCheck) {
  int outside = 0;
  for (int i = 0; i < 6; ++i) {
    Affine<TypeParam> p = random_curve_point<TypeParam>(this->rng_);
    ASSERT_TRUE(is_on_curve(p));
    const bool by_order = in_subgroup_by_order(p);
    EXPECT_EQ(in_subgroup(p), by_order);
    outside += !by_order;
    Affine<TypeParam> q = random_subgroup_point<TypeParam>(this->rng_);
    ASSERT_TRUE(is_on_curve(q));
    EXPECT_TRUE(in_subgroup_by_order(q));
    EXPECT_TRUE(in_subgroup(q));
    // In + out is out.
    Affine<TypeParam> s = to_affine(add_mixed(from_affine(q), p));
    EXPECT_EQ(in_subgroup(s), in_subgroup_by_order(s));
    EXPECT_FALSE(in_subgroup(s));
  }
  // Random curve points lie outside the subgroup except with prob. ~1/h.
  EXPECT_EQ(outside, 6);
  EXPECT_TRUE(in_subgroup(Affine<TypeParam>::identity()));
  EXPECT_TRUE(in_subgroup(kG1Generator));
  EXPECT_TRUE(in_subgroup(kG2Generator));
}

TYPED_TEST(SubgroupTest, ClearCofactorIsAHomomorphismIntoTheSubgroup) {
  Affine<TypeParam> a = random_curve_point<TypeParam>(this->rng_);
  Affine<TypeParam> b = random_curve_point<TypeParam>(this->rng_);
  Jacobian<TypeParam> ca = clear_cofactor(from_affine(a)), cb = clear_cofactor(from_affine(b));
  EXPECT_FALSE(ca.is_identity());
  EXPECT_TRUE(in_subgroup_by_order(to_affine(ca)));
  EXPECT_TRUE(eq(clear_cofactor(add(from_affine(a), from_affine(b))), add(ca, cb)));
  EXPECT_TRUE(clear_cofactor(Jacobian<TypeParam>::identity()).is_identity());
}

// G1's h_eff = 1 - x as a plain scalar multiplication.
TEST(ClearCofactor, G1IsMultiplicationByOneMinusX) {
  std::mt19937_64 rng(5);
  G1Affine p = random_curve_point<Fp>(rng);
  EXPECT_TRUE(eq(clear_cofactor(from_affine(p)), mul(p, ff::from_u64<1>(kBlsXAbs + 1))));
}

TYPED_TEST(SubgroupTest, ConstantTimeMulMatchesVariableTime) {
  using J = Jacobian<TypeParam>;
  J p = from_affine(random_subgroup_point<TypeParam>(this->rng_));
  for (int i = 0; i < 4; ++i) {
    Fr k = Fr::random(this->rng_);
    EXPECT_TRUE(eq(mul_ct(p, k), mul(p, k)));
  }
  for (std::uint64_t k : {0ull, 1ull, 2ull, 15ull, 16ull, 17ull}) {
    EXPECT_TRUE(eq(mul_ct(p, Fr::from_u64(k)), mul(p, ff::from_u64<1>(k)))) << k;
  }
  EXPECT_TRUE(eq(mul_ct(p, -Fr::one()), neg(p)));
  EXPECT_TRUE(mul_ct(J::identity(), Fr::from_u64(3)).is_identity());
  // Points outside the subgroup work too (the formulas are complete on the curve).
  J q = from_affine(random_curve_point<TypeParam>(this->rng_));
  Fr k = Fr::random(this->rng_);
  EXPECT_TRUE(eq(mul_ct(q, k), mul(q, k.to_int())));
}

}  // namespace
}  // namespace cuzk::ec
