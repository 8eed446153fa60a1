// cuzk-bench: inputs and helpers for benchmarking the prover.
//
//   cuzk-bench gen-c1 --sector-size 32GiB [--v1] --seed N [--zero-data]
//                     [--threads T] [--verify] [-o c1.json]
//
// gen-c1 writes a synthetic C1 output (SealCommitPhase1Output JSON, the C2
// input) for any registered PoRep size without sealing a sector: see
// src/circuits/filecoin/c1_sparse.hpp for what it satisfies. The JSON goes to
// stdout (or -o); timings and sizes go to stderr.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_sparse.hpp"
#include "util/thread_pool.hpp"

namespace {

using cuzk::circuits::filecoin::SealProof;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct GenC1Args {
  std::string sector_size = "2KiB";
  bool v1 = false;
  std::uint64_t seed = 0;
  bool zero_data = false;
  std::size_t threads = 0;
  bool verify = false;
  std::string out_path;
};

int gen_c1(const GenC1Args& a) {
  namespace fc = cuzk::circuits::filecoin;
  const std::string name = "StackedDrg" + a.sector_size + (a.v1 ? "V1" : "V1_1");
  const std::optional<SealProof> proof = fc::seal_proof_from_name(name);
  if (!proof) {
    std::fprintf(stderr, "gen-c1: unknown sector size %s (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)\n",
                 a.sector_size.c_str());
    return 2;
  }
  cuzk::ThreadPool pool(a.threads);
  const auto t0 = Clock::now();
  fc::SparseC1Options opts;
  opts.data = a.zero_data ? fc::SparseC1Data::Zero : fc::SparseC1Data::PeriodicRandom;
  const fc::C1Output c1 = fc::make_sparse_synthetic_c1(*proof, fc::sparse_c1_inputs(a.seed), opts, &pool);
  const double gen_s = seconds_since(t0);
  const auto t1 = Clock::now();
  const std::string text = fc::to_json(c1);
  const double json_s = seconds_since(t1);

  FILE* out = stdout;
  if (!a.out_path.empty()) {
    out = std::fopen(a.out_path.c_str(), "wb");
    if (out == nullptr) {
      std::perror(a.out_path.c_str());
      return 1;
    }
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    std::fprintf(stderr, "gen-c1: write failed\n");
    return 1;
  }
  std::fprintf(stderr, "gen-c1: %s seed %llu: generate %.2f s, JSON %.2f s, %zu bytes, %u threads\n",
               name.c_str(), static_cast<unsigned long long>(a.seed), gen_s, json_s, text.size(),
               unsigned(pool.size()));
  if (a.verify) {
    const auto t2 = Clock::now();
    try {
      fc::verify_c1_circuit_relations(fc::parse_c1(text), &pool);
    } catch (const fc::C1Error& e) {
      std::fprintf(stderr, "gen-c1: verification FAILED at %s: %s\n", e.json_path().c_str(), e.what());
      return 1;
    }
    std::fprintf(stderr, "gen-c1: parse_c1 + circuit relations OK in %.2f s\n", seconds_since(t2));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuzk-bench - benchmark inputs for cuzk"};
  app.require_subcommand(1);

  GenC1Args gen;
  CLI::App* gen_cmd = app.add_subcommand("gen-c1", "write a synthetic C1 output (C2 input JSON) to stdout");
  gen_cmd->add_option("--sector-size", gen.sector_size, "2KiB, 8MiB, 512MiB, 32GiB or 64GiB")->required();
  gen_cmd->add_flag("--v1", gen.v1, "the V1 proof of the size (default V1_1)");
  gen_cmd->add_option("--seed", gen.seed, "seed of every synthetic choice")->required();
  gen_cmd->add_flag("--zero-data", gen.zero_data, "all-zero sector data (committed capacity)");
  gen_cmd->add_option("--threads", gen.threads, "worker threads (0 = all cores)");
  gen_cmd->add_flag("--verify", gen.verify, "re-parse the JSON and check the circuit relations");
  gen_cmd->add_option("-o,--output", gen.out_path, "write to this file instead of stdout");

  CLI11_PARSE(app, argc, argv);
  if (gen_cmd->parsed()) return gen_c1(gen);
  return 2;
}
