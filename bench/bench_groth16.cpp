// CPU Groth16 proving of the embedded demo circuit at a given domain size:
// witness generation, H (a.b - c)/Z via NTTs, the MSMs, and the whole proof.
// Parameters come from a development setup done once per size (not timed).
//   bench_groth16 --benchmark_filter='/16'   (log2 domain sizes 16 and 20)
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "circuits/demo.hpp"
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

BENCHMARK(BM_Witness)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_H)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Msms)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prove)->Arg(16)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
