// Pippenger MSM against references that share no code with it:
//  - the naive sum of wNAF scalar multiplications (ec/curve.hpp), for small n;
//  - for larger n, the discrete-log identity sum_i s_i (a_i G) = (sum_i s_i a_i) G,
//    where the bases are built with known logs a_i and the right side is one
//    scalar multiplication after arithmetic in Fr.
#include "msm/msm.hpp"

#include <gtest/gtest.h>

#include <random>
#include <type_traits>
#include <vector>

#include "ec/curve.hpp"

namespace cuzk::msm {
namespace {

using ff::Fr;

template <class F>
ec::Affine<F> generator() {
  if constexpr (std::is_same_v<F, ff::Fp>) {
    return ec::kG1Generator;
  } else {
    return ec::kG2Generator;
  }
}

// Bases with known discrete logs: a random walk P_i = P_{i-1} + R_j over a
// small set of random steps R_j = b_j G, so building n bases costs n additions
// rather than n scalar multiplications. logs[i] = 0 marks a base at infinity.
template <class F>
struct Bases {
  std::vector<ec::Affine<F>> points;
  std::vector<Fr> logs;
};

template <class F>
Bases<F> make_bases(std::size_t n, std::mt19937_64& rng) {
  constexpr std::size_t kSteps = 16;
  std::vector<Fr> step_log(kSteps);
  std::vector<ec::Jacobian<F>> step(kSteps);
  for (std::size_t j = 0; j < kSteps; ++j) {
    step_log[j] = Fr::random(rng);
    step[j] = ec::mul(generator<F>(), step_log[j]);
  }
  Bases<F> b;
  std::vector<ec::Jacobian<F>> jac(n);
  b.logs.resize(n);
  Fr log = Fr::random(rng);
  ec::Jacobian<F> p = ec::mul(generator<F>(), log);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = rng() % kSteps;
    p = ec::add(p, step[j]);
    log += step_log[j];
    jac[i] = p;
    b.logs[i] = log;
  }
  b.points.resize(n);
  ec::batch_to_affine(std::span<const ec::Jacobian<F>>(jac), std::span<ec::Affine<F>>(b.points));
  return b;
}

Fr minus_one() { return Fr::zero() - Fr::one(); }

// Random scalars with the edge values sprinkled in: 0, 1, r - 1, small values.
std::vector<Fr> make_scalars(std::size_t n, std::mt19937_64& rng) {
  std::vector<Fr> s(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (rng() % 8) {
      case 0:
        s[i] = Fr::zero();
        break;
      case 1:
        s[i] = Fr::one();
        break;
      case 2:
        s[i] = minus_one();
        break;
      case 3:
        s[i] = Fr::from_u64(rng() % 64);
        break;
      default:
        s[i] = Fr::random(rng);
        break;
    }
  }
  return s;
}

template <class F>
ec::Jacobian<F> by_logs(const Bases<F>& b, std::span<const Fr> s) {
  Fr acc = Fr::zero();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!b.points[i].infinity) acc += s[i] * b.logs[i];
  }
  return ec::mul(generator<F>(), acc);
}

template <class F>
ec::Jacobian<F> naive(std::span<const ec::Affine<F>> bases, std::span<const Fr> s) {
  ec::Jacobian<F> acc = ec::Jacobian<F>::identity();
  for (std::size_t i = 0; i < s.size(); ++i) acc = ec::add(acc, ec::mul(bases[i], s[i]));
  return acc;
}

template <class F>
class MsmTest : public ::testing::Test {
 protected:
  std::mt19937_64 rng_{0xB0CCE7 + sizeof(F)};
};

using Fields = ::testing::Types<ff::Fp, ff::Fp2>;
TYPED_TEST_SUITE(MsmTest, Fields);

TYPED_TEST(MsmTest, EmptyIsIdentity) {
  ThreadPool pool(2);
  std::vector<ec::Affine<TypeParam>> bases;
  std::vector<Fr> s;
  EXPECT_TRUE(msm(std::span<const ec::Affine<TypeParam>>(bases), s, pool).is_identity());
}

TYPED_TEST(MsmTest, SmallSizesMatchNaive) {
  using F = TypeParam;
  ThreadPool pool(2);
  for (std::size_t n : {1, 2, 3, 5, 31}) {
    Bases<F> b = make_bases<F>(n, this->rng_);
    std::vector<Fr> s = make_scalars(n, this->rng_);
    const ec::Jacobian<F> want = naive<F>(b.points, s);
    EXPECT_TRUE(ec::eq(want, by_logs(b, s))) << "harness, n=" << n;
    for (Method m : {Method::kAuto, Method::kPippenger, Method::kDoubleAndAdd}) {
      EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool, Config{m}), want))
          << "n=" << n << " method=" << int(m);
    }
  }
}

TYPED_TEST(MsmTest, LargerSizesMatchLogs) {
  using F = TypeParam;
  ThreadPool pool(2);
  for (std::size_t n : {257, 1000, 3001}) {
    Bases<F> b = make_bases<F>(n, this->rng_);
    std::vector<Fr> s = make_scalars(n, this->rng_);
    const ec::Jacobian<F> want = by_logs(b, s);
    if (n < 300) {
      EXPECT_TRUE(ec::eq(naive<F>(b.points, s), want)) << "harness, n=" << n;
    }
    EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool), want)) << "n=" << n;
  }
}

// Every window size, with few and many chunks: small windows make digits
// collide in buckets constantly, which drives the doubling and cancelling
// branches of the mixed addition.
TYPED_TEST(MsmTest, EveryWindowSize) {
  using F = TypeParam;
  ThreadPool pool(2);
  const std::size_t n = 67;
  Bases<F> b = make_bases<F>(n, this->rng_);
  std::vector<Fr> s = make_scalars(n, this->rng_);
  const ec::Jacobian<F> want = by_logs(b, s);
  // Reduction costs 2^c additions per window and chunk: keep c small enough for CI.
  for (unsigned c = 1; c <= 12; ++c) {
    for (std::size_t chunks : {std::size_t{1}, std::size_t{c <= 9 ? 3u : 1u}}) {
      Config cfg{Method::kPippenger, c, chunks, Buckets::kXyzz};
      EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool, cfg), want))
          << "xyzz c=" << c << " chunks=" << chunks;
      // Batches of 1 (no sharing), 3 (odd) and 64 (more than the points per bucket);
      // small batches invert often, so only on a few window sizes.
      if (c % 3 != 1) continue;
      for (std::size_t batch : {1, 3, 64}) {
        cfg = Config{Method::kPippenger, c, chunks, Buckets::kBatchAffine, batch};
        EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool, cfg), want))
            << "batch-affine c=" << c << " chunks=" << chunks << " batch=" << batch;
      }
    }
  }
}

// Repeated bases (P + P in a bucket), opposite bases with equal scalars
// (P + (-P) in a bucket) and bases at infinity.
TYPED_TEST(MsmTest, RepeatedOppositeAndInfiniteBases) {
  using F = TypeParam;
  ThreadPool pool(2);
  const std::size_t n = 200;
  Bases<F> b = make_bases<F>(n, this->rng_);
  std::vector<Fr> s = make_scalars(n, this->rng_);
  for (std::size_t i = 0; i + 4 < n; i += 5) {
    b.points[i + 1] = b.points[i];  // repeated, equal scalar
    b.logs[i + 1] = b.logs[i];
    s[i + 1] = s[i];
    b.points[i + 2] = ec::neg(b.points[i]);  // opposite, equal scalar
    b.logs[i + 2] = Fr::zero() - b.logs[i];
    s[i + 2] = s[i];
    b.points[i + 3] = ec::Affine<F>::identity();  // infinity, non-zero scalar
    s[i + 3] = Fr::random(this->rng_);
  }
  const ec::Jacobian<F> want = by_logs(b, s);
  for (unsigned c : {0u, 2u, 5u, 12u}) {
    for (Buckets kind : {Buckets::kXyzz, Buckets::kBatchAffine}) {
      Config cfg{c ? Method::kPippenger : Method::kAuto, c, 0, kind, kind == Buckets::kBatchAffine ? 16u : 0u};
      EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool, cfg), want))
          << "c=" << c << " buckets=" << int(kind);
    }
  }
  EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool, Config{Method::kDoubleAndAdd}), want));
}

// (r - 1) P + P = O and all-zero scalars give the identity.
TYPED_TEST(MsmTest, CancellingScalars) {
  using F = TypeParam;
  ThreadPool pool(2);
  Bases<F> b = make_bases<F>(40, this->rng_);
  std::vector<ec::Affine<F>> bases;
  std::vector<Fr> s;
  for (std::size_t i = 0; i < 20; ++i) {
    bases.push_back(b.points[i]);
    s.push_back(minus_one());
    bases.push_back(b.points[i]);
    s.push_back(Fr::one());
  }
  EXPECT_TRUE(msm(std::span<const ec::Affine<F>>(bases), s, pool).is_identity());
  std::vector<Fr> zeros(b.points.size(), Fr::zero());
  EXPECT_TRUE(msm(std::span<const ec::Affine<F>>(b.points), zeros, pool).is_identity());
}

// Every point lands in the same bucket of every window: batch-affine sends
// all but one addition per batch to the XYZZ overflow bucket.
TYPED_TEST(MsmTest, EqualScalars) {
  using F = TypeParam;
  ThreadPool pool(2);
  const std::size_t n = 300;
  Bases<F> b = make_bases<F>(n, this->rng_);
  const std::vector<Fr> s(n, Fr::random(this->rng_));
  const ec::Jacobian<F> want = by_logs(b, s);
  for (Buckets kind : {Buckets::kXyzz, Buckets::kBatchAffine}) {
    const Config cfg{Method::kPippenger, 12, 1, kind};
    EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), s, pool, cfg), want)) << int(kind);
  }
}

TYPED_TEST(MsmTest, UnreducedScalarAborts) {
  using F = TypeParam;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Bases<F> b = make_bases<F>(2, this->rng_);
  std::vector<Scalar> s(2);
  s[1].limb[3] = ff::u64{1} << 63;  // 2^255 > r
  EXPECT_DEATH(
      {
        ThreadPool pool(1);
        msm(std::span<const ec::Affine<F>>(b.points), std::span<const Scalar>(s), pool);
      },
      "not reduced");
}

TYPED_TEST(MsmTest, ThreadCountsAgree) {
  using F = TypeParam;
  const std::size_t n = 777;
  Bases<F> b = make_bases<F>(n, this->rng_);
  std::vector<Fr> s = make_scalars(n, this->rng_);
  const ec::Jacobian<F> want = by_logs(b, s);
  for (std::size_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    const ec::Jacobian<F> got = msm(std::span<const ec::Affine<F>>(b.points), s, pool);
    EXPECT_TRUE(ec::eq(got, want)) << "threads=" << threads;
    // Same affine point regardless of how the work was split.
    EXPECT_EQ(ec::to_affine(got), ec::to_affine(want)) << "threads=" << threads;
  }
}

TYPED_TEST(MsmTest, StandardFormScalarsAndLongerBases) {
  using F = TypeParam;
  ThreadPool pool(2);
  const std::size_t n = 100;
  Bases<F> b = make_bases<F>(n + 7, this->rng_);  // 7 extra bases are ignored
  std::vector<Fr> s = make_scalars(n, this->rng_);
  std::vector<Scalar> plain(n);
  for (std::size_t i = 0; i < n; ++i) plain[i] = s[i].to_int();
  const ec::Jacobian<F> want = by_logs(b, s);
  EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), std::span<const Scalar>(plain), pool), want));
  EXPECT_TRUE(ec::eq(msm(std::span<const ec::Affine<F>>(b.points), std::span<const Fr>(s), pool), want));
}

TEST(MsmPlan, Choices) {
  // One point: no buckets.
  EXPECT_EQ(make_plan(1, 1, 192).method, Method::kDoubleAndAdd);
  // 2^16 points single-threaded: a mid-size window, one chunk.
  const Plan p16 = make_plan(1 << 16, 1, 192);
  EXPECT_EQ(p16.method, Method::kPippenger);
  EXPECT_GE(p16.window_bits, 10u);
  EXPECT_LE(p16.window_bits, 15u);
  EXPECT_EQ(p16.point_chunks, 1u);
  EXPECT_EQ(p16.windows * p16.window_bits >= 256, true);
  // Bigger inputs take bigger windows.
  EXPECT_GT(make_plan(1 << 20, 1, 192).window_bits, p16.window_bits);
  // Many threads on few windows split points so every thread has work.
  const Plan wide = make_plan(1 << 16, 64, 192);
  EXPECT_GT(wide.point_chunks, 1u);
  EXPECT_GE(wide.windows * wide.point_chunks, 48u);
  // The bucket memory cap (64 MiB per task) binds for big buckets.
  EXPECT_EQ(make_plan(std::size_t{1} << 34, 1, 384).window_bits, 18u);
  EXPECT_LE(make_plan(std::size_t{1} << 34, 1, 768).window_bits, 17u);
  // Large windows batch their affine additions, small ones do not.
  EXPECT_EQ(make_plan(1 << 20, 1, 192).buckets, Buckets::kBatchAffine);
  EXPECT_GE(make_plan(1 << 20, 1, 192).affine_batch, 256u);
  EXPECT_EQ(make_plan(1000, 1, 192).buckets, Buckets::kXyzz);
  // Overrides are honoured.
  const Plan forced = make_plan(1000, 2, 192, Config{Method::kPippenger, 7, 5});
  EXPECT_EQ(forced.window_bits, 7u);
  EXPECT_EQ(forced.point_chunks, 5u);
  EXPECT_EQ(forced.windows, 37u);
}

}  // namespace
}  // namespace cuzk::msm
