// A Groth16 proof and its 192-byte encoding: A (G1) || B (G2) || C (G1), each
// compressed in the zcash format, as bellperson writes it. A partitioned proof
// (Filecoin's MultiProof) is the plain concatenation of such encodings.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ec/point.hpp"

namespace cuzk::groth16 {

struct Proof {
  ec::G1Affine a;
  ec::G2Affine b;
  ec::G1Affine c;
  bool operator==(const Proof&) const = default;
};

inline constexpr std::size_t kProofBytes = 192;

std::array<std::uint8_t, kProofBytes> encode_proof(const Proof& proof);

// Decodes with subgroup checks; identity points are rejected as bellperson's
// read_many does. On failure returns nullopt and sets `error` to a one-line reason.
std::optional<Proof> decode_proof(std::span<const std::uint8_t> bytes, std::string* error = nullptr);

// Concatenation of several proofs, and its inverse (length must be a multiple of 192).
std::vector<std::uint8_t> encode_proofs(std::span<const Proof> proofs);
std::optional<std::vector<Proof>> decode_proofs(std::span<const std::uint8_t> bytes, std::string* error = nullptr);

}  // namespace cuzk::groth16
