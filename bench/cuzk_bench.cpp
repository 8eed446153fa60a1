// cuzk-bench: inputs for benchmarking the prover, and load against a
// running cuzkd.
//
//   cuzk-bench gen-c1 --sector-size 32GiB [--v1] --seed N [--zero-data]
//                     [--threads T] [--verify] [-o c1.json]
//
// gen-c1 writes a synthetic C1 output (SealCommitPhase1Output JSON, the C2
// input) for any registered PoRep size without sealing a sector: see
// src/circuits/filecoin/c1_sparse.hpp for what it satisfies. The JSON goes to
// stdout (or -o); timings and sizes go to stderr.
//
// Load modes (bench/load_run.hpp), each against the daemon at --addr
// (default $CUZK_ADDR, else unix:///run/cuzkd/cuzkd.sock):
//   cuzk-bench single (--circuit demo --size N | --porep-c1 FILE) [--priority P]
//   cuzk-bench batch --count N [--concurrency C] (--size N | --porep-c1 FILE) [--priority P]
//   cuzk-bench mixed --duration-s S --mix demo:14:normal=3,demo:12:high=1 [--porep-c1 FILE]
//                    [--concurrency C]
// common: [--seed S] [--timeout-ms T] [--warmup] [--no-progress]
// global, before or after the mode, as in cuzkctl: [--addr A] [--json]
//   [--tls-ca F] [--tls-server-name N] [--token-file F]
// A progress bar goes to stderr when it is a terminal; the report (table, or
// one JSON object with --json) to stdout. Errors and exit statuses follow
// cli/cli_contract.hpp: 0 every proof succeeded, 1 some failed, 2 bad usage,
// 3 daemon unreachable (one error line, and no report when no proof completed).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "cli/cli_contract.hpp"
#include "circuits/filecoin/c1_sparse.hpp"
#include "load_report.hpp"
#include "load_run.hpp"
#include "util/thread_pool.hpp"

namespace {

using cuzk::circuits::filecoin::SealProof;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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
    cuzk::cli::print_error(cuzk::cli::kind::kInvalidArgument,
                           "gen-c1: unknown sector size " + a.sector_size + " (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)");
    return cuzk::cli::kExitUsage;
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
      cuzk::cli::print_error(cuzk::cli::kind::kIo, "gen-c1: cannot write " + a.out_path + ": " + std::strerror(errno));
      return cuzk::cli::kExitFailed;
    }
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    cuzk::cli::print_error(cuzk::cli::kind::kIo, "gen-c1: write failed");
    return cuzk::cli::kExitFailed;
  }
  std::fprintf(stderr, "gen-c1: %s seed %llu: generate %.2f s, JSON %.2f s, %zu bytes, %u threads\n", name.c_str(),
               static_cast<unsigned long long>(a.seed), gen_s, json_s, text.size(), unsigned(pool.size()));
  if (a.verify) {
    const auto t2 = Clock::now();
    try {
      fc::verify_c1_circuit_relations(fc::parse_c1(text), &pool);
    } catch (const fc::C1Error& e) {
      cuzk::cli::print_error(cuzk::cli::kind::kInternal,
                             "gen-c1: verification FAILED at " + e.json_path() + ": " + e.what());
      return cuzk::cli::kExitFailed;
    }
    std::fprintf(stderr, "gen-c1: parse_c1 + circuit relations OK in %.2f s\n", seconds_since(t2));
  }
  return 0;
}

struct LoadCli {
  cuzk::bench::LoadOptions run;
  std::string circuit = "demo";
  std::uint32_t size = 0;
  std::string priority;
  std::string mix;
  std::string porep_c1;
  bool json = false;
};

// The classes a single or batch run draws from: one, from --circuit/--size
// or --porep-c1.
std::optional<std::vector<cuzk::bench::LoadClass>> one_class(const LoadCli& c, std::string* why) {
  cuzk::bench::LoadClass k;
  if (!c.priority.empty()) {
    k.priority = cuzk::engine::parse_priority(c.priority);
    if (!k.priority) {
      *why = "--priority: expected low, normal, high or critical";
      return std::nullopt;
    }
  }
  if (!c.porep_c1.empty()) {
    k.kind = cuzk::engine::ProofKind::kPoRepC2;
    return std::vector<cuzk::bench::LoadClass>{k};
  }
  if (c.circuit != "demo" || c.size == 0) {
    *why = "give --circuit demo --size N, or --porep-c1 FILE";
    return std::nullopt;
  }
  k.demo_log_domain = c.size;
  return std::vector<cuzk::bench::LoadClass>{k};
}

int run_load(const std::string& mode, LoadCli& c) {
  std::string why;
  std::optional<std::vector<cuzk::bench::LoadClass>> classes;
  if (mode == "mixed") {
    classes = cuzk::bench::parse_mix(c.mix, &why);
    if (classes && !c.porep_c1.empty() && std::none_of(classes->begin(), classes->end(), [](const auto& k) {
          return k.kind == cuzk::engine::ProofKind::kPoRepC2;
        }))
      classes->push_back(cuzk::bench::LoadClass{cuzk::engine::ProofKind::kPoRepC2, 0, std::nullopt, 1});
  } else {
    classes = one_class(c, &why);
  }
  namespace kind = cuzk::cli::kind;
  if (!classes) {
    cuzk::cli::print_error(kind::kInvalidArgument, why);
    return cuzk::cli::kExitUsage;
  }
  for (const auto& k : *classes) {
    if (k.kind == cuzk::engine::ProofKind::kPoRepC2 && c.porep_c1.empty()) {
      cuzk::cli::print_error(kind::kInvalidArgument, "a porep class needs --porep-c1 FILE");
      return cuzk::cli::kExitUsage;
    }
  }
  if (!c.porep_c1.empty()) {
    std::ifstream in(c.porep_c1, std::ios::binary);
    if (!in) {
      std::error_code ec;
      const bool missing = !std::filesystem::exists(c.porep_c1, ec);
      cuzk::cli::print_error(missing ? kind::kNotFound : kind::kIo,
                             (missing ? "no such file: " : "cannot read ") + c.porep_c1);
      return cuzk::cli::kExitUsage;
    }
    c.run.c1_json.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  c.run.mode = mode;
  cuzk::bench::LoadOutcome out = cuzk::bench::run_load(c.run, *classes);
  // A daemon that was never reached gets one error line and no report; one
  // that went away mid-run gets the report of what completed, then the line.
  if (!out.unreachable || out.report.completed + out.report.failed > 0) {
    if (c.json) {
      std::printf("%s\n", cuzk::bench::report_json(out.report).c_str());
    } else {
      for (const auto& line : cuzk::bench::report_table(out.report)) std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
  }
  if (out.unreachable) {
    cuzk::cli::print_error(kind::kUnavailable, cuzk::cli::unreachable_message(c.run.addr, out.unreachable_message));
    return cuzk::cli::kExitUnreachable;
  }
  return out.report.failed == 0 ? cuzk::cli::kExitOk : cuzk::cli::kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuzk-bench - benchmark inputs for cuzk, and load against a running cuzkd"};
  app.require_subcommand(1);
  app.fallthrough(true);  // global options (--addr, --json, ...) may follow the mode, as in cuzkctl
  LoadCli load;
  cuzk::cli::ConnectionFlags connection;
  cuzk::cli::add_connection_options(app, connection);
  app.add_flag("--json", load.json, "load modes: one JSON object instead of the table");
  cuzk::cli::export_connection_flags(argc, argv);

  GenC1Args gen;
  CLI::App* gen_cmd = app.add_subcommand("gen-c1", "write a synthetic C1 output (C2 input JSON) to stdout");
  gen_cmd->add_option("--sector-size", gen.sector_size, "2KiB, 8MiB, 512MiB, 32GiB or 64GiB")->required();
  gen_cmd->add_flag("--v1", gen.v1, "the V1 proof of the size (default V1_1)");
  gen_cmd->add_option("--seed", gen.seed, "seed of every synthetic choice")->required();
  gen_cmd->add_flag("--zero-data", gen.zero_data, "all-zero sector data (committed capacity)");
  gen_cmd->add_option("--threads", gen.threads, "worker threads (0 = all cores)");
  gen_cmd->add_flag("--verify", gen.verify, "re-parse the JSON and check the circuit relations");
  gen_cmd->add_option("-o,--output", gen.out_path, "write to this file instead of stdout");

  auto add_common = [&load](CLI::App* c) {
    c->add_option("--seed", load.run.seed, "demo witness of the first proof; proof k uses seed + k (default 1)");
    c->add_option("--timeout-ms", load.run.timeout_ms, "per-proof timeout (0: none)");
    c->add_option("--porep-c1", load.porep_c1, "C1 output JSON: PoRep C2 proofs");
    c->add_flag("--warmup", load.run.warmup, "one untimed proof per class first (loads or generates parameters)");
    c->add_flag("--no-progress", load.run.no_progress, "no progress bar on stderr");
  };
  auto add_one_class = [&load](CLI::App* c) {
    c->add_option("--circuit", load.circuit, "built-in circuit (demo)");
    c->add_option("--size", load.size, "demo size: log2 of the domain");
    c->add_option("--priority", load.priority, "low | normal | high | critical (default: the kind's)");
  };
  CLI::App* single_cmd = app.add_subcommand("single", "one proof: latency and stage timings");
  add_common(single_cmd);
  add_one_class(single_cmd);
  CLI::App* batch_cmd = app.add_subcommand("batch", "N proofs of one class, C in flight at a time");
  add_common(batch_cmd);
  add_one_class(batch_cmd);
  batch_cmd->add_option("--count", load.run.count, "number of proofs (default 3)")->check(CLI::Range(1u, 1000000u));
  batch_cmd->add_option("--concurrency", load.run.concurrency, "proofs in flight (default 1)")
      ->check(CLI::Range(1u, 1024u));
  CLI::App* mixed_cmd = app.add_subcommand("mixed", "a weighted mix of classes for a duration");
  add_common(mixed_cmd);
  mixed_cmd->add_option("--duration-s", load.run.duration_s, "start proofs for this long, then drain")
      ->required()
      ->check(CLI::PositiveNumber);
  mixed_cmd->add_option("--mix", load.mix, "KIND[:SIZE][:PRIORITY][=WEIGHT],... e.g. demo:14:normal=3,demo:12:high=1")
      ->required();
  mixed_cmd->add_option("--concurrency", load.run.concurrency, "proofs in flight (default 4)")
      ->check(CLI::Range(1u, 1024u));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cuzk::cli::exit_for_parse_error(app, e);
  }
  load.run.addr = connection.addr;
  if (gen_cmd->parsed()) return gen_c1(gen);
  if (single_cmd->parsed()) {
    load.run.count = 1;
    load.run.concurrency = 1;
    return run_load("single", load);
  }
  if (batch_cmd->parsed()) return run_load("batch", load);
  if (mixed_cmd->parsed()) {
    if (!mixed_cmd->get_option("--concurrency")->count()) load.run.concurrency = 4;
    load.run.count = 0;
    return run_load("mixed", load);
  }
  return cuzk::cli::kExitUsage;
}
