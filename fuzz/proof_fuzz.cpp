// Groth16 proof bytes (groth16/proof.cpp): one proof or a partitioned
// concatenation, as cuzkctl verify and the PoRep C2 path decode them. Proofs
// that decode must encode back to the input.
#include "fuzz_util.hpp"
#include "groth16/proof.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  std::string why;
  auto proofs = groth16::decode_proofs(bytes, &why);
  if (!proofs) {
    fuzz::require(!why.empty(), "decode_proofs failed without a reason");
    return 0;
  }
  const std::vector<std::uint8_t> again = groth16::encode_proofs(*proofs);
  fuzz::require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()), "proof re-encode differs");
  auto first = groth16::decode_proof(bytes.first(groth16::kProofBytes));
  fuzz::require(first && *first == proofs->front(), "decode_proof disagrees with decode_proofs");
  return 0;
}
