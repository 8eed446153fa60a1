// GPU Fr NTT against host references: a naive O(n^2) DFT for small sizes, and
// for large sizes the round trip plus evaluations of the input polynomial at
// randomly chosen domain points (Horner on the host).
#include <gtest/gtest.h>

#include <vector>

#include "gpu_test_util.hpp"
#include "host_ref.hpp"
#include "ntt/ntt.hpp"

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

// The lean radix-4 passes (gpu/ntt/ntt_lean.cu) through Device::ntt against
// the CPU NTT of src/ntt on random inputs: every size 2^6..2^20 (pass splits
// 3+3 up to 9+9, then 7+7+6 ...) and 2^24 (8+8+8), forward / inverse / coset
// forward (g^i fused into the first pass) / coset inverse, then the round trip.
TEST(GpuNtt, EverySizeMatchesCpuNtt) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(16);
  auto dev = test::make_device();
  ThreadPool pool(0);
  std::vector<int> sizes;
  for (int log_n = 6; log_n <= 20; ++log_n) sizes.push_back(log_n);
  sizes.push_back(24);
  for (int log_n : sizes) {
    const std::size_t n = std::size_t{1} << log_n;
    const ntt::Domain domain(static_cast<unsigned>(log_n));
    const std::vector<Fr> x = random_vector(rng, n);
    struct Case {
      NttDirection dir;
      NttDomain dom;
      void (*cpu)(const ntt::Domain&, std::span<Fr>, ThreadPool&);
    };
    const Case cases[] = {{NttDirection::kForward, NttDomain::kStandard, &ntt::ntt},
                          {NttDirection::kInverse, NttDomain::kStandard, &ntt::intt},
                          {NttDirection::kForward, NttDomain::kCoset, &ntt::coset_ntt},
                          {NttDirection::kInverse, NttDomain::kCoset, &ntt::coset_intt}};
    for (const Case& c : cases) {
      if (log_n > 20 && c.dom == NttDomain::kStandard) continue;  // 2^24: coset both ways (a few seconds)
      std::vector<Fr> expect = x;
      c.cpu(domain, expect, pool);
      DeviceFrVector v = dev->upload(x);
      dev->ntt(v, c.dir, c.dom);
      std::vector<Fr> got(n);
      dev->download(v, got);
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(got[k], expect[k]) << "log_n=" << log_n << " inverse=" << int(c.dir) << " coset=" << int(c.dom)
                                     << " k=" << k;
      }
      // And back: the opposite direction on the device returns x.
      dev->ntt(v, c.dir == NttDirection::kForward ? NttDirection::kInverse : NttDirection::kForward, c.dom);
      dev->download(v, got);
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(got[k], x[k]) << "round trip log_n=" << log_n << " k=" << k;
      }
    }
  }
}

// Below 2^6 the radix-2 kernels run, from 2^6 the lean passes (tiles
// narrower than a warp's 32 banks at first); around the switch, the naive DFT.
TEST(GpuNtt, SmallSizesAroundTheRadix2SwitchMatchNaiveDft) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(17);
  auto dev = test::make_device();
  for (int log_n : {1, 3, 5, 6, 7, 8, 9}) {
    const std::size_t n = std::size_t{1} << log_n;
    const std::vector<Fr> x = random_vector(rng, n);
    for (NttDomain domain : {NttDomain::kStandard, NttDomain::kCoset}) {
      std::vector<Fr> got = x;
      dev->ntt(std::span<Fr>(got), NttDirection::kForward, domain);
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(got[k], ref::evaluate(x, domain_point(log_n, k, domain))) << "log_n=" << log_n << " k=" << k;
      }
      dev->ntt(std::span<Fr>(got), NttDirection::kInverse, domain);
      for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(got[k], x[k]) << "inverse log_n=" << log_n << " k=" << k;
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
