// The satisfaction check fused into the evaluation of a, b, c
// (groth16::evaluate_checked_into, SatisfactionCheck::kCheck): the same
// values as the plain evaluation, no row for a good witness, and the first
// bad row (the smallest, whatever the thread split) for a mutated one, as
// first_unsatisfied reports it; and the CPU prover's typed error.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"
#include "square_chain.hpp"

namespace cuzk::groth16 {
namespace {

using ff::Fr;

using test::SquareChain;

struct Compiled {
  R1cs r1cs;
  Witness w;
};

Compiled compile_chain(std::size_t n) {
  RecordingCs cs(RecordingCs::Values::kCollect);
  SquareChain{n, Fr::from_u64(3)}.synthesize(cs);
  Witness w = cs.take_witness();
  return {cs.finish(), std::move(w)};
}

struct Abc {
  std::vector<Fr> a, b, c;
  explicit Abc(std::size_t m) : a(m, Fr::one()), b(m, Fr::one()), c(m, Fr::one()) {}
  bool operator==(const Abc&) const = default;
};

// 20000 rows: 20 chunks of the pool's split (eval_chunks), so the bad rows
// below fall into different chunks and threads.
constexpr std::size_t kRows = 20000;

TEST(EvaluateChecked, EqualsPlainEvaluationAndFindsNothingInAGoodWitness) {
  const Compiled c = compile_chain(kRows);
  ThreadPool pool(2);
  const std::size_t m = domain_size(c.r1cs);
  Abc plain(m), checked(m);
  evaluate_into(c.r1cs, c.w.inputs, c.w.aux, plain.a, plain.b, plain.c, pool);
  EXPECT_EQ(evaluate_checked_into(c.r1cs, c.w.inputs, c.w.aux, checked.a, checked.b, checked.c, pool), std::nullopt);
  EXPECT_TRUE(checked == plain);
  // The padding past the last row is zero in both.
  EXPECT_TRUE(checked.a.back().is_zero());
  // The throwing forms accept it too.
  Abc thrown(m);
  EXPECT_NO_THROW(
      evaluate_into(c.r1cs, c.w.inputs, c.w.aux, thrown.a, thrown.b, thrown.c, pool, SatisfactionCheck::kCheck));
  EXPECT_TRUE(thrown == plain);
  const AbcEvaluations e = evaluate(c.r1cs, c.w.inputs, c.w.aux, pool, SatisfactionCheck::kCheck);
  EXPECT_TRUE(std::equal(e.a.begin(), e.a.end(), plain.a.begin()));
}

TEST(EvaluateChecked, ReportsTheFirstBadRowOfAMutatedWitnessWhateverTheSplit) {
  const Compiled c = compile_chain(kRows);
  const std::size_t m = domain_size(c.r1cs);
  // Sets of corrupted aux indices; the first bad row is the smallest of them.
  const std::vector<std::vector<std::size_t>> cases = {{0}, {17}, {kRows - 2}, {15000, 3000}, {19990, 1025, 9000}};
  for (std::size_t threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (const auto& corrupt : cases) {
      Witness bad = c.w;
      for (std::size_t k : corrupt) bad.aux[k] += Fr::one();
      const std::size_t expected = *std::min_element(corrupt.begin(), corrupt.end());
      ASSERT_EQ(first_unsatisfied(c.r1cs, bad.inputs, bad.aux, pool), std::optional<std::size_t>(expected));
      Abc plain(m), checked(m);
      evaluate_into(c.r1cs, bad.inputs, bad.aux, plain.a, plain.b, plain.c, pool);
      EXPECT_EQ(evaluate_checked_into(c.r1cs, bad.inputs, bad.aux, checked.a, checked.b, checked.c, pool),
                std::optional<std::size_t>(expected))
          << threads << " threads, first " << expected;
      // Every row is still evaluated, bad ones included.
      EXPECT_TRUE(checked == plain) << threads << " threads, first " << expected;
      try {
        evaluate_into(c.r1cs, bad.inputs, bad.aux, checked.a, checked.b, checked.c, pool, SatisfactionCheck::kCheck);
        ADD_FAILURE() << "no UnsatisfiedError";
      } catch (const UnsatisfiedError& e) {
        EXPECT_EQ(e.row(), expected);
        EXPECT_EQ(std::string(e.what()), "constraint " + std::to_string(expected) + " does not hold");
      }
    }
  }
  // A wrong public input breaks the last circuit row (x_n) only.
  ThreadPool pool(2);
  Witness bad = c.w;
  bad.inputs[2] += Fr::one();
  Abc checked(m);
  EXPECT_EQ(evaluate_checked_into(c.r1cs, bad.inputs, bad.aux, checked.a, checked.b, checked.c, pool),
            std::optional<std::size_t>(kRows - 1));
}

// Rows whose a or b is 0 or 1 are checked without a multiplication (bits,
// the bulk of Filecoin witnesses): each shortcut still catches its break.
struct ShortcutRows {
  Fr x, y, z, w, u;
  void synthesize(ConstraintSystem& cs) const {
    Variable xv = cs.alloc("x", x), yv = cs.alloc("y", y), zv = cs.alloc("z", z), wv = cs.alloc("w", w),
             uv = cs.alloc("u", u);
    cs.enforce("b_one", xv, cs.one(), yv);                       // row 0: x * 1 = y
    cs.enforce("a_one", cs.one(), xv, yv);                       // row 1: 1 * x = y
    cs.enforce("a_zero", zv, wv, uv);                            // row 2: z * w = u
    cs.enforce("b_zero", wv, zv, uv);                            // row 3: w * z = u
    cs.enforce("product", xv, wv, Fr::from_u64(35) * cs.one());  // row 4: x * w = 35
  }
};

TEST(EvaluateChecked, TheZeroAndOneShortcutsStillCatchEveryBrokenRow) {
  ThreadPool pool(2);
  const ShortcutRows good{Fr::from_u64(5), Fr::from_u64(5), Fr::zero(), Fr::from_u64(7), Fr::zero()};
  const R1cs r1cs = compile(good);
  struct Case {
    ShortcutRows circuit;
    std::optional<std::size_t> first;
  };
  const Fr one = Fr::one();
  const Case cases[] = {
      {good, std::nullopt},
      {{good.x, good.y + one, good.z, good.w, good.u}, 0},        // b == 1: y != x
      {{good.x + one, good.y + one, good.z, good.w, good.u}, 4},  // rows 0, 1 hold; x * w != 35
      {{good.x, good.y, good.z, good.w, good.u + one}, 2},        // a == 0: u != 0
      {{good.x, good.y, good.z + one, good.w, good.u}, 2},        // z * w = 7 != u
      {{good.x, good.y, good.z, good.w + one, good.u}, 4},        // rows 2, 3 hold (z = 0)
      {{one, one, good.z, good.w, good.u}, 4},                    // a == 1 and b == 1 hold; 1 * 7 != 35
  };
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const Witness w = generate_witness(cases[i].circuit);
    ASSERT_EQ(first_unsatisfied(r1cs, w.inputs, w.aux, pool), cases[i].first) << "case " << i;
    const std::size_t m = domain_size(r1cs);
    Abc abc(m);
    EXPECT_EQ(evaluate_checked_into(r1cs, w.inputs, w.aux, abc.a, abc.b, abc.c, pool), cases[i].first) << "case " << i;
  }
}

TEST(EvaluateChecked, CpuProverWithTheCheckRejectsABadWitnessTypedAndProvesAGoodOneUnchanged) {
  const Compiled c = compile_chain(40);
  ThreadPool pool(2);
  std::mt19937_64 rng(7);
  const ToxicWaste tw{Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng)};
  const Parameters params = generate_parameters(c.r1cs, tw, pool);
  const std::vector<Blinding> bl{{Fr::random(rng), Fr::random(rng)}};

  CpuProver plain(pool);
  CpuProver checking(pool, ProveOptions{.satisfaction = SatisfactionCheck::kCheck});
  const std::vector<Witness> good{c.w};
  const Proof p0 = plain.prove(params, c.r1cs, good, bl).at(0);
  const Proof p1 = checking.prove(params, c.r1cs, good, bl).at(0);
  EXPECT_EQ(encode_proof(p0), encode_proof(p1));
  const std::vector<Fr> pub(c.w.inputs.begin() + 1, c.w.inputs.end());
  EXPECT_EQ(verify(prepare_verifying_key(params.vk), p1, pub), VerifyResult::kValid);

  std::vector<Witness> bad{c.w};
  bad[0].aux[21] += Fr::one();
  try {
    checking.prove(params, c.r1cs, bad, bl);
    ADD_FAILURE() << "an unsatisfied witness was proved";
  } catch (const UnsatisfiedError& e) {
    EXPECT_EQ(e.row(), 21u);
  }
  // Without the check the prover does not look (the engine's verification
  // catches such a proof instead).
  EXPECT_NO_THROW(plain.prove(params, c.r1cs, bad, bl));
  try {
    compute_h(c.r1cs, bad[0], pool, SatisfactionCheck::kCheck);
    ADD_FAILURE() << "compute_h accepted an unsatisfied witness";
  } catch (const UnsatisfiedError& e) {
    EXPECT_EQ(e.row(), 21u);
  }
}

}  // namespace
}  // namespace cuzk::groth16
