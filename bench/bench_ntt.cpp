// Fr NTT benchmarks on every hardware thread (wall-clock time).
//
//   ./bench_ntt                       # 2^16, 2^20, 2^24 natural-order forward NTT
//   ./bench_ntt --benchmark_filter=bitrev
//
// Compare with bench/js/ffjs_ntt.mjs (snarkjs' ffjavascript) on the same host.
//
// Measured (wall time, natural-order forward NTT):
//   2-core AMD EPYC build host, shared (load average 15-18 during the run):
//     cuzk 2^16: 35.5 ms, 2^20: 658 ms, 2^24: 13.0 s (2 threads; 2^20 is
//     172 ms of CPU time on one thread); ffjavascript 0.3.1 in the same run:
//     2^16: 467 ms, 2^20: 6534 ms (best of runs) -> cuzk 13x / 9.9x faster.
//   16-core Intel Xeon (lent host, idle): 2^16: 1.96 ms, 2^20: 32.5 ms
//     (475 ms on one thread: 14.6x on 16), 2^24: 691 ms.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "ntt/ntt.hpp"

namespace cuzk::ntt {
namespace {

std::vector<Fr> random_input(std::size_t n) {
  std::mt19937_64 rng(1);
  std::vector<Fr> v(n);
  for (auto& x : v) x = Fr::random(rng);
  return v;
}

template <void (*Transform)(const Domain&, std::span<Fr>, ThreadPool&)>
void BM_Transform(benchmark::State& state) {
  const unsigned log_n = unsigned(state.range(0));
  ThreadPool pool(std::size_t(state.range(1)));  // 0: every hardware thread
  Domain domain(log_n);
  std::vector<Fr> data = random_input(domain.size());
  for (auto _ : state) {
    Transform(domain, data, pool);
    benchmark::DoNotOptimize(data.data());
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = double(pool.size());
  state.SetItemsProcessed(std::int64_t(state.iterations()) * std::int64_t(domain.size()));
}

// Arguments: {log2 size, threads (0 = all)}.
void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"log_n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
  b->Args({16, 0})->Args({20, 0})->Args({20, 1});
}
// 2^24 Fr is 512 MiB and takes seconds on a small host: two runs are enough.
void Large(benchmark::internal::Benchmark* b) {
  b->ArgNames({"log_n", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
  b->Args({24, 0})->Iterations(2);
}

BENCHMARK(BM_Transform<ntt>)->Name("ntt")->Apply(Sizes);
BENCHMARK(BM_Transform<ntt>)->Name("ntt")->Apply(Large);
BENCHMARK(BM_Transform<ntt_to_bitrev>)->Name("ntt_to_bitrev")->Apply(Sizes);
BENCHMARK(BM_Transform<intt>)
    ->Name("intt")
    ->Args({20, 0})
    ->ArgNames({"log_n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Transform<coset_ntt>)
    ->Name("coset_ntt")
    ->Args({20, 0})
    ->ArgNames({"log_n", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace cuzk::ntt

BENCHMARK_MAIN();
