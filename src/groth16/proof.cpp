#include "groth16/proof.hpp"

#include "ec/encoding.hpp"

namespace cuzk::groth16 {

std::array<std::uint8_t, kProofBytes> encode_proof(const Proof& proof) {
  std::array<std::uint8_t, kProofBytes> out{};
  ec::encode_g1_compressed(proof.a, std::span<std::uint8_t, 48>(out.data(), 48));
  ec::encode_g2_compressed(proof.b, std::span<std::uint8_t, 96>(out.data() + 48, 96));
  ec::encode_g1_compressed(proof.c, std::span<std::uint8_t, 48>(out.data() + 144, 48));
  return out;
}

std::optional<Proof> decode_proof(std::span<const std::uint8_t> bytes, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<Proof> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (bytes.size() != kProofBytes) {
    return fail("proof must be 192 bytes, got " + std::to_string(bytes.size()));
  }
  Proof p;
  if (auto e = ec::decode_g1_compressed(bytes.subspan(0, 48), p.a); e != ec::DecodeError::kOk) {
    return fail("proof.A: " + std::string(ec::to_string(e)));
  }
  if (auto e = ec::decode_g2_compressed(bytes.subspan(48, 96), p.b); e != ec::DecodeError::kOk) {
    return fail("proof.B: " + std::string(ec::to_string(e)));
  }
  if (auto e = ec::decode_g1_compressed(bytes.subspan(144, 48), p.c); e != ec::DecodeError::kOk) {
    return fail("proof.C: " + std::string(ec::to_string(e)));
  }
  if (p.a.infinity || p.b.infinity || p.c.infinity) return fail("proof contains the point at infinity");
  return p;
}

std::vector<std::uint8_t> encode_proofs(std::span<const Proof> proofs) {
  std::vector<std::uint8_t> out;
  out.reserve(proofs.size() * kProofBytes);
  for (const auto& p : proofs) {
    auto b = encode_proof(p);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

std::optional<std::vector<Proof>> decode_proofs(std::span<const std::uint8_t> bytes, std::string* error) {
  if (bytes.size() % kProofBytes != 0 || bytes.empty()) {
    if (error) *error = "proof bytes must be a non-zero multiple of 192, got " + std::to_string(bytes.size());
    return std::nullopt;
  }
  std::vector<Proof> out;
  for (std::size_t i = 0; i < bytes.size(); i += kProofBytes) {
    std::string why;
    auto p = decode_proof(bytes.subspan(i, kProofBytes), &why);
    if (!p) {
      if (error) *error = "partition " + std::to_string(i / kProofBytes) + ": " + why;
      return std::nullopt;
    }
    out.push_back(*p);
  }
  return out;
}

}  // namespace cuzk::groth16
