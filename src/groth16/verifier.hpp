// Groth16 verification with a prepared verifying key.
//
// Single proof (bellperson's verify_proof):
//   e(A, B) * e(acc, -gamma) * e(C, -delta) == e(alpha, beta),
//   acc = IC_0 + sum_i x_i IC_{i+1}
// as one multi-Miller loop and one final exponentiation.
//
// Batch (Zcash protocol spec, appendix B.2): with random 128-bit z_j,
//   prod_j e(z_j A_j, B_j) * e(sum_j z_j acc_j, -gamma) * e(sum_j z_j C_j, -delta)
//     * e(-(sum_j z_j) alpha, beta) == 1
// costs n + 3 Miller loops and ONE final exponentiation for n proofs; a false
// batch passes with probability about 2^-128.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ff/fp12.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "pairing/pairing.hpp"

namespace cuzk::groth16 {

struct PreparedVerifyingKey {
  ff::Fp12 alpha_beta;  // e(alpha, beta)
  ec::G1Affine alpha_g1;
  pairing::G2Prepared beta_g2;
  pairing::G2Prepared neg_gamma_g2;
  pairing::G2Prepared neg_delta_g2;
  std::vector<ec::G1Affine> ic;
};

PreparedVerifyingKey prepare_verifying_key(const VerifyingKey& vk);

enum class VerifyResult : std::uint8_t {
  kValid,
  kInvalid,          // the pairing equation does not hold
  kWrongInputCount,  // public inputs do not match |IC| - 1
};
std::string_view to_string(VerifyResult r);

// `public_inputs` excludes the ONE input.
VerifyResult verify(const PreparedVerifyingKey& pvk, const Proof& proof, std::span<const ff::Fr> public_inputs);

struct BatchItem {
  const Proof* proof;
  std::span<const ff::Fr> public_inputs;
};
// Random weights come from the kernel's CSPRNG.
VerifyResult verify_batch(const PreparedVerifyingKey& pvk, std::span<const BatchItem> items);

}  // namespace cuzk::groth16
