#include "groth16/setup.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
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

namespace setup_detail {

// Each pool chunk starts its run of powers at omega^b and inverts its own
// denominators (one batch inversion per chunk): bit-identical to the serial
// formula, since field arithmetic is exact.
std::vector<Fr> lagrange_at(const Fr& tau, std::size_t m, ThreadPool& pool) {
  unsigned log_m = 0;
  while ((std::size_t{1} << log_m) < m) ++log_m;
  // omega = 7^((r-1)/2^32) squared down to order m (bellperson's root).
  Fr omega = Fr::from_u64(ff::kFrGenerator).pow(Fr::kTrace);
  for (unsigned i = log_m; i < 32; ++i) omega = omega.square();
  const Fr zt_over_m = (tau.pow(std::uint64_t(m)) - Fr::one()) * Fr::from_u64(m).inverse();
  std::vector<Fr> out(m);
  pool.parallel_for(m, [&](std::size_t b, std::size_t e) {
    std::vector<Fr> pows(e - b), scratch(e - b);
    const std::span<Fr> denom(out.data() + b, e - b);
    Fr w = omega.pow(std::uint64_t(b));
    for (std::size_t j = 0; j < e - b; ++j) {
      pows[j] = w;
      denom[j] = tau - w;
      if (denom[j].is_zero()) throw SetupError("tau is a root of unity of the domain; draw new toxic waste");
      w *= omega;
    }
    ff::batch_inverse<Fr>(denom, scratch);
    for (std::size_t j = 0; j < e - b; ++j) denom[j] = pows[j] * denom[j] * zt_over_m;
  });
  return out;
}

// Scatter of the CSR entries into columns. Parallel without per-thread
// partial sums (130M columns x 32 B each would not fit): the column space is
// cut into one range per task and every task scans all entries, keeping those
// of its range. A scan is a streaming read of 8 B per entry, so the extra
// reads cost less than the random writes they spread out; sums per column
// still run in row order, so the result equals the serial scatter exactly.
// Measured here (tests/unit/groth16/setup_test.cpp DISABLED_ScatterTiming,
// random columns, mostly non-unit coefficients, a shared 2-core machine):
// 33M entries over 4.2M columns took 11.8 s serially, ~355 ns per entry,
// so the 32 GiB shape's 720M entries would take minutes serially: too slow
// for the ~40 s budget, hence the split (per task: a ~1 ns/entry streaming
// scan plus 1/T of the scatter, into 1/T of the column array).
std::vector<Fr> evaluate_columns(const R1cs& r1cs, const CsrMatrix& mat, std::span<const Fr> lagrange,
                                 ThreadPool& pool) {
  const std::size_t cols = r1cs.num_variables();
  std::vector<Fr> out(cols, Fr::zero());
  const std::size_t tasks = std::min<std::size_t>(pool.size(), std::max<std::size_t>(1, cols));
  const std::size_t width = (cols + tasks - 1) / tasks;
  pool.run_tasks(tasks, [&](std::size_t task) {
    const std::uint32_t lo = std::uint32_t(task * width);
    const std::uint32_t span_cols = std::uint32_t(std::min(cols, (task + 1) * width) - std::min(cols, task * width));
    for (std::size_t row = 0; row < mat.rows(); ++row) {
      const Fr& lr = lagrange[row];
      for (std::uint64_t k = mat.row_start[row]; k < mat.row_start[row + 1]; ++k) {
        const std::uint32_t c = mat.col[k];
        if (c - lo >= span_cols) continue;  // outside [lo, lo + span_cols), unsigned wrap included
        const std::uint32_t id = mat.coeff_id[k];
        if (id == R1cs::kCoeffOne) {
          out[c] += lr;
        } else if (id == R1cs::kCoeffMinusOne) {
          out[c] -= lr;
        } else {
          out[c] += r1cs.coeff(id) * lr;
        }
      }
    }
  });
  return out;
}

}  // namespace setup_detail

void SetupScalars::h_range(std::size_t begin, std::span<Fr> out, ThreadPool& pool) const {
  pool.parallel_for(out.size(), [&](std::size_t b, std::size_t e) {
    Fr c = h0 * tw.tau.pow(std::uint64_t(begin + b));
    for (std::size_t i = b; i < e; ++i) {
      out[i] = c;
      c *= tw.tau;
    }
  });
}

SetupScalars compute_setup_scalars(const R1cs& r1cs, const ToxicWaste& tw, ThreadPool& pool) {
  const std::size_t m = std::size_t(domain_size(r1cs));
  const std::size_t n_in = r1cs.num_inputs(), n_aux = r1cs.num_aux();
  SetupScalars s;
  s.tw = tw;
  s.num_h = m - 1;
  std::vector<Fr> at, bt, ct;
  {
    const std::vector<Fr> lag = setup_detail::lagrange_at(tw.tau, m, pool);
    at = setup_detail::evaluate_columns(r1cs, r1cs.a(), lag, pool);
    bt = setup_detail::evaluate_columns(r1cs, r1cs.b(), lag, pool);
    ct = setup_detail::evaluate_columns(r1cs, r1cs.c(), lag, pool);
  }
  const Fr gamma_inv = tw.gamma.inverse(), delta_inv = tw.delta.inverse();
  s.h0 = (tw.tau.pow(std::uint64_t(m)) - Fr::one()) * delta_inv;  // t(tau) / delta

  // ic and l in place of C's evaluations; the first unconstrained aux (if any) is reported.
  std::atomic<std::size_t> first_unconstrained{SIZE_MAX};
  pool.parallel_for(n_in + n_aux, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      const Fr v = tw.beta * at[k] + tw.alpha * bt[k] + ct[k];
      if (k < n_in) {
        ct[k] = v * gamma_inv;
      } else {
        if (v.is_zero()) {
          std::size_t seen = first_unconstrained.load();
          while (k < seen && !first_unconstrained.compare_exchange_weak(seen, k)) {
          }
        }
        ct[k] = v * delta_inv;
      }
    }
  });
  if (const std::size_t k = first_unconstrained.load(); k != SIZE_MAX) {
    throw SetupError("aux variable " + std::to_string(k - n_in) +
                     " is unconstrained (bellperson: UnconstrainedVariable)");
  }
  s.ic.assign(ct.begin(), ct.begin() + std::ptrdiff_t(n_in));
  ct.erase(ct.begin(), ct.begin() + std::ptrdiff_t(n_in));
  s.l = std::move(ct);

  // a: inputs, then the aux in a_aux density, compacted in place (write index <= read index).
  std::size_t w = n_in;
  for (std::size_t k = 0; k < n_aux; ++k) {
    if (r1cs.a_aux_density().get(k)) at[w++] = at[n_in + k];
  }
  at.resize(w);
  s.a = std::move(at);
  w = 0;
  for (std::size_t k = 0; k < n_in; ++k) {
    if (r1cs.b_input_density().get(k)) bt[w++] = bt[k];
  }
  for (std::size_t k = 0; k < n_aux; ++k) {
    if (r1cs.b_aux_density().get(k)) bt[w++] = bt[n_in + k];
  }
  bt.resize(w);
  bt.shrink_to_fit();  // B is sparse in PoRep (33M of 130M aux): give back the rest
  s.b = std::move(bt);
  return s;
}

Parameters generate_parameters(const R1cs& r1cs, const ToxicWaste& tw, ThreadPool& pool,
                               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const SetupScalars s = compute_setup_scalars(r1cs, tw, pool);
  const FixedBaseTable<ec::Fp> g1(ec::kG1Generator);
  const FixedBaseTable<ec::Fp2> g2(ec::kG2Generator);
  const std::uint64_t total = s.total_multiplications();
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
  p.vk.ic = batch_fixed_base(g1, s.ic, pool, tick);
  // h in slices so that its m - 1 scalars are never all in memory.
  p.h.resize(s.num_h);
  constexpr std::size_t kHSlice = std::size_t{1} << 20;
  std::vector<Fr> h_s(std::min(kHSlice, s.num_h));
  for (std::size_t start = 0; start < s.num_h; start += kHSlice) {
    const std::size_t n = std::min(kHSlice, s.num_h - start);
    const std::span<Fr> slice(h_s.data(), n);
    s.h_range(start, slice, pool);
    batch_fixed_base_into<ec::Fp>(g1, slice, std::span<ec::G1Affine>(p.h).subspan(start, n), pool, tick);
  }
  p.l = batch_fixed_base(g1, s.l, pool, tick);
  p.a = batch_fixed_base(g1, s.a, pool, tick);
  p.b_g1 = batch_fixed_base(g1, s.b, pool, tick);
  p.b_g2 = batch_fixed_base(g2, s.b, pool, tick);
  return p;
}

}  // namespace cuzk::groth16
