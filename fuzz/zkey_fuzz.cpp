// snarkjs .zkey proving keys (groth16/zkey.cpp read_zkey): the fuzz bytes are
// the whole file. Only ZkeyError may come out.
#include "fuzz_util.hpp"
#include "groth16/zkey.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ThreadPool pool(1);
  static fuzz::MemFile in("zkey");
  in.write({data, size});
  try {
    groth16::Zkey z = groth16::read_zkey(in.path(), pool);
    groth16::VerifyingKey vk = z.verifying_key();
    fuzz::require(vk.ic.size() == std::size_t(z.n_public) + 1, "zkey IC count");
    fuzz::require(z.a.size() == z.n_vars && z.h.size() == z.domain_size, "zkey vector sizes");
  } catch (const groth16::ZkeyError&) {
  }
  return 0;
}
