// StackedDRG circuit shape parity with rust-fil-proofs and cuzk-pce, and the
// C2 witness path on a synthetic 2 KiB sector.
//
// Expected numbers come from outside this code base:
//   - rfp storage-proofs-porep/tests/stacked_circuit.rs: 1 challenge, 2
//     layers, 8 nodes per base tree, 22 inputs; constraints 1,206,212 (base 2),
//     1,199,620 (base 8), 1,296,576 (8-4), 1,346,982 (8-4-2);
//   - curio cuzk-pce (disk.rs:449, cuzk-project.md:1591-1601): the 32 GiB
//     partition's pre-compiled circuit: 130,278,869 rows incl. 328 input
//     constraints, 130,169,893 aux, nnz A/B/C 309,405,051 / 130,327,340 /
//     282,656,500 (A incl. the 328 input-constraint entries), densities
//     a_aux 129,753,292, b_input 1, b_aux 33,112,281.
#include <gtest/gtest.h>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/stacked_circuit.hpp"
#include "circuits/shape_stats.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using groth16::TestCs;
using groth16::WitnessCs;

TEST(StackedCircuitShape, MatchesRfpStackedCircuitTests) {
  const struct {
    const char* name;
    std::uint64_t constraints;
  } cases[] = {{"stacked-base-2", 1'206'212},
               {"stacked-base-8", 1'199'620},
               {"stacked-8-4", 1'296'576},
               {"stacked-8-4-2", 1'346'982}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto shape = stacked_shape_by_name(c.name);
    ASSERT_TRUE(shape.has_value());
    const ShapeStats s = shape_stats(StackedCircuit::blank(*shape));
    EXPECT_EQ(s.constraints, c.constraints);
    EXPECT_EQ(s.inputs, 22u);
  }
}

// The densities and nnz of ShapeStatsCs agree with a compiled R1cs (which
// derives its densities from the stored matrices) on a real stacked shape.
TEST(StackedCircuitShape, ShapeStatsAgreeWithCompiledR1cs) {
  const auto shape = stacked_shape_by_name("stacked-base-8");
  ASSERT_TRUE(shape.has_value());
  const StackedCircuit c = StackedCircuit::blank(*shape);
  const ShapeStats s = shape_stats(c);
  const groth16::R1cs r = groth16::compile(c);
  EXPECT_EQ(r.num_circuit_constraints(), s.constraints);
  EXPECT_EQ(r.num_inputs(), s.inputs);
  EXPECT_EQ(r.num_aux(), s.aux);
  // R1cs rows include the input constraints: one A entry each.
  EXPECT_EQ(r.a().nnz(), s.nnz_a + s.inputs);
  EXPECT_EQ(r.b().nnz(), s.nnz_b);
  EXPECT_EQ(r.c().nnz(), s.nnz_c);
  EXPECT_EQ(r.a_aux_density().popcount(), s.density_a_aux);
  EXPECT_EQ(r.b_input_density().popcount(), s.density_b_input);
  EXPECT_EQ(r.b_aux_density().popcount(), s.density_b_aux);
  EXPECT_EQ(s.zero_terms, 0u);
  // The streamed fingerprint is the compiled R1CS's.
  EXPECT_EQ(stream_fingerprint(c, s), r.fingerprint());
}

// Extrapolating from two challenges equals synthesizing them all.
TEST(StackedCircuitShape, ExtrapolationEqualsFullCount) {
  StackedShape shape = stacked_shape(SealProof::StackedDrg2KiBV1_1);
  shape.challenges = 3;
  const ShapeStats full = stacked_shape_stats(shape, CountMode::kFull);
  const ShapeStats extra = stacked_shape_stats(shape, CountMode::kExtrapolate);
  EXPECT_EQ(full, extra);
  EXPECT_EQ(full.inputs, 4u + 18u * 3u);
}

TEST(StackedCircuitShape, Porep32GiBPartitionMatchesCuzkPce) {
  const StackedShape shape = stacked_shape(SealProof::StackedDrg32GiBV1_1);
  ASSERT_EQ(shape.challenges, 18u);
  const ShapeStats s = stacked_shape_stats(shape, CountMode::kExtrapolate);
  EXPECT_EQ(s.inputs, 328u);
  EXPECT_EQ(s.constraints_with_input_constraints(), 130'278'869u);
  EXPECT_EQ(s.aux, 130'169'893u);
  EXPECT_EQ(s.nnz_a + s.inputs, 309'405'051u);
  EXPECT_EQ(s.nnz_b, 130'327'340u);
  EXPECT_EQ(s.nnz_c, 282'656'500u);
  EXPECT_EQ(s.density_a_aux, 129'753'292u);
  EXPECT_EQ(s.density_b_input, 1u);
  EXPECT_EQ(s.density_b_aux, 33'112'281u);
}

TEST(ShapeStats, StreamFingerprintEqualsTestCsHash) {
  const DemoCircuit c(40, groth16::Fr::from_u64(7));
  TestCs cs;
  c.synthesize(cs);
  ASSERT_TRUE(cs.is_satisfied());
  EXPECT_EQ(stream_fingerprint(c, shape_stats(c)), cs.hash());
  // A different shape hashes differently.
  const DemoCircuit d(41, groth16::Fr::from_u64(7));
  EXPECT_NE(stream_fingerprint(d, shape_stats(d)), cs.hash());
}

// C2 witness path: a real C1 output of a synthetic 2 KiB sector, turned into
// the partition circuit, satisfies it; its public inputs are those the
// circuit allocates; its shape is the blank circuit's.
TEST(StackedCircuitWitness, Synthetic2KiBPartitionIsSatisfied) {
  SyntheticSealInputs in;
  in.sector_id = 7;
  in.prover_id[0] = 1;
  in.ticket[3] = 5;
  in.seed[9] = 11;
  in.data_seed = 42;
  const C1Output c1 = make_synthetic_c1(SealProof::StackedDrg2KiBV1_1, in);
  ASSERT_EQ(c1.vanilla_proofs.size(), 1u);
  const StackedCircuit circuit = stacked_circuit_from_c1(c1, 0);

  WitnessCs wcs;
  circuit.synthesize(wcs);
  const std::vector<groth16::Fr> expected = circuit.public_inputs();
  ASSERT_EQ(wcs.witness().inputs.size(), expected.size() + 1);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(wcs.witness().inputs[i + 1], expected[i]) << "input " << i + 1;
  }
  // The verifier derives the same inputs from public data alone (challenges
  // from replica_id and seed, parents from the graph).
  EXPECT_EQ(expected, stacked_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed, 0));
  EXPECT_EQ(expected[3 + 15], groth16::Fr::from_u64(c1.vanilla_proofs[0][0].challenge()));

  // The parallel witness generator gives the same assignment.
  ThreadPool pool(2);
  const groth16::Witness par = circuit.generate_witness(pool);
  EXPECT_EQ(par.inputs, wcs.witness().inputs);
  EXPECT_EQ(par.aux, wcs.witness().aux);

  // The prover's path: the blank circuit compiled once, the witness checked
  // against it row by row (a TestCs of 2.7M constraints would take ~3 GB).
  const groth16::R1cs r1cs = groth16::compile(StackedCircuit::blank(circuit.shape()));
  const groth16::Witness& w = wcs.witness();
  ASSERT_EQ(w.inputs.size(), r1cs.num_inputs());
  ASSERT_EQ(w.aux.size(), r1cs.num_aux());
  EXPECT_EQ(wcs.num_constraints(), r1cs.num_circuit_constraints());
  const auto bad = groth16::first_unsatisfied(r1cs, w.inputs, w.aux, pool);
  EXPECT_FALSE(bad.has_value()) << "row " << *bad;

  // A wrong comm_r breaks comm_r = H(comm_c || comm_r_last); a wrong
  // replica id breaks its bit decomposition and every label.
  for (std::size_t input : {1u, 3u}) {
    std::vector<groth16::Fr> inputs = w.inputs;
    inputs[input] += groth16::Fr::one();
    EXPECT_TRUE(groth16::first_unsatisfied(r1cs, inputs, w.aux, pool).has_value()) << input;
  }
  // A wrong data leaf (aux, allocated first in challenge 0 after the global
  // part) breaks its inclusion in tree D.
  const ShapeStats global = shape_stats(StackedCircuit::blank(circuit.shape()).with_challenges(0, 0));
  std::vector<groth16::Fr> aux = w.aux;
  aux[global.aux] += groth16::Fr::one();
  EXPECT_TRUE(groth16::first_unsatisfied(r1cs, w.inputs, aux, pool).has_value());
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
