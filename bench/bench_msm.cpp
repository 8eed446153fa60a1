// MSM throughput, measured the way the blst anchor was: 2048 random bases
// ([k]G for random k) replicated to N, uniformly random Fr scalars given in
// standard form (the prover converts from Montgomery once), timed over the
// MSM call alone. Arguments: log2(N), thread count, bucket kind (0 = planner's
// choice, 1 = XYZZ only, for comparison with batch-affine).
#include <benchmark/benchmark.h>

#include <random>
#include <type_traits>
#include <vector>

#include "ec/curve.hpp"
#include "msm/msm.hpp"
#include "msm/xyzz.hpp"

namespace cuzk::msm {
namespace {

constexpr std::size_t kDistinctBases = 2048;

template <class F>
std::vector<ec::Affine<F>> replicated_bases(std::size_t n, std::mt19937_64& rng) {
  ec::Affine<F> g;
  if constexpr (std::is_same_v<F, ff::Fp>) {
    g = ec::kG1Generator;
  } else {
    g = ec::kG2Generator;
  }
  std::vector<ec::Jacobian<F>> jac(kDistinctBases);
  for (auto& p : jac) p = ec::mul(g, ff::Fr::random(rng));
  std::vector<ec::Affine<F>> distinct(kDistinctBases);
  ec::batch_to_affine(std::span<const ec::Jacobian<F>>(jac), std::span<ec::Affine<F>>(distinct));
  std::vector<ec::Affine<F>> bases(n);
  for (std::size_t i = 0; i < n; ++i) bases[i] = distinct[i % kDistinctBases];
  return bases;
}

template <class F>
void BM_Msm(benchmark::State& state) {
  const std::size_t n = std::size_t{1} << state.range(0);
  const std::size_t threads = std::size_t(state.range(1));
  std::mt19937_64 rng(42);
  const std::vector<ec::Affine<F>> bases = replicated_bases<F>(n, rng);
  std::vector<Scalar> scalars(n);
  for (auto& s : scalars) s = ff::Fr::random(rng).to_int();
  ThreadPool pool(threads);
  Config config;
  if (state.range(2) == 1) config.buckets = Buckets::kXyzz;
  const Plan plan = make_plan(n, threads, sizeof(Xyzz<F>) + sizeof(ec::Affine<F>), config);
  state.counters["c"] = plan.window_bits;
  state.counters["chunks"] = double(plan.point_chunks);
  state.counters["batch"] = double(plan.affine_batch);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        msm(std::span<const ec::Affine<F>>(bases), std::span<const Scalar>(scalars), pool, config));
  }
}

BENCHMARK(BM_Msm<ff::Fp>)
    ->Name("G1")
    ->ArgNames({"log2n", "threads", "xyzz_only"})
    ->Args({16, 1, 0})
    ->Args({16, 2, 0})
    ->Args({20, 1, 0})
    ->Args({20, 2, 0})
    ->Args({16, 1, 1})
    ->Args({20, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK(BM_Msm<ff::Fp2>)
    ->Name("G2")
    ->ArgNames({"log2n", "threads", "xyzz_only"})
    ->Args({16, 1, 0})
    ->Args({16, 2, 0})
    ->Args({16, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace cuzk::msm

BENCHMARK_MAIN();
