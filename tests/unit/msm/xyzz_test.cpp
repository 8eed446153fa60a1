// XYZZ bucket arithmetic against the Jacobian group law of ec/curve.hpp.
#include "msm/xyzz.hpp"

#include <gtest/gtest.h>

#include <random>

#include "ec/curve.hpp"

namespace cuzk::msm {
namespace {

template <class F>
ec::Affine<F> generator() {
  if constexpr (std::is_same_v<F, ff::Fp>) {
    return ec::kG1Generator;
  } else {
    return ec::kG2Generator;
  }
}

template <class F>
class XyzzTest : public ::testing::Test {
 protected:
  std::mt19937_64 rng_{0x5EED ^ sizeof(F)};
  ec::Affine<F> random_affine() { return ec::to_affine(ec::mul(generator<F>(), ff::Fr::random(rng_))); }
  // A random XYZZ representative (scaled by lambda^2, lambda^3) of a random point.
  std::pair<Xyzz<F>, ec::Jacobian<F>> random_xyzz() {
    ec::Affine<F> a = random_affine();
    F l = F::random(rng_);
    F l2 = l.square();
    Xyzz<F> p{a.x * l2, a.y * l2 * l, l2, l2 * l};
    return {p, ec::from_affine(a)};
  }
};

using Fields = ::testing::Types<ff::Fp, ff::Fp2>;
TYPED_TEST_SUITE(XyzzTest, Fields);

TYPED_TEST(XyzzTest, MatchesJacobian) {
  using F = TypeParam;
  for (int it = 0; it < 4; ++it) {
    auto [p, pj] = this->random_xyzz();
    auto [q, qj] = this->random_xyzz();
    const ec::Affine<F> a = this->random_affine();
    EXPECT_TRUE(ec::eq(to_jacobian(p), pj));
    EXPECT_TRUE(ec::is_on_curve(to_jacobian(p)));

    Xyzz<F> s = p;
    add(s, q);
    EXPECT_TRUE(ec::eq(to_jacobian(s), ec::add(pj, qj)));

    Xyzz<F> m = p;
    add_affine(m, a.x, a.y);
    EXPECT_TRUE(ec::eq(to_jacobian(m), ec::add_mixed(pj, a)));
    Xyzz<F> mneg = p;
    add_affine(mneg, a.x, -a.y);
    EXPECT_TRUE(ec::eq(to_jacobian(mneg), ec::sub(pj, ec::from_affine(a))));

    EXPECT_TRUE(ec::eq(to_jacobian(dbl(p)), ec::dbl(pj)));
    EXPECT_TRUE(ec::eq(to_jacobian(dbl_affine(a.x, a.y)), ec::dbl(ec::from_affine(a))));
  }
}

TYPED_TEST(XyzzTest, SpecialCases) {
  using F = TypeParam;
  using X = Xyzz<F>;
  auto [p, pj] = this->random_xyzz();
  const ec::Affine<F> a = ec::to_affine(pj);

  // P + P through both additions takes the doubling branch.
  X s = p;
  add(s, p);
  EXPECT_TRUE(ec::eq(to_jacobian(s), ec::dbl(pj)));
  X m = p;
  add_affine(m, a.x, a.y);
  EXPECT_TRUE(ec::eq(to_jacobian(m), ec::dbl(pj)));

  // P + (-P) is the identity.
  X neg = p;
  neg.y = -neg.y;
  X z = p;
  add(z, neg);
  EXPECT_TRUE(z.is_identity());
  X zm = p;
  add_affine(zm, a.x, -a.y);
  EXPECT_TRUE(zm.is_identity());

  // Identity on either side.
  X o = X::identity();
  add(o, p);
  EXPECT_TRUE(ec::eq(to_jacobian(o), pj));
  X keep = p;
  add(keep, X::identity());
  EXPECT_TRUE(ec::eq(to_jacobian(keep), pj));
  X om = X::identity();
  add_affine(om, a.x, a.y);
  EXPECT_TRUE(ec::eq(to_jacobian(om), pj));
  EXPECT_TRUE(dbl(X::identity()).is_identity());
  EXPECT_TRUE(to_jacobian(X::identity()).is_identity());
}

}  // namespace
}  // namespace cuzk::msm
