// GPU Fr NTT against host references: a naive O(n^2) DFT for small sizes, and
// for large sizes the round trip plus evaluations of the input polynomial at
// randomly chosen domain points (Horner on the host).
#include <gtest/gtest.h>

#include <vector>

#include "gpu_test_util.hpp"
#include "host_ref.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;

std::vector<Fr> random_vector(std::mt19937_64& rng, std::size_t n) {
  std::vector<Fr> v(n);
  for (auto& x : v) x = Fr::random(rng);
  return v;
}

// Evaluation point of output k: w^k, times g = 7 on the coset.
Fr domain_point(int log_n, std::size_t k, NttDomain domain) {
  Fr p = ref::root_of_unity(log_n).pow(std::uint64_t(k));
  return domain == NttDomain::kCoset ? p * Fr::from_u64(7) : p;
}

TEST(GpuNtt, MatchesNaiveDftOnSmallSizes) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(11);
  auto dev = test::make_device();
  for (int log_n : {1, 2, 5, 10}) {
    const std::size_t n = std::size_t{1} << log_n;
    const std::vector<Fr> x = random_vector(rng, n);
    for (NttDomain domain : {NttDomain::kStandard, NttDomain::kCoset}) {
      // Expected forward: X_k = p(point_k), by a naive DFT (Horner per output).
      std::vector<Fr> expect(n);
      for (std::size_t k = 0; k < n; ++k) expect[k] = ref::evaluate(x, domain_point(log_n, k, domain));
      std::vector<Fr> got = x;
      dev->ntt(std::span<Fr>(got), NttDirection::kForward, domain);
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(got[k], expect[k]) << "forward log_n=" << log_n << " coset=" << int(domain) << " k=" << k;
      }
      // Inverse maps the evaluations back to the coefficients.
      dev->ntt(std::span<Fr>(got), NttDirection::kInverse, domain);
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(got[k], x[k]) << "inverse log_n=" << log_n << " coset=" << int(domain) << " k=" << k;
      }
    }
  }
}

TEST(GpuNtt, LargeSizesRoundTripAndSpotChecks) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(12);
  auto dev = test::make_device();
  // Pass splits: 2^13 = 6 + 7 stages, 2^17 = 8 + 9, 2^20 = 10 + 10.
  for (int log_n : {13, 17, 20}) {
    const std::size_t n = std::size_t{1} << log_n;
    const std::vector<Fr> x = random_vector(rng, n);
    for (NttDomain domain : {NttDomain::kStandard, NttDomain::kCoset}) {
      DeviceFrVector v = dev->upload(x);
      dev->ntt(v, NttDirection::kForward, domain);
      std::vector<Fr> got(n);
      dev->download(v, got);
      std::vector<std::size_t> ks = {0, 1, n / 2, n - 1};
      for (int i = 0; i < 6; ++i) ks.push_back(std::size_t(rng() % n));
      for (std::size_t k : ks) {
        ASSERT_EQ(got[k], ref::evaluate(x, domain_point(log_n, k, domain)))
            << "forward log_n=" << log_n << " coset=" << int(domain) << " k=" << k;
      }
      dev->ntt(v, NttDirection::kInverse, domain);
      dev->download(v, got);
      for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], x[k]) << "round trip log_n=" << log_n << " k=" << k;
    }
  }
}

TEST(GpuNtt, RejectsBadSizes) {
  CUZK_REQUIRE_GPU();
  auto dev = test::make_device();
  std::vector<Fr> x(3, Fr::one());
  try {
    dev->ntt(std::span<Fr>(x), NttDirection::kForward, NttDomain::kStandard);
    FAIL() << "size 3 must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

}  // namespace
}  // namespace cuzk::gpu
