// DeviceR1cs (gpu/groth16/r1cs_device.hpp): the device mat-vec a, b, c gives
// groth16::evaluate_into's bytes, rows padded with zeros to the domain, and
// its first unsatisfied row is groth16::first_unsatisfied's. Random R1CS of
// non-power-of-two row counts with rows of 0, 1, 2, 3, 7, 33 and 300 terms,
// +-1 and general coefficients over input and aux columns; both kernel paths
// alone (every row thread-per-row / every row warp-per-row) and mixed; real
// compiled circuits (the demo circuit and SHA-256); GpuProver with
// AbcSource::kDevice against the CPU prover. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "circuits/demo.hpp"
#include "circuits/gadgets/boolean.hpp"
#include "circuits/gadgets/sha256.hpp"
#include "compiled_circuit.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/groth16/r1cs_device.hpp"
#include "gpu_test_util.hpp"
#include "unsatisfied_demo.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;
using groth16::CsrMatrix;
using groth16::R1cs;
using groth16::Witness;
using testing::Compiled;

constexpr std::uint32_t kAllThread = std::numeric_limits<std::uint32_t>::max();  // no warp-per-row rows
constexpr std::uint32_t kAllWarp = 0;                                            // every non-empty row by a warp

// A random R1CS and witness. Row lengths per matrix are drawn from
// {0, 1, 2, 3, 7, 33, 300}; coefficients +1, -1 or one of `general_coeffs`
// random ones. `satisfiable`: each circuit row r also has a fresh aux
// variable out_r in C (coefficient +-1, its last column) and reads only
// inputs, the `free_aux` unconstrained aux and the outputs of earlier rows,
// so the witness can be solved row by row to satisfy every constraint.
Compiled random_circuit(std::mt19937_64& rng, std::size_t circuit_rows, std::size_t num_inputs, std::size_t free_aux,
                        bool satisfiable, std::size_t general_coeffs = 37) {
  const std::size_t num_aux = free_aux + (satisfiable ? circuit_rows : 0);
  const std::size_t first_out = num_inputs + free_aux;  // column of out_0
  std::vector<Fr> coeffs = {Fr::one(), -Fr::one()};
  for (std::size_t i = 0; i < general_coeffs; ++i) coeffs.push_back(Fr::from_u64(rng() | 1) * Fr::random(rng));
  Witness w;
  w.inputs.push_back(Fr::one());
  for (std::size_t i = 1; i < num_inputs; ++i) w.inputs.push_back(Fr::random(rng));
  for (std::size_t i = 0; i < num_aux; ++i) w.aux.push_back(Fr::random(rng));
  auto value = [&](std::uint32_t col) -> const Fr& {
    return col < num_inputs ? w.inputs[col] : w.aux[col - num_inputs];
  };

  CsrMatrix m[3];
  for (CsrMatrix& x : m) x.row_start.push_back(0);
  constexpr std::size_t kLengths[] = {0, 1, 1, 1, 2, 2, 3, 3, 7, 33, 300};
  std::set<std::uint32_t> cols;
  for (std::size_t r = 0; r < circuit_rows; ++r) {
    const std::size_t known = satisfiable ? first_out + r : num_inputs + num_aux;  // readable columns
    Fr dot[3];
    for (int k = 0; k < 3; ++k) {
      // The 300-term rows are rarer than the others (about 1 in 35 per matrix).
      std::size_t len = kLengths[rng() % std::size(kLengths)];
      if (len == 300 && rng() % 3 != 0) len = 1;
      len = std::min(len, known);
      cols.clear();
      while (cols.size() < len) cols.insert(static_cast<std::uint32_t>(rng() % known));
      dot[k] = Fr::zero();
      for (std::uint32_t col : cols) {
        const std::uint32_t pick = static_cast<std::uint32_t>(rng() % 10);
        const std::uint32_t id = pick < 4   ? R1cs::kCoeffOne
                                 : pick < 7 ? R1cs::kCoeffMinusOne
                                            : 2 + static_cast<std::uint32_t>(rng() % general_coeffs);
        m[k].col.push_back(col);
        m[k].coeff_id.push_back(id);
        dot[k] += coeffs[id] * value(col);
      }
    }
    if (satisfiable) {
      // c + s * out = a * b with s = +-1: out = s * (a * b - c).
      const std::uint32_t out = static_cast<std::uint32_t>(first_out + r);
      const bool plus = rng() % 2 == 0;
      m[2].col.push_back(out);
      m[2].coeff_id.push_back(plus ? R1cs::kCoeffOne : R1cs::kCoeffMinusOne);
      const Fr diff = dot[0] * dot[1] - dot[2];
      w.aux[out - num_inputs] = plus ? diff : -diff;
    }
    for (CsrMatrix& x : m) x.row_start.push_back(x.col.size());
  }
  // bellperson's input constraints input_i * 0 = 0 close the matrix.
  for (std::size_t i = 0; i < num_inputs; ++i) {
    m[0].col.push_back(static_cast<std::uint32_t>(i));
    m[0].coeff_id.push_back(R1cs::kCoeffOne);
    for (CsrMatrix& x : m) x.row_start.push_back(x.col.size());
  }
  return {R1cs(num_inputs, num_aux, std::move(coeffs), std::move(m[0]), std::move(m[1]), std::move(m[2])),
          std::move(w)};
}

struct DeviceEval {
  std::vector<Fr> a, b, c;
  std::uint64_t first_unsatisfied = kAllRowsSatisfied;
};

// Uploads r1cs and w, evaluates over a domain of m rows with the check, downloads.
DeviceEval evaluate_on_device(const R1cs& r1cs, const Witness& w, std::size_t m, DeviceR1csOptions options = {}) {
  detail::Stream stream;
  const DeviceR1cs dr(r1cs, stream.get(), options);
  EXPECT_EQ(dr.bytes(), DeviceR1cs::bytes_for(r1cs, options));
  detail::DeviceBuffer<std::uint32_t> witness(r1cs.num_variables() * 8, "test witness");
  detail::DeviceBuffer<std::uint32_t> abc(3 * m * 8, "test a, b, c");
  detail::DeviceBuffer<std::uint64_t> first(1, "test first unsatisfied");
  CUZK_CUDA_CHECK(cudaMemcpyAsync(witness.get(), w.inputs.data(), w.inputs.size() * sizeof(Fr), cudaMemcpyHostToDevice,
                                  stream.get()));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(witness.get() + w.inputs.size() * 8, w.aux.data(), w.aux.size() * sizeof(Fr),
                                  cudaMemcpyHostToDevice, stream.get()));
  // Poison: a row the kernels forget to write shows up as a mismatch.
  CUZK_CUDA_CHECK(cudaMemsetAsync(abc.get(), 0xa5, abc.bytes(), stream.get()));
  DeviceR1cs::reset_first_unsatisfied(stream.get(), first.get());
  std::uint32_t* a = abc.get();
  dr.evaluate(stream.get(), witness.get(), a, a + m * 8, a + 2 * m * 8, m, first.get());
  DeviceEval out{std::vector<Fr>(m), std::vector<Fr>(m), std::vector<Fr>(m), 0};
  for (int k = 0; k < 3; ++k) {
    std::vector<Fr>& dst = k == 0 ? out.a : k == 1 ? out.b : out.c;
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst.data(), a + k * m * 8, m * sizeof(Fr), cudaMemcpyDeviceToHost, stream.get()));
  }
  CUZK_CUDA_CHECK(cudaMemcpyAsync(&out.first_unsatisfied, first.get(), sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                                  stream.get()));
  stream.sync();
  return out;
}

std::uint64_t host_first_unsatisfied(const R1cs& r1cs, const Witness& w, ThreadPool& pool) {
  const std::optional<std::size_t> f = groth16::first_unsatisfied(r1cs, w.inputs, w.aux, pool);
  return f ? *f : kAllRowsSatisfied;
}

// Device a, b, c byte-identical to the host's over m rows, and the same first
// unsatisfied row.
void expect_matches_host(const R1cs& r1cs, const Witness& w, std::size_t m, DeviceR1csOptions options,
                         ThreadPool& pool) {
  std::vector<Fr> a(m), b(m), c(m);
  groth16::evaluate_into(r1cs, w.inputs, w.aux, a, b, c, pool);
  const DeviceEval got = evaluate_on_device(r1cs, w, m, options);
  const std::vector<Fr>* want[3] = {&a, &b, &c};
  const std::vector<Fr>* have[3] = {&got.a, &got.b, &got.c};
  for (int k = 0; k < 3; ++k) {
    if (std::memcmp(want[k]->data(), have[k]->data(), m * sizeof(Fr)) == 0) continue;
    std::size_t row = 0;
    while (std::memcmp(&(*want[k])[row], &(*have[k])[row], sizeof(Fr)) == 0) ++row;
    ADD_FAILURE() << "matrix "
                  << "ABC"[k] << " row " << row << " of " << r1cs.num_constraints() << " (domain " << m
                  << ", thread_row_max_terms " << options.thread_row_max_terms << ")";
  }
  EXPECT_EQ(got.first_unsatisfied, host_first_unsatisfied(r1cs, w, pool))
      << "thread_row_max_terms " << options.thread_row_max_terms;
}

DeviceR1csOptions with_cap(std::uint32_t thread_row_max_terms) {
  DeviceR1csOptions o;
  o.thread_row_max_terms = thread_row_max_terms;
  return o;
}

TEST(DeviceR1cs, RandomRowsMatchHostBytesOnEveryPath) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(1);
  ThreadPool pool(2);
  for (std::size_t rows : {1u, 37u, 1000u, 2345u}) {
    const Compiled c = random_circuit(rng, rows, 1 + rng() % 5, 50 + rng() % 700, /*satisfiable=*/false);
    const std::size_t domain = groth16::domain_size(c.r1cs);
    for (std::uint32_t cap : {kAllThread, 32u, 7u, kAllWarp}) {
      expect_matches_host(c.r1cs, c.w, domain, with_cap(cap), pool);
    }
    // Padding: a domain larger than needed, and one of exactly the row count.
    expect_matches_host(c.r1cs, c.w, 2 * domain + 64, {}, pool);
    expect_matches_host(c.r1cs, c.w, c.r1cs.num_constraints(), {}, pool);
  }
}

TEST(DeviceR1cs, LongRowsAreListedOnceAndOffsetsAreNarrow) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(2);
  const Compiled c = random_circuit(rng, 800, 3, 400, false);
  std::size_t want_long = 0;
  for (std::size_t r = 0; r < c.r1cs.num_constraints(); ++r) {
    std::size_t terms = 0;
    for (const CsrMatrix* m : {&c.r1cs.a(), &c.r1cs.b(), &c.r1cs.c()}) terms += m->row_start[r + 1] - m->row_start[r];
    want_long += terms > 32;
  }
  ASSERT_GT(want_long, 0u);
  detail::Stream stream;
  const DeviceR1cs dr(c.r1cs, stream.get());
  EXPECT_EQ(dr.long_rows(), want_long);
  EXPECT_FALSE(dr.wide_row_offsets());
  EXPECT_EQ(dr.nnz(), c.r1cs.a().nnz() + c.r1cs.b().nnz() + c.r1cs.c().nnz());
  EXPECT_EQ(dr.num_constraints(), c.r1cs.num_constraints());
}

TEST(DeviceR1cs, FirstUnsatisfiedRowIsTheHostsOnEveryPath) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(3);
  ThreadPool pool(2);
  Compiled c = random_circuit(rng, 3001, 4, 300, /*satisfiable=*/true);
  const R1cs& r1cs = c.r1cs;
  ASSERT_EQ(host_first_unsatisfied(r1cs, c.w, pool), kAllRowsSatisfied);
  const std::size_t domain = groth16::domain_size(r1cs);
  for (std::uint32_t cap : {kAllThread, 32u, kAllWarp}) {
    EXPECT_EQ(evaluate_on_device(r1cs, c.w, domain, with_cap(cap)).first_unsatisfied, kAllRowsSatisfied);
  }
  // Breaking out_r (read only by later rows) makes row r the first failure;
  // pick one short and one long row (> 32 terms), then add later failures in
  // other warps and blocks, which must not win.
  const std::size_t first_out_aux = c.w.aux.size() - r1cs.num_circuit_constraints();
  auto terms = [&](std::size_t r) {
    std::size_t n = 0;
    for (const CsrMatrix* m : {&r1cs.a(), &r1cs.b(), &r1cs.c()}) n += m->row_start[r + 1] - m->row_start[r];
    return n;
  };
  std::optional<std::size_t> short_row, long_row;
  for (std::size_t r = 700; r < r1cs.num_circuit_constraints() && (!short_row || !long_row); ++r) {
    if (terms(r) <= 32 && !short_row) short_row = r;
    if (terms(r) > 32 && !long_row) long_row = r;
  }
  ASSERT_TRUE(short_row && long_row);
  for (std::size_t target : {*short_row, *long_row}) {
    Witness broken = c.w;
    broken.aux[first_out_aux + target] += Fr::one();
    for (std::size_t later : {target + 1, target + 40, target + 1000, std::size_t{2999}}) {
      if (later < r1cs.num_circuit_constraints()) broken.aux[first_out_aux + later] += Fr::from_u64(3);
    }
    ASSERT_EQ(host_first_unsatisfied(r1cs, broken, pool), target);
    for (std::uint32_t cap : {kAllThread, 32u, kAllWarp}) {
      expect_matches_host(r1cs, broken, domain, with_cap(cap), pool);
    }
  }
  // A random witness: (nearly) every row fails, row 0 among them.
  Witness random = c.w;
  for (Fr& x : random.aux) x = Fr::random(rng);
  expect_matches_host(r1cs, random, domain, {}, pool);
}

// Real circuits: the demo circuit and one SHA-256 block (boolean rows, XOR
// rows, the 33-term and wider packing rows of the additions).
struct Sha256Block {
  std::vector<std::uint8_t> message;  // 64 bytes
  void synthesize(groth16::ConstraintSystem& cs) const {
    const auto bits = circuits::gadgets::bytes_into_boolean_vec_be(cs, std::span<const std::uint8_t>(message), 512);
    (void)circuits::gadgets::sha256_block_no_padding(cs, bits);
  }
};

void check_compiled(const Compiled& c, ThreadPool& pool, std::mt19937_64& rng) {
  ASSERT_EQ(host_first_unsatisfied(c.r1cs, c.w, pool), kAllRowsSatisfied);
  const std::size_t domain = groth16::domain_size(c.r1cs);
  expect_matches_host(c.r1cs, c.w, domain, {}, pool);
  expect_matches_host(c.r1cs, c.w, domain, with_cap(kAllWarp), pool);
  Witness broken = c.w;
  broken.aux[rng() % broken.aux.size()] += Fr::one();
  expect_matches_host(c.r1cs, broken, domain, {}, pool);
}

TEST(DeviceR1cs, CompiledDemoCircuitMatchesHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(4);
  ThreadPool pool(2);
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(12);
  check_compiled(testing::compile_with_witness(circuits::DemoCircuit(rounds, Fr::random(rng))), pool, rng);
}

TEST(DeviceR1cs, CompiledSha256BlockMatchesHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(5);
  ThreadPool pool(2);
  Sha256Block circuit{std::vector<std::uint8_t>(64)};
  for (auto& byte : circuit.message) byte = static_cast<std::uint8_t>(rng());
  const Compiled c = testing::compile_with_witness(circuit);
  check_compiled(c, pool, rng);
  detail::Stream stream;
  EXPECT_GT(DeviceR1cs(c.r1cs, stream.get()).long_rows(), 0u) << "SHA-256 packing rows take the warp path";
}

TEST(DeviceR1cs, ShortfallIsATypedErrorAndAllocatesNothing) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(6);
  const Compiled c = random_circuit(rng, 500, 2, 100, false);
  detail::Stream stream;
  DeviceR1csOptions tight;
  tight.budget_bytes = DeviceR1cs::bytes_for(c.r1cs) - 1;
  std::size_t free_before = 0, free_after = 0, total = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
  try {
    DeviceR1cs dr(c.r1cs, stream.get(), tight);
    ADD_FAILURE() << "a budget one byte short must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfDeviceMemory) << e.what();
  }
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
  EXPECT_EQ(free_after, free_before);

  const DeviceR1cs dr(c.r1cs, stream.get());
  try {
    dr.evaluate(stream.get(), nullptr, nullptr, nullptr, nullptr, c.r1cs.num_constraints() - 1);
    ADD_FAILURE() << "a domain below the row count must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
  }
}

// GpuProver with AbcSource::kDevice: every instance, the first included
// (its enqueue uploads the matrices), stages only the witness and runs the
// device mat-vec; every proof has the CPU prover's bytes; the staging pins
// the witness, not a, b, c, within host_bytes_bound(kDevice).
TEST(DeviceR1cs, GpuProverWithDeviceAbcGivesTheCpuProof) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(12);
  const R1cs r1cs = groth16::compile(circuits::DemoCircuit(rounds, std::nullopt));
  const groth16::Parameters params = groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool);
  auto device = test::make_device();
  GpuProverOptions options;
  options.abc_source = AbcSource::kDevice;
  GpuProver prover(*device, pool, options);
  EXPECT_EQ(prover.device_r1cs_bytes(), 0u);
  groth16::CpuProver cpu(pool);
  Witness w;
  for (int i = 0; i < 3; ++i) {
    w = groth16::generate_witness(circuits::DemoCircuit(rounds, Fr::from_u64(5 + 7 * i)));
    const groth16::Blinding blinding = groth16::random_blinding();
    const std::vector<groth16::Proof> got = prover.prove(params, r1cs, std::span(&w, 1), std::span(&blinding, 1));
    EXPECT_TRUE(prover.last_stats().abc_on_device) << "instance " << i;
    EXPECT_FALSE(prover.last_stats().abc_fallback) << "instance " << i;
    EXPECT_TRUE(prover.last_stats().split_on_device) << "instance " << i;
    EXPECT_EQ(groth16::encode_proofs(got),
              groth16::encode_proofs(cpu.prove(params, r1cs, std::span(&w, 1), std::span(&blinding, 1))))
        << "instance " << i;
  }
  EXPECT_EQ(prover.device_r1cs_bytes(), DeviceR1cs::bytes_for(r1cs));
  ProveStaging staging;
  prover.prepare(r1cs, w, staging, groth16::SatisfactionCheck::kCheck);
  EXPECT_TRUE(staging.stats().abc_on_device);  // the check no longer forces the host path
  EXPECT_LE(staging.pinned_bytes(), ProveStaging::host_bytes_bound(r1cs, AbcSource::kDevice));
  const std::size_t m = groth16::domain_size(r1cs);
  // kDevice pins the witness instead of a, b, c and no split scalars (the
  // split runs on the device): 32 B per selected scalar of L, A, B less.
  const std::size_t selected = r1cs.num_aux() + r1cs.num_inputs() + r1cs.a_aux_density().popcount() +
                               r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount();
  EXPECT_EQ(
      ProveStaging::host_bytes_bound(r1cs, AbcSource::kHost) - ProveStaging::host_bytes_bound(r1cs, AbcSource::kDevice),
      (3 * m - r1cs.num_variables()) * sizeof(Fr) + selected * sizeof(Fr));
}

// The demo circuit with a witness broken at two aux values: the device
// check must report the smaller failing row, as the host's.
test::UnsatisfiedDemo make_broken(unsigned log_domain, ThreadPool& pool) {
  return test::make_unsatisfied_demo(log_domain, 11, {0.75, 1.0 / 3}, pool);
}
using test::unsatisfied_row;

// kDevice + kCheck: the check runs in the device mat-vec. A bad witness
// prepares and enqueues, and finish() throws groth16::UnsatisfiedError with
// the host's first failing row; a good instance enqueued right behind it
// (the prover's one check word, reused in stream order) proves the CPU's
// bytes; the rejected staging proves again; prove() throws the same.
TEST(DeviceR1cs, DeviceCheckRejectsAnUnsatisfiedWitnessWithTheHostsRow) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  const test::UnsatisfiedDemo d = make_broken(12, pool);
  auto device = test::make_device();
  GpuProverOptions options;
  options.abc_source = AbcSource::kDevice;
  GpuProver prover(*device, pool, options);
  const ResidentSrs& srs = prover.cache_srs(d.params);
  const groth16::Blinding b = groth16::random_blinding();
  groth16::CpuProver cpu(pool);
  const std::vector<groth16::Proof> expected = cpu.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1));

  ProveStaging bad, good;
  prover.prepare(d.r1cs, d.bad, bad, groth16::SatisfactionCheck::kCheck);  // no host check on this path
  EXPECT_TRUE(bad.stats().abc_on_device);
  prover.prepare(d.r1cs, d.good, good, groth16::SatisfactionCheck::kCheck);
  (void)prover.enqueue(srs, bad);
  (void)prover.enqueue(srs, good);
  EXPECT_EQ(unsatisfied_row([&] { (void)prover.finish(srs, bad, b); }), d.bad_row);
  const groth16::Proof p = prover.finish(srs, good, b);
  EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), groth16::encode_proofs(expected));

  // The rejected staging is idle again: a good witness proves in it.
  prover.prepare(d.r1cs, d.good, bad, groth16::SatisfactionCheck::kCheck);
  prover.enqueue(srs, bad).wait();
  const groth16::Proof q = prover.finish(srs, bad, b);
  EXPECT_EQ(groth16::encode_proofs(std::span(&q, 1)), groth16::encode_proofs(expected));

  // Unchecked, the bad witness is not rejected (the word is not read).
  prover.prepare(d.r1cs, d.bad, bad, groth16::SatisfactionCheck::kSkip);
  prover.enqueue(srs, bad).wait();
  EXPECT_NO_THROW((void)prover.finish(srs, bad, b));

  GpuProverOptions checking_options = options;
  checking_options.satisfaction = groth16::SatisfactionCheck::kCheck;
  GpuProver checking(*device, pool, checking_options);
  EXPECT_EQ(unsatisfied_row([&] { checking.prove(d.params, d.r1cs, std::span(&d.bad, 1), std::span(&b, 1)); }),
            d.bad_row);
  const std::vector<groth16::Proof> r = checking.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1));
  EXPECT_TRUE(checking.last_stats().abc_on_device);
  EXPECT_EQ(groth16::encode_proofs(r), groth16::encode_proofs(expected));
}

// Matrices that do not fit (forced: an MSM scratch limit of the whole device,
// which the upload must leave free) fall back to the host: the staged
// witness is evaluated by enqueue (abc_fallback), the proof is the CPU's,
// nothing stays resident, and later prepares of the R1cs evaluate on the
// host. The fallback checks too: a bad witness throws from enqueue.
TEST(DeviceR1cs, MatricesThatDoNotFitFallBackToTheHost) {
  CUZK_REQUIRE_GPU();
  ThreadPool pool(4);
  const test::UnsatisfiedDemo d = make_broken(12, pool);
  auto device = test::make_device();
  // After the SRS is placed (its budget also leaves the scratch limit free).
  auto starve_matrices = [&device] {
    Device::MsmTuning tuning = device->msm_tuning();
    tuning.scratch_limit_bytes = device->info().global_memory_bytes;
    device->set_msm_tuning(tuning);
  };
  GpuProverOptions options;
  options.abc_source = AbcSource::kDevice;
  const groth16::Blinding b = groth16::random_blinding();
  groth16::CpuProver cpu(pool);
  const std::vector<groth16::Proof> expected = cpu.prove(d.params, d.r1cs, std::span(&d.good, 1), std::span(&b, 1));
  {
    GpuProver prover(*device, pool, options);
    const ResidentSrs& srs = prover.cache_srs(d.params);
    starve_matrices();
    ProveStaging staging;
    prover.prepare(d.r1cs, d.good, staging, groth16::SatisfactionCheck::kCheck);
    EXPECT_TRUE(staging.stats().abc_on_device);  // staged for the device: the fit is unknown yet
    prover.enqueue(srs, staging).wait();
    EXPECT_TRUE(staging.stats().abc_fallback);
    EXPECT_FALSE(staging.stats().abc_on_device);
    EXPECT_FALSE(staging.stats().split_on_device);  // no witness on the device: split on the host
    const groth16::Proof p = prover.finish(srs, staging, b);
    EXPECT_EQ(groth16::encode_proofs(std::span(&p, 1)), groth16::encode_proofs(expected));
    EXPECT_EQ(prover.device_r1cs_bytes(), 0u);
    // Known not to fit: the host path from prepare on, with its host check.
    EXPECT_EQ(unsatisfied_row([&] { prover.prepare(d.r1cs, d.bad, staging, groth16::SatisfactionCheck::kCheck); }),
              d.bad_row);
    prover.prepare(d.r1cs, d.good, staging, groth16::SatisfactionCheck::kCheck);
    EXPECT_FALSE(staging.stats().abc_on_device);
    prover.enqueue(srs, staging).wait();
    EXPECT_FALSE(staging.stats().abc_fallback);
    const groth16::Proof q = prover.finish(srs, staging, b);
    EXPECT_EQ(groth16::encode_proofs(std::span(&q, 1)), groth16::encode_proofs(expected));
  }
  {
    GpuProver prover(*device, pool, options);
    const ResidentSrs& srs = prover.cache_srs(d.params);
    ProveStaging staging;
    prover.prepare(d.r1cs, d.bad, staging, groth16::SatisfactionCheck::kCheck);
    EXPECT_EQ(unsatisfied_row([&] { (void)prover.enqueue(srs, staging); }), d.bad_row);
  }
}

}  // namespace
}  // namespace cuzk::gpu
