// G1/G2 group law and pairing costs: the inner loops of MSM (mixed addition)
// and of verification (Miller loop + final exponentiation).
#include <benchmark/benchmark.h>

#include <random>

#include "ec/curve.hpp"
#include "pairing/pairing.hpp"

namespace {

using namespace cuzk;

template <class F>
ec::Jacobian<F> random_point(std::mt19937_64& rng, const ec::Affine<F>& gen) {
  return ec::mul(gen, ff::Fr::random(rng));
}

template <class F>
void BM_Add(benchmark::State& state, const ec::Affine<F>& gen) {
  std::mt19937_64 rng(1);
  auto p = random_point(rng, gen), q = random_point(rng, gen);
  for (auto _ : state) {
    p = ec::add(p, q);
    benchmark::DoNotOptimize(p);
  }
}

template <class F>
void BM_AddMixed(benchmark::State& state, const ec::Affine<F>& gen) {
  std::mt19937_64 rng(2);
  auto p = random_point(rng, gen);
  auto q = ec::to_affine(random_point(rng, gen));
  for (auto _ : state) {
    p = ec::add_mixed(p, q);
    benchmark::DoNotOptimize(p);
  }
}

template <class F>
void BM_Double(benchmark::State& state, const ec::Affine<F>& gen) {
  std::mt19937_64 rng(3);
  auto p = random_point(rng, gen);
  for (auto _ : state) {
    p = ec::dbl(p);
    benchmark::DoNotOptimize(p);
  }
}

void BM_Pairing(benchmark::State& state) {
  std::mt19937_64 rng(4);
  auto p = ec::to_affine(random_point(rng, ec::kG1Generator));
  auto q = ec::to_affine(random_point(rng, ec::kG2Generator));
  for (auto _ : state) benchmark::DoNotOptimize(pairing::pairing(p, q));
}

// The Groth16 verification equation: 3 Miller loops (two with prepared G2)
// and one final exponentiation.
void BM_Groth16VerifyPairings(benchmark::State& state) {
  std::mt19937_64 rng(5);
  ec::G1Affine ps[3];
  ec::G2Affine qs[3];
  for (int i = 0; i < 3; ++i) {
    ps[i] = ec::to_affine(random_point(rng, ec::kG1Generator));
    qs[i] = ec::to_affine(random_point(rng, ec::kG2Generator));
  }
  auto g = pairing::prepare(qs[1]), d = pairing::prepare(qs[2]);
  for (auto _ : state) {
    auto b = pairing::prepare(qs[0]);
    const pairing::PreparedTerm t[] = {{ps[0], b}, {ps[1], g}, {ps[2], d}};
    benchmark::DoNotOptimize(pairing::final_exponentiation(pairing::miller_loop(t)));
  }
}

BENCHMARK_CAPTURE(BM_Add, G1, ec::kG1Generator)->Name("G1/add");
BENCHMARK_CAPTURE(BM_AddMixed, G1, ec::kG1Generator)->Name("G1/add_mixed");
BENCHMARK_CAPTURE(BM_Double, G1, ec::kG1Generator)->Name("G1/double");
BENCHMARK_CAPTURE(BM_Add, G2, ec::kG2Generator)->Name("G2/add");
BENCHMARK_CAPTURE(BM_AddMixed, G2, ec::kG2Generator)->Name("G2/add_mixed");
BENCHMARK_CAPTURE(BM_Double, G2, ec::kG2Generator)->Name("G2/double");
BENCHMARK(BM_Pairing)->Name("pairing")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Groth16VerifyPairings)->Name("groth16_verify_pairings")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
