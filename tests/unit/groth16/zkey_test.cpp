// Our zkey writer, reader and snarkjs-semantics prover agree with each other
// and with our verifier (the snarkjs side of the same files is checked by
// tests/oracle/snarkjs_interop.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <iterator>

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

// Offsets in our writer's layout: 12-byte file header, then sections 1..10
// in order, each {u32 type, u64 size, payload}.
std::size_t section_offset(const std::vector<std::uint8_t>& f, std::uint32_t type) {
  std::size_t at = 12;
  while (at + 12 <= f.size()) {
    std::uint32_t t = 0;
    std::uint64_t size = 0;
    std::memcpy(&t, f.data() + at, 4);
    std::memcpy(&size, f.data() + at + 4, 8);
    if (t == type) return at + 12;
    at += 12 + size;
  }
  ADD_FAILURE() << "no section " << type;
  return 0;
}

std::vector<std::uint8_t> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spit(const std::filesystem::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

TEST(Zkey, StrictContainer) {
  ThreadPool pool(2);
  const std::string dir = CUZK_TEST_DATA_DIR "/circom/";
  CircomR1cs c = load_circom_r1cs(dir + "small.r1cs");
  const std::vector<Fr> wires = load_circom_wtns(dir + "small.wtns");
  auto path = std::filesystem::temp_directory_path() / ("cuzk-zkey-strict-" + std::to_string(::getpid()) + ".zkey");
  write_zkey(c.r1cs, random_toxic_waste(), path, pool);
  const std::vector<std::uint8_t> good = slurp(path);
  auto kind_of = [&](const std::vector<std::uint8_t>& bytes) {
    spit(path, bytes);
    try {
      read_zkey(path, pool);
    } catch (const ZkeyError& e) {
      return e.kind();
    }
    ADD_FAILURE() << "accepted";
    return ZkeyErrorKind::kIo;
  };
  // Trailing bytes after the last section.
  std::vector<std::uint8_t> v = good;
  v.push_back(0);
  EXPECT_EQ(kind_of(v), ZkeyErrorKind::kMalformed);
  // A section repeated (the count says 11): the second copy must not win.
  v = good;
  const std::size_t s1 = section_offset(good, 1) - 12;
  v.insert(v.end(), good.begin() + std::ptrdiff_t(s1), good.begin() + std::ptrdiff_t(s1 + 16));
  v[8] += 1;
  EXPECT_EQ(kind_of(v), ZkeyErrorKind::kMalformed);

  // A changed coefficient still parses, but the proof it gives does not
  // verify under the key's own vk: `cuzkctl prove` checks exactly this.
  v = good;
  const std::size_t coef0 = section_offset(good, 4) + 4;  // {matrix, row, wire, value[32]}
  v[coef0 + 12] ^= 1;
  spit(path, v);
  Zkey z = read_zkey(path, pool);
  Proof p = prove_zkey(z, wires, random_blinding(), pool);
  std::vector<Fr> pub(wires.begin() + 1, wires.begin() + 1 + z.n_public);
  EXPECT_EQ(verify(prepare_verifying_key(z.verifying_key()), p, pub), VerifyResult::kInvalid);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cuzk::groth16
