#include "ntt/ntt.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace cuzk::ntt {
namespace {

std::vector<Fr> random_vec(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> v(n);
  for (auto& x : v) x = Fr::random(rng);
  return v;
}

// y_i = sum_j x_j * (shift * w^i)^j, evaluated with Horner: O(n) per point.
Fr eval_poly(const std::vector<Fr>& coeffs, const Fr& point) {
  Fr acc = Fr::zero();
  for (std::size_t j = coeffs.size(); j-- > 0;) acc = acc * point + coeffs[j];
  return acc;
}

std::vector<Fr> naive_dft(const std::vector<Fr>& x, const Fr& w, const Fr& shift) {
  std::vector<Fr> y(x.size());
  Fr wi = shift;
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = eval_poly(x, wi);
    wi *= w;
  }
  return y;
}

std::size_t rev(std::size_t i, unsigned bits) {
  std::size_t r = 0;
  for (unsigned b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
  return r;
}

TEST(Ntt, RootOfUnityIsBellpersonsConstant) {
  // ROOT_OF_UNITY of bellperson/blstrs/zkcrypto bls12_381 (= 7^((r-1)/2^32)).
  EXPECT_EQ(root_of_unity(32), Fr::from_hex("0x16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b"));
  for (unsigned k : {1u, 2u, 5u, 16u, 27u, 32u}) {
    Fr w = root_of_unity(k);
    for (unsigned i = 0; i + 1 < k; ++i) w = w.square();
    EXPECT_EQ(w, -Fr::one()) << "2^" << k << "-th root is not primitive";
    EXPECT_EQ(w.square(), Fr::one());
  }
  Domain d(10);
  EXPECT_EQ(d.omega() * d.omega_inv(), Fr::one());
  EXPECT_EQ(d.size_inv() * Fr::from_u64(1024), Fr::one());
  EXPECT_EQ(d.coset_gen(), Fr::from_u64(7));
}

TEST(Ntt, ForwardMatchesNaiveDft) {
  ThreadPool pool(2);
  for (unsigned k = 0; k <= 8; ++k) {
    for (unsigned leaf : {kDefaultLeafLog, 1u, 2u}) {
      Domain d(k, leaf);
      auto x = random_vec(d.size(), 100 + k);
      auto want = naive_dft(x, d.omega(), Fr::one());
      auto y = x;
      ntt(d, y, pool);
      ASSERT_EQ(y, want) << "k=" << k << " leaf=" << leaf;
      // Bit-reversed variant holds the same values at reversed indices.
      auto z = x;
      ntt_to_bitrev(d, z, pool);
      for (std::size_t i = 0; i < z.size(); ++i) ASSERT_EQ(z[rev(i, k)], want[i]);
    }
  }
}

TEST(Ntt, InverseMatchesNaiveDft) {
  ThreadPool pool(3);
  for (unsigned k = 0; k <= 7; ++k) {
    Domain d(k, 2);
    auto y = random_vec(d.size(), 200 + k);
    auto want = naive_dft(y, d.omega_inv(), Fr::one());
    for (auto& w : want) w *= d.size_inv();
    auto x = y;
    intt(d, x, pool);
    ASSERT_EQ(x, want) << "k=" << k;
  }
}

// Above the leaf size the four-step path runs; check sampled outputs against
// direct evaluation (O(n) each) instead of the O(n^2) DFT.
TEST(Ntt, LargeSizesMatchSampledEvaluations) {
  ThreadPool pool(4);
  std::mt19937_64 rng(5);
  for (unsigned k : {13u, 14u, 15u}) {
    Domain d(k);
    auto x = random_vec(d.size(), 300 + k);
    auto y = x;
    ntt(d, y, pool);
    for (int s = 0; s < 12; ++s) {
      std::size_t i = rng() % d.size();
      if (s == 0) i = 0;
      if (s == 1) i = d.size() - 1;
      ASSERT_EQ(y[i], eval_poly(x, d.omega().pow(std::uint64_t(i)))) << "k=" << k << " i=" << i;
    }
  }
}

TEST(Ntt, InverseUndoesForwardForManySizes) {
  ThreadPool pool(4);
  for (unsigned k = 0; k <= 16; ++k) {
    for (unsigned leaf : {kDefaultLeafLog, 3u}) {
      Domain d(k, leaf);
      auto x = random_vec(d.size(), 400 + k);
      auto y = x;
      ntt(d, y, pool);
      if (k >= 2) {
        ASSERT_NE(y, x);
      }
      intt(d, y, pool);
      ASSERT_EQ(y, x) << "k=" << k << " leaf=" << leaf;
      ntt_to_bitrev(d, y, pool);
      intt_from_bitrev(d, y, pool);
      ASSERT_EQ(y, x) << "bitrev pair, k=" << k << " leaf=" << leaf;
    }
  }
}

TEST(Ntt, CosetMatchesNaiveEvaluation) {
  ThreadPool pool(2);
  for (unsigned k = 0; k <= 7; ++k) {
    for (unsigned leaf : {kDefaultLeafLog, 2u}) {
      Domain d(k, leaf);
      auto x = random_vec(d.size(), 500 + k);
      auto want = naive_dft(x, d.omega(), Fr::from_u64(7));  // x(g * omega^i)
      auto y = x;
      coset_ntt(d, y, pool);
      ASSERT_EQ(y, want) << "k=" << k;
      coset_intt(d, y, pool);
      ASSERT_EQ(y, x) << "k=" << k;
      coset_ntt_to_bitrev(d, y, pool);
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[rev(i, k)], want[i]);
      coset_intt_from_bitrev(d, y, pool);
      ASSERT_EQ(y, x) << "k=" << k;
    }
  }
}

TEST(Ntt, CosetRoundTripLarge) {
  ThreadPool pool(4);
  Domain d(14);
  auto x = random_vec(d.size(), 600);
  auto y = x;
  coset_ntt(d, y, pool);
  EXPECT_EQ(y[3], eval_poly(x, Fr::from_u64(7) * d.omega().pow(3)));
  coset_intt(d, y, pool);
  EXPECT_EQ(y, x);
}

TEST(Ntt, MultiThreadEqualsSingleThread) {
  ThreadPool one(1), many(5);
  for (unsigned k : {5u, 10u, 13u, 16u}) {
    for (unsigned leaf : {kDefaultLeafLog, 4u}) {
      Domain d(k, leaf);
      auto x = random_vec(d.size(), 700 + k);
      auto a = x, b = x;
      ntt(d, a, one);
      ntt(d, b, many);
      ASSERT_EQ(a, b) << "k=" << k;
      coset_intt(d, a, one);
      coset_intt(d, b, many);
      ASSERT_EQ(a, b) << "k=" << k;
    }
  }
}

TEST(Ntt, PolynomialMultiplicationMatchesSchoolbook) {
  ThreadPool pool(2);
  std::mt19937_64 rng(8);
  for (std::size_t deg_a : {1u, 37u, 100u, 255u}) {
    const std::size_t deg_b = 300 - deg_a;
    auto a = random_vec(deg_a + 1, rng());
    auto b = random_vec(deg_b + 1, rng());
    std::vector<Fr> want(deg_a + deg_b + 1, Fr::zero());
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t j = 0; j < b.size(); ++j) want[i + j] += a[i] * b[j];
    Domain d(9);  // 512 > 301 coefficients: no wrap-around
    a.resize(d.size(), Fr::zero());
    b.resize(d.size(), Fr::zero());
    ntt(d, a, pool);
    ntt(d, b, pool);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
    intt(d, a, pool);
    for (std::size_t i = 0; i < d.size(); ++i) {
      ASSERT_EQ(a[i], i < want.size() ? want[i] : Fr::zero()) << "deg_a=" << deg_a << " i=" << i;
    }
  }
}

// The Groth16 quotient the way bellperson computes it: for a, b, c given as
// evaluations on <omega> with a*b - c vanishing there, H = (a*b - c)/Z comes out
// of the coset, and H * Z must equal a*b - c as polynomials.
TEST(Ntt, QuotientOnCosetIsExact) {
  ThreadPool pool(2);
  Domain d(6);
  const std::size_t n = d.size();
  // Polynomials of degree < n: A, B random; C = A*B mod (x^n - 1) so a*b - c
  // vanishes on <omega>.
  auto ca = random_vec(n, 900), cb = random_vec(n, 901);
  std::vector<Fr> ea = ca, eb = cb;
  ntt(d, ea, pool);
  ntt(d, eb, pool);
  std::vector<Fr> ec(n);
  for (std::size_t i = 0; i < n; ++i) ec[i] = ea[i] * eb[i];
  // Prover steps.
  auto a = ea, b = eb, c = ec;
  for (auto* v : {&a, &b, &c}) {
    intt(d, *v, pool);
    coset_ntt(d, *v, pool);
  }
  const Fr zinv = vanishing_on_coset_inv(d);
  for (std::size_t i = 0; i < n; ++i) a[i] = (a[i] * b[i] - c[i]) * zinv;
  coset_intt(d, a, pool);
  // Check H(x) * (x^n - 1) == A(x) B(x) - C(x) at random points.
  std::vector<Fr> cc = ec;
  intt(d, cc, pool);
  std::mt19937_64 rng(11);
  for (int t = 0; t < 5; ++t) {
    Fr x = Fr::random(rng);
    Fr zx = x.pow(std::uint64_t(n)) - Fr::one();
    EXPECT_EQ(eval_poly(a, x) * zx, eval_poly(ca, x) * eval_poly(cb, x) - eval_poly(cc, x));
  }
  // Z is constant on the coset: Z(g * omega^i) = g^n - 1.
  Fr pt = d.coset_gen() * d.omega().pow(5);
  EXPECT_EQ((pt.pow(std::uint64_t(n)) - Fr::one()) * zinv, Fr::one());
}

TEST(NttDeathTest, SizeMismatchAborts) {
  ThreadPool pool(1);
  Domain d(4);
  std::vector<Fr> v(8);
  EXPECT_DEATH(ntt(d, v, pool), "does not match the domain");
  EXPECT_DEATH(Domain(33), "larger than 2");
}

TEST(Ntt, BitReversePermutation) {
  ThreadPool pool(3);
  for (unsigned k : {0u, 1u, 3u, 9u, 10u, 11u, 14u}) {
    const std::size_t n = std::size_t{1} << k;
    std::vector<Fr> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = Fr::from_u64(i);
    bit_reverse_permute(v, pool);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], Fr::from_u64(rev(i, k))) << "k=" << k;
  }
}

}  // namespace
}  // namespace cuzk::ntt
