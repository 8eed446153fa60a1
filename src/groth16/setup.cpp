#include "groth16/setup.hpp"

#include <vector>

#include "ec/curve.hpp"
#include "groth16/fixed_base.hpp"
#include "util/secure_random.hpp"

namespace cuzk::groth16 {

using ec::Affine;
using ec::Jacobian;
using ff::Fr;

ToxicWaste random_toxic_waste() {
  SecureRandom rng;
  auto nz = [&] {
    for (;;) {
      Fr x = Fr::random(rng);
      if (!x.is_zero()) return x;
    }
  };
  return {nz(), nz(), nz(), nz(), nz()};
}

namespace {

// L_j(tau) for the domain of size m: omega^j (tau^m - 1) / (m (tau - omega^j)).
std::vector<Fr> lagrange_at(const Fr& tau, std::size_t m, ThreadPool& pool) {
  unsigned log_m = 0;
  while ((std::size_t{1} << log_m) < m) ++log_m;
  // omega = 7^((r-1)/2^32) squared down to order m (bellperson's root).
  Fr omega = Fr::from_u64(ff::kFrGenerator).pow(Fr::kTrace);
  for (unsigned i = log_m; i < 32; ++i) omega = omega.square();
  std::vector<Fr> pows(m), denom(m), scratch(m);
  Fr w = Fr::one();
  for (std::size_t j = 0; j < m; ++j) {
    pows[j] = w;
    denom[j] = tau - w;
    w *= omega;
  }
  if (std::any_of(denom.begin(), denom.end(), [](const Fr& d) { return d.is_zero(); })) {
    throw SetupError("tau is a root of unity of the domain; draw new toxic waste");
  }
  ff::batch_inverse<Fr>(denom, scratch);
  const Fr zt_over_m = (tau.pow(std::uint64_t(m)) - Fr::one()) * Fr::from_u64(m).inverse();
  pool.parallel_for(m, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) denom[j] = pows[j] * denom[j] * zt_over_m;
  });
  return denom;
}

// Sum over rows of coeff * L_row(tau) per column of one matrix.
std::vector<Fr> evaluate_columns(const R1cs& r1cs, const CsrMatrix& mat, std::span<const Fr> lagrange) {
  std::vector<Fr> out(r1cs.num_variables(), Fr::zero());
  for (std::size_t row = 0; row < mat.rows(); ++row) {
    for (std::uint64_t k = mat.row_start[row]; k < mat.row_start[row + 1]; ++k) {
      out[mat.col[k]] += r1cs.coeff(mat.coeff_id[k]) * lagrange[row];
    }
  }
  return out;
}

}  // namespace

Parameters generate_parameters(const R1cs& r1cs, const ToxicWaste& tw, ThreadPool& pool,
                               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const std::size_t m = std::size_t(domain_size(r1cs));
  const std::size_t n_in = r1cs.num_inputs(), n_aux = r1cs.num_aux();
  const std::vector<Fr> lag = lagrange_at(tw.tau, m, pool);
  const std::vector<Fr> at = evaluate_columns(r1cs, r1cs.a(), lag);
  const std::vector<Fr> bt = evaluate_columns(r1cs, r1cs.b(), lag);
  const std::vector<Fr> ct = evaluate_columns(r1cs, r1cs.c(), lag);

  const Fr gamma_inv = tw.gamma.inverse(), delta_inv = tw.delta.inverse();
  std::vector<Fr> h_s(m - 1), ic_s(n_in), l_s(n_aux), a_s, b_s;
  Fr t = tw.tau.pow(std::uint64_t(m)) - Fr::one();  // t(tau)
  Fr coeff = t * delta_inv;
  for (std::size_t i = 0; i + 1 < m; ++i) {
    h_s[i] = coeff;
    coeff *= tw.tau;
  }
  for (std::size_t k = 0; k < n_in + n_aux; ++k) {
    Fr v = tw.beta * at[k] + tw.alpha * bt[k] + ct[k];
    if (k < n_in) {
      ic_s[k] = v * gamma_inv;
    } else {
      if (v.is_zero()) {
        throw SetupError("aux variable " + std::to_string(k - n_in) +
                         " is unconstrained (bellperson: UnconstrainedVariable)");
      }
      l_s[k - n_in] = v * delta_inv;
    }
  }
  for (std::size_t k = 0; k < n_in; ++k) a_s.push_back(at[k]);
  for (std::size_t k = 0; k < n_aux; ++k) {
    if (r1cs.a_aux_density().get(k)) a_s.push_back(at[n_in + k]);
  }
  for (std::size_t k = 0; k < n_in; ++k) {
    if (r1cs.b_input_density().get(k)) b_s.push_back(bt[k]);
  }
  for (std::size_t k = 0; k < n_aux; ++k) {
    if (r1cs.b_aux_density().get(k)) b_s.push_back(bt[n_in + k]);
  }

  const FixedBaseTable<ec::Fp> g1(ec::kG1Generator);
  const FixedBaseTable<ec::Fp2> g2(ec::kG2Generator);
  const std::uint64_t total = h_s.size() + ic_s.size() + l_s.size() + a_s.size() + 2 * b_s.size();
  std::uint64_t done = 0;
  auto tick = [&](std::uint64_t n) {
    done += n;
    if (progress) progress(done, total);
  };

  Parameters p;
  auto one_g1 = [&](const Fr& k) { return ec::to_affine(g1.mul(k)); };
  auto one_g2 = [&](const Fr& k) { return ec::to_affine(g2.mul(k)); };
  p.vk.alpha_g1 = one_g1(tw.alpha);
  p.vk.beta_g1 = one_g1(tw.beta);
  p.vk.beta_g2 = one_g2(tw.beta);
  p.vk.gamma_g2 = one_g2(tw.gamma);
  p.vk.delta_g1 = one_g1(tw.delta);
  p.vk.delta_g2 = one_g2(tw.delta);
  p.vk.ic = batch_fixed_base(g1, ic_s, pool, tick);
  p.h = batch_fixed_base(g1, h_s, pool, tick);
  p.l = batch_fixed_base(g1, l_s, pool, tick);
  p.a = batch_fixed_base(g1, a_s, pool, tick);
  p.b_g1 = batch_fixed_base(g1, b_s, pool, tick);
  p.b_g2 = batch_fixed_base(g2, b_s, pool, tick);
  return p;
}

}  // namespace cuzk::groth16
