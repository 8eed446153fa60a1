// SHA-256 gadget: bellpepper's constraint counts, digests equal to OpenSSL,
// corrupted witnesses rejected.
#include <gtest/gtest.h>

#include <random>

#include "circuits/gadgets/sha256.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::gadgets {
namespace {

using groth16::TestCs;
using groth16::WitnessCs;

std::vector<Boolean> alloc_bits_be(ConstraintSystem& cs, std::span<const std::uint8_t> bytes) {
  return bytes_into_boolean_vec_be(cs, bytes, bytes.size() * 8);
}

native::Digest32 digest_from_bits_be(const std::vector<Boolean>& bits) {
  native::Digest32 d{};
  for (std::size_t i = 0; i < 256; ++i) {
    if (bits[i].value().value()) d[i / 8] |= std::uint8_t(1u << (7 - i % 8));
  }
  return d;
}

TEST(Sha256Gadget, ConstantBlockCostsNothing) {
  // bellpepper test_blank_hash: one all-constant padded empty message.
  TestCs cs;
  std::vector<Boolean> in(512, Boolean::constant(false));
  in[0] = Boolean::constant(true);
  auto out = sha256_block_no_padding(cs, in);
  EXPECT_EQ(cs.num_constraints(), 0u);
  const std::uint8_t none[1] = {0};
  EXPECT_EQ(digest_from_bits_be(out), native::sha256(std::span<const std::uint8_t>(none, 0)));
}

TEST(Sha256Gadget, OneBlockIs25840Constraints) {
  std::mt19937_64 rng(1);
  std::vector<std::uint8_t> msg(64);
  for (auto& b : msg) b = std::uint8_t(rng());
  TestCs cs;
  auto bits = alloc_bits_be(cs, msg);
  auto out = sha256_block_no_padding(cs, bits);
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(cs.num_constraints(), 26352u);  // 512 bit checks + 25,840
  EXPECT_EQ(cs.num_constraints() - 512, 25840u);
}

TEST(Sha256Gadget, FiveHundredTwelveBitMessageIs44874AndMatchesOpenSsl) {
  std::mt19937_64 rng(2);
  std::vector<std::uint8_t> msg(64);
  for (auto& b : msg) b = std::uint8_t(rng());
  TestCs cs;
  auto bits = alloc_bits_be(cs, msg);
  auto out = sha256(cs, bits);
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(cs.num_constraints(), 45386u);
  EXPECT_EQ(cs.num_constraints() - 512, 44874u);
  EXPECT_EQ(digest_from_bits_be(out), native::sha256(msg));
}

TEST(Sha256Gadget, VariousLengthsMatchOpenSsl) {
  std::mt19937_64 rng(3);
  for (std::size_t len : {0u, 3u, 55u, 56u, 100u}) {
    std::vector<std::uint8_t> msg(len);
    for (auto& b : msg) b = std::uint8_t(rng());
    TestCs cs;
    auto bits = alloc_bits_be(cs, msg);
    auto out = sha256(cs, bits);
    EXPECT_TRUE(cs.is_satisfied()) << len;
    EXPECT_EQ(digest_from_bits_be(out), native::sha256(msg)) << len;
  }
}

TEST(Sha256Gadget, HashLeafBitsIs45387AndMatchesFilecoinHash2) {
  std::mt19937_64 rng(4);
  const Fr l = Fr::random(rng), r = Fr::random(rng);
  const auto lb = native::fr_to_le_bytes(l), rb = native::fr_to_le_bytes(r);
  TestCs cs;
  std::vector<Boolean> left, right;
  {
    auto ns = cs.ns("left");
    left = bytes_into_boolean_vec(cs, std::span<const std::uint8_t>(lb), 256);
  }
  {
    auto ns = cs.ns("right");
    right = bytes_into_boolean_vec(cs, std::span<const std::uint8_t>(rb), 256);
  }
  AllocatedNum h;
  {
    auto ns = cs.ns("hash_leaf_circuit");
    h = sha256_hash_leaf_bits_circuit(cs, left, right);
  }
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(cs.num_constraints(), 45387u);  // rfp storage-proofs-core util.rs
  EXPECT_EQ(*h.value(), native::fr_from_le_bytes(native::sha256_hash2(lb, rb)));
}

TEST(Sha256Gadget, Hash2CircuitMatchesNativeAndRejectsCorruption) {
  std::mt19937_64 rng(5);
  const Fr a = Fr::random(rng), b = Fr::random(rng);
  TestCs cs;
  auto an = AllocatedNum::alloc(cs, a);
  auto bn = AllocatedNum::alloc(cs, b);
  auto h = sha256_hash2_circuit(cs, an, bn);
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(*h.value(), native::fr_from_le_bytes(native::sha256_hash2(
                            native::fr_to_le_bytes(a), native::fr_to_le_bytes(b))));
  // Flip a value in the middle of the witness: some constraint must fail.
  const Variable mid = Variable::aux(std::uint32_t(cs.num_aux() / 2));
  cs.set_value(mid, cs.value(mid) + Fr::one());
  EXPECT_FALSE(cs.is_satisfied());
}

TEST(Sha256Gadget, WitnessCsAgreesWithTestCs) {
  std::mt19937_64 rng(6);
  std::vector<std::uint8_t> msg(64);
  for (auto& b : msg) b = std::uint8_t(rng());
  TestCs tcs;
  WitnessCs wcs;
  sha256(tcs, alloc_bits_be(tcs, msg));
  sha256(wcs, alloc_bits_be(wcs, msg));
  EXPECT_EQ(wcs.num_constraints(), tcs.num_constraints());
  EXPECT_EQ(wcs.witness().aux, std::vector<Fr>(tcs.aux().begin(), tcs.aux().end()));
}

}  // namespace
}  // namespace cuzk::circuits::gadgets

#include "circuits/gadgets/label.hpp"

namespace cuzk::circuits::gadgets {
namespace {

// rfp storage-proofs-porep stacked/circuit/create_label.rs test_create_label:
// 532,025 constraints with the replica id and 37 parents allocated (BE bits).
TEST(LabelGadget, CreateLabelCountAndValue) {
  std::mt19937_64 rng(12);
  auto random_node = [&] {
    return native::fr_to_le_bytes(Fr::random(rng));
  };
  const native::Digest32 id = random_node();
  std::vector<native::Digest32> parents(kTotalParents);
  for (std::size_t i = 0; i < 14; ++i) parents[i] = random_node();
  for (std::size_t i = 14; i < kTotalParents; ++i) parents[i] = parents[i % 14];
  const std::uint32_t layer = 3;
  const std::uint64_t node = 22;

  TestCs cs;
  std::vector<std::vector<Boolean>> pbits;
  for (std::size_t i = 0; i < kTotalParents; ++i) {
    auto ns = cs.ns("parents", i);
    pbits.push_back(bytes_into_boolean_vec_be(cs, std::span<const std::uint8_t>(parents[i]), 256));
  }
  std::vector<Boolean> idbits;
  {
    auto ns = cs.ns("id");
    idbits = bytes_into_boolean_vec_be(cs, std::span<const std::uint8_t>(id), 256);
  }
  AllocatedNum label;
  {
    auto ns = cs.ns("create_label");
    label = create_label_circuit(cs, idbits, pbits, UInt32::constant(layer), UInt64::constant(node));
  }
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(cs.num_constraints(), 532025u);

  // Native label: fr32(sha256(id | layer BE | node BE | 0^20 | parents)).
  std::vector<std::uint8_t> buf(id.begin(), id.end());
  for (int s = 24; s >= 0; s -= 8) buf.push_back(std::uint8_t(layer >> s));
  for (int s = 56; s >= 0; s -= 8) buf.push_back(std::uint8_t(node >> s));
  buf.resize(64, 0);
  for (const auto& p : parents) buf.insert(buf.end(), p.begin(), p.end());
  EXPECT_EQ(*label.value(), native::fr_from_le_bytes(native::sha256_fr32(buf)));
}

}  // namespace
}  // namespace cuzk::circuits::gadgets
