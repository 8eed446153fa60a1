// Witness-generation throughput of the Filecoin gadgets on one core: the CPU
// cost that bounds PoRep proving throughput (a 32 GiB partition is ~130M
// constraints, ~80% of them SHA-256 labeling). Runs the gadget with the
// WitnessCs back end (values only, no linear combinations), as the prover's
// synthesis does, and reports constraints per second.
#include <benchmark/benchmark.h>

#include <array>
#include <random>
#include <vector>

#include "circuits/gadgets/boolean.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/poseidon.hpp"
#include "circuits/gadgets/sha256.hpp"
#include "groth16/constraint_system.hpp"

namespace {

using namespace cuzk;
using namespace cuzk::circuits::gadgets;
using groth16::ConstraintSystem;
using groth16::Fr;
using groth16::WitnessCs;

// One SHA-256 compression over 512 allocated input bits (the shape of
// bellpepper's one-block test: 25,840 constraints + 512 bit allocations),
// each iteration filling the previous one's witness memory as the daemon's
// synthesis does (no vector growth, no fresh pages).
void BM_Sha256Block(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::array<std::uint8_t, 64> msg{};
  for (auto& b : msg) b = std::uint8_t(rng());
  std::size_t constraints = 0;
  groth16::Witness storage;
  for (auto _ : state) {
    WitnessCs cs(std::move(storage));
    auto bits = bytes_into_boolean_vec_be(cs, std::span<const std::uint8_t>(msg), 512);
    auto out = sha256_block_no_padding(cs, bits);
    benchmark::DoNotOptimize(out);
    constraints = cs.num_constraints();
    storage = cs.take_witness();
  }
  state.counters["constraints"] = double(constraints);
  state.counters["constraints_per_s"] =
      benchmark::Counter(double(constraints) * double(state.iterations()), benchmark::Counter::kIsRate);
}

template <std::size_t Arity>
void BM_Poseidon(benchmark::State& state) {
  std::mt19937_64 rng(2);
  std::vector<Fr> xs(Arity);
  for (auto& x : xs) x = Fr::random(rng);
  std::size_t constraints = 0;
  for (auto _ : state) {
    WitnessCs cs;
    std::vector<AllocatedNum> nums;
    for (const auto& x : xs) nums.push_back(AllocatedNum::alloc(cs, x));
    auto out = Arity == 11 ? hash_single_column(cs, nums) : poseidon_hash2(cs, nums[0], nums[1]);
    benchmark::DoNotOptimize(out);
    constraints = cs.num_constraints();
  }
  state.counters["constraints"] = double(constraints);
  state.counters["constraints_per_s"] =
      benchmark::Counter(double(constraints) * double(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Sha256Block)->Name("sha256_block_witness")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Poseidon<2>)->Name("poseidon2_witness")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Poseidon<11>)->Name("poseidon11_column_witness")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
