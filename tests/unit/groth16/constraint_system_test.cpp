#include "groth16/constraint_system.hpp"

#include <gtest/gtest.h>

#include <random>

namespace cuzk::groth16 {
namespace {

Fr fr(std::uint64_t x) { return Fr::from_u64(x); }

// x * y = z with x, y private and z public.
void mul_circuit(ConstraintSystem& cs, std::optional<Fr> x, std::optional<Fr> y) {
  auto ns = cs.ns("mul");
  Variable vx = cs.alloc("x", x);
  Variable vy = cs.alloc("y", [&]() -> std::optional<Fr> {
    if (!y) return std::nullopt;
    return *y;
  });
  Variable vz = cs.alloc_input("z", [&]() -> std::optional<Fr> {
    if (!x || !y) return std::nullopt;
    return *x * *y;
  });
  cs.enforce("x*y=z", vx, vy, vz);
}

TEST(TestCs, CountsAndSatisfaction) {
  TestCs cs;
  EXPECT_TRUE(cs.is_satisfied());
  mul_circuit(cs, fr(6), fr(7));
  EXPECT_EQ(cs.num_inputs(), 2u);  // ONE and z
  EXPECT_EQ(cs.num_aux(), 2u);
  EXPECT_EQ(cs.num_constraints(), 1u);
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(cs.value(Variable::input(1)), fr(42));
  EXPECT_EQ(cs.path_of(Variable::aux(1)), "mul/y");

  cs.set_value(Variable::aux(0), fr(5));
  ASSERT_FALSE(cs.is_satisfied());
  EXPECT_EQ(cs.which_is_unsatisfied().value(), "mul/x*y=z");
}

TEST(TestCs, ReportsFirstUnsatisfiedByPath) {
  // The bellpepper TestConstraintSystem unit test, transcribed to this API.
  TestCs cs;
  Variable a, b, c;
  {
    auto ns = cs.ns("a");
    a = cs.alloc("var", fr(10));
  }
  {
    auto ns = cs.ns("b");
    b = cs.alloc("var", fr(4));
  }
  c = cs.alloc("product", fr(40));
  cs.enforce("mult", a, b, c);
  EXPECT_TRUE(cs.is_satisfied());
  cs.set_value(a, fr(4));
  cs.enforce("eq", a, cs.one(), b);
  EXPECT_EQ(cs.which_is_unsatisfied().value(), "mult");
  cs.set_value(c, fr(16));
  EXPECT_TRUE(cs.is_satisfied());
  {
    auto ns1 = cs.ns("test1");
    auto ns2 = cs.ns("test2");
    Variable h = cs.alloc("hehe", Fr::one());
    EXPECT_EQ(cs.path_of(h), "test1/test2/hehe");
  }
  EXPECT_EQ(cs.path_of(cs.alloc(Name("bit", 3), Fr::one())), "bit 3");
}

TEST(WitnessCs, CollectsValuesWithoutConstraints) {
  WitnessCs cs;
  mul_circuit(cs, fr(3), fr(5));
  const Witness& w = cs.witness();
  ASSERT_EQ(w.inputs.size(), 2u);
  EXPECT_EQ(w.inputs[0], Fr::one());
  EXPECT_EQ(w.inputs[1], fr(15));
  ASSERT_EQ(w.aux.size(), 2u);
  EXPECT_EQ(w.aux[1], fr(5));
  EXPECT_EQ(cs.num_constraints(), 1u);
}

TEST(WitnessCs, MissingValueIsATypedError) {
  WitnessCs cs;
  try {
    mul_circuit(cs, fr(3), std::nullopt);
    FAIL() << "expected SynthesisError";
  } catch (const SynthesisError& e) {
    EXPECT_EQ(e.kind(), SynthesisErrorKind::kAssignmentMissing);
  }
}

TEST(LinearCombination, NormalizeMergesSortsAndDropsZeros) {
  Variable x = Variable::aux(3), y = Variable::aux(1), i = Variable::input(2);
  LinearCombination lc = LinearCombination(x) + fr(2) * y - x + i + LinearCombination::constant(fr(9));
  auto n = lc.normalized();
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].var, Variable::one());
  EXPECT_EQ(n[0].coeff, fr(9));
  EXPECT_EQ(n[1].var, i);
  EXPECT_EQ(n[2].var, y);
  EXPECT_EQ(n[2].coeff, fr(2));
  std::vector<Fr> inputs = {Fr::one(), fr(0), fr(5)}, aux = {fr(0), fr(7), fr(0), fr(11)};
  EXPECT_EQ(lc.evaluate(inputs, aux), fr(9 + 5 + 14));
  EXPECT_EQ((lc * fr(3)).evaluate(inputs, aux), fr(3 * 28));
}

TEST(TestCs, HashDependsOnShapeNotValues) {
  TestCs a, b, c;
  mul_circuit(a, fr(6), fr(7));
  mul_circuit(b, fr(2), fr(9));
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash().size(), 64u);
  mul_circuit(c, fr(6), fr(7));
  c.enforce("extra", c.one(), c.one(), c.one());
  EXPECT_NE(a.hash(), c.hash());
}

// Expected digest from an independent implementation of bellpepper's
// TestConstraintSystem::hash layout (Python hashlib.blake2s):
//   h = blake2s(); h.update(pack('>QQQ', 2, 2, 2))
//   lc(terms) = pack('>Q', len) + for each: kind + pack('>Q', idx) + (c mod r).to_bytes(32, 'big')
//   c1: lc([A0:1]) lc([A1:1]) lc([I1:1]);  c2: lc([I0:3, A0:-1, A1:2]) lc([I0:1]) lc([])
TEST(TestCs, HashMatchesIndependentImplementation) {
  TestCs cs;
  Variable x = cs.alloc("x", fr(6));
  Variable y = cs.alloc("y", fr(7));
  Variable z = cs.alloc_input("z", fr(42));
  cs.enforce("mul", x, y, z);
  // Unsorted, with a duplicate that cancels: normalizes to 3*ONE - x + 2*y.
  LinearCombination a = fr(2) * y;
  a = a - x + LinearCombination::constant(fr(3)) + x - x;
  cs.enforce("lin", a, cs.one(), LinearCombination::zero());
  EXPECT_EQ(cs.hash(), "4824d8e667b57d3ec46f1f9d103aaa14203676055c002bda258ea26c0c3064ff");
}

TEST(LinearCombination, CopyAndMoveAcrossInlineAndHeapStorage) {
  // Sizes around the inline capacity; every copy/move must keep the terms.
  for (std::size_t n : {0, 1, 2, 3, 5, 40}) {
    LinearCombination lc;
    for (std::size_t i = 0; i < n; ++i) lc.add(fr(i + 1), Variable::aux(std::uint32_t(i)));
    auto check = [&](const LinearCombination& x) {
      ASSERT_EQ(x.size(), n);
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(x.terms()[i].var, Variable::aux(std::uint32_t(i)));
        EXPECT_EQ(x.terms()[i].coeff, fr(i + 1));
      }
    };
    LinearCombination copy(lc);
    check(copy);
    LinearCombination assigned = LinearCombination(Variable::one()) + Variable::one() + Variable::one();
    assigned = lc;
    check(assigned);
    LinearCombination moved(std::move(copy));
    check(moved);
    LinearCombination move_assigned;
    move_assigned = std::move(assigned);
    check(move_assigned);
    move_assigned = move_assigned;  // self-assignment keeps the terms
    check(move_assigned);
    LinearCombination appended = lc;
    appended += lc;
    appended -= lc;
    ASSERT_EQ(appended.size(), 3 * n);
    EXPECT_TRUE(appended.normalized().size() == n);
  }
}

// Lazily built LCs: only back ends that keep constraints build them.
void lazy_circuit(ConstraintSystem& cs, int* built) {
  Variable x = cs.alloc("x", fr(3));
  Variable y = cs.alloc("y", fr(9));
  cs.enforce(
      "x*x=y",
      [&] {
        ++*built;
        return LinearCombination(x);
      },
      x,
      [&] {
        ++*built;
        return LinearCombination(y);
      });
}

TEST(ConstraintSystem, CallableLcsAreBuiltOnlyWhenKept) {
  int built = 0;
  WitnessCs w;
  lazy_circuit(w, &built);
  EXPECT_EQ(built, 0);
  EXPECT_EQ(w.num_constraints(), 1u);
  TestCs t;
  lazy_circuit(t, &built);
  EXPECT_EQ(built, 2);
  EXPECT_TRUE(t.is_satisfied());
  CountingCs c;
  lazy_circuit(c, &built);
  EXPECT_EQ(built, 4);
  EXPECT_EQ(c.nnz_a() + c.nnz_b() + c.nnz_c(), 3u);
}

}  // namespace
}  // namespace cuzk::groth16
