// snarkjs Groth16 proving keys (.zkey) and a prover with snarkjs' own
// H-query semantics, so that proofs made from a zkey verify with
// `snarkjs groth16 verify`.
//
// What differs from bellperson (all verified against snarkjs 0.7.6, see
// shared/docs/ORACLES.md sections 3-4):
//  - the zkey holds A and B coefficients only; a row's C value is a_row * b_row;
//  - coefficients are stored as v * R^2 mod r (R = 2^256), points as affine
//    48-byte little-endian Montgomery limbs with R = 2^384 (our Fp's R, so the
//    limbs are our Montgomery form), infinity as all zero bytes;
//  - roots of unity are powers of 5^((r-1)/2^32) (ffjavascript's choice), not 7;
//  - H is evaluated at the odd points of the 2n domain, omega_2n^(2j+1), and
//    is NOT divided by Z (the H bases already carry it);
//  - pi_C = sum_{i > nPublic} w_i C_i + sum_j p_j H_j + s pi_A + r B1 - r s delta.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

enum class ZkeyErrorKind : std::uint8_t {
  kIo,
  kBadMagic,
  kUnsupported,  // not Groth16, or a field other than BLS12-381
  kTruncated,
  kMissingSection,
  kMalformed,     // a value out of range, a point off the curve, ...
  kWrongWitness,  // witness length differs from nVars
};
std::string_view to_string(ZkeyErrorKind kind);

class ZkeyError : public std::runtime_error {
 public:
  ZkeyError(ZkeyErrorKind kind, const std::string& what)
      : std::runtime_error(std::string(to_string(kind)) + ": " + what), kind_(kind) {}
  ZkeyErrorKind kind() const { return kind_; }

 private:
  ZkeyErrorKind kind_;
};

struct ZkeyCoef {
  std::uint32_t matrix;  // 0 = A, 1 = B
  std::uint32_t row;
  std::uint32_t wire;
  ff::Fr value;
};

struct Zkey {
  std::uint32_t n_vars = 0, n_public = 0, domain_size = 0;
  ec::G1Affine alpha_g1, beta_g1, delta_g1;
  ec::G2Affine beta_g2, gamma_g2, delta_g2;
  std::vector<ec::G1Affine> ic, a, b_g1, c, h;
  std::vector<ec::G2Affine> b_g2;
  std::vector<ZkeyCoef> coefs;

  // The verifying key in our form (gamma is whatever the zkey holds).
  VerifyingKey verifying_key() const;
};

Zkey read_zkey(const std::filesystem::path& path, ThreadPool& pool);

// Writes a snarkjs zkey for `r1cs` (an imported circom circuit: inputs are
// wires 0..=nPublic, and its trailing input constraints are exactly snarkjs'
// public-input rows) from our own toxic waste, following zkey_new.js and
// zkey_contribute.js: A/B1/B2 = A_i, B_i at tau over ffjavascript's roots,
// IC = (beta A + alpha B + C)/gamma, C = (beta A + alpha B + C)/delta for
// private wires, H_j = L^{2n}_{2j+1}(tau)/delta. The contributions section
// is empty. FOR DEVELOPMENT AND BENCHMARKS ONLY (one party knows tau).
void write_zkey(const R1cs& r1cs, const ToxicWaste& tw, const std::filesystem::path& path, ThreadPool& pool);

// `witness` is the full wire assignment (wire 0 = 1), e.g. from a .wtns file.
Proof prove_zkey(const Zkey& zkey, std::span<const ff::Fr> witness, const Blinding& rs, ThreadPool& pool);

}  // namespace cuzk::groth16
