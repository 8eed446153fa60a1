// Our zkey writer, reader and snarkjs-semantics prover agree with each other
// and with our verifier (the snarkjs side of the same files is checked by
// tests/oracle/snarkjs_interop.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "groth16/circom.hpp"
#include "groth16/verifier.hpp"
#include "groth16/zkey.hpp"

namespace cuzk::groth16 {
namespace {

TEST(Zkey, WriteReadProveVerify) {
  ThreadPool pool(2);
  const std::string dir = CUZK_TEST_DATA_DIR "/circom/";
  CircomR1cs c = load_circom_r1cs(dir + "small.r1cs");
  std::vector<Fr> wires = load_circom_wtns(dir + "small.wtns");
  auto path = std::filesystem::temp_directory_path() / ("cuzk-zkey-" + std::to_string(::getpid()) + ".zkey");
  write_zkey(c.r1cs, random_toxic_waste(), path, pool);
  Zkey z = read_zkey(path, pool);
  EXPECT_EQ(z.n_vars, c.r1cs.num_variables());
  EXPECT_EQ(z.n_public + 1, c.r1cs.num_inputs());
  EXPECT_EQ(z.domain_size, domain_size(c.r1cs));
  Proof p = prove_zkey(z, wires, random_blinding(), pool);
  auto pvk = prepare_verifying_key(z.verifying_key());
  std::vector<Fr> pub(wires.begin() + 1, wires.begin() + 1 + z.n_public);
  EXPECT_EQ(verify(pvk, p, pub), VerifyResult::kValid);
  pub[0] += Fr::one();
  EXPECT_EQ(verify(pvk, p, pub), VerifyResult::kInvalid);

  // A witness of the wrong length is a typed error.
  wires.pop_back();
  try {
    prove_zkey(z, wires, random_blinding(), pool);
    ADD_FAILURE() << "accepted a short witness";
  } catch (const ZkeyError& e) {
    EXPECT_EQ(e.kind(), ZkeyErrorKind::kWrongWitness);
  }

  // Truncation anywhere is a typed error, never a crash.
  auto size = std::filesystem::file_size(path);
  for (std::uintmax_t cut : {std::uintmax_t{3}, std::uintmax_t{40}, size / 2, size - 1}) {
    std::filesystem::resize_file(path, cut);
    EXPECT_THROW(read_zkey(path, pool), ZkeyError) << "cut at " << cut;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cuzk::groth16
