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
  EXPECT_EQ(std::vector<Fr>(cs.inputs().begin() + 1, cs.inputs().end()),
            update_partition_public_inputs(in, k));
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
  EXPECT_EQ(par.aux.size(),
            update_shape_stats(1 << 6, UpdateVariant::kSha256TreeD, UpdateCountMode::kFull).aux);
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
