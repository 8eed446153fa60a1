#include "groth16/witness_parts.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "groth16/r1cs.hpp"

namespace cuzk::groth16 {
namespace {

Fr fr(std::uint64_t x) { return Fr::from_u64(x); }

// A circuit of one global variable and n parts, each allocating one public
// input and `aux_per_part` aux values derived from the global and its index;
// part `odd_part` (if any) allocates one aux more, a bug the helper catches.
struct PartedCircuit {
  std::size_t parts = 0;
  std::size_t aux_per_part = 3;
  std::size_t odd_part = SIZE_MAX;

  Fr global(ConstraintSystem& cs) const {
    cs.alloc("global", fr(7));
    return fr(7);
  }
  void part(ConstraintSystem& cs, std::size_t i, const Fr& g) const {
    auto ns = cs.ns("part", i);
    Fr x = g * fr(i + 1);
    const Variable in = cs.alloc_input("index", fr(i));
    const std::size_t n = aux_per_part + (i == odd_part ? 1 : 0);
    for (std::size_t k = 0; k < n; ++k) {
      x = x * x + fr(k);
      const Variable v = cs.alloc(Name("x", k), x);
      cs.enforce("uses", v, ConstraintSystem::one(), in);  // counted only
    }
  }
  void synthesize(ConstraintSystem& cs) const {
    const Fr g = global(cs);
    for (std::size_t i = 0; i < parts; ++i) part(cs, i, g);
  }
  Witness in_parts(ThreadPool& pool, Witness storage = {}) const {
    WitnessCs head(std::move(storage));
    const Fr g = global(head);
    return synthesize_uniform_parts(pool, head, parts, [&](WitnessCs& cs, std::size_t i) { part(cs, i, g); });
  }
};

TEST(SynthesizeUniformParts, EqualsTheSequentialWitnessForEveryPartAndPoolSize) {
  for (std::size_t threads : {1u, 3u}) {
    ThreadPool pool(threads);
    for (std::size_t parts : {1u, 2u, 5u, 13u, 100u}) {
      const PartedCircuit c{parts};
      const Witness seq = generate_witness(c);
      const Witness par = c.in_parts(pool);
      ASSERT_EQ(par.inputs.size(), 1 + parts) << parts << " parts, " << threads << " threads";
      EXPECT_EQ(par.inputs, seq.inputs) << parts << " parts, " << threads << " threads";
      EXPECT_EQ(par.aux, seq.aux) << parts << " parts, " << threads << " threads";
    }
  }
}

TEST(SynthesizeUniformParts, FillsARecycledWitnessFromScratch) {
  ThreadPool pool(2);
  const PartedCircuit big{40, 5}, small{9, 5};
  Witness used = big.in_parts(pool);
  const Fr* memory = used.aux.data();
  const Witness w = small.in_parts(pool, std::move(used));
  EXPECT_EQ(w.aux.data(), memory) << "the recycled vector's memory is reused";
  const Witness seq = generate_witness(small);
  EXPECT_EQ(w.inputs, seq.inputs);
  EXPECT_EQ(w.aux, seq.aux);
}

TEST(SynthesizeUniformParts, NoPartsLeavesTheWitnessAsItIs) {
  ThreadPool pool(2);
  const PartedCircuit c{0};
  const Witness w = c.in_parts(pool);
  EXPECT_EQ(w.inputs.size(), 1u);
  EXPECT_EQ(w.aux.size(), 1u);
}

TEST(SynthesizeUniformPartsDeathTest, APartAllocatingMoreThanPartZeroAborts) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "death tests fork a threaded process; not run under ThreadSanitizer";
#endif
  const PartedCircuit c{12, 3, 7};
  EXPECT_DEATH(
      {
        ThreadPool pool(2);
        c.in_parts(pool);
      },
      "more variables than its span");
}

TEST(SynthesizeUniformPartsDeathTest, APartAllocatingLessThanPartZeroAborts) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "death tests fork a threaded process; not run under ThreadSanitizer";
#endif
  PartedCircuit c{12, 3};
  // Part 0 allocates one more than the rest: the others leave their span short.
  c.odd_part = 0;
  EXPECT_DEATH(
      {
        ThreadPool pool(2);
        c.in_parts(pool);
      },
      "fewer variables than part 0");
}

TEST(WitnessCsSpans, WritesInOrderAndSaysWhenFilled) {
  std::vector<Fr> inputs(1), aux(2);
  WitnessCs cs(inputs, aux);
  EXPECT_EQ(cs.alloc("a", fr(3)), Variable::aux(0));
  EXPECT_FALSE(cs.filled());
  EXPECT_EQ(cs.alloc_input("i", fr(4)), Variable::input(1));
  EXPECT_EQ(cs.push_aux(fr(5)), Variable::aux(1));
  EXPECT_TRUE(cs.filled());
  EXPECT_EQ(cs.num_inputs(), 2u);
  EXPECT_EQ(cs.num_aux(), 2u);
  EXPECT_EQ(inputs, std::vector<Fr>({fr(4)}));
  EXPECT_EQ(aux, std::vector<Fr>({fr(3), fr(5)}));
}

TEST(WitnessCsSpans, AMissingValueIsStillATypedError) {
  std::vector<Fr> inputs(0), aux(1);
  WitnessCs cs(inputs, aux);
  EXPECT_THROW(cs.alloc("a", std::optional<Fr>{}), SynthesisError);
}

}  // namespace
}  // namespace cuzk::groth16
