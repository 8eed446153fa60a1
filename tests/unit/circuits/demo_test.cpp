#include "circuits/demo.hpp"

#include <gtest/gtest.h>

#include <random>

#include "groth16/r1cs.hpp"

namespace cuzk::circuits {
namespace {

using namespace groth16;

TEST(DemoCircuit, NativeChainMatchesHandComputedValue) {
  // One round from x0 = 2: (2 + 42)^5 = 44^5 = 164,916,224.
  EXPECT_EQ(demo_chain(Fr::from_u64(2), 1), Fr::from_u64(164916224));
  // Two rounds: c_1 = 42^2 + 1 = 1765, so y = (164916224 + 1765)^5 mod r.
  Fr t = Fr::from_u64(164916224 + 1765);
  EXPECT_EQ(demo_chain(Fr::from_u64(2), 2), t * t * t * t * t);
}

TEST(DemoCircuit, SatisfiedForRandomInputsAndCountsMatch) {
  std::mt19937_64 rng(7);
  for (std::size_t rounds : {1, 2, 17}) {
    Fr x0 = Fr::random(rng);
    DemoCircuit circuit(rounds, x0);
    TestCs cs;
    circuit.synthesize(cs);
    EXPECT_TRUE(cs.is_satisfied()) << cs.which_is_unsatisfied().value_or("");
    EXPECT_EQ(cs.num_constraints(), 3 * rounds);
    EXPECT_EQ(cs.num_inputs(), 3u);
    EXPECT_EQ(cs.num_aux(), 3 * rounds - 1);
    EXPECT_EQ(cs.inputs()[1], x0);
    EXPECT_EQ(cs.inputs()[2], demo_chain(x0, rounds));
    // A wrong intermediate value (aux 3 = round 1's t2) is caught at its round.
    if (rounds > 1) {
      cs.set_value(Variable::aux(3), cs.value(Variable::aux(3)) + Fr::one());
      EXPECT_EQ(cs.which_is_unsatisfied().value(), "round 1/t2 = t*t");
    }
  }
}

TEST(DemoCircuit, AllBackEndsAgree) {
  std::mt19937_64 rng(8);
  const std::size_t rounds = DemoCircuit::rounds_for_log_domain(10);
  EXPECT_EQ(rounds, 340u);  // 3*340 + 3 = 1023 <= 1024 < 3*341 + 3
  Fr x0 = Fr::random(rng);
  R1cs shape = compile(DemoCircuit(rounds, std::nullopt));  // no witness computed
  EXPECT_EQ(shape.num_constraints(), 1023u);
  EXPECT_EQ(domain_size(shape), 1024u);
  Witness w = generate_witness(DemoCircuit(rounds, x0));
  ThreadPool pool(2);
  EXPECT_TRUE(is_satisfied(shape, w.inputs, w.aux, pool));
  TestCs test;
  DemoCircuit(rounds, x0).synthesize(test);
  EXPECT_EQ(test.hash(), shape.fingerprint());
  EXPECT_EQ(w.inputs, std::vector<Fr>(test.inputs().begin(), test.inputs().end()));
  // Another x0 gives another witness for the same shape.
  Witness w2 = generate_witness(DemoCircuit(rounds, x0 + Fr::one()));
  EXPECT_TRUE(is_satisfied(shape, w2.inputs, w2.aux, pool));
  EXPECT_NE(w2.inputs[2], w.inputs[2]);
}

TEST(DemoCircuit, CorruptedWitnessFoundAtItsRow) {
  // 4093 rows: several evaluation chunks, so the parallel search for the first
  // failing row is exercised. Aux k is defined by constraint k (t2, t4, x per
  // round) and used only after it, so corrupting aux k breaks row k first.
  const std::size_t rounds = DemoCircuit::rounds_for_log_domain(12);
  R1cs shape = compile(DemoCircuit(rounds, std::nullopt));
  ASSERT_EQ(shape.num_constraints(), 4095u);
  Witness w = generate_witness(DemoCircuit(rounds, Fr::from_u64(123)));
  ThreadPool pool(2);
  for (std::size_t k : {std::size_t{0}, std::size_t{1500}, std::size_t{2900}, 3 * rounds - 2}) {
    Witness bad = w;
    bad.aux[k] += Fr::one();
    EXPECT_EQ(first_unsatisfied(shape, bad.inputs, bad.aux, pool), std::optional<std::size_t>(k));
  }
}

}  // namespace
}  // namespace cuzk::circuits
