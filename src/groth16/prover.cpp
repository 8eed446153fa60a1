#include "groth16/prover.hpp"

#include "ec/curve.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "util/secure_random.hpp"

namespace cuzk::groth16 {

using ec::G1Jacobian;
using ec::G2Jacobian;
using ff::Fr;
using Scalar = ff::BigInt<4>;

Blinding random_blinding() {
  SecureRandom rng;
  return {Fr::random(rng), Fr::random(rng)};
}

void check_inputs(const Parameters& params, const R1cs& r1cs, const Witness& w) {
  if (w.inputs.size() != r1cs.num_inputs() || w.aux.size() != r1cs.num_aux()) {
    throw ParamsError(ParamsErrorKind::kShapeMismatch,
                      "witness has " + std::to_string(w.inputs.size()) + " inputs and " + std::to_string(w.aux.size()) +
                          " aux, the circuit needs " + std::to_string(r1cs.num_inputs()) + " and " +
                          std::to_string(r1cs.num_aux()));
  }
  check_shape(params, ExpectedShape{
                          .num_inputs = r1cs.num_inputs(),
                          .num_aux = r1cs.num_aux(),
                          .domain_size = std::size_t(domain_size(r1cs)),
                          .a_len = r1cs.num_inputs() + r1cs.a_aux_density().popcount(),
                          .b_len = r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount(),
                      });
}

std::vector<Fr> compute_h(const R1cs& r1cs, const Witness& w, ThreadPool& pool, SatisfactionCheck check) {
  const std::size_t m = std::size_t(domain_size(r1cs));
  unsigned log_m = 0;
  while ((std::size_t{1} << log_m) < m) ++log_m;
  ntt::Domain domain(log_m);
  AbcEvaluations e = evaluate(r1cs, w.inputs, w.aux, pool, check);
  e.a.resize(m, Fr::zero());
  e.b.resize(m, Fr::zero());
  e.c.resize(m, Fr::zero());
  for (auto* v : {&e.a, &e.b, &e.c}) {
    ntt::intt(domain, *v, pool);
    ntt::coset_ntt(domain, *v, pool);
  }
  // On the coset g.<omega>, Z(x) = x^m - 1 takes the constant value g^m - 1.
  const Fr z_inv = ntt::vanishing_on_coset_inv(domain);
  pool.parallel_for(m, [&](std::size_t b, std::size_t end) {
    for (std::size_t i = b; i < end; ++i) e.a[i] = (e.a[i] * e.b[i] - e.c[i]) * z_inv;
  });
  ntt::coset_intt(domain, e.a, pool);
  e.a.resize(m - 1);  // deg H <= m - 2
  return std::move(e.a);
}

namespace {

std::vector<Scalar> to_scalars(std::span<const Fr> xs, ThreadPool& pool) {
  std::vector<Scalar> out(xs.size());
  pool.parallel_for(xs.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) out[i] = xs[i].to_int();
  });
  return out;
}

// Scalars of the variables whose density bit is set, in index order.
std::vector<Scalar> select(std::span<const Scalar> xs, const BitVec& density) {
  std::vector<Scalar> out;
  out.reserve(density.popcount());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (density.get(i)) out.push_back(xs[i]);
  }
  return out;
}

}  // namespace

MsmResults compute_msms(const Parameters& params, const R1cs& r1cs, const Witness& w, std::span<const Fr> h,
                        ThreadPool& pool) {
  const std::vector<Scalar> inputs = to_scalars(w.inputs, pool);
  const std::vector<Scalar> aux = to_scalars(w.aux, pool);
  const std::vector<Scalar> hs = to_scalars(h, pool);
  const std::size_t n_in = inputs.size();
  std::span<const ec::G1Affine> a_bases(params.a);

  MsmResults r;
  r.h = msm::msm(std::span<const ec::G1Affine>(params.h), hs, pool);
  r.l = msm::msm(std::span<const ec::G1Affine>(params.l), aux, pool);

  // A: every input (their input constraints make them dense), then the aux
  // variables that occur in A.
  const std::vector<Scalar> a_aux = select(aux, r1cs.a_aux_density());
  r.a = ec::add(msm::msm(a_bases.subspan(0, n_in), inputs, pool), msm::msm(a_bases.subspan(n_in), a_aux, pool));

  // B: inputs selected by b_input density, then aux by b_aux density.
  const std::vector<Scalar> b_in = select(inputs, r1cs.b_input_density());
  const std::vector<Scalar> b_aux = select(aux, r1cs.b_aux_density());
  std::span<const ec::G1Affine> b1(params.b_g1);
  std::span<const ec::G2Affine> b2(params.b_g2);
  r.b_g1 = ec::add(msm::msm(b1.subspan(0, b_in.size()), b_in, pool), msm::msm(b1.subspan(b_in.size()), b_aux, pool));
  r.b_g2 = ec::add(msm::msm(b2.subspan(0, b_in.size()), b_in, pool), msm::msm(b2.subspan(b_in.size()), b_aux, pool));
  return r;
}

Proof assemble_proof(const VerifyingKey& vk, const MsmResults& m, const Blinding& rs) {
  // r and s are secret: constant-time scalar multiplications.
  const Fr& r = rs.r;
  const Fr& s = rs.s;
  G1Jacobian a = ec::add(ec::add_mixed(m.a, vk.alpha_g1), ec::mul_ct(vk.delta_g1, r));
  G2Jacobian b2 = ec::add(ec::add_mixed(m.b_g2, vk.beta_g2), ec::mul_ct(vk.delta_g2, s));
  G1Jacobian c = ec::add(m.h, m.l);
  c = ec::add(c, ec::mul_ct(m.a, s));
  c = ec::add(c, ec::mul_ct(m.b_g1, r));
  c = ec::add(c, ec::mul_ct(vk.delta_g1, r * s));
  c = ec::add(c, ec::mul_ct(vk.alpha_g1, s));
  c = ec::add(c, ec::mul_ct(vk.beta_g1, r));
  return Proof{ec::to_affine(a), ec::to_affine(b2), ec::to_affine(c)};
}

std::vector<Proof> CpuProver::prove(const Parameters& params, const R1cs& r1cs, std::span<const Witness> witnesses,
                                    std::span<const Blinding> blinding) {
  if (blinding.size() != witnesses.size()) {
    throw ParamsError(ParamsErrorKind::kShapeMismatch, "one blinding pair per witness is required");
  }
  std::vector<Proof> out;
  out.reserve(witnesses.size());
  for (std::size_t i = 0; i < witnesses.size(); ++i) {
    check_inputs(params, r1cs, witnesses[i]);
    std::vector<Fr> h = compute_h(r1cs, witnesses[i], pool_, options_.satisfaction);
    MsmResults m = compute_msms(params, r1cs, witnesses[i], h, pool_);
    out.push_back(assemble_proof(params.vk, m, blinding[i]));
  }
  return out;
}

}  // namespace cuzk::groth16
