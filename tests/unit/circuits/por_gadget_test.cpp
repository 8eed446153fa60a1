// Insertion and PoR circuits: rfp's constraint counts, honest witnesses
// satisfy, wrong ones do not, blank (shape-only) synthesis has the same shape.
#include <gtest/gtest.h>

#include <random>

#include "circuits/gadgets/insertion.hpp"
#include "circuits/gadgets/por.hpp"
#include "groth16/r1cs.hpp"

namespace cuzk::circuits::gadgets {
namespace {

using groth16::RecordingCs;
using groth16::TestCs;

// rfp storage-proofs-core gadgets/insertion.rs tests: 2 / 8 / 22 constraints
// for the insertion itself, 3 / 10 / 25 with the index bits.
TEST(InsertionGadget, CountsAndEveryPosition) {
  const std::pair<std::size_t, std::size_t> cases[] = {{2, 3}, {4, 10}, {8, 25}, {16, 4 + 16 * 15}};
  std::mt19937_64 rng(21);
  for (auto [size, expected] : cases) {
    const std::size_t nbits = std::size_t(std::countr_zero(size));
    for (std::size_t index = 0; index < size; ++index) {
      TestCs cs;
      std::vector<Boolean> bits;
      for (std::size_t b = 0; b < nbits; ++b) {
        bits.emplace_back(AllocatedBit::alloc(cs, ((index >> b) & 1) != 0));
      }
      std::vector<Fr> vals;
      std::vector<AllocatedNum> elements;
      for (std::size_t i = 0; i + 1 < size; ++i) {
        vals.push_back(Fr::random(rng));
        elements.push_back(AllocatedNum::alloc(cs, vals.back()));
      }
      const Fr x = Fr::random(rng);
      auto element = AllocatedNum::alloc(cs, x);
      auto out = insert(cs, element, bits, elements);
      EXPECT_EQ(cs.num_constraints(), expected) << "size " << size;
      EXPECT_TRUE(cs.is_satisfied());
      std::vector<Fr> want = vals;
      want.insert(want.begin() + std::ptrdiff_t(index), x);
      ASSERT_EQ(out.size(), size);
      for (std::size_t i = 0; i < size; ++i) EXPECT_EQ(*out[i].value(), want[i]);
      // Claiming a different order must break a constraint.
      const Variable v = out[index].variable();
      cs.set_value(v, cs.value(v) + Fr::one());
      EXPECT_FALSE(cs.is_satisfied());
    }
  }
}

struct PorCase {
  TreeShape shape;
  std::size_t expected;
};

class PorCircuitTest : public ::testing::TestWithParam<PorCase> {};

// rfp storage-proofs-core tests/por_circuit.rs, Poseidon trees of 64 leaves
// per base tree.
TEST_P(PorCircuitTest, CountsInputsAndSatisfaction) {
  const PorCase& pc = GetParam();
  const std::size_t base_trees =
      (pc.shape.sub_arity ? pc.shape.sub_arity : 1) * (pc.shape.top_arity ? pc.shape.top_arity : 1);
  const std::uint64_t leaves = 64 * base_trees;
  const auto arities = native::tree_shape_arities(leaves, pc.shape.base_arity, pc.shape.sub_arity, pc.shape.top_arity);
  std::mt19937_64 rng(leaves + pc.shape.base_arity);
  std::vector<Fr> data(leaves);
  for (auto& x : data) x = Fr::random(rng);
  native::PoseidonMerkleTree tree(native::PoseidonTreeHasher{}, arities, data);

  for (std::uint64_t challenge : {std::uint64_t{0}, leaves - 1, rng() % leaves}) {
    PorCircuit circuit(pc.shape, TreeHasher::kPoseidon, data[challenge], path_levels(tree.path(challenge)), tree.root(),
                       false);
    TestCs cs;
    circuit.synthesize(cs);
    EXPECT_TRUE(cs.is_satisfied()) << cs.which_is_unsatisfied().value_or("");
    EXPECT_EQ(cs.num_constraints(), pc.expected);
    EXPECT_EQ(cs.num_inputs(), 3u);
    auto expected_inputs = PorCircuit::public_inputs(challenge, tree.root());
    ASSERT_EQ(cs.inputs().size(), 3u);
    EXPECT_EQ(cs.inputs()[1], expected_inputs[0]);
    EXPECT_EQ(cs.inputs()[2], expected_inputs[1]);
  }

  // A wrong leaf does not reach the root.
  PorCircuit bad(pc.shape, TreeHasher::kPoseidon, data[1] + Fr::one(), path_levels(tree.path(1)), tree.root(), false);
  TestCs bcs;
  bad.synthesize(bcs);
  EXPECT_FALSE(bcs.is_satisfied());

  // Shape-only synthesis of the blank circuit: same counts.
  RecordingCs rcs;
  PorCircuit::blank(pc.shape, TreeHasher::kPoseidon, leaves, false).synthesize(rcs);
  EXPECT_EQ(rcs.num_constraints(), pc.expected);
  EXPECT_EQ(rcs.num_inputs(), 3u);
}

INSTANTIATE_TEST_SUITE_P(RfpShapes, PorCircuitTest,
                         ::testing::Values(PorCase{{2, 0, 0}, 1887}, PorCase{{4, 0, 0}, 1164}, PorCase{{8, 0, 0}, 1063},
                                           PorCase{{8, 2, 0}, 1377}, PorCase{{8, 4, 2}, 1764}, PorCase{{8, 8, 0}, 1593},
                                           PorCase{{8, 8, 2}, 1907}, PorCase{{8, 2, 4}, 1764}));

TEST(PorCircuit, PrivateRootHasOneInputFewer) {
  RecordingCs rcs;
  PorCircuit::blank({8, 0, 0}, TreeHasher::kPoseidon, 64, true).synthesize(rcs);
  EXPECT_EQ(rcs.num_inputs(), 2u);
  EXPECT_EQ(rcs.num_constraints(), 1062u);
}

// rfp tests/por_circuit.rs: SHA-256 binary tree of 64 leaves.
TEST(PorCircuit, Sha256Base2Count) {
  std::vector<native::Digest32> leaves(64);
  std::mt19937_64 rng(5);
  for (auto& l : leaves) {
    for (auto& b : l) b = std::uint8_t(rng());
    native::trim_to_fr32(l);
  }
  native::Sha256MerkleTree tree(native::Sha256TreeHasher{}, native::tree_shape_arities(64, 2), leaves);
  auto p = tree.path(37);
  std::vector<PathLevel> levels;
  for (const auto& l : p.levels) {
    levels.push_back({2, {native::fr_from_le_bytes(l.siblings[0])}, l.index});
  }
  PorCircuit c({2, 0, 0}, TreeHasher::kSha256, native::fr_from_le_bytes(leaves[37]), levels,
               native::fr_from_le_bytes(tree.root()), false);
  TestCs cs;
  c.synthesize(cs);
  EXPECT_TRUE(cs.is_satisfied()) << cs.which_is_unsatisfied().value_or("");
  EXPECT_EQ(cs.num_constraints(), 272295u);
  EXPECT_EQ(cs.num_inputs(), 3u);
}

TEST(PorCircuit, NoChallengeInputVariant) {
  std::mt19937_64 rng(77);
  std::vector<Fr> data(128);
  for (auto& x : data) x = Fr::random(rng);
  const auto arities = native::tree_shape_arities(128, 8, 2);
  native::PoseidonMerkleTree tree(native::PoseidonTreeHasher{}, arities, data);
  const std::uint64_t challenge = 99;
  auto path = tree.path(challenge);
  TestCs cs;
  std::vector<AllocatedBit> bits;
  for (int b = 0; b < 7; ++b) bits.push_back(AllocatedBit::alloc(cs, ((challenge >> b) & 1) != 0));
  auto leaf = AllocatedNum::alloc(cs, data[challenge]);
  std::vector<std::vector<AllocatedNum>> values;
  for (const auto& l : path.levels) {
    values.emplace_back();
    for (const auto& s : l.siblings) values.back().push_back(AllocatedNum::alloc(cs, s));
  }
  auto root = AllocatedNum::alloc(cs, tree.root());
  por_no_challenge_input(cs, {8, 2, 0}, TreeHasher::kPoseidon, bits, leaf, values, root);
  EXPECT_TRUE(cs.is_satisfied());
  // 7 bits + 2 x (22 + 505) + (2 + 311) + root equality.
  EXPECT_EQ(cs.num_constraints(), 7u + 2 * 527 + 313 + 1);
  cs.set_value(root.variable(), tree.root() + Fr::one());
  EXPECT_FALSE(cs.is_satisfied());
}

}  // namespace
}  // namespace cuzk::circuits::gadgets

namespace cuzk::circuits::gadgets {
namespace {

// The witness-only path (no linear combinations built) must assign exactly
// what the constraint-keeping path assigns.
TEST(PorCircuit, WitnessCsMatchesTestCs) {
  std::mt19937_64 rng(78);
  std::vector<Fr> data(1024);
  for (auto& x : data) x = Fr::random(rng);
  const TreeShape shape{8, 8, 2};
  native::PoseidonMerkleTree tree(native::PoseidonTreeHasher{}, native::tree_shape_arities(1024, 8, 8, 2), data);
  PorCircuit c(shape, TreeHasher::kPoseidon, data[700], path_levels(tree.path(700)), tree.root(), false);
  TestCs tcs;
  c.synthesize(tcs);
  groth16::WitnessCs wcs;
  c.synthesize(wcs);
  EXPECT_EQ(wcs.num_constraints(), tcs.num_constraints());
  EXPECT_EQ(wcs.witness().inputs, std::vector<Fr>(tcs.inputs().begin(), tcs.inputs().end()));
  EXPECT_EQ(wcs.witness().aux, std::vector<Fr>(tcs.aux().begin(), tcs.aux().end()));

  // The blank circuit compiled without values has the same R1CS, coefficient
  // for coefficient, as the witnessed one.
  groth16::R1cs r1cs = groth16::compile(PorCircuit::blank(shape, TreeHasher::kPoseidon, 1024, false));
  EXPECT_EQ(r1cs.fingerprint(), tcs.hash());
}

}  // namespace
}  // namespace cuzk::circuits::gadgets
