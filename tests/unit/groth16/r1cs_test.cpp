#include "groth16/r1cs.hpp"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <cstring>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "square_chain.hpp"

namespace cuzk::groth16 {
namespace {

Fr fr(std::uint64_t x) { return Fr::from_u64(x); }

// Hand-built circuit whose densities follow from bellperson's definition
// (bit set when the variable occurs with a non-zero coefficient after merging).
struct DensityCircuit {
  void synthesize(ConstraintSystem& cs) const {
    Variable x = cs.alloc_input("x", fr(3));
    Variable a0 = cs.alloc("a0", fr(5));
    Variable a1 = cs.alloc("a1", fr(7));
    Variable y = cs.alloc_input("y", fr(11));
    Variable a2 = cs.alloc("a2", fr(56));
    Variable a3 = cs.alloc("a3", fr(0));
    // (a0 + x) * a1 = a2
    cs.enforce("c0", LinearCombination(a0) + x, a1, a2);
    // (a0 - a0) * (y + 0*a3) = 0: a0 cancels in A, a3 has a zero coefficient in B.
    cs.enforce("c1", LinearCombination(a0) - a0, LinearCombination(y) + Fr::zero() * a3, LinearCombination::zero());
    // (2*a1) * ONE = a1 + a1
    cs.enforce("c2", Fr::from_u64(2) * a1, cs.one(), LinearCombination(a1) + a1);
  }
};

TEST(RecordingCs, CountsDensitiesAndInputConstraints) {
  R1cs r = compile(DensityCircuit{});
  EXPECT_EQ(r.num_inputs(), 3u);  // ONE, x, y
  EXPECT_EQ(r.num_aux(), 4u);
  EXPECT_EQ(r.num_circuit_constraints(), 3u);
  EXPECT_EQ(r.num_constraints(), 6u);  // + one per input
  EXPECT_EQ(domain_size(r), 8u);

  // Columns: ONE=0, x=1, y=2, a0=3, a1=4, a2=5, a3=6.
  EXPECT_EQ(r.a_aux_density().size(), 4u);
  EXPECT_TRUE(r.a_aux_density().get(0));   // a0 in c0
  EXPECT_TRUE(r.a_aux_density().get(1));   // a1 in c2
  EXPECT_FALSE(r.a_aux_density().get(2));  // a2 only in C
  EXPECT_FALSE(r.a_aux_density().get(3));
  EXPECT_EQ(r.a_aux_density().popcount(), 2u);
  EXPECT_TRUE(r.b_input_density().get(0));   // ONE in c2
  EXPECT_FALSE(r.b_input_density().get(1));  // x only in A
  EXPECT_TRUE(r.b_input_density().get(2));   // y in c1
  EXPECT_EQ(r.b_aux_density().popcount(), 1u);
  EXPECT_TRUE(r.b_aux_density().get(1));   // a1 in c0
  EXPECT_FALSE(r.b_aux_density().get(3));  // a3 with coefficient 0

  // Row c1 of A is empty after merging; c2's C merged to 2*a1.
  EXPECT_EQ(r.a().row_start[2] - r.a().row_start[1], 0u);
  ASSERT_EQ(r.c().row_start[3] - r.c().row_start[2], 1u);
  EXPECT_EQ(r.coeff(r.c().coeff_id[r.c().row_start[2]]), fr(2));
  // Input constraints: row 3+i has A = input_i, B = C = 0.
  for (std::uint32_t i = 0; i < 3; ++i) {
    std::size_t row = 3 + i;
    ASSERT_EQ(r.a().row_start[row + 1] - r.a().row_start[row], 1u);
    EXPECT_EQ(r.a().col[r.a().row_start[row]], i);
    EXPECT_EQ(r.a().coeff_id[r.a().row_start[row]], R1cs::kCoeffOne);
    EXPECT_EQ(r.b().row_start[row + 1], r.b().row_start[row]);
    EXPECT_EQ(r.c().row_start[row + 1], r.c().row_start[row]);
  }
}

TEST(R1cs, DomainSize) {
  EXPECT_EQ(domain_size(1), 1u);
  EXPECT_EQ(domain_size(2), 2u);
  EXPECT_EQ(domain_size(3), 4u);
  EXPECT_EQ(domain_size(4096), 4096u);
  EXPECT_EQ(domain_size(4097), 8192u);
  // 32 GiB PoRep partition: 130,278,869 rows incl. inputs -> 2^27.
  EXPECT_EQ(domain_size(130278869), std::uint64_t{1} << 27);
}

// A random circuit: random LCs (duplicates, zero, +1/-1 and general
// coefficients), inputs interleaved with aux. Not satisfiable in general.
struct RandomCircuit {
  std::uint64_t seed;
  std::size_t n_constraints;
  void synthesize(ConstraintSystem& cs) const {
    std::mt19937_64 rng(seed);
    std::vector<Variable> vars = {cs.one()};
    auto random_coeff = [&]() -> Fr {
      switch (rng() % 5) {
        case 0:
          return Fr::one();
        case 1:
          return -Fr::one();
        case 2:
          return Fr::zero();
        case 3:
          return Fr::from_u64(rng() % 8);
        default:
          return Fr::random(rng);
      }
    };
    auto random_lc = [&]() {
      LinearCombination lc;
      std::size_t n = rng() % 6;
      for (std::size_t i = 0; i < n; ++i) lc.add(random_coeff(), vars[rng() % vars.size()]);
      return lc;
    };
    for (std::size_t k = 0; k < n_constraints; ++k) {
      Fr v = Fr::random(rng);
      if (rng() % 7 == 0) {
        vars.push_back(cs.alloc_input(Name("in", k), v));
      } else {
        vars.push_back(cs.alloc(Name("aux", k), [&] { return v; }));
      }
      LinearCombination a = random_lc(), b = random_lc(), c = random_lc();
      cs.enforce(Name("c", k), a, b, c);
    }
  }
};

TEST(R1cs, CsrEvaluationEqualsNaiveEvaluation) {
  ThreadPool pool(2);
  // 3000 rows split into several chunks, so the pool's threads each take rows.
  for (std::uint64_t seed : {1, 2, 3}) {
    RandomCircuit circuit{seed, seed == 3 ? 3000u : 300u};
    TestCs test;
    circuit.synthesize(test);
    R1cs r = compile(circuit);
    ASSERT_EQ(r.num_inputs(), test.num_inputs());
    ASSERT_EQ(r.num_aux(), test.num_aux());
    ASSERT_EQ(r.num_circuit_constraints(), test.num_constraints());
    AbcEvaluations e = evaluate(r, test.inputs(), test.aux(), pool);
    ASSERT_EQ(e.a.size(), r.num_constraints());
    auto cons = test.constraints();
    for (std::size_t i = 0; i < cons.size(); ++i) {
      ASSERT_EQ(e.a[i], cons[i].a.evaluate(test.inputs(), test.aux())) << "row " << i;
      ASSERT_EQ(e.b[i], cons[i].b.evaluate(test.inputs(), test.aux())) << "row " << i;
      ASSERT_EQ(e.c[i], cons[i].c.evaluate(test.inputs(), test.aux())) << "row " << i;
    }
    for (std::size_t i = 0; i < r.num_inputs(); ++i) {
      std::size_t row = cons.size() + i;
      EXPECT_EQ(e.a[row], test.inputs()[i]);
      EXPECT_TRUE(e.b[row].is_zero());
      EXPECT_TRUE(e.c[row].is_zero());
    }
    // Padded evaluation: same rows, zeros up to the domain size.
    std::size_t m = domain_size(r);
    std::vector<Fr> pa(m, Fr::one()), pb(m, Fr::one()), pc(m, Fr::one());
    evaluate_into(r, test.inputs(), test.aux(), pa, pb, pc, pool);
    for (std::size_t i = 0; i < m; ++i) {
      ASSERT_EQ(pa[i], i < e.a.size() ? e.a[i] : Fr::zero());
      ASSERT_EQ(pb[i], i < e.b.size() ? e.b[i] : Fr::zero());
      ASSERT_EQ(pc[i], i < e.c.size() ? e.c[i] : Fr::zero());
    }
    // Counting without storing agrees with the recorded shape.
    CountingCs counter;
    circuit.synthesize(counter);
    EXPECT_EQ(counter.num_inputs(), r.num_inputs());
    EXPECT_EQ(counter.num_aux(), r.num_aux());
    EXPECT_EQ(counter.num_constraints(), r.num_circuit_constraints());
    EXPECT_EQ(counter.nnz_a() + r.num_inputs(), r.a().nnz());
    EXPECT_EQ(counter.nnz_b(), r.b().nnz());
    EXPECT_EQ(counter.nnz_c(), r.c().nnz());
    // The same shape hashes the same through both paths.
    EXPECT_EQ(r.fingerprint(), test.hash());
  }
}

TEST(RecordingCs, ShapeOnlyNeverComputesValues) {
  int calls = 0;
  struct Counting {
    int* calls;
    void synthesize(ConstraintSystem& cs) const {
      Variable x = cs.alloc("x", [this] {
        ++*calls;
        return Fr::one();
      });
      Variable y = cs.alloc_input("y", [this]() -> std::optional<Fr> {
        ++*calls;
        return std::nullopt;
      });
      cs.enforce("x*x=y", x, x, y);
    }
  };
  R1cs r = compile(Counting{&calls});
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(r.num_constraints(), 3u);
  // Collecting values needs them: the missing one is a typed error.
  RecordingCs collect(RecordingCs::Values::kCollect);
  try {
    Counting{&calls}.synthesize(collect);
    FAIL();
  } catch (const SynthesisError& e) {
    EXPECT_EQ(e.kind(), SynthesisErrorKind::kAssignmentMissing);
  }
}

using test::SquareChain;

// Matrices large enough to be checked on three threads (2^22 entries and
// more): the densities are those of the entries, and of several malformed
// matrices the first in A, B, C order is reported.
struct LargeMatrices {
  static constexpr std::size_t kRows = std::size_t{1} << 20, kVars = kRows + 7;
  CsrMatrix m[3];
  LargeMatrices() {
    for (int i = 0; i < 3; ++i) {
      CsrMatrix& x = m[i];
      x.row_start.resize(kRows + 1);
      for (std::size_t r = 0; r < kRows; ++r) {
        x.row_start[r] = x.col.size();
        if (i == 0 && r + 1 == kRows) {  // the input constraint: ONE * 0 = 0
          x.col.push_back(0);
          x.coeff_id.push_back(R1cs::kCoeffOne);
          continue;
        }
        if (r + 1 == kRows) continue;
        // Aux columns 1 + (r mod 3) and the next one, B also the ONE input.
        if (i == 1 && r % 5 == 0) {
          x.col.push_back(0);
          x.coeff_id.push_back(R1cs::kCoeffOne);
        }
        x.col.push_back(1 + 2 * (r % 3) + std::uint32_t(i));
        x.coeff_id.push_back(R1cs::kCoeffMinusOne);
        x.col.push_back(std::uint32_t(kVars - 1 - r % 2));
        x.coeff_id.push_back(R1cs::kCoeffOne);
      }
      x.row_start[kRows] = x.col.size();
    }
  }
  R1cs build() const { return R1cs(1, kVars - 1, {Fr::one(), -Fr::one()}, m[0], m[1], m[2]); }
  static std::string error_of(const LargeMatrices& lm) {
    try {
      lm.build();
    } catch (const R1csError& e) {
      EXPECT_EQ(e.kind(), R1csErrorKind::kMalformed);
      return e.what();
    }
    return "no error";
  }
};

TEST(R1cs, LargeMatricesAreCheckedWholeAndTheFirstFailureIsReported) {
  LargeMatrices lm;
  ASSERT_GE(lm.m[0].nnz() + lm.m[1].nnz() + lm.m[2].nnz(), std::size_t{1} << 22);
  const R1cs r = lm.build();
  // A: aux columns 1, 3, 5 (variables 1..) and the last two; B the same
  // shifted by one, and input 0.
  const std::vector<std::size_t> a_aux = {0, 2, 4, LargeMatrices::kVars - 3, LargeMatrices::kVars - 2};
  const std::vector<std::size_t> b_aux = {1, 3, 5, LargeMatrices::kVars - 3, LargeMatrices::kVars - 2};
  EXPECT_EQ(r.a_aux_density().popcount(), a_aux.size());
  EXPECT_EQ(r.b_aux_density().popcount(), b_aux.size());
  for (std::size_t i : a_aux) EXPECT_TRUE(r.a_aux_density().get(i)) << i;
  for (std::size_t i : b_aux) EXPECT_TRUE(r.b_aux_density().get(i)) << i;
  EXPECT_EQ(r.b_input_density().popcount(), 1u);

  LargeMatrices bad_bc;
  bad_bc.m[1].col[bad_bc.m[1].col.size() / 2 + 1] = std::uint32_t(LargeMatrices::kVars);  // out of range
  std::swap(bad_bc.m[2].col[100], bad_bc.m[2].col[101]);                                  // decreasing in a row
  EXPECT_NE(LargeMatrices::error_of(bad_bc).find("B: column out of range"), std::string::npos)
      << LargeMatrices::error_of(bad_bc);
  LargeMatrices bad_ac;
  bad_ac.m[0].coeff_id[7] = 9;  // no such coefficient
  std::swap(bad_ac.m[2].col[100], bad_ac.m[2].col[101]);
  EXPECT_NE(LargeMatrices::error_of(bad_ac).find("A: coefficient id"), std::string::npos)
      << LargeMatrices::error_of(bad_ac);
  LargeMatrices bad_c;
  std::swap(bad_c.m[2].col[100], bad_c.m[2].col[101]);
  EXPECT_NE(LargeMatrices::error_of(bad_c).find("C: columns not strictly increasing"), std::string::npos)
      << LargeMatrices::error_of(bad_c);
}

TEST(R1cs, SatisfiedAndCorruptedWitness) {
  ThreadPool pool(2);
  SquareChain circuit{50, Fr::from_u64(3)};
  RecordingCs rec(RecordingCs::Values::kCollect);
  circuit.synthesize(rec);
  R1cs r = rec.finish();
  Witness w = rec.take_witness();
  Witness w2 = generate_witness(circuit);
  EXPECT_EQ(w.inputs, w2.inputs);
  EXPECT_EQ(w.aux, w2.aux);
  EXPECT_TRUE(is_satisfied(r, w.inputs, w.aux, pool));
  // Corrupting aux k (= x_{k+1}) breaks step k first.
  for (std::size_t k : {0, 17, 48}) {
    Witness bad = w;
    bad.aux[k] += Fr::one();
    EXPECT_EQ(first_unsatisfied(r, bad.inputs, bad.aux, pool), std::optional<std::size_t>(k));
  }
  Witness bad = w;
  bad.inputs[2] += Fr::one();  // the public output
  EXPECT_EQ(first_unsatisfied(r, bad.inputs, bad.aux, pool), std::optional<std::size_t>(49));
}

class R1csFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cuzk_r1cs_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;

  static std::vector<char> read(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  static void write(const std::filesystem::path& p, const std::vector<char>& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
  }
  static R1csErrorKind load_error(const std::filesystem::path& p) {
    try {
      load_r1cs(p);
    } catch (const R1csError& e) {
      return e.kind();
    }
    ADD_FAILURE() << "load succeeded";
    return R1csErrorKind::kIo;
  }
};

TEST_F(R1csFile, RoundTrip) {
  R1cs r = compile(RandomCircuit{9, 300});
  save_r1cs(r, dir_ / "a.r1cs");
  R1cs back = load_r1cs(dir_ / "a.r1cs");
  EXPECT_TRUE(back == r);
  EXPECT_EQ(back.a_aux_density(), r.a_aux_density());
  EXPECT_EQ(back.fingerprint(), r.fingerprint());
  // Loaded vectors are exact-sized: 8 bytes per non-zero, 24 per row, 32 per
  // coefficient, plus the density words.
  std::size_t nnz = r.a().nnz() + r.b().nnz() + r.c().nnz();
  std::size_t words = (r.num_aux() + 63) / 64 * 2 + (r.num_inputs() + 63) / 64;
  EXPECT_EQ(back.memory_bytes(), 8 * nnz + 24 * (r.num_constraints() + 1) + 32 * r.coeffs().size() + 8 * words);
}

TEST_F(R1csFile, RejectsTruncationAndBitFlips) {
  R1cs r = compile(RandomCircuit{4, 12});
  save_r1cs(r, dir_ / "a.r1cs");
  std::vector<char> good = read(dir_ / "a.r1cs");
  ASSERT_GT(good.size(), 56u);
  for (std::size_t len :
       {std::size_t{0}, std::size_t{5}, std::size_t{30}, std::size_t{56}, good.size() / 2, good.size() - 1}) {
    write(dir_ / "t.r1cs", std::vector<char>(good.begin(), good.begin() + long(len)));
    EXPECT_EQ(load_error(dir_ / "t.r1cs"), R1csErrorKind::kTruncated) << "len " << len;
  }
  // Every header byte, then a stride through the payload (each load is a
  // file round trip; the full sweep is slow on a loaded CI machine).
  for (std::size_t i = 0; i < good.size(); i += (i < 56 ? 1 : 13)) {
    std::vector<char> bad = good;
    bad[i] ^= char(1 << (i % 8));
    write(dir_ / "b.r1cs", bad);
    R1csErrorKind k = load_error(dir_ / "b.r1cs");
    if (i < 8) {
      EXPECT_EQ(k, R1csErrorKind::kBadMagic) << i;
    } else if (i < 12) {
      EXPECT_EQ(k, R1csErrorKind::kBadVersion) << i;
    } else if (i < 16) {
      EXPECT_EQ(k, R1csErrorKind::kMalformed) << i;  // flags
    } else if (i < 24) {
      // A changed payload size: the file is then too short or too long.
      EXPECT_TRUE(k == R1csErrorKind::kTruncated || k == R1csErrorKind::kMalformed) << i;
    } else {
      EXPECT_EQ(k, R1csErrorKind::kChecksum) << i;
    }
  }
  EXPECT_EQ(load_error(dir_ / "missing.r1cs"), R1csErrorKind::kIo);
}

// The checksum is unkeyed: a crafted file with a valid one and absurd
// variable counts is a typed error, not an allocation failure.
TEST_F(R1csFile, ChecksummedHugeVariableCountsAreMalformed) {
  R1cs r = compile(RandomCircuit{4, 12});
  save_r1cs(r, dir_ / "a.r1cs");
  const std::vector<char> good = read(dir_ / "a.r1cs");
  constexpr std::size_t kHeader = 56, kDigestAt = 24, kAuxAt = kHeader + 8;  // payload: n_inputs, n_aux, ...
  for (std::uint64_t n_aux : {std::uint64_t{1} << 60, std::uint64_t{0xffffffff}, ~std::uint64_t{0}}) {
    std::vector<char> bad = good;
    std::memcpy(bad.data() + kAuxAt, &n_aux, 8);
    SHA256(reinterpret_cast<const unsigned char*>(bad.data() + kHeader), bad.size() - kHeader,
           reinterpret_cast<unsigned char*>(bad.data() + kDigestAt));
    write(dir_ / "h.r1cs", bad);
    EXPECT_EQ(load_error(dir_ / "h.r1cs"), R1csErrorKind::kMalformed) << n_aux;
  }
}

}  // namespace
}  // namespace cuzk::groth16

namespace cuzk::groth16 {
namespace {

// Slots of one input and a few aux over ONE and their own variables, after
// a prologue (as FallbackPoSt's sectors follow its outer namespace);
// `leak` makes slot 2 and later also use the first slot's aux.
struct SlotCircuit {
  std::size_t slots = 5;
  bool leak = false;
  void synthesize_slot(ConstraintSystem& cs, std::size_t i, Variable first_aux) const {
    Variable in = cs.alloc_input("in", Fr::from_u64(i + 2));
    Variable a = cs.alloc("a", Fr::from_u64(3));
    Variable b = cs.alloc("b", Fr::from_u64(5));
    Variable c = cs.alloc("c", Fr::from_u64(15));
    cs.enforce("ab", LinearCombination(a) + in, Fr::from_u64(7) * b, c);
    cs.enforce("one", LinearCombination(c) - cs.one(), cs.one(),
               LinearCombination(a) + b + (leak && i >= 2 ? first_aux : a));
  }
  template <class After>
  void synthesize_parts(ConstraintSystem& cs, After after) const {
    Variable pro = cs.alloc("prologue", Fr::from_u64(9));
    cs.enforce("pro", pro, pro, Fr::from_u64(81) * cs.one());
    Variable first_aux = pro;
    for (std::size_t i = 0; i < slots; ++i) {
      synthesize_slot(cs, i, first_aux);
      after(i);
    }
  }
  void synthesize(ConstraintSystem& cs) const {
    synthesize_parts(cs, [](std::size_t) {});
  }
};

TEST(RecordingCs, RepeatingTheLastSlotEqualsSynthesizingEverySlot) {
  for (std::size_t n : {3u, 4u, 9u}) {
    const R1cs full = compile(SlotCircuit{n, false});
    RecordingCs cs;
    std::vector<RecordingCs::Mark> marks{cs.mark()};
    SlotCircuit{3, false}.synthesize_parts(cs, [&](std::size_t) { marks.push_back(cs.mark()); });
    ASSERT_TRUE(cs.repeats(marks[1], marks[2], marks[3]));
    ASSERT_TRUE(cs.repeat_last(marks[2], n - 3));
    const R1cs repeated = cs.finish();
    EXPECT_TRUE(repeated == full) << n << " slots";
    EXPECT_EQ(repeated.fingerprint(), full.fingerprint());
    EXPECT_EQ(repeated.num_inputs(), 1 + n);
  }
}

TEST(RecordingCs, ASlotUsingAnEarlierVariableIsNotRepeated) {
  RecordingCs cs;
  std::vector<RecordingCs::Mark> marks{cs.mark()};
  SlotCircuit{3, true}.synthesize_parts(cs, [&](std::size_t) { marks.push_back(cs.mark()); });
  // Slot 2 uses the prologue's variable where slot 1 used its own.
  EXPECT_FALSE(cs.repeats(marks[1], marks[2], marks[3]));
  const RecordingCs::Mark before = cs.mark();
  EXPECT_FALSE(cs.repeat_last(marks[2], 4));
  EXPECT_EQ(cs.mark(), before);  // nothing recorded
  // Different part sizes never repeat.
  EXPECT_FALSE(cs.repeats(marks[0], marks[1], marks[3]));
}

}  // namespace
}  // namespace cuzk::groth16
