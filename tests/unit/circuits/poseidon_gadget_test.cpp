// Poseidon circuit: neptune's constraint counts, output equal to the native hash.
#include <gtest/gtest.h>

#include <random>

#include "circuits/gadgets/poseidon.hpp"

namespace cuzk::circuits::gadgets {
namespace {

using groth16::TestCs;

// neptune src/circuit.rs test_poseidon_hash (Standard strength); 11 from
// rfp storage-proofs-porep stacked/circuit/hash.rs (column hash).
TEST(PoseidonGadget, ConstraintCountsMatchNeptune) {
  const std::pair<std::size_t, std::size_t> cases[] = {{2, 311},  {4, 377},   {8, 505},  {11, 598},
                                                       {16, 761}, {24, 1009}, {36, 1385}};
  std::mt19937_64 rng(9);
  for (auto [arity, expected] : cases) {
    const auto& pc = native::filecoin_poseidon(arity);
    TestCs cs;
    std::vector<AllocatedNum> in;
    std::vector<Fr> vals;
    for (std::size_t i = 0; i < arity; ++i) {
      vals.push_back(Fr::random(rng));
      in.push_back(AllocatedNum::alloc(cs, vals.back()));
    }
    auto out = poseidon_hash(cs, in, pc);
    EXPECT_EQ(cs.num_constraints(), expected) << "arity " << arity;
    EXPECT_TRUE(cs.is_satisfied()) << "arity " << arity << " " << cs.which_is_unsatisfied().value_or("");
    EXPECT_EQ(*out.value(), native::poseidon_hash(pc, vals)) << "arity " << arity;
    EXPECT_EQ(cs.value(out.variable()), *out.value());
  }
}

TEST(PoseidonGadget, NeptuneVectorThroughCircuit) {
  // hash of [0, 1] (neptune test vector) computed by the circuit.
  TestCs cs;
  std::vector<AllocatedNum> in = {AllocatedNum::alloc(cs, Fr::zero()), AllocatedNum::alloc(cs, Fr::one())};
  auto out = poseidon_hash(cs, in, native::filecoin_poseidon(2));
  ff::BigInt<4> e{};
  e.limb = {0x2e203c369a02e7ff, 0xa6fba9339d05a69d, 0x739e0fd902efe161, 0x396508d75e76a56b};
  EXPECT_EQ(*out.value(), Fr::from_int(e));
  EXPECT_TRUE(cs.is_satisfied());
}

TEST(PoseidonGadget, Hash2AndColumnHelpers) {
  TestCs cs;
  auto one = AllocatedNum::alloc(cs, Fr::one()), zero = AllocatedNum::alloc(cs, Fr::zero());
  // rfp filecoin-hashers test_poseidon_hasher: H(1, 0).
  ff::BigInt<4> e{};
  e.limb = {0xb339ff6079800b5e, 0xec5907b3dc3094af, 0x93c003cc74a24f26, 0x042f94ffbe786bc3};
  EXPECT_EQ(*poseidon_hash2(cs, one, zero).value(), Fr::from_int(e));
  EXPECT_EQ(cs.num_constraints(), 311u);
  std::vector<AllocatedNum> column(11, one);
  hash_single_column(cs, column);
  EXPECT_EQ(cs.num_constraints(), 311u + 598u);
  EXPECT_TRUE(cs.is_satisfied());
}

// rfp filecoin-hashers/src/poseidon.rs test_hash_md / test_hash_md_circuit.
TEST(PoseidonGadget, HashMdOf71Ones) {
  ff::BigInt<4> e{};
  e.limb = {0x351c54133b332c90, 0xc26f6d625f4e8195, 0x5fd9623643ed9622, 0x59f42220e09ff6f7};
  const std::vector<Fr> ones(71, Fr::one());
  EXPECT_EQ(native::poseidon_hash_md(ones), Fr::from_int(e));
  TestCs cs;
  std::vector<AllocatedNum> in;
  for (int i = 0; i < 71; ++i) in.push_back(AllocatedNum::alloc(cs, Fr::one()));
  auto out = poseidon_hash_md(cs, in);
  EXPECT_EQ(*out.value(), Fr::from_int(e));
  EXPECT_EQ(cs.num_constraints(), 2770u);
  EXPECT_TRUE(cs.is_satisfied());
  // A short last chunk is zero padded in both.
  std::vector<Fr> v(40);
  std::mt19937_64 rng(13);
  for (auto& x : v) x = Fr::random(rng);
  TestCs cs2;
  std::vector<AllocatedNum> in2;
  for (const auto& x : v) in2.push_back(AllocatedNum::alloc(cs2, x));
  EXPECT_EQ(*poseidon_hash_md(cs2, in2).value(), native::poseidon_hash_md(v));
  EXPECT_TRUE(cs2.is_satisfied());
}

TEST(PoseidonGadget, CorruptedWitnessIsRejected) {
  std::mt19937_64 rng(10);
  TestCs cs;
  std::vector<AllocatedNum> in = {AllocatedNum::alloc(cs, Fr::random(rng)), AllocatedNum::alloc(cs, Fr::random(rng))};
  auto out = poseidon_hash(cs, in, native::filecoin_poseidon(2));
  ASSERT_TRUE(cs.is_satisfied());
  for (std::uint32_t idx : {2u, 50u, std::uint32_t(cs.num_aux() - 1)}) {
    const Variable v = Variable::aux(idx);
    const Fr old = cs.value(v);
    cs.set_value(v, old + Fr::one());
    EXPECT_FALSE(cs.is_satisfied()) << idx;
    cs.set_value(v, old);
  }
  EXPECT_EQ(cs.value(out.variable()), *out.value());
}

TEST(PoseidonGadget, ShapeIndependentOfWitness) {
  std::mt19937_64 rng(11);
  std::string h[2];
  for (int k = 0; k < 2; ++k) {
    TestCs cs;
    std::vector<AllocatedNum> in;
    for (int i = 0; i < 8; ++i) in.push_back(AllocatedNum::alloc(cs, Fr::random(rng)));
    poseidon_hash(cs, in, native::filecoin_poseidon(8));
    h[k] = cs.hash();
  }
  EXPECT_EQ(h[0], h[1]);
}

// WitnessCs runs the linear layers on plain field elements (values only);
// TestCs through the tracked lanes: the same variables with the same values,
// the same count, the same hash, for every arity Filecoin uses.
TEST(PoseidonGadget, ValuesOnlyLinearLayersMatchTheTrackedOnes) {
  std::mt19937_64 rng(17);
  for (std::size_t arity : {2u, 4u, 8u, 11u, 16u, 24u, 36u}) {
    std::vector<Fr> vals;
    for (std::size_t i = 0; i < arity; ++i) vals.push_back(Fr::random(rng));
    auto run = [&](groth16::ConstraintSystem& cs) {
      std::vector<AllocatedNum> in;
      for (const Fr& v : vals) in.push_back(AllocatedNum::alloc(cs, v));
      return poseidon_hash(cs, in, native::filecoin_poseidon(arity));
    };
    TestCs tcs;
    groth16::WitnessCs wcs;
    const AllocatedNum want = run(tcs);
    const AllocatedNum got = run(wcs);
    EXPECT_EQ(*got.value(), *want.value()) << "arity " << arity;
    EXPECT_EQ(wcs.num_constraints(), tcs.num_constraints()) << "arity " << arity;
    EXPECT_TRUE(wcs.witness().aux == std::vector<Fr>(tcs.aux().begin(), tcs.aux().end())) << "arity " << arity;
  }
}

}  // namespace
}  // namespace cuzk::circuits::gadgets
