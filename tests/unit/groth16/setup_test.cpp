// The parallel building blocks of the setup (Lagrange evaluation at tau,
// column scatter, the shared setup scalars) against their serial formulas.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "groth16/setup.hpp"
#include "unit/groth16/random_r1cs.hpp"

namespace cuzk::groth16 {
namespace {

Fr root_of_unity(std::size_t m) {
  unsigned log_m = 0;
  while ((std::size_t{1} << log_m) < m) ++log_m;
  Fr w = Fr::from_u64(ff::kFrGenerator).pow(Fr::kTrace);  // order 2^32
  for (unsigned i = log_m; i < 32; ++i) w = w.square();
  return w;
}

// The serial scatter the parallel one must reproduce.
std::vector<Fr> serial_columns(const R1cs& r1cs, const CsrMatrix& mat, const std::vector<Fr>& lag) {
  std::vector<Fr> out(r1cs.num_variables(), Fr::zero());
  for (std::size_t row = 0; row < mat.rows(); ++row) {
    for (std::uint64_t k = mat.row_start[row]; k < mat.row_start[row + 1]; ++k) {
      out[mat.col[k]] += r1cs.coeff(mat.coeff_id[k]) * lag[row];
    }
  }
  return out;
}

TEST(SetupScalars, LagrangeMatchesDefinitionPerElement) {
  std::mt19937_64 rng(1);
  ThreadPool pool(3);  // uneven chunks
  for (std::size_t m : {std::size_t{1}, std::size_t{2}, std::size_t{1} << 10}) {
    const Fr tau = Fr::random(rng);
    const std::vector<Fr> lag = setup_detail::lagrange_at(tau, m, pool);
    ASSERT_EQ(lag.size(), m);
    const Fr omega = root_of_unity(m);
    const Fr zt = tau.pow(std::uint64_t(m)) - Fr::one();
    Fr w = Fr::one(), sum = Fr::zero();
    for (std::size_t j = 0; j < m; ++j) {
      // L_j(tau) = w^j (tau^m - 1) / (m (tau - w^j)), one inversion per element.
      const Fr expect = w * zt * (Fr::from_u64(m) * (tau - w)).inverse();
      ASSERT_EQ(lag[j], expect) << "m=" << m << " j=" << j;
      sum += lag[j];
      w *= omega;
    }
    EXPECT_EQ(sum, Fr::one()) << "the Lagrange basis sums to 1 at any point, m=" << m;
  }
}

TEST(SetupScalars, LagrangeRejectsTauInTheDomain) {
  ThreadPool pool(2);
  const std::size_t m = 64;
  const Fr tau = root_of_unity(m).pow(std::uint64_t(37));
  EXPECT_THROW(setup_detail::lagrange_at(tau, m, pool), SetupError);
}

TEST(SetupScalars, ColumnsMatchSerialScatter) {
  std::mt19937_64 rng(2);
  const R1cs r1cs = test::random_r1cs(rng, 5, 700, 900, 6);
  const std::size_t m = std::size_t(domain_size(r1cs));
  for (std::size_t threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    const std::vector<Fr> lag = setup_detail::lagrange_at(Fr::random(rng), m, pool);
    for (const CsrMatrix* mat : {&r1cs.a(), &r1cs.b(), &r1cs.c()}) {
      EXPECT_EQ(setup_detail::evaluate_columns(r1cs, *mat, lag, pool), serial_columns(r1cs, *mat, lag))
          << threads << " threads";
    }
  }
}

TEST(SetupScalars, VectorsFollowBellpersonFormulas) {
  std::mt19937_64 rng(3);
  ThreadPool pool(3);
  const R1cs r1cs = test::random_r1cs(rng, 4, 300, 333, 4);
  const ToxicWaste tw{Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng)};
  const SetupScalars s = compute_setup_scalars(r1cs, tw, pool);
  const std::size_t m = std::size_t(domain_size(r1cs)), n_in = r1cs.num_inputs(), n_aux = r1cs.num_aux();
  const std::vector<Fr> lag = setup_detail::lagrange_at(tw.tau, m, pool);
  const std::vector<Fr> at = serial_columns(r1cs, r1cs.a(), lag), bt = serial_columns(r1cs, r1cs.b(), lag),
                        ct = serial_columns(r1cs, r1cs.c(), lag);

  ASSERT_EQ(s.num_h, m - 1);
  // h_i = tau^i t(tau) / delta, t(x) = x^m - 1; every slice start.
  std::vector<Fr> h(m - 1);
  Fr c = (tw.tau.pow(std::uint64_t(m)) - Fr::one()) * tw.delta.inverse();
  for (auto& x : h) {
    x = c;
    c *= tw.tau;
  }
  for (std::size_t begin : {std::size_t{0}, std::size_t{1}, std::size_t{100}}) {
    std::vector<Fr> got(m - 1 - begin);
    s.h_range(begin, got, pool);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), h.begin() + std::ptrdiff_t(begin))) << "begin " << begin;
  }
  ASSERT_EQ(s.ic.size(), n_in);
  ASSERT_EQ(s.l.size(), n_aux);
  for (std::size_t k = 0; k < n_in + n_aux; ++k) {
    const Fr v = tw.beta * at[k] + tw.alpha * bt[k] + ct[k];
    if (k < n_in) {
      EXPECT_EQ(s.ic[k], v * tw.gamma.inverse()) << k;
    } else {
      EXPECT_EQ(s.l[k - n_in], v * tw.delta.inverse()) << k;
    }
  }
  std::vector<Fr> a(at.begin(), at.begin() + std::ptrdiff_t(n_in)), b;
  for (std::size_t k = 0; k < n_aux; ++k) {
    if (r1cs.a_aux_density().get(k)) a.push_back(at[n_in + k]);
  }
  for (std::size_t k = 0; k < n_in; ++k) {
    if (r1cs.b_input_density().get(k)) b.push_back(bt[k]);
  }
  for (std::size_t k = 0; k < n_aux; ++k) {
    if (r1cs.b_aux_density().get(k)) b.push_back(bt[n_in + k]);
  }
  EXPECT_LT(a.size(), n_in + n_aux);  // the generator makes both densities partial
  EXPECT_LT(b.size(), n_in + n_aux);
  EXPECT_EQ(s.a, a);
  EXPECT_EQ(s.b, b);
  EXPECT_EQ(s.total_multiplications(), (m - 1) + n_in + n_aux + a.size() + 2 * b.size());
}

TEST(SetupScalars, UnconstrainedAuxIsAnError) {
  std::mt19937_64 rng(4);
  ThreadPool pool(2);
  // 10 aux but only 6 circuit rows: aux 6..9 occur nowhere in C; drop A/B extras too.
  const R1cs r1cs = test::random_r1cs(rng, 2, 10, 6, 0);
  const ToxicWaste tw{Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng)};
  try {
    (void)compute_setup_scalars(r1cs, tw, pool);
    FAIL() << "expected SetupError";
  } catch (const SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("aux variable 6 "), std::string::npos) << e.what();
  }
}

// Timing of the column scatter on a large random R1cs (not a test: run with
// --gtest_also_run_disabled_tests --gtest_filter='*ScatterTiming*').
TEST(SetupScalars, DISABLED_ScatterTiming) {
  std::mt19937_64 rng(5);
  const std::size_t rows = std::size_t{1} << 22;
  const R1cs r1cs = test::random_r1cs(rng, 2, rows, rows - 2, 6);
  const std::size_t nnz = r1cs.a().nnz() + r1cs.b().nnz() + r1cs.c().nnz();
  const std::size_t m = std::size_t(domain_size(r1cs));
  for (std::size_t threads : {1, 2}) {
    ThreadPool pool(threads);
    const std::vector<Fr> lag = setup_detail::lagrange_at(Fr::from_u64(12345), m, pool);
    const auto t0 = std::chrono::steady_clock::now();
    for (const CsrMatrix* mat : {&r1cs.a(), &r1cs.b(), &r1cs.c()}) {
      (void)setup_detail::evaluate_columns(r1cs, *mat, lag, pool);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("scatter: %zu non-zeros, %zu columns, %zu threads: %.2f s (%.1f ns/entry)\n", nnz, r1cs.num_variables(),
                threads, s, s * 1e9 / double(nnz));
  }
}

}  // namespace
}  // namespace cuzk::groth16
