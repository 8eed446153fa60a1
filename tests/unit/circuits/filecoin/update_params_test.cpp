// SnapDeals parameters, challenges and public inputs against rust-fil-proofs.
//
// Challenge vectors: storage-proofs-update/src/challenges.rs
// test_challenges_against_hardcoded. There comm_r_new = PoseidonDomain::
// random(XorShiftRng::from_seed(TEST_SEED)), TEST_SEED from
// storage-proofs-core/src/lib.rs, and the table lists the first five
// challenges per (sector size, partition). The test rebuilds comm_r_new the
// same way: rand_xorshift 0.3 (from_seed reads four LE u32 x, y, z, w;
// next_u32 is Marsaglia's xorshift128; next_u64 = lo u32 | hi u32 << 32) and
// blstrs Scalar::random (four next_u64 limbs, the top bit cleared, retried
// until below r).
#include <gtest/gtest.h>

#include "circuits/filecoin/update_params.hpp"

namespace cuzk::circuits::filecoin {
namespace {

struct XorShift {
  std::uint32_t x, y, z, w;
  explicit XorShift(const std::uint8_t (&seed)[16]) {
    auto rd = [&](int i) {
      return std::uint32_t(seed[4 * i]) | std::uint32_t(seed[4 * i + 1]) << 8 | std::uint32_t(seed[4 * i + 2]) << 16 |
             std::uint32_t(seed[4 * i + 3]) << 24;
    };
    x = rd(0);
    y = rd(1);
    z = rd(2);
    w = rd(3);
  }
  std::uint32_t next_u32() {
    const std::uint32_t t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = w ^ (w >> 19) ^ (t ^ (t >> 8));
    return w;
  }
  std::uint64_t next_u64() {
    const std::uint64_t lo = next_u32();
    return lo | std::uint64_t(next_u32()) << 32;
  }
};

constexpr std::uint8_t kTestSeed[16] = {0x59, 0x62, 0xbe, 0x5d, 0x76, 0x3d, 0x31, 0x8d,
                                        0x17, 0xdb, 0x37, 0x32, 0x54, 0x06, 0xbc, 0xe5};

Fr blstrs_random(XorShift& rng) {
  for (;;) {
    ff::BigInt<4> raw{};
    for (auto& l : raw.limb) l = rng.next_u64();
    raw.limb[3] &= ~std::uint64_t(0) >> 1;
    std::uint8_t bytes[32];
    for (int i = 0; i < 32; ++i) bytes[i] = std::uint8_t(raw.limb[i / 8] >> (8 * (i % 8)));
    Fr x;
    if (Fr::from_bytes_le(bytes, x)) return x;
  }
}

TEST(UpdateParams, SizesAsRfpConstants) {
  EXPECT_EQ(update_partition_count(1 << 6), 1u);
  EXPECT_EQ(update_partition_count(1 << 10), 2u);
  EXPECT_EQ(update_partition_count(1 << 18), 4u);
  EXPECT_EQ(update_partition_count(1ull << 30), 16u);
  EXPECT_EQ(update_challenge_count(1 << 18), 10u);
  EXPECT_EQ(update_challenge_count(1 << 24), 86u);
  EXPECT_EQ(update_apex_leaf_count(1 << 8), 8u);
  EXPECT_EQ(update_apex_leaf_count(1 << 9), 128u);
  EXPECT_EQ(update_h_default(1 << 6), 1u);
  EXPECT_EQ(update_h_default(1ull << 30), 10u);
  EXPECT_EQ(update_h_select(1ull << 30, 10), 8u);
  EXPECT_EQ(update_h_select(1 << 6, 1), 1u);  // the first matching index
  EXPECT_FALSE(update_h_select(1ull << 30, 6).has_value());
  const auto l = update_layout(1ull << 30);
  EXPECT_EQ(l.random_bits_per_challenge(), 26u);
  EXPECT_EQ(l.apex_leaf_height(), 30u - 4 - 7);
  EXPECT_EQ(update_tree_r_shape(1ull << 31).top_arity, 2u);
}

TEST(UpdateParams, KAndHSelectAsPostSnapDoc) {
  // 32 GiB: k + 128; 8 MiB: k + 32; 2 KiB: 1.
  EXPECT_EQ(update_k_and_h_select(1ull << 30, 5, 10), 5u + 128);
  EXPECT_EQ(update_k_and_h_select(1 << 18, 3, 10), 3u + 32);
  EXPECT_EQ(update_k_and_h_select(1 << 6, 0, 1), 1u);
  EXPECT_FALSE(update_k_and_h_select(1ull << 30, 16, 10).has_value());
  EXPECT_FALSE(update_k_and_h_select(1ull << 30, 0, 13).has_value());
  const auto pub = update_public_inputs(1ull << 30, 2, 10, Fr::from_u64(7), Fr::from_u64(8), Fr::from_u64(9));
  ASSERT_EQ(pub.size(), 4u);
  EXPECT_EQ(pub[0], Fr::from_u64(130));
  EXPECT_EQ(pub[3], Fr::from_u64(9));
}

TEST(UpdateParams, ChallengesMatchRfpHardcodedVectors) {
  XorShift rng(kTestSeed);
  const Fr comm_r_new = blstrs_random(rng);
  const struct {
    std::uint64_t nodes;
    std::size_t k;
    std::uint32_t c[5];
  } cases[] = {
      {1 << 5, 0, {21, 7, 3, 31, 0}},
      {1 << 6, 0, {53, 51, 56, 3, 0}},
      {1 << 7, 0, {117, 25, 62, 0, 72}},
      {1 << 8, 0, {245, 140, 15, 128, 28}},
      {1 << 9, 1, {286, 308, 493, 510, 508}},
      {1 << 10, 1, {542, 666, 955, 927, 911}},
      {1 << 18, 1, {78878, 130797, 112892, 93994, 78379}},
      {1 << 19, 0, {101621, 16391, 109319, 25944, 41193}},
      {1 << 24, 14, {15212432, 15665918, 15015423, 15012912, 15495223}},
      {1ull << 30, 0, {1019125, 27985696, 15282860, 11586600, 44651330}},
      {1ull << 30, 15, {1038629497, 1053983614, 1030421316, 1027373887, 1068685433}},
      {1ull << 31, 1, {243386253, 197875851, 204632136, 171516766, 247789010}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "nodes " << c.nodes << " k " << c.k);
    const auto got = update_challenges(c.nodes, comm_r_new, c.k);
    ASSERT_EQ(got.size(), update_challenge_count(c.nodes));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(got[i], c.c[i]) << i;
  }
}

TEST(UpdateParams, ChallengesStayInTheirPartition) {
  const Fr comm_r_new = Fr::from_u64(12345);
  for (std::uint64_t nodes : {1ull << 10, 1ull << 18, 1ull << 30}) {
    const auto parts = update_partition_count(nodes);
    for (std::size_t k = 0; k < parts; ++k) {
      for (std::uint32_t c : update_challenges(nodes, comm_r_new, k)) {
        EXPECT_EQ(c / (nodes / parts), k);
      }
    }
  }
  // The Poseidon variant draws every partition's challenges over the whole sector.
  EXPECT_EQ(update_challenges_poseidon(1ull << 30, comm_r_new).size(), 86u * 16);
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
