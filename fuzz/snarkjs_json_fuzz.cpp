// snarkjs JSON (groth16/snarkjs_json.cpp): verification_key.json, proof.json
// and public.json, parsed as cuzkctl verify --snarkjs-* parses them (nlohmann
// without exceptions, then the typed readers). The fuzz text is offered to all
// three readers. Whatever reads must survive a write and a second read.
#include <nlohmann/json.hpp>

#include "fuzz_util.hpp"
#include "groth16/snarkjs_json.hpp"

using namespace cuzk;
using namespace cuzk::groth16;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    Proof p = proof_from_json(j);
    fuzz::require(proof_from_json(proof_to_json(p)) == p, "proof JSON round trip");
  } catch (const JsonFormatError&) {
  }
  try {
    std::vector<ff::Fr> in = public_from_json(j);
    fuzz::require(public_from_json(public_to_json(in)) == in, "public JSON round trip");
  } catch (const JsonFormatError&) {
  }
  try {
    VerifyingKey vk = vk_from_json(j);
    // vk_to_json computes e(alpha, beta): only worth it for the rare key that reads.
    VerifyingKey again = vk_from_json(vk_to_json(vk));
    fuzz::require(again.alpha_g1 == vk.alpha_g1 && again.beta_g2 == vk.beta_g2 && again.gamma_g2 == vk.gamma_g2 &&
                      again.delta_g2 == vk.delta_g2 && again.ic == vk.ic,
                  "vk JSON round trip");
  } catch (const JsonFormatError&) {
  }
  return 0;
}
