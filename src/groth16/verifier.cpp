#include "groth16/verifier.hpp"

#include "ec/curve.hpp"
#include "util/secure_random.hpp"

namespace cuzk::groth16 {

using ec::G1Jacobian;
using ff::Fr;

std::string_view to_string(VerifyResult r) {
  switch (r) {
    case VerifyResult::kValid:
      return "valid";
    case VerifyResult::kInvalid:
      return "invalid";
    case VerifyResult::kWrongInputCount:
      return "wrong-input-count";
  }
  return "unknown";
}

PreparedVerifyingKey prepare_verifying_key(const VerifyingKey& vk) {
  return PreparedVerifyingKey{
      .alpha_beta = pairing::pairing(vk.alpha_g1, vk.beta_g2),
      .alpha_g1 = vk.alpha_g1,
      .beta_g2 = pairing::prepare(vk.beta_g2),
      .neg_gamma_g2 = pairing::prepare(ec::neg(vk.gamma_g2)),
      .neg_delta_g2 = pairing::prepare(ec::neg(vk.delta_g2)),
      .ic = vk.ic,
  };
}

namespace {

// IC_0 + sum x_i IC_{i+1}. Public inputs are few (Filecoin: at most a few
// thousand for WindowPoSt), so a plain loop of variable-time multiplications.
G1Jacobian input_accumulator(const std::vector<ec::G1Affine>& ic, std::span<const Fr> xs) {
  G1Jacobian acc = ec::from_affine(ic[0]);
  for (std::size_t i = 0; i < xs.size(); ++i) acc = ec::add(acc, ec::mul(ic[i + 1], xs[i]));
  return acc;
}

}  // namespace

VerifyResult verify(const PreparedVerifyingKey& pvk, const Proof& proof, std::span<const Fr> public_inputs) {
  if (public_inputs.size() + 1 != pvk.ic.size()) return VerifyResult::kWrongInputCount;
  ec::G1Affine acc = ec::to_affine(input_accumulator(pvk.ic, public_inputs));
  pairing::G2Prepared b = pairing::prepare(proof.b);
  const pairing::PreparedTerm terms[] = {{proof.a, b}, {acc, pvk.neg_gamma_g2}, {proof.c, pvk.neg_delta_g2}};
  ff::Fp12 f = pairing::final_exponentiation(pairing::miller_loop(terms));
  return f == pvk.alpha_beta ? VerifyResult::kValid : VerifyResult::kInvalid;
}

VerifyResult verify_batch(const PreparedVerifyingKey& pvk, std::span<const BatchItem> items) {
  if (items.empty()) return VerifyResult::kValid;
  for (const auto& it : items) {
    if (it.public_inputs.size() + 1 != pvk.ic.size()) return VerifyResult::kWrongInputCount;
  }
  SecureRandom rng;
  const std::size_t n = items.size();
  std::vector<ec::G1Affine> za(n);
  std::vector<pairing::G2Prepared> bs;
  bs.reserve(n);
  // Weighted sums: sum z_j C_j, sum z_j, and per input i sum_j z_j x_{j,i}.
  G1Jacobian c_acc = G1Jacobian::identity();
  Fr z_sum = Fr::zero();
  std::vector<Fr> input_weights(pvk.ic.size(), Fr::zero());
  for (std::size_t j = 0; j < n; ++j) {
    ff::BigInt<4> z{};
    z.limb[0] = rng();
    z.limb[1] = rng();  // 128-bit weight
    Fr zf = Fr::from_int(z);
    const Proof& p = *items[j].proof;
    za[j] = ec::to_affine(ec::mul(p.a, z));
    bs.push_back(pairing::prepare(p.b));
    c_acc = ec::add(c_acc, ec::mul(p.c, z));
    z_sum += zf;
    input_weights[0] += zf;
    for (std::size_t i = 0; i < items[j].public_inputs.size(); ++i) {
      input_weights[i + 1] += zf * items[j].public_inputs[i];
    }
  }
  G1Jacobian acc = G1Jacobian::identity();
  for (std::size_t i = 0; i < pvk.ic.size(); ++i) acc = ec::add(acc, ec::mul(pvk.ic[i], input_weights[i]));
  ec::G1Affine neg_alpha_sum = ec::to_affine(ec::neg(ec::mul(pvk.alpha_g1, z_sum)));
  ec::G1Affine acc_a = ec::to_affine(acc), c_a = ec::to_affine(c_acc);

  std::vector<pairing::PreparedTerm> terms;
  terms.reserve(n + 3);
  for (std::size_t j = 0; j < n; ++j) terms.push_back({za[j], bs[j]});
  terms.push_back({acc_a, pvk.neg_gamma_g2});
  terms.push_back({c_a, pvk.neg_delta_g2});
  terms.push_back({neg_alpha_sum, pvk.beta_g2});
  return pairing::final_exponentiation(pairing::miller_loop(terms)).is_one() ? VerifyResult::kValid
                                                                             : VerifyResult::kInvalid;
}

}  // namespace cuzk::groth16
