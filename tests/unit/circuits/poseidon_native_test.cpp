// Native Poseidon against the published neptune / rust-fil-proofs vectors.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <random>
#include <string>

#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::native {
namespace {

// Builds an Fr from u64 limbs, least significant first (neptune scalar_from_u64s).
Fr fr_from_limbs(std::array<ff::u64, 4> limbs) {
  ff::BigInt<4> x{};
  for (int i = 0; i < 4; ++i) x.limb[i] = limbs[i];
  return Fr::from_int(x);
}

std::vector<Fr> iota_preimage(std::size_t n) {
  std::vector<Fr> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(Fr::from_u64(i));
  return v;
}

// neptune src/poseidon.rs (test_hash_standard): Standard strength, MerkleTree
// hash of [0, 1, ..., arity - 1].
TEST(PoseidonNative, NeptuneVectorsStandardStrength) {
  struct Case {
    std::size_t arity;
    std::array<ff::u64, 4> limbs;
  };
  const Case cases[] = {
      {2, {0x2e203c369a02e7ff, 0xa6fba9339d05a69d, 0x739e0fd902efe161, 0x396508d75e76a56b}},
      {4, {0x019814ff6662075d, 0xfb6b4605bf1327ec, 0x00db3c6579229399, 0x58a54b10a9e5848a}},
      {8, {0x2a9934f56d38a5e6, 0x4b682e9d9cc4aed9, 0x1201004211677077, 0x2394611da3a5de55}},
      {11, {0xcee3bbc32b693163, 0x09f3dcd8ccb08fc1, 0x6ca537e232ebe87a, 0x0c0fc1b2e5227f28}},
      {16, {0x1291c74060266d37, 0x5b8dbc6d30680a6f, 0xc1c2fb5a6f871e63, 0x2d3ae2663381ae8a}},
      {24, {0xd7ef3569f585b321, 0xc3e779f6468815b1, 0x066f39bf783f3d9f, 0x63beb8831f11ae15}},
      {36, {0x4473606dfa4e8140, 0x75cd368df8a8ac3c, 0x540a30e03c10bbaa, 0x699303082a6e5d5f}},
  };
  for (const auto& c : cases) {
    const PoseidonConstants& pc = filecoin_poseidon(c.arity);
    auto in = iota_preimage(c.arity);
    EXPECT_EQ(poseidon_hash(pc, in), fr_from_limbs(c.limbs)) << "arity " << c.arity;
    EXPECT_EQ(poseidon_hash_reference(pc, in), fr_from_limbs(c.limbs)) << "arity " << c.arity;
  }
}

// rust-fil-proofs filecoin-hashers/src/poseidon.rs test_poseidon_hasher.
TEST(PoseidonNative, FilecoinHasherVectors) {
  const Fr one = Fr::one(), zero = Fr::zero();
  Fr i1 = poseidon2(one, zero);
  EXPECT_EQ(i1, fr_from_limbs({0xb339ff6079800b5e, 0xec5907b3dc3094af, 0x93c003cc74a24f26, 0x042f94ffbe786bc3}));
  Fr i2 = poseidon2(zero, one);
  EXPECT_EQ(poseidon2(i1, i2),
            fr_from_limbs({0xefbb8be3e291e671, 0x77cc72b8cb2b5ad2, 0x30eb6385ae6b74ae, 0x1effebb7b26ad9eb}));
}

TEST(PoseidonNative, RoundConstantsMatchHadesReferenceFile) {
  std::ifstream in(CUZK_TEST_DATA_DIR "/filecoin/poseidon-round-constants-t9-rf8-rp57.txt");
  ASSERT_TRUE(in.good());
  std::string line, list;
  while (std::getline(in, line)) {
    if (line.find("'0x") != std::string::npos) list = line;
  }
  std::vector<Fr> expected;
  for (std::size_t p = list.find("'0x"); p != std::string::npos; p = list.find("'0x", p + 1)) {
    std::size_t e = list.find('\'', p + 1);
    expected.push_back(Fr::from_hex(std::string_view(list).substr(p + 1, e - p - 1)));
  }
  ASSERT_EQ(expected.size(), 585u);
  EXPECT_EQ(filecoin_poseidon(8).round_constants, expected);
  EXPECT_EQ(grain_round_constants(1, 1, 255, 9, 8, 57), expected);
}

TEST(PoseidonNative, OptimizedEqualsReferenceOnRandomInputs) {
  std::mt19937_64 rng(42);
  for (std::size_t arity : {2u, 4u, 8u, 11u}) {
    const PoseidonConstants& pc = filecoin_poseidon(arity);
    EXPECT_EQ(pc.compressed_round_constants.size(), 8 * pc.width + pc.partial_rounds);
    EXPECT_EQ(pc.sparse_matrices.size(), pc.partial_rounds);
    for (int k = 0; k < 5; ++k) {
      std::vector<Fr> in;
      for (std::size_t i = 0; i < arity; ++i) in.push_back(Fr::random(rng));
      EXPECT_EQ(poseidon_hash(pc, in), poseidon_hash_reference(pc, in));
    }
  }
}

TEST(PoseidonNative, MdsIsCauchyAndInverseIsExact) {
  const PoseidonConstants& pc = filecoin_poseidon(2);
  EXPECT_EQ(pc.mds.at(0, 0), Fr::from_u64(3).inverse());  // 1 / (0 + 3)
  EXPECT_EQ(pc.mds.at(2, 1), Fr::from_u64(6).inverse());  // 1 / (2 + 4)
  EXPECT_EQ(mat_mul(pc.mds, pc.mds_inv), FrMatrix::identity(3));
  EXPECT_EQ(pc.domain_tag, Fr::from_u64(3));
  EXPECT_EQ(filecoin_poseidon(11).domain_tag, Fr::from_u64(2047));
}

TEST(PoseidonNative, CustomTagChangesDigest) {
  Fr tag = Fr::from_u64(1) * Fr::from_u64(2).pow(40);
  auto snap = PoseidonConstants::with_domain_tag(2, tag);
  std::array<Fr, 2> in{Fr::one(), Fr::zero()};
  EXPECT_NE(poseidon_hash(snap, in), poseidon2(in[0], in[1]));
  EXPECT_EQ(poseidon_hash(snap, in), poseidon_hash_reference(snap, in));
}

}  // namespace
}  // namespace cuzk::circuits::native
