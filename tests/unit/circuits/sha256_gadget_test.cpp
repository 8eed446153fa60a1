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
  EXPECT_EQ(*h.value(),
            native::fr_from_le_bytes(native::sha256_hash2(native::fr_to_le_bytes(a), native::fr_to_le_bytes(b))));
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

// The values-only compression (sha256_witness.cpp, taken by WitnessCs)
// against the gadget code (taken by TestCs) on inputs mixing constant,
// allocated and negated bits in given proportions: the same variables in the
// same order with the same values, the same constraint count, the same output
// bits (kind, variable, value).
struct Mix {
  double constant;  // probability of a constant bit
  double negated;   // probability of a negated bit among the allocated
};

Boolean random_bit(ConstraintSystem& cs, std::mt19937_64& rng, const Mix& mix) {
  std::uniform_real_distribution<double> u(0, 1);
  const bool v = (rng() & 1) != 0;
  if (u(rng) < mix.constant) return Boolean::constant(v);
  const Boolean b(AllocatedBit::alloc(cs, v));
  return u(rng) < mix.negated ? b.not_() : b;
}

std::vector<UInt32> compress_random(ConstraintSystem& cs, std::uint64_t seed, const Mix& block, const Mix& hash) {
  std::mt19937_64 rng(seed);
  std::vector<Boolean> in;
  for (int i = 0; i < 512; ++i) in.push_back(random_bit(cs, rng, block));
  std::vector<UInt32> h;
  for (int j = 0; j < 8; ++j) {
    std::array<Boolean, 32> bits;
    for (auto& b : bits) b = random_bit(cs, rng, hash);
    h.push_back(UInt32::from_bits(bits));
  }
  return sha256_compression_function(cs, in, h);
}

void expect_same_compression(std::uint64_t seed, const Mix& block, const Mix& hash) {
  TestCs tcs;
  WitnessCs wcs;
  const auto want = compress_random(tcs, seed, block, hash);
  const auto got = compress_random(wcs, seed, block, hash);
  ASSERT_TRUE(tcs.is_satisfied()) << seed;
  ASSERT_EQ(wcs.num_aux(), tcs.num_aux()) << seed;
  EXPECT_EQ(wcs.num_constraints(), tcs.num_constraints()) << seed;
  EXPECT_TRUE(wcs.witness().aux == std::vector<Fr>(tcs.aux().begin(), tcs.aux().end())) << seed;
  ASSERT_EQ(got.size(), 8u);
  for (std::size_t j = 0; j < 8; ++j) {
    EXPECT_EQ(got[j].value(), want[j].value()) << seed << " word " << j;
    for (std::size_t k = 0; k < 32; ++k) {
      const Boolean& g = got[j].bits()[k];
      const Boolean& w = want[j].bits()[k];
      ASSERT_EQ(g.kind(), w.kind()) << seed << " word " << j << " bit " << k;
      EXPECT_EQ(g.value(), w.value());
      if (!g.is_constant()) {
        EXPECT_EQ(g.bit().variable(), w.bit().variable());
      }
    }
  }
}

TEST(Sha256Witness, AllocatedBlockFromTheIvMatchesTheGadgets) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) expect_same_compression(seed, {0, 0}, {1, 0});
}

TEST(Sha256Witness, AllocatedBlockAndHashMatchTheGadgets) {
  for (std::uint64_t seed = 4; seed <= 6; ++seed) expect_same_compression(seed, {0, 0}, {0, 0});
}

TEST(Sha256Witness, ConstantPaddingBlockAfterAllocatedHashMatchesTheGadgets) {
  expect_same_compression(7, {1, 0}, {0, 0});
  expect_same_compression(8, {1, 0}, {0, 0.5});
}

TEST(Sha256Witness, MixedConstantAndNegatedBitsMatchTheGadgets) {
  // Every folding case of xor, and, ch, maj and addmany is reached by some
  // of these mixes (sparse, dense and all-negated).
  const Mix mixes[] = {{0.1, 0.3}, {0.5, 0.5}, {0.9, 0.2}, {0.3, 1.0}, {0.97, 0.5}};
  std::uint64_t seed = 100;
  for (const Mix& block : mixes) {
    for (const Mix& hash : mixes) expect_same_compression(seed++, block, hash);
  }
}

TEST(Sha256Witness, AllConstantCompressionAllocatesNothing) {
  TestCs tcs;
  WitnessCs wcs;
  compress_random(tcs, 9, {1, 0}, {1, 0});
  compress_random(wcs, 9, {1, 0}, {1, 0});
  EXPECT_EQ(tcs.num_aux(), 0u);
  EXPECT_EQ(wcs.num_aux(), 0u);
  EXPECT_EQ(wcs.num_constraints(), 0u);
}

TEST(Sha256Witness, AbsentValueFallsBackToTheGadgetsError) {
  // A bit without a value (shape-only input) in a values back end: the
  // gadget path reports it as kAssignmentMissing; nothing half-allocated.
  WitnessCs cs;
  std::vector<Boolean> in(512, Boolean::constant(false));
  in[100] = Boolean(AllocatedBit(Variable::aux(0), std::nullopt));
  std::vector<UInt32> h;
  for (int j = 0; j < 8; ++j) h.push_back(UInt32::alloc(cs, std::uint32_t(j * 77)));
  const std::size_t before = cs.num_aux();
  try {
    sha256_compression_function(cs, in, h);
    ADD_FAILURE() << "expected a SynthesisError";
  } catch (const groth16::SynthesisError& e) {
    EXPECT_EQ(e.kind(), groth16::SynthesisErrorKind::kAssignmentMissing);
  }
  EXPECT_GE(cs.num_aux(), before);
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
  auto random_node = [&] { return native::fr_to_le_bytes(Fr::random(rng)); };
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
