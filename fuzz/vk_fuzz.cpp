// bellperson .vk bytes (groth16/params.cpp decode_vk, which read_vk calls on
// the file's contents). A key that decodes must encode back to the input.
#include "fuzz_util.hpp"
#include "groth16/params.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  groth16::VerifyingKey vk;
  try {
    vk = groth16::decode_vk(bytes);
  } catch (const groth16::ParamsError&) {
    return 0;
  }
  const std::vector<std::uint8_t> again = groth16::encode_vk(vk);
  fuzz::require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()), "vk re-encode differs");
  return 0;
}
