// SHA-256 (through OpenSSL EVP) and Filecoin's Fr-safe variant.
//
// rust-fil-proofs' Sha256Function hashes, then clears the two top bits of the
// last byte ("trim_to_fr32") so the little-endian digest is < 2^254 < r and
// is a canonical Fr. Tree nodes are H(left || right) with the same trim; a
// leaf is used as is.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "ff/fp.hpp"

namespace cuzk::circuits::native {

using Digest32 = std::array<std::uint8_t, 32>;

// Streaming SHA-256; one EVP context reused across messages (reset()).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void reset();
  void update(std::span<const std::uint8_t> data);
  Digest32 finish();  // also resets for the next message

 private:
  void* ctx_;  // EVP_MD_CTX*
};

Digest32 sha256(std::span<const std::uint8_t> data);

// Clears bits 6 and 7 of byte 31 (the top bits of the little-endian value).
inline void trim_to_fr32(Digest32& d) { d[31] &= 0x3f; }

// rfp Sha256Function::hash: sha256 then trim.
Digest32 sha256_fr32(std::span<const std::uint8_t> data);
// rfp Sha256Function::hash2 / Algorithm::node: sha256(a || b) then trim.
Digest32 sha256_hash2(const Digest32& a, const Digest32& b);

// Fr <-> 32 little-endian bytes (Fr::to_repr in blstrs). from_le aborts when
// the bytes are not canonical (>= r); trimmed digests always are.
Digest32 fr_to_le_bytes(const ff::Fr& x);
ff::Fr fr_from_le_bytes(const Digest32& d);

}  // namespace cuzk::circuits::native
