// prepare_filecoin_work for PoRep C2 (engine/porep_work.cpp) on a genuine
// 2 KiB C1 (set, partitions, public inputs from public data, a witness
// satisfying the compiled partition R1CS) and on C1s it must refuse with
// kInvalidInput. CPU only, no engine.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "engine/filecoin_work.hpp"
#include "groth16/r1cs.hpp"

namespace cuzk::engine {
namespace {

namespace fc = circuits::filecoin;

fc::C1Output genuine_c1() {
  fc::SyntheticSealInputs in;
  in.sector_id = 7;
  in.seed[0] = 9;
  in.data_seed = 11;
  return fc::make_synthetic_c1(fc::SealProof::StackedDrg2KiBV1_1, in);
}

TEST(PorepWork, AGenuineC1IsReadyForThePipeline) {
  ThreadPool pool(2);
  const fc::C1Output c1 = genuine_c1();
  const Result<FilecoinWork> w = prepare_filecoin_work(ProofKind::kPoRepC2, fc::to_json(c1), pool);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w.value().set.id, "porep-2KiB");
  ASSERT_TRUE(w.value().set.porep.has_value());
  EXPECT_EQ(*w.value().set.porep, fc::SealProof::StackedDrg2KiBV1_1);
  EXPECT_EQ(w.value().partitions, c1.info().partitions);
  EXPECT_FALSE(w.value().parallel_synthesis);
  EXPECT_FALSE(w.value().critical_synthesis_pool);  // the critical pool is the deadline kinds'
  EXPECT_EQ(w.value().set.id, circuit_set_spec("porep-2KiB")->id);
  EXPECT_TRUE(w.value().final_check);
  // From public data only, as a verifier derives them.
  EXPECT_EQ(w.value().public_inputs,
            fc::porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed));

  // Partition 0's witness passes the lane's checks against the compiled
  // shape, the satisfaction check included.
  fc::PorepC2 shapes;
  const std::shared_ptr<const groth16::R1cs> r1cs = shapes.compiled_shape(c1.registered_proof);
  const groth16::Witness wit = w.value().synthesize(0, nullptr, {r1cs->num_inputs(), r1cs->num_aux()}, {});
  EXPECT_NO_THROW(fc::check_partition_witness(*r1cs, wit, w.value().public_inputs[0], 0, pool, true));
  EXPECT_EQ(std::vector<ff::Fr>(wit.inputs.begin() + 1, wit.inputs.end()), w.value().public_inputs[0]);
}

TEST(PorepWork, AC1ItMustNotProveIsInvalidInput) {
  ThreadPool pool(1);
  auto refused = [&pool](const std::string& json) {
    const Result<FilecoinWork> w = prepare_filecoin_work(ProofKind::kPoRepC2, json, pool);
    EXPECT_FALSE(w);
    if (w) return std::string();
    EXPECT_EQ(w.error().kind, ErrorKind::kInvalidInput) << w.error().message;
    return w.error().message;
  };
  fc::C1Output c1 = genuine_c1();
  c1.vanilla_proofs.push_back(c1.vanilla_proofs.front());  // one partition more than the proof has
  const std::string m = refused(fc::to_json(c1));
  EXPECT_NE(m.find("partitions"), std::string::npos) << m;
  refused("{not json");
  refused(R"({"registered_proof": "StackedDrg2KiBV1"})");
}

}  // namespace
}  // namespace cuzk::engine
