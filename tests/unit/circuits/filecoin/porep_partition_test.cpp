// The per-partition entry points of PoRep C2 that the daemon's pipeline uses:
// one partition's witness equals the batch synthesis's, and the checks before
// proving reject wrong public inputs and unsatisfied witnesses with typed
// errors (the satisfaction pass can be turned off). No parameters needed.
#include <gtest/gtest.h>

#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {
namespace {

PorepC2ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const PorepC2Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no PorepC2Error";
  return PorepC2ErrorKind::kParams;
}

TEST(PorepPartition, OnePartitionAtATimeWithItsChecks) {
  ThreadPool pool(2);
  const SealProof sp = SealProof::StackedDrg2KiBV1_1;
  PorepC2 shapes;  // no disk cache
  const auto r1cs = shapes.compiled_shape(sp);
  SyntheticSealInputs in;
  in.sector_id = 77;
  in.seed[4] = 3;
  in.data_seed = 2;
  const C1Output c1 = make_synthetic_c1(sp, in);
  const auto inputs = porep_public_inputs(sp, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  ASSERT_EQ(inputs.size(), 1u);

  const groth16::Witness w = synthesize_partition(c1, 0);
  const std::vector<PartitionWitness> all = synthesize_partitions(c1, pool);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(w.inputs, all[0].witness.inputs);
  EXPECT_EQ(w.aux, all[0].witness.aux);
  // The challenges synthesized in parallel (the daemon's default) give the
  // same witness as the sequential synthesis.
  ThreadPool challenges(3);
  const groth16::Witness wp = synthesize_partition(c1, 0, &challenges);
  EXPECT_EQ(wp.inputs, w.inputs);
  EXPECT_EQ(wp.aux, w.aux);
  // With the R1cs's shape (allocated once, as the daemon synthesizes): the
  // same witness, sequential and parallel, with capacity for exactly it.
  const groth16::WitnessShape shape{r1cs->num_inputs(), r1cs->num_aux()};
  const groth16::Witness ws = synthesize_partition(c1, 0, nullptr, shape);
  EXPECT_EQ(ws.inputs, w.inputs);
  EXPECT_EQ(ws.aux, w.aux);
  EXPECT_EQ(ws.aux.capacity(), r1cs->num_aux());
  const groth16::Witness wps = synthesize_partition(c1, 0, &challenges, shape);
  EXPECT_EQ(wps.inputs, w.inputs);
  EXPECT_EQ(wps.aux, w.aux);
  EXPECT_EQ(all[0].public_inputs, inputs[0]);
  check_partition_witness(*r1cs, w, inputs[0], 0, pool);  // does not throw

  // Inputs of another seed: the vanilla proofs answer other challenges.
  Digest32 other_seed = c1.seed;
  other_seed[0] ^= 1;
  const auto other = porep_public_inputs(sp, c1.replica_id, c1.comm_d, c1.comm_r, other_seed);
  EXPECT_EQ(kind_of([&] { check_partition_witness(*r1cs, w, other[0], 0, pool); }), PorepC2ErrorKind::kInputMismatch);

  // A flipped aux value: only the satisfaction pass can see it.
  groth16::Witness bad = w;
  bad.aux[bad.aux.size() / 2] += ff::Fr::one();
  EXPECT_EQ(kind_of([&] { check_partition_witness(*r1cs, bad, inputs[0], 0, pool); }), PorepC2ErrorKind::kUnsatisfied);
  check_partition_witness(*r1cs, bad, inputs[0], 0, pool, /*check_satisfaction=*/false);

  groth16::Witness short_w = w;
  short_w.aux.pop_back();
  EXPECT_EQ(kind_of([&] { check_partition_witness(*r1cs, short_w, inputs[0], 0, pool); }),
            PorepC2ErrorKind::kShapeMismatch);
  EXPECT_EQ(kind_of([&] { (void)synthesize_partition(c1, 1); }), PorepC2ErrorKind::kPartitionCount);
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
