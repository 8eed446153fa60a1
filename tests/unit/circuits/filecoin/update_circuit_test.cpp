// SnapDeals circuit: shape parity with rust-fil-proofs' asserted counts and
// satisfaction by vanilla proofs produced here.
//
// Constraint counts (TestConstraintSystem::num_constraints, input
// constraints excluded) from storage-proofs-update tests/circuit.rs:
// 1 KiB 1,248,389; 2 KiB 1,705,039; 4 KiB 2,165,109; 8 KiB 2,620,359;
// 16 KiB 6,300,021; 32 KiB 6,760,091; 32 GiB 81,049,499 (BenchCS); and
// tests/circuit_poseidon.rs: 1 KiB 32,164; 8 KiB 47,974; 32 GiB 22,305,906.
// Gadget counts from src/gadgets.rs tests: gen_challenge_bits 568 per digest.
#include <gtest/gtest.h>

#include "circuits/filecoin/update_check.hpp"
#include "circuits/filecoin/update_circuit.hpp"
#include "circuits/filecoin/update_gen.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "circuits/shape_stats.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::uint64_t count(const char* name, UpdateCountMode mode) {
  std::uint64_t nodes = 0;
  UpdateVariant v{};
  EXPECT_TRUE(update_circuit_by_name(name, nodes, v)) << name;
  return update_shape_stats(nodes, v, mode).constraints;
}

TEST(UpdateCircuitShape, SmallSizesMatchRfp) {
  EXPECT_EQ(count("update-1k", UpdateCountMode::kFull), 1'248'389u);
  EXPECT_EQ(count("update-2k", UpdateCountMode::kFull), 1'705'039u);
  EXPECT_EQ(count("update-4k", UpdateCountMode::kFull), 2'165'109u);
  EXPECT_EQ(count("update-8k", UpdateCountMode::kFull), 2'620'359u);
}

TEST(UpdateCircuitShape, TwoPartitionSizesMatchRfp) {
  EXPECT_EQ(count("update-16k", UpdateCountMode::kExtrapolate), 6'300'021u);
  EXPECT_EQ(count("update-32k", UpdateCountMode::kExtrapolate), 6'760'091u);
}

TEST(UpdateCircuitShape, ExtrapolationEqualsFullCount) {
  std::uint64_t nodes = 0;
  UpdateVariant v{};
  ASSERT_TRUE(update_circuit_by_name("update-2k", nodes, v));
  EXPECT_EQ(update_shape_stats(nodes, v, UpdateCountMode::kExtrapolate),
            update_shape_stats(nodes, v, UpdateCountMode::kFull));
  ASSERT_TRUE(update_circuit_by_name("update-poseidon-1k", nodes, v));
  EXPECT_EQ(update_shape_stats(nodes, v, UpdateCountMode::kExtrapolate),
            update_shape_stats(nodes, v, UpdateCountMode::kFull));
}

TEST(UpdateCircuitShape, ThirtyTwoGiBMatchesRfp) {
  std::uint64_t nodes = 0;
  UpdateVariant v{};
  ASSERT_TRUE(update_circuit_by_name("update-32g", nodes, v));
  const ShapeStats s = update_shape_stats(nodes, v, UpdateCountMode::kExtrapolate);
  EXPECT_EQ(s.constraints, 81'049'499u);
  EXPECT_EQ(s.inputs, 5u);
}

TEST(UpdateCircuitShape, PoseidonVariantMatchesRfp) {
  EXPECT_EQ(count("update-poseidon-1k", UpdateCountMode::kFull), 32'164u);
  EXPECT_EQ(count("update-poseidon-8k", UpdateCountMode::kFull), 47'974u);
  EXPECT_EQ(count("update-poseidon-32g", UpdateCountMode::kExtrapolate), 22'305'906u);
}

TEST(UpdateCircuitShape, UnknownNamesRejected) {
  std::uint64_t nodes = 0;
  UpdateVariant v{};
  EXPECT_FALSE(update_circuit_by_name("update-3k", nodes, v));
  EXPECT_FALSE(update_circuit_by_name("porep-2k", nodes, v));
}

// Satisfaction with the values of partition k; returns the first bad row's path.
std::optional<std::string> unsatisfied(const UpdateInputs& in, std::size_t k) {
  StreamCheckCs cs;
  update_circuit_from_proof(in, k).synthesize(cs);
  EXPECT_EQ(std::vector<Fr>(cs.inputs().begin() + 1, cs.inputs().end()), update_partition_public_inputs(in, k));
  if (cs.first_unsatisfied()) return cs.first_unsatisfied_path();
  return std::nullopt;
}

TEST(UpdateCircuit, GenuineTwoKiBUpdateSatisfiesTheCircuit) {
  const UpdateInputs in = make_sealed_update(UpdateProof::StackedDrg2KiBV1, 7);
  ASSERT_EQ(in.partitions.size(), 1u);
  EXPECT_NO_THROW(check_update(in));
  EXPECT_EQ(unsatisfied(in, 0), std::nullopt);
}

TEST(UpdateCircuit, ParallelWitnessEqualsSequential) {
  const UpdateInputs in = make_sealed_update(UpdateProof::StackedDrg2KiBV1, 9);
  const UpdateCircuit circuit = update_circuit_from_proof(in, 0);
  groth16::WitnessCs cs;
  circuit.synthesize(cs);
  ThreadPool pool(2);
  const groth16::Witness par = circuit.generate_witness(pool);
  EXPECT_EQ(par.inputs, cs.witness().inputs);
  EXPECT_EQ(par.aux, cs.witness().aux);
  EXPECT_EQ(par.aux.size(), update_shape_stats(1 << 6, UpdateVariant::kSha256TreeD, UpdateCountMode::kFull).aux);
}

TEST(UpdateCircuit, TamperedLeafIsUnsatisfied) {
  UpdateInputs in = make_sealed_update(UpdateProof::StackedDrg2KiBV1, 8);
  // A different new-data leaf: the encoding and tree D path no longer hold.
  in.partitions[0].challenge_proofs[3].proof_d_new.leaf[0] ^= 1;
  EXPECT_NE(unsatisfied(in, 0), std::nullopt);
}

TEST(UpdateCircuit, SparseUpdatesSatisfyTheCircuit) {
  for (UpdateProof p : {UpdateProof::StackedDrg2KiBV1}) {
    const UpdateInputs in = make_sparse_update(p, 3);
    EXPECT_NO_THROW(check_update(in));
    EXPECT_EQ(unsatisfied(in, 0), std::nullopt);
  }
}

}  // namespace
}  // namespace cuzk::circuits::filecoin

namespace cuzk::circuits::filecoin {
namespace {

// The Poseidon variant on a genuine 1 KiB update whose tree D is a Poseidon
// tree of tree R's shape (8-4-0), challenges from update_challenges_poseidon.
TEST(UpdateCircuit, PoseidonVariantSatisfiedByGenuineUpdate) {
  const std::uint64_t nodes = 1 << 5;
  const UpdateLayout l = update_layout(nodes);
  std::uint64_t x = 99;
  auto rnd = [&] {
    x += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<Fr> data(nodes), old_r(nodes);
  for (auto& v : data) v = Fr::random(rnd);
  for (auto& v : old_r) v = Fr::random(rnd);
  const Fr comm_c = Fr::random(rnd);
  const auto ar = native::tree_shape_arities(nodes, 8, 4, 0);
  const native::PoseidonMerkleTree tree_d(native::PoseidonTreeHasher{}, ar, data);
  const native::PoseidonMerkleTree tree_r_old(native::PoseidonTreeHasher{}, ar, old_r);
  const Fr comm_r_old = native::poseidon2(comm_c, tree_r_old.root());
  const std::size_t h = update_h_default(nodes);
  const Fr phi = update_phi(tree_d.root(), comm_r_old);
  std::vector<Fr> new_r(nodes);
  for (std::size_t i = 0; i < nodes; ++i)
    new_r[i] = old_r[i] + data[i] * update_rho(phi, std::uint32_t(i >> (l.challenge_bit_len - h)));
  const native::PoseidonMerkleTree tree_r_new(native::PoseidonTreeHasher{}, ar, new_r);
  const Fr comm_r_new = native::poseidon2(comm_c, tree_r_new.root());

  auto siblings = [](const native::MerklePath<Fr>& p) {
    SiblingPath out;
    for (const auto& lv : p.levels) out.emplace_back(lv.siblings.begin(), lv.siblings.end());
    return out;
  };
  UpdateCircuit::Private priv;
  priv.comm_c = comm_c;
  priv.root_r_old = tree_r_old.root();
  priv.root_r_new = tree_r_new.root();
  for (std::uint32_t c : update_challenges_poseidon(nodes, comm_r_new)) {
    UpdateChallengeWitness w;
    w.leaf_r_old = old_r[c];
    w.leaf_d_new = data[c];
    w.leaf_r_new = new_r[c];
    w.path_r_old = siblings(tree_r_old.path(c));
    w.path_d_new = siblings(tree_d.path(c));
    w.path_r_new = siblings(tree_r_new.path(c));
    priv.challenges.push_back(std::move(w));
  }
  const UpdateCircuit::Public pub{Fr::from_u64(*update_h_select(nodes, h)), comm_r_old, tree_d.root(), comm_r_new};
  {
    StreamCheckCs cs;
    UpdateCircuit(nodes, UpdateVariant::kPoseidon, pub, priv).synthesize(cs);
    EXPECT_FALSE(cs.first_unsatisfied().has_value()) << cs.first_unsatisfied_path();
    EXPECT_EQ(cs.num_constraints(), 32'164u);
  }
  // Another comm_d_new: phi, every rho and the tree D root check change.
  UpdateCircuit::Public bad = pub;
  bad.comm_d_new = *bad.comm_d_new + Fr::one();
  StreamCheckCs cs;
  UpdateCircuit(nodes, UpdateVariant::kPoseidon, bad, priv).synthesize(cs);
  EXPECT_TRUE(cs.first_unsatisfied().has_value());
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
