// CPU Groth16 proving of the embedded demo circuit at a given domain size:
// witness generation, H (a.b - c)/Z via NTTs, the MSMs, and the whole proof.
// Parameters come from a development setup done once per size (not timed).
//   bench_groth16 --benchmark_filter='/16'   (log2 domain sizes 16 and 20)
//   bench_groth16 --benchmark_filter=BM_Evaluate   (a, b, c with / without the satisfaction check)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "circuits/demo.hpp"
#include "circuits/gadgets/boolean.hpp"
#include "circuits/gadgets/sha256.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"

namespace {

using namespace cuzk;
using namespace cuzk::groth16;

struct Fixture {
  std::unique_ptr<R1cs> r1cs;
  Parameters params;
  std::size_t rounds;
};

// One setup per size for the whole run.
Fixture& fixture(unsigned log_n, ThreadPool& pool) {
  static std::map<unsigned, Fixture> cache;
  auto it = cache.find(log_n);
  if (it != cache.end()) return it->second;
  Fixture f;
  f.rounds = circuits::DemoCircuit::rounds_for_log_domain(log_n);
  circuits::DemoCircuit c(f.rounds, std::nullopt);
  RecordingCs cs(RecordingCs::Values::kShapeOnly);
  c.synthesize(cs);
  f.r1cs = std::make_unique<R1cs>(cs.finish());
  f.params = generate_parameters(*f.r1cs, random_toxic_waste(), pool);
  return cache.emplace(log_n, std::move(f)).first->second;
}

Witness witness(std::size_t rounds, std::uint64_t x0) {
  circuits::DemoCircuit c(rounds, Fr::from_u64(x0));
  WitnessCs cs;
  c.synthesize(cs);
  return cs.take_witness();
}

void BM_Witness(benchmark::State& state) {
  ThreadPool pool(0);
  Fixture& f = fixture(unsigned(state.range(0)), pool);
  for (auto _ : state) benchmark::DoNotOptimize(witness(f.rounds, 3));
}

void BM_H(benchmark::State& state) {
  ThreadPool pool(0);
  Fixture& f = fixture(unsigned(state.range(0)), pool);
  Witness w = witness(f.rounds, 3);
  for (auto _ : state) benchmark::DoNotOptimize(compute_h(*f.r1cs, w, pool));
}

void BM_Msms(benchmark::State& state) {
  ThreadPool pool(0);
  Fixture& f = fixture(unsigned(state.range(0)), pool);
  Witness w = witness(f.rounds, 3);
  auto h = compute_h(*f.r1cs, w, pool);
  for (auto _ : state) benchmark::DoNotOptimize(compute_msms(f.params, *f.r1cs, w, h, pool));
}

void BM_Prove(benchmark::State& state) {
  ThreadPool pool(0);
  Fixture& f = fixture(unsigned(state.range(0)), pool);
  CpuProver prover(pool);
  for (auto _ : state) {
    std::vector<Witness> ws{witness(f.rounds, 3)};
    std::vector<Blinding> bl{random_blinding()};
    benchmark::DoNotOptimize(prover.prove(f.params, *f.r1cs, ws, bl));
  }
  state.counters["threads"] = double(pool.size());
}

// a, b, c over the domain alone (what the GPU prover's prepare does on the
// host), by mode (second argument): 0 plain; 1 with the satisfaction check
// fused (evaluate_checked_into); 2 plain plus the separate first_unsatisfied
// pass the engine ran before. Shape and witness only, no setup. First
// argument: log2 of the demo circuit's domain, or 0 for chained SHA-256
// compressions (the bulk of a PoRep partition: short +-1 rows).
struct EvalCase {
  std::unique_ptr<R1cs> r1cs;
  Witness w;
};

EvalCase make_sha256_case() {
  // 12 blocks: ~316k rows (domain 2^19), each block's digest feeding the next.
  RecordingCs cs(RecordingCs::Values::kCollect);
  std::array<std::uint8_t, 64> msg{};
  for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = std::uint8_t(i * 37 + 1);
  std::vector<circuits::gadgets::Boolean> bits =
      circuits::gadgets::bytes_into_boolean_vec_be(cs, std::span<const std::uint8_t>(msg), 512);
  for (int i = 0; i < 12; ++i) {
    std::vector<circuits::gadgets::Boolean> digest = circuits::gadgets::sha256_block_no_padding(cs, bits);
    std::copy(digest.begin(), digest.end(), bits.begin());
  }
  EvalCase e;
  e.r1cs = std::make_unique<R1cs>(cs.finish());
  e.w = cs.take_witness();
  return e;
}

EvalCase& eval_case(unsigned which) {
  static std::map<unsigned, EvalCase> cache;
  auto it = cache.find(which);
  if (it != cache.end()) return it->second;
  EvalCase e;
  if (which == 0) {
    e = make_sha256_case();
  } else {
    const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(which);
    RecordingCs cs(RecordingCs::Values::kShapeOnly);
    circuits::DemoCircuit(rounds, std::nullopt).synthesize(cs);
    e.r1cs = std::make_unique<R1cs>(cs.finish());
    e.w = witness(rounds, 3);
  }
  return cache.emplace(which, std::move(e)).first->second;
}

void BM_Evaluate(benchmark::State& state) {
  const EvalCase& e = eval_case(unsigned(state.range(0)));
  const R1cs& r1cs = *e.r1cs;
  const Witness& w = e.w;
  ThreadPool pool(0);
  const std::size_t m = std::size_t(domain_size(r1cs));
  std::vector<Fr> a(m), b(m), c(m);
  for (auto _ : state) {
    switch (state.range(1)) {
      case 0:
        evaluate_into(r1cs, w.inputs, w.aux, a, b, c, pool);
        break;
      case 1:
        if (evaluate_checked_into(r1cs, w.inputs, w.aux, a, b, c, pool)) state.SkipWithError("unsatisfied");
        break;
      default:
        if (first_unsatisfied(r1cs, w.inputs, w.aux, pool)) state.SkipWithError("unsatisfied");
        evaluate_into(r1cs, w.inputs, w.aux, a, b, c, pool);
        break;
    }
    benchmark::DoNotOptimize(a.data());
  }
  state.counters["rows"] = double(r1cs.num_constraints());
  state.counters["nnz"] = double(r1cs.a().nnz() + r1cs.b().nnz() + r1cs.c().nnz());
  state.counters["threads"] = double(pool.size());
}

BENCHMARK(BM_Witness)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Evaluate)->ArgsProduct({{0, 18, 20}, {0, 1, 2}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_H)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Msms)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prove)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
