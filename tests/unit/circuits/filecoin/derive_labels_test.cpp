// replica_id / challenge derivation and SDR labeling.
//
// Oracles: the expected replica_id and challenges below were computed with
// Python's hashlib and big integers (an independent implementation of the
// rust-fil-proofs formulas, not this code); the expected last labels come
// from rust-fil-proofs' own test (storage-proofs-porep
// create_label/multi.rs test_create_labels: 11 layers, replica_id [9; 32]).
#include <gtest/gtest.h>

#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/labels.hpp"

namespace cuzk::circuits::filecoin {
namespace {

Digest32 filled(std::uint8_t b) {
  Digest32 d;
  d.fill(b);
  return d;
}

Digest32 from_u64s_le(std::array<std::uint64_t, 4> limbs) {
  Digest32 d;
  for (int l = 0; l < 4; ++l) {
    for (int b = 0; b < 8; ++b) d[8 * l + b] = std::uint8_t(limbs[l] >> (8 * b));
  }
  return d;
}

TEST(FilecoinDerive, PorepIdLayout) {
  const PorepId id = porep_id(SealProof::StackedDrg32GiBV1_1);
  EXPECT_EQ(id[0], 8);
  for (std::size_t i = 1; i < 32; ++i) EXPECT_EQ(id[i], 0) << i;
  EXPECT_EQ(porep_id(SealProof::StackedDrg2KiBV1)[0], 0);
  EXPECT_EQ(porep_id(SealProof::StackedDrg64GiBV1)[0], 4);
  EXPECT_EQ(porep_id(SealProof::StackedDrg2KiBV1_1)[0], 5);
  const PorepId n = porep_id_from_number(0x0102, 0x0304);
  EXPECT_EQ(n[0], 0x02);
  EXPECT_EQ(n[1], 0x01);
  EXPECT_EQ(n[8], 0x04);
  EXPECT_EQ(n[9], 0x03);
}

TEST(FilecoinDerive, ReplicaIdMatchesIndependentPython) {
  Digest32 prover;
  for (int i = 0; i < 32; ++i) prover[i] = std::uint8_t(i);
  const Digest32 rid =
      replica_id(prover, 0x0102030405060708ULL, filled(7), filled(0xAA), porep_id(SealProof::StackedDrg32GiBV1_1));
  EXPECT_EQ(to_hex(rid), "b31efe9ad14fbd1ce8bfd4019edf5aaa9e2f6c972c50a44f06e8d14fdd7e2e2a");
  EXPECT_EQ(rid[31] & 0xc0, 0);
}

TEST(FilecoinDerive, InteractiveChallengesMatchIndependentPython) {
  const Digest32 rid =
      from_u64s_le({0x1cbd4fd19afe1eb3ULL, 0xaa5adf9e01d4bfe8ULL, 0x4fa4502c976c2f9eULL, 0x2a2e7edd4fd1e806ULL});
  ASSERT_EQ(to_hex(rid), "b31efe9ad14fbd1ce8bfd4019edf5aaa9e2f6c972c50a44f06e8d14fdd7e2e2a");
  const std::vector<std::uint64_t> want32 = {284399760,  469933375,  399093988, 388352740, 87173789,  785870277,
                                             37726600,   1020983806, 60137450,  972539694, 760052347, 428214576,
                                             1014199119, 814141992,  886683848, 256486486, 223262267, 80035501};
  EXPECT_EQ(interactive_challenges(1ULL << 30, rid, filled(3), 18, 2), want32);
  EXPECT_EQ(interactive_challenges(64, rid, filled(3), 2, 0), (std::vector<std::uint64_t>{14, 44}));
}

TEST(FilecoinDerive, PartitionsSliceOneGlobalSequence) {
  const Digest32 rid = filled(0x11), seed = filled(0x22);
  const auto all = interactive_challenges(1ULL << 30, rid, seed, 180, 0);
  for (std::uint32_t k = 0; k < 10; ++k) {
    const auto part = interactive_challenges(1ULL << 30, rid, seed, 18, k);
    for (std::size_t i = 0; i < 18; ++i) {
      EXPECT_EQ(part[i], all[18 * k + i]);
      EXPECT_GE(part[i], 1u);
      EXPECT_LT(part[i], 1ULL << 30);
    }
  }
}

TEST(FilecoinDerive, Le256Mod) {
  Digest32 x{};
  x[0] = 10;
  EXPECT_EQ(le256_mod(x, 3), 1u);
  x = filled(0xff);  // 2^256 - 1 = 3 * 5 * 17 * 257 * 641 * 65537 * ...: divisible by 3
  EXPECT_EQ(le256_mod(x, 3), 0u);
  EXPECT_EQ(le256_mod(x, 1ULL << 32), 0xffffffffULL);
  EXPECT_EQ(le256_mod(x, 63), 15u);  // 2^6 = 1 mod 63, so 2^256 - 1 = 2^4 - 1
}

TEST(FilecoinLabels, ExpansionPattern) {
  std::vector<Digest32> p14(14), p6(6);
  for (int i = 0; i < 14; ++i) p14[i] = filled(std::uint8_t(i));
  for (int i = 0; i < 6; ++i) p6[i] = filled(std::uint8_t(100 + i));
  const auto e14 = expand_parents(p14), e6 = expand_parents(p6);
  for (int i = 0; i < 37; ++i) {
    const int src14 = i < 14 ? i : i < 28 ? i - 14 : i - 28;  // 14 + 14 + 9
    EXPECT_EQ(e14[i], p14[src14]) << i;
    EXPECT_EQ(e6[i], p6[i < 36 ? i % 6 : 0]) << i;  // 6 x 6 + 1
  }
  EXPECT_EQ(e14[36], p14[8]);
}

// rust-fil-proofs test_create_labels: last label of layer 11.
struct LabelVector {
  std::uint64_t nodes;
  std::uint8_t porep_fill;
  ApiVersion version;
  std::array<std::uint64_t, 4> last_label;
};

TEST(FilecoinLabels, LastLabelMatchesRustFilProofsVectors) {
  const LabelVector vectors[] = {
      {64,
       0,
       ApiVersion::V1_0_0,
       {0xd3faa96b9a0fba04ULL, 0xea81a283d106485eULL, 0xe3d51b9afa5ac2b3ULL, 0x0462f4f4f1a68d37ULL}},
      {128,
       0,
       ApiVersion::V1_0_0,
       {0x7e191e52c4a8da86ULL, 0x5ae8a1c9e6fac148ULL, 0xce239f3b88a894b8ULL, 0x234c00d1dc1d53beULL}},
      {64,
       123,
       ApiVersion::V1_1_0,
       {0xabb3f38bb70defcfULL, 0x777a2e4d7769119fULL, 0x3448959d495490bcULL, 0x06021188c7a71cb5ULL}},
      {128,
       123,
       ApiVersion::V1_1_0,
       {0x22ab81cf68c4676dULL, 0x7a77a82fc7c9c189ULL, 0xc6c03d32c1e42d23ULL, 0x0f777c18cc2c55bdULL}},
  };
  for (const auto& v : vectors) {
    PorepId id;
    id.fill(v.porep_fill);
    const StackedGraph g(v.nodes, id, v.version);
    const auto layers = label_layers(g, filled(9), 11);
    ASSERT_EQ(layers.size(), 11u);
    EXPECT_EQ(layers.back().back(), from_u64s_le(v.last_label))
        << "nodes " << v.nodes << " porep fill " << int(v.porep_fill);
  }
}

TEST(FilecoinLabels, LabelsAreFr32AndRecomputeFromParents) {
  const StackedGraph g = StackedGraph::for_proof(SealProof::StackedDrg2KiBV1_1);
  const Digest32 rid = filled(0x42);
  const auto layers = label_layers(g, rid, 2);
  for (std::uint32_t layer = 1; layer <= 2; ++layer) {
    for (std::uint32_t v = 1; v < 64; ++v) {
      EXPECT_EQ(layers[layer - 1][v][31] & 0xc0, 0);
      const auto parents = parent_labels(g, layers, layer, v);
      EXPECT_EQ(parents.size(), layer == 1 ? 6u : 14u);
      EXPECT_EQ(create_label(rid, layer, v, expand_parents(parents)), layers[layer - 1][v]);
    }
  }
  EXPECT_NE(layers[0][5], layers[1][5]);
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
