// snarkjs' JSON formats for BLS12-381 (proof.json, public.json,
// verification_key.json), so our proofs and keys can be checked by
// `snarkjs groth16 verify` and theirs by ours.
//
// Coordinates are decimal strings of standard-form Fp values; G1 = [x, y, z],
// G2 = [[x.c0, x.c1], [y.c0, y.c1], [z.c0, z.c1]] with c0 first. A third
// coordinate other than 1 means Jacobian (x/z^2, y/z^3), as snarkjs reads it;
// we always write affine with z = 1. "0x" hex strings are accepted on input.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "groth16/params.hpp"
#include "groth16/proof.hpp"

namespace cuzk::groth16 {

// Malformed JSON content (wrong shape, non-numeric strings, values out of
// range, points off the curve or outside the subgroup).
class JsonFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json proof_to_json(const Proof& proof);
Proof proof_from_json(const nlohmann::json& j);

nlohmann::json public_to_json(std::span<const ff::Fr> inputs);
std::vector<ff::Fr> public_from_json(const nlohmann::json& j);

nlohmann::json vk_to_json(const VerifyingKey& vk);
VerifyingKey vk_from_json(const nlohmann::json& j);

// Decimal (or 0x-hex) text <-> integers, exposed for tests and tools.
std::string to_decimal(const ff::BigInt<6>& x);
bool parse_number(const std::string& s, ff::BigInt<6>& out);

}  // namespace cuzk::groth16
