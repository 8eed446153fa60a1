// Daemon subcommands: talk to a running cuzkd (--addr, $CUZK_ADDR, else the
// systemd socket; TLS and token options: cli/cli_contract.hpp).
//
//   cuzkctl [--addr ADDR] [--json] <command>
//     prove --circuit demo --size N [--count K] [--seed S] [--proof OUT]
//         submit K proofs, await them, verify each locally against the
//         verifying key the daemon returns and the public inputs recomputed
//         here (x_0 = seed, y = chain(x_0)); all or nothing: when one
//         submission is refused (e.g. `overloaded`, K above what the queue
//         holds) the ones already submitted are cancelled and the error is
//         reported (exit 1), so no job is left that nobody awaits. One line
//         per proof, flushed as it comes.
//     prove --porep-c1 FILE [--proof OUT] [--request-id ID] [--priority P]
//         PoRep C2 on the daemon: C1 JSON in, partitions x 192 B out; the
//         proof is verified here too, against the returned verifying key and
//         public inputs derived from the C1's public data
//     prove (--window-post DIR|FILES... | --winning-post DIR|FILE | --snap-deals DIR)
//           [--proof OUT] [--request-id ID] [--priority P] [--deadline-s S]
//         PoSt / SnapDeals on the daemon from a directory of `cuzkctl post
//         gen` / `update gen` (manifest + bincode vanilla proofs), or PoSt
//         from vanilla proof files with --sector-size --randomness
//         --prover-id [--partition]; verified here like PoRep's
//         (cuzkctl/filecoin_job.hpp); --deadline-s: due S seconds from now
//         (a late job is reported, still proved)
//     submit --circuit demo --size N [--request-id ID] [--priority P] [--seed S]
//     await (--job ID | --request-id ID) [--timeout-ms T]
//     cancel (--job ID | --request-id ID)
//     status | metrics
//     preload | evict (--params FILE | --srs ID)
//     (watch: commands/watch.cpp)
//
// `prove` is shared with the offline prover of circom witnesses
// (commands/offline.cpp): a daemon option (--circuit, --porep-c1, ...)
// sends the work to the daemon; offline options with it are a usage error.
// Offline demo proofs are `cuzkctl demo prove` (commands/demo.cpp).
//
// Exit statuses and error lines: cli/cli_contract.hpp (0 success; 1 a typed
// daemon error - a refused token too: kind "unauthenticated" - or a proof
// that does not verify; 2 bad usage or input; 3 daemon unreachable).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "cuzkctl/commands.hpp"
#include "cuzkctl/commands/client_progress.hpp"
#include "cuzkctl/commands/offline_util.hpp"
#include "cuzkctl/filecoin_job.hpp"
#include "cuzkctl/watch_view.hpp"
#include "engine/types.hpp"
#include "engine/views.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "rpc/client.hpp"
#include "rpc/client_impl.hpp"
#include "rpc/convert.hpp"

namespace cuzkctl {
namespace {

using nlohmann::json;
namespace eng = cuzk::engine;

struct DaemonArgs {
  std::string addr;
  std::string circuit = "demo";
  std::uint32_t size = 0;
  std::uint32_t count = 1;
  std::uint64_t seed = 1;
  std::string request_id;
  std::string priority;
  std::uint64_t job = 0;
  std::uint64_t timeout_ms = 0;
  std::string circuit_id;
  std::string params_file;  // preload/evict --params FILE
  std::string porep_c1;     // prove --porep-c1 FILE
  std::string proof_out;    // prove --proof OUT (with --porep-c1 or a PoSt / SnapDeals directory)
  // prove --window-post DIR | FILES..., --winning-post DIR | FILES..., --snap-deals DIR
  std::vector<std::string> window_post, winning_post;
  std::string snap_deals;
  // With vanilla proof FILES: their public data.
  std::string sector_size, randomness;
  std::uint64_t prover_id = 0;
  std::uint32_t partition = 0;
  double deadline_s = 0;  // prove --deadline-s (0: none)
};

// A typed daemon error: printed as one line, exit 1.
struct DaemonError {
  eng::Error error;
};

// A file named on the command line that cannot be read: not_found or io.
struct InputFileError {
  std::string_view kind;
  std::string message;
  int exit_code = kExitMalformed;
};

std::string read_input_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputFileError{cuzk::cli::kind::kNotFound, "no such file: " + path};
    throw InputFileError{cuzk::cli::kind::kIo, "cannot read " + path};
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs one daemon command; every failure becomes one error line
// (cli/cli_contract.hpp) and its exit status.
template <class F>
void guarded(Context& ctx, const DaemonArgs& a, F&& f) {
  namespace kind = cuzk::cli::kind;
  try {
    f();
    ctx.exit_code = kExitOk;
  } catch (const DaemonError& e) {
    report_error(ctx, eng::to_string(e.error.kind), e.error.message, kExitInvalid);
  } catch (const cuzk::rpc::ClientError& e) {
    switch (e.kind()) {
      case cuzk::rpc::ClientErrorKind::kUnauthenticated:
        // The daemon answered: a typed refusal (exit 1), not an unreachable daemon.
        report_error(ctx, "unauthenticated", e.what(), kExitInvalid);
        break;
      case cuzk::rpc::ClientErrorKind::kConfig:  // a bad address, an unreadable CA or token file
        report_error(ctx, kind::kInvalidArgument, e.what(), kExitMalformed);
        break;
      case cuzk::rpc::ClientErrorKind::kTransport:
        report_error(ctx, kind::kUnavailable, cuzk::cli::unreachable_message(a.addr, e.what()), kExitUnavailable);
        break;
    }
  } catch (const InputFileError& e) {
    report_error(ctx, e.kind, e.message, e.exit_code);
  } catch (const CLI::Error& e) {
    report_error(ctx, kind::kInvalidArgument, e.what(), kExitMalformed);
  }
}

void write_proof(const std::string& path, const std::vector<std::uint8_t>& proof) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(proof.data()), static_cast<std::streamsize>(proof.size()));
  if (!out) throw InputFileError{cuzk::cli::kind::kIo, "cannot write " + path, kExitInvalid};
}

template <class T>
T unwrap(eng::Result<T> r) {
  if (!r) throw DaemonError{r.error()};
  return std::move(r.value());
}

eng::JobRequest demo_request(const DaemonArgs& a, std::uint64_t seed) {
  if (a.circuit != "demo") throw CLI::ValidationError("--circuit", "only the built-in 'demo' circuit is served");
  eng::JobRequest req;
  req.kind = eng::ProofKind::kGroth16Demo;
  req.demo_log_domain = a.size;
  req.demo_seed = seed;
  req.request_id = a.request_id;
  if (!a.priority.empty()) {
    req.priority = eng::parse_priority(a.priority);
    if (!req.priority) throw CLI::ValidationError("--priority", "expected low, normal, high or critical");
  }
  return req;
}

eng::JobKey job_key(const DaemonArgs& a) {
  if (!a.request_id.empty()) return a.request_id;
  if (a.job == 0) throw CLI::ValidationError("--job", "give --job ID or --request-id ID");
  return a.job;
}

json job_json(const eng::JobView& v) {
  return {{"job_id", v.id},
          {"request_id", v.request_id},
          {"state", eng::to_string(v.state)},
          {"queue_position", v.queue_position},
          {"deduplicated", v.deduplicated},
          {"deadline_missed", v.deadline_missed}};
}

json timings_json(const eng::Timings& t) {
  return {{"queue", t.queue_ms}, {"params", t.params_ms}, {"synthesis", t.synthesis_ms},
          {"prove", t.prove_ms}, {"verify", t.verify_ms}, {"total", t.total_ms}};
}

std::string hex(const std::vector<std::uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

// Verifies a returned proof locally: the key the daemon reports, and public
// inputs recomputed here, so a daemon proving the wrong statement fails.
bool verify_locally(const eng::JobOutcome& o, std::uint32_t log_domain, std::uint64_t seed, std::string& why) {
  using namespace cuzk;
  groth16::VerifyingKey vk;
  try {
    vk = groth16::decode_vk(o.output.vk_bytes);
  } catch (const std::exception& e) {
    why = std::string("bad verifying key: ") + e.what();
    return false;
  }
  auto proofs = groth16::decode_proofs(o.output.proof, &why);
  if (!proofs || proofs->size() != 1) {
    if (why.empty()) why = "expected exactly one proof";
    return false;
  }
  ff::Fr x0 = ff::Fr::from_u64(seed);
  ff::Fr y = circuits::demo_chain(x0, circuits::DemoCircuit::rounds_for_log_domain(log_domain));
  std::vector<ff::Fr> inputs = {x0, y};
  if (o.output.public_inputs.size() != inputs.size()) {
    why = "daemon returned " + std::to_string(o.output.public_inputs.size()) + " public inputs, expected 2";
    return false;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::array<std::uint8_t, 32> le{};
    inputs[i].to_bytes_le(le);
    if (le != o.output.public_inputs[i]) {
      why = "public input " + std::to_string(i) + " differs from the locally computed statement";
      return false;
    }
  }
  auto verdict = groth16::verify(groth16::prepare_verifying_key(vk), proofs->at(0), inputs);
  why = std::string(groth16::to_string(verdict));
  return verdict == groth16::VerifyResult::kValid;
}

void prove_remote(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  std::uint64_t base_seed = a.seed;
  std::vector<eng::JobView> jobs;
  auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < a.count; ++i) {
    DaemonArgs one = a;
    if (!a.request_id.empty() && a.count > 1) one.request_id = a.request_id + "-" + std::to_string(i);
    eng::Result<eng::JobView> submitted = client.submit(demo_request(one, base_seed + i));
    if (!submitted) {
      // All or nothing: a batch cut short (typically `overloaded`: more than
      // the queue holds) cancels what it already submitted, so that no job
      // is left for nobody to await. The caller retries the whole batch.
      std::size_t cancelled = 0;
      for (const eng::JobView& j : jobs)
        if (client.cancel(j.id)) ++cancelled;  // not_found: already finished and expired
      eng::Error e = submitted.error();
      e.message += " (submission " + std::to_string(i + 1) + " of " + std::to_string(a.count) + " refused; " +
                   std::to_string(cancelled) + " of the " + std::to_string(jobs.size()) +
                   " jobs submitted before it cancelled)";
      throw DaemonError{std::move(e)};
    }
    jobs.push_back(std::move(submitted.value()));
  }
  // On a terminal, the daemon's stage events of these jobs while we wait
  // (the per-proof lines on stdout are the progress otherwise).
  JobProgress progress(a.addr, /*plain_lines=*/false);
  for (const eng::JobView& j : jobs) progress.follow(j.id);
  json results = json::array();
  bool all_valid = true;
  for (std::uint32_t i = 0; i < a.count; ++i) {
    eng::JobOutcome o = unwrap(client.await(jobs[i].id, a.timeout_ms));
    progress.clear_line();
    std::string why;
    bool valid = verify_locally(o, a.size, base_seed + i, why);
    all_valid = all_valid && valid;
    const eng::Timings& t = o.output.timings;
    if (ctx.json) {
      results.push_back({{"job", job_json(o.job)},
                         {"valid", valid},
                         {"verdict", why},
                         {"proof", hex(o.output.proof)},
                         {"timings_ms", timings_json(t)}});
    } else {
      std::printf(
          "job %llu (%s): %s  total %llu ms "
          "(queue %llu, params %llu, synthesis %llu, prove %llu, verify %llu)\n",
          static_cast<unsigned long long>(o.job.id), o.job.request_id.c_str(),
          valid ? "proof verified locally" : ("INVALID: " + why).c_str(), static_cast<unsigned long long>(t.total_ms),
          static_cast<unsigned long long>(t.queue_ms), static_cast<unsigned long long>(t.params_ms),
          static_cast<unsigned long long>(t.synthesis_ms), static_cast<unsigned long long>(t.prove_ms),
          static_cast<unsigned long long>(t.verify_ms));
      std::fflush(stdout);  // one line per proof as it comes, also into a pipe
    }
    if (i == 0 && valid && !a.proof_out.empty()) write_proof(a.proof_out, o.output.proof);
  }
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (ctx.json) {
    std::cout << json{{"results", results}, {"all_valid", all_valid}, {"wall_s", wall_s}}.dump() << '\n';
  } else {
    std::printf("%u proof(s) in %.3f s: %s\n", a.count, wall_s, all_valid ? "all valid" : "SOME INVALID");
  }
  if (!all_valid) throw DaemonError{{eng::ErrorKind::kInternal, "a returned proof did not verify locally"}};
}

// Verifies a PoRep C2 proof locally: the daemon's verifying key, and public
// inputs derived here from the C1's public data (replica_id, comm_d, comm_r,
// seed), never from anything the daemon computed.
bool verify_porep_locally(const eng::JobOutcome& o, const std::string& c1_json, std::string& why) {
  namespace fc = cuzk::circuits::filecoin;
  try {
    fc::C1Output c1 = fc::parse_c1(c1_json);
    auto pvk = cuzk::groth16::prepare_verifying_key(cuzk::groth16::decode_vk(o.output.vk_bytes));
    auto inputs = fc::porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
    std::string detail;
    auto verdict = fc::verify_porep_proof(pvk, o.output.proof, inputs, &detail);
    why = std::string(cuzk::groth16::to_string(verdict)) + (detail.empty() ? "" : ": " + detail);
    return verdict == cuzk::groth16::VerifyResult::kValid;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

// Submits `req`, awaits it, checks the proof with `verify` (local, from
// public data), writes it to --proof and reports. A proof that does not
// verify here is exit 1.
void prove_file_remote(Context& ctx, const DaemonArgs& a, eng::JobRequest req,
                       const std::function<bool(const eng::ProofOutput&, std::string&)>& verify) {
  req.request_id = a.request_id;
  if (!a.priority.empty()) {
    req.priority = eng::parse_priority(a.priority);
    if (!req.priority) throw CLI::ValidationError("--priority", "expected low, normal, high or critical");
  }
  if (a.deadline_s > 0) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    req.deadline_unix_ms =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()) +
        static_cast<std::uint64_t>(a.deadline_s * 1000.0);
  }
  cuzk::rpc::Client client(a.addr);
  auto t0 = std::chrono::steady_clock::now();
  eng::JobView job = unwrap(client.submit(req));
  // PoRep / PoSt / SnapDeals jobs take minutes (a first job also generates
  // parameters): their stage events on stderr while we wait.
  std::optional<JobProgress> progress;
  if (!ctx.json) {
    progress.emplace(a.addr, /*plain_lines=*/true);
    progress->follow(job.id);
  }
  eng::JobOutcome o = unwrap(client.await(job.id, a.timeout_ms));
  progress.reset();
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string why;
  bool valid = verify(o.output, why);
  if (valid && !a.proof_out.empty()) write_proof(a.proof_out, o.output.proof);  // never an unverified proof
  const eng::Timings& t = o.output.timings;
  std::size_t partitions = o.output.proof.size() / 192;
  if (ctx.json) {
    std::cout << json{{"job", job_json(o.job)},
                      {"kind", std::string(eng::to_string(req.kind))},
                      {"valid", valid},
                      {"verdict", why},
                      {"partitions", partitions},
                      {"proof", hex(o.output.proof)},
                      {"wall_s", wall_s},
                      {"deadline_missed", o.job.deadline_missed},
                      {"timings_ms", timings_json(t)}}
                     .dump()
              << '\n';
  } else {
    std::printf(
        "job %llu (%s, %s): %zu partition(s), %zu bytes: %s  total %llu ms (queue %llu, params %llu, "
        "prove %llu)%s\n",
        static_cast<unsigned long long>(o.job.id), o.job.request_id.c_str(),
        std::string(eng::to_string(req.kind)).c_str(), partitions, o.output.proof.size(),
        valid ? "proof verified locally" : ("INVALID: " + why).c_str(), static_cast<unsigned long long>(t.total_ms),
        static_cast<unsigned long long>(t.queue_ms), static_cast<unsigned long long>(t.params_ms),
        static_cast<unsigned long long>(t.prove_ms), o.job.deadline_missed ? "  DEADLINE MISSED" : "");
  }
  if (!valid) throw DaemonError{{eng::ErrorKind::kInternal, "the returned proof did not verify locally: " + why}};
}

void prove_porep_remote(Context& ctx, const DaemonArgs& a) {
  std::string c1_json = read_input_file(a.porep_c1);
  eng::JobRequest req;
  req.kind = eng::ProofKind::kPoRepC2;
  req.input = c1_json;
  prove_file_remote(ctx, a, std::move(req), [&c1_json](const eng::ProofOutput& out, std::string& why) {
    eng::JobOutcome o;
    o.output = out;
    return verify_porep_locally(o, c1_json, why);
  });
}

// A PoSt or SnapDeals job from a generator's directory (one path naming a
// directory), or from vanilla proof files with --sector-size, --randomness,
// --prover-id and --partition.
void prove_filecoin_remote(Context& ctx, const DaemonArgs& a, eng::ProofKind kind,
                           const std::vector<std::string>& paths) {
  FilecoinJob job;
  try {
    if (paths.size() == 1 && std::filesystem::is_directory(paths[0])) {
      job = load_filecoin_job(kind, paths[0]);
    } else {
      if (a.sector_size.empty() || a.randomness.empty())
        throw ManifestError("vanilla proof files need --sector-size, --randomness and --prover-id");
      PostFiles f;
      f.sector_bytes = parse_sector_size(a.sector_size);
      f.randomness = parse_hex32(a.randomness, "--randomness");
      f.prover_id = a.prover_id;
      f.partition = a.partition;
      f.files.assign(paths.begin(), paths.end());
      job = load_post_files(kind, f);
    }
  } catch (const ManifestError& e) {
    throw CLI::ValidationError(std::string("--") + (kind == eng::ProofKind::kSnapDeals     ? "snap-deals"
                                                    : kind == eng::ProofKind::kWinningPost ? "winning-post"
                                                                                           : "window-post"),
                               e.what());
  } catch (const Malformed& e) {  // --sector-size, --randomness
    throw CLI::ValidationError(e.what());
  }
  prove_file_remote(ctx, a, std::move(job.request), job.verify);
}

void submit(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::JobView v = unwrap(client.submit(demo_request(a, a.seed)));
  if (ctx.json)
    std::cout << job_json(v).dump() << '\n';
  else
    std::printf("%llu\n", static_cast<unsigned long long>(v.id));
}

void await_job(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::JobOutcome o = unwrap(client.await(job_key(a), a.timeout_ms));
  if (ctx.json) {
    std::cout << json{{"job", job_json(o.job)},
                      {"proof", hex(o.output.proof)},
                      {"verifying_key", hex(o.output.vk_bytes)},
                      {"total_ms", o.output.timings.total_ms}}
                     .dump()
              << '\n';
  } else {
    std::printf("job %llu done: proof %s\n", static_cast<unsigned long long>(o.job.id), hex(o.output.proof).c_str());
  }
}

void cancel(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::JobView v = unwrap(client.cancel(job_key(a)));
  if (ctx.json)
    std::cout << job_json(v).dump() << '\n';
  else
    std::printf("job %llu: %s\n", static_cast<unsigned long long>(v.id), std::string(eng::to_string(v.state)).c_str());
}

void status(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  cuzk::rpc::ClientStatus s = client.status();
  const eng::EngineStatus& e = s.engine;
  if (ctx.json) {
    json queues = json::object();
    for (int p = 0; p < eng::kNumPriorities; ++p)
      queues[std::string(eng::to_string(static_cast<eng::Priority>(p)))] = e.queued[static_cast<std::size_t>(p)];
    json jobs = json::array();
    for (const auto& j : e.jobs) {
      json jj = job_json(j);
      jj["kind"] = eng::to_string(j.kind);
      jj["stage"] = j.stage;
      jj["age_ms"] = j.age_ms;
      jobs.push_back(jj);
    }
    json workers = json::array();
    for (const auto& w : e.workers)
      workers.push_back({{"id", w.id}, {"busy", w.job.has_value()}, {"job", w.job.value_or(0)}});
    json params = json::array();
    for (const auto& p : e.loaded_params) params.push_back({{"circuit_id", p.circuit_id}, {"bytes", p.bytes}});
    json loading = json::array();
    for (const auto& l : e.loading_params) {
      loading.push_back({{"file", l.file},
                         {"file_bytes", l.file_bytes},
                         {"read_bytes", l.read_bytes},
                         {"decoded_bytes", l.decoded_bytes},
                         {"elapsed_ms", l.elapsed_ms}});
    }
    json devices = json::array();
    for (const auto& d : e.devices) {
      devices.push_back({{"index", d.index},
                         {"name", d.name},
                         {"ordinal", d.ordinal},
                         {"busy", d.job.has_value()},
                         {"job", d.job.value_or(0)},
                         {"partition", d.partition.value_or(0)},
                         {"stage", d.stage},
                         {"jobs_placed", d.jobs_placed},
                         {"proofs_done", d.proofs_done},
                         {"verify_failures", d.verify_failures},
                         {"resident_srs", d.resident_srs},
                         {"resident_srs_bytes", d.resident_srs_bytes},
                         {"r1cs_matrices_bytes", d.r1cs_matrices_bytes},
                         {"msm_scratch_bytes", d.msm_scratch_bytes},
                         {"msm_scratch_limit_bytes", d.msm_scratch_limit_bytes},
                         {"memory_total_bytes", d.memory_total_bytes},
                         {"memory_free_bytes", d.memory_free_bytes}});
    }
    json srs = json::array();
    for (const auto& r : e.srs)
      srs.push_back({{"srs", r.srs}, {"tier", r.tier}, {"device", r.device}, {"bytes", r.bytes}});
    json memory = {{"total_bytes", e.memory.total_bytes},
                   {"reserved_bytes", e.memory.reserved_bytes},
                   {"available_bytes", e.memory.available_bytes},
                   {"peak_reserved_bytes", e.memory.peak_reserved_bytes},
                   {"waiting", e.memory.waiting},
                   {"waiting_bytes", e.memory.waiting_bytes},
                   {"kept_witness_bytes", e.memory.kept_witness_bytes}};
    std::cout << json{{"devices", devices},
                      {"srs_residency", srs},
                      {"memory_budget", memory},
                      {"cpu_retries_total", e.cpu_retries_total},
                      {"schema_version", s.schema_version},
                      {"uptime_ms", e.uptime_ms},
                      {"draining", e.draining},
                      {"queues", queues},
                      {"queue_capacity", e.queue_capacity},
                      {"jobs", jobs},
                      {"workers", workers},
                      {"loaded_params", params},
                      {"loading_params", loading},
                      {"resident_bytes", e.resident_bytes},
                      {"params_bytes", s.params_bytes},
                      {"completed_total", e.completed_total},
                      {"failed_total", e.failed_total},
                      {"cancelled_total", e.cancelled_total},
                      {"max_message_bytes", s.max_message_bytes}}
                     .dump()
              << '\n';
    return;
  }
  std::printf("cuzkd schema v%u, up %.1f s%s\n", s.schema_version, static_cast<double>(e.uptime_ms) / 1000.0,
              e.draining ? " (draining)" : "");
  std::printf("queue: critical %u, high %u, normal %u, low %u (capacity %u)\n", e.queued[3], e.queued[2], e.queued[1],
              e.queued[0], e.queue_capacity);
  for (const auto& w : e.workers)
    std::printf("worker %u: %s\n", w.id, w.job ? ("job " + std::to_string(*w.job)).c_str() : "idle");
  for (const auto& j : e.jobs)
    std::printf("job %llu %s %s stage=%s age=%llu ms\n", static_cast<unsigned long long>(j.id), j.request_id.c_str(),
                std::string(eng::to_string(j.state)).c_str(), j.stage.c_str(),
                static_cast<unsigned long long>(j.age_ms));
  for (const auto& p : e.loaded_params)
    std::printf("params %s: %llu bytes\n", p.circuit_id.c_str(), static_cast<unsigned long long>(p.bytes));
  for (const auto& l : e.loading_params) std::printf("%s\n", loading_line(l).c_str());
  auto gib = [](std::uint64_t b) { return static_cast<double>(b) / static_cast<double>(1ull << 30); };
  for (const auto& d : e.devices) std::printf("%s\n", status_device_line(d).c_str());
  for (const auto& r : e.srs) {
    std::string where = r.tier == "device"   ? "device " + std::to_string(r.device)
                        : r.tier == "pinned" ? "pinned host memory of device " + std::to_string(r.device)
                                             : r.tier;
    std::printf("srs %s: %s, %.2f GiB\n", r.srs.c_str(), where.c_str(), gib(r.bytes));
  }
  if (e.memory.total_bytes != 0)
    std::printf("memory budget: %.1f GiB, reserved %.1f (peak %.1f), %u waiting (%.1f GiB)\n",
                gib(e.memory.total_bytes), gib(e.memory.reserved_bytes), gib(e.memory.peak_reserved_bytes),
                e.memory.waiting, gib(e.memory.waiting_bytes));
  else
    std::printf("memory budget: unlimited, reserved %.1f GiB (peak %.1f)\n", gib(e.memory.reserved_bytes),
                gib(e.memory.peak_reserved_bytes));
  if (e.cpu_retries_total != 0)
    std::printf("gpu proofs re-proved on the cpu: %llu\n", static_cast<unsigned long long>(e.cpu_retries_total));
  std::printf("done %llu, failed %llu, cancelled %llu; resident %.1f MiB\n",
              static_cast<unsigned long long>(e.completed_total), static_cast<unsigned long long>(e.failed_total),
              static_cast<unsigned long long>(e.cancelled_total), static_cast<double>(e.resident_bytes) / (1 << 20));
}

void metrics(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  std::string text = client.metrics();
  if (ctx.json)
    std::cout << json{{"metrics", text}}.dump() << '\n';
  else
    std::fputs(text.c_str(), stdout);
}

void preload(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::ParamsInfo info;
  {
    std::optional<ElapsedTicker> ticker;
    if (!ctx.json)
      ticker.emplace("preload " + a.circuit_id + ": the daemon is reading or generating the parameters",
                     daemon_loading_detail(a.addr));
    info = unwrap(client.preload(a.circuit_id));
  }
  if (ctx.json) {
    std::cout << json{{"circuit_id", a.circuit_id},  {"already_loaded", info.already_loaded},
                      {"generated", info.generated}, {"load_ms", info.load_ms},
                      {"gpus", info.gpus},           {"gpus_holding", info.gpus_holding}}
                     .dump()
              << '\n';
    return;
  }
  const double s = static_cast<double>(info.load_ms) / 1000.0;
  if (info.already_loaded)
    std::printf("%s: already resident", a.circuit_id.c_str());
  else if (info.generated)
    std::printf("%s: DEVELOPMENT parameters generated in %.1f s (no parameter file was found), now resident",
                a.circuit_id.c_str(), s);
  else
    std::printf("%s: read from its parameter file in %.1f s, now resident", a.circuit_id.c_str(), s);
  // No GPUs (or a daemon that does not report them): nothing more to say.
  if (info.gpus != 0) {
    std::printf(", on %u of %u GPUs", info.gpus_holding, info.gpus);
    if (info.gpus_holding < info.gpus)
      std::printf(" (the others upload it with their first job; see the daemon's log)");
  }
  std::printf("\n");
}

// The daemon's parameter-set id for a parameter file: "demo-<n>" for the
// files the daemon writes for the demo circuit, "porep-<size>" for a PoRep
// file under its official or development name (rust-fil-proofs names).
std::string srs_id_for_params_file(const std::string& path) {
  namespace fc = cuzk::circuits::filecoin;
  const std::string name = std::filesystem::path(path).filename().string();
  for (const fc::SealProofInfo& info : fc::seal_proofs()) {
    if (name == fc::official_param_names(info.proof).params || name == fc::dev_param_names(info.proof).params) {
      std::string_view size = info.name;  // "StackedDrg32GiBV1_1"
      size.remove_prefix(std::string_view("StackedDrg").size());
      return "porep-" + std::string(size.substr(0, size.rfind('V')));
    }
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  if (stem.rfind("demo-", 0) == 0) return stem;
  throw CLI::ValidationError("--params", "not a parameter file this daemon serves: " + name +
                                             " (expected demo-N.params or a PoRep .params name)");
}

// preload/evict --params FILE | --srs ID: resolve to the id.
DaemonArgs with_srs_id(DaemonArgs a) {
  if (!a.params_file.empty()) a.circuit_id = srs_id_for_params_file(a.params_file);
  if (a.circuit_id.empty()) throw CLI::ValidationError("--params", "give --params FILE or --srs ID");
  return a;
}

void evict(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  unwrap(client.evict(a.circuit_id));
  if (ctx.json)
    std::cout << json{{"circuit_id", a.circuit_id}, {"evicted", true}}.dump() << '\n';
  else
    std::printf("%s: evicted\n", a.circuit_id.c_str());
}

}  // namespace

void register_daemon(CLI::App& app, Context& ctx) {
  // Owned by the callbacks (and so by `app`), not a static.
  auto args = std::make_shared<DaemonArgs>();
  // Every daemon command: the root's --addr (main.cpp), then the command.
  auto run = [&ctx, args](auto fn) {
    return [&ctx, args, fn] {
      args->addr = ctx.connection.addr;
      guarded(ctx, *args, [&] { fn(ctx, *args); });
    };
  };

  auto add_demo = [&args](CLI::App* c) {
    c->add_option("--circuit", args->circuit, "built-in circuit (demo)");
    c->add_option("--size", args->size, "demo size: log2 of the domain")->required();
    c->add_option("--seed", args->seed, "witness x_0 (default 1; --count K uses seed .. seed+K-1)");
  };
  auto add_key = [&args](CLI::App* c) {
    c->add_option("--job", args->job, "job id");
    c->add_option("--request-id", args->request_id, "client request id");
  };

  // `prove` is one command with two sides (commands/offline.cpp registers
  // it): a circom witness proved here, offline (--zkey | --params --r1cs,
  // --wtns), or a job proved by the daemon (--circuit | --porep-c1 |
  // --window-post | --winning-post | --snap-deals). Options of both sides
  // together are a usage error, never silently ignored.
  CLI::App* pr = app.get_subcommand("prove");
  CLI::Option* circuit = pr->add_option("--circuit", args->circuit, "daemon: built-in circuit (demo) proved by cuzkd");
  CLI::Option* size = pr->add_option("--size", args->size, "daemon, --circuit demo: log2 of the domain");
  CLI::Option* count = pr->add_option("--count", args->count, "daemon, --circuit demo: number of proofs")
                           ->check(CLI::Range(1u, 100000u));
  CLI::Option* seed = pr->add_option("--seed", args->seed, "daemon, --circuit demo: witness x_0 (default 1)");
  CLI::Option* priority = pr->add_option("--priority", args->priority, "daemon: low | normal | high | critical");
  CLI::Option* request_id =
      pr->add_option("--request-id", args->request_id, "daemon: request id (suffixed -i when --count > 1)");
  CLI::Option* timeout = pr->add_option("--timeout-ms", args->timeout_ms, "daemon: per-proof await timeout (0: none)");
  CLI::Option* porep_c1 = pr->add_option("--porep-c1", args->porep_c1, "daemon: PoRep C2 of this C1 output JSON");
  CLI::Option* window_post =
      pr->add_option("--window-post", args->window_post,
                     "daemon: WindowPoSt of a `cuzkctl post gen --kind window` directory, or of vanilla proof files "
                     "(bincode FallbackPoStSectorProof) with --sector-size, --randomness, --prover-id, --partition");
  CLI::Option* winning_post =
      pr->add_option("--winning-post", args->winning_post,
                     "daemon: WinningPoSt of a `cuzkctl post gen --kind winning` directory, or of a vanilla proof file "
                     "with --sector-size, --randomness, --prover-id");
  CLI::Option* post_size =
      pr->add_option("--sector-size", args->sector_size, "daemon, PoSt vanilla proof files: 2KiB ... 64GiB");
  CLI::Option* post_randomness = pr->add_option(
      "--randomness", args->randomness, "daemon, PoSt vanilla proof files: 32 bytes hex (masked rand[31] &= 0x3f)");
  CLI::Option* post_prover =
      pr->add_option("--prover-id", args->prover_id, "daemon, PoSt vanilla proof files: miner actor id");
  CLI::Option* post_partition =
      pr->add_option("--partition", args->partition, "daemon, WindowPoSt vanilla proof files: partition index");
  CLI::Option* snap_deals =
      pr->add_option("--snap-deals", args->snap_deals, "daemon: SnapDeals of a `cuzkctl update gen` directory");
  CLI::Option* deadline = pr->add_option("--deadline-s", args->deadline_s, "daemon: the proof is due in S seconds");
  pr->parse_complete_callback([&ctx, args, pr, circuit, size, count, seed, priority, request_id, timeout, porep_c1,
                               window_post, winning_post, snap_deals, deadline, post_size, post_randomness, post_prover,
                               post_partition] {
    // This runs before the root app stores its own options (--addr, --json)
    // into their variables: read them from the root here.
    const CLI::App* root = pr->get_parent();
    args->addr = ctx.connection.addr;
    if (const CLI::Option* o = root->get_option_no_throw("--addr"); o != nullptr && o->count() > 0)
      args->addr = o->as<std::string>();
    if (const CLI::Option* o = root->get_option_no_throw("--json"); o != nullptr && o->count() > 0) ctx.json = true;
    auto given = [](std::initializer_list<const CLI::Option*> opts) {
      std::string names;
      for (const CLI::Option* o : opts)
        if (o != nullptr && o->count() > 0) names += (names.empty() ? "" : ", ") + o->get_name();
      return names;
    };
    auto usage = [&ctx](const std::string& message) {
      ctx.handled = true;
      report_error(ctx, cuzk::cli::kind::kInvalidArgument, message, kExitMalformed);
    };
    const std::string selectors = given({circuit, porep_c1, window_post, winning_post, snap_deals});
    const std::string offline =
        given({pr->get_option_no_throw("--params"), pr->get_option_no_throw("--zkey"),
               pr->get_option_no_throw("--r1cs"), pr->get_option_no_throw("--wtns"),
               pr->get_option_no_throw("--snarkjs-proof"), pr->get_option_no_throw("--snarkjs-public")});
    const std::string daemon_only = given({size, count, seed, priority, request_id, timeout, deadline});
    const std::string demo_only = given({size, count, seed});
    const std::string post_files_only = given({post_size, post_randomness, post_prover, post_partition});
    if (!post_files_only.empty() && window_post->count() == 0 && winning_post->count() == 0)
      return usage(post_files_only +
                   " describe PoSt vanilla proof files: give them with --window-post or --winning-post");
    if (selectors.find(',') != std::string::npos)
      return usage("prove takes one of --circuit, --porep-c1, --window-post, --winning-post, --snap-deals (given: " +
                   selectors + ")");
    if (!selectors.empty() && !offline.empty())
      return usage(selectors + " proves through the daemon, but offline options were given too (" + offline +
                   ": proving a circom witness here). An offline demo proof is "
                   "`cuzkctl demo prove --size N --params P --proof OUT`");
    if (selectors.empty()) {
      if (!daemon_only.empty())
        return usage("daemon options (" + daemon_only +
                     ") without a daemon job: give --circuit demo (or --porep-c1, --window-post, ...); "
                     "an offline demo proof is `cuzkctl demo prove --size N --params P --proof OUT`");
      return;  // offline: commands/offline.cpp's callback proves
    }
    ctx.handled = true;
    if (CLI::Option* o = pr->get_option_no_throw("--proof"); o != nullptr && o->count() > 0)
      args->proof_out = o->as<std::string>();
    if (circuit->count() == 0) {
      if (!demo_only.empty()) return usage("options of --circuit demo (" + demo_only + ") given with " + selectors);
      guarded(ctx, *args, [&] {
        if (porep_c1->count() > 0)
          prove_porep_remote(ctx, *args);
        else if (window_post->count() > 0)
          prove_filecoin_remote(ctx, *args, eng::ProofKind::kWindowPost, args->window_post);
        else if (winning_post->count() > 0)
          prove_filecoin_remote(ctx, *args, eng::ProofKind::kWinningPost, args->winning_post);
        else
          prove_filecoin_remote(ctx, *args, eng::ProofKind::kSnapDeals, {args->snap_deals});
      });
      return;
    }
    if (args->size == 0) return usage("--size N is required with --circuit demo");
    if (!args->proof_out.empty() && args->count != 1) return usage("--proof writes one proof: not with --count > 1");
    guarded(ctx, *args, [&] { prove_remote(ctx, *args); });
  });

  auto* su = app.add_subcommand("submit", "daemon: submit a demo proof job; prints its job id");
  add_demo(su);
  su->add_option("--request-id", args->request_id, "idempotency key: resubmitting returns the same job");
  su->add_option("--priority", args->priority, "low | normal | high | critical");
  su->callback(run(submit));

  auto* aw = app.add_subcommand("await", "daemon: wait for a job's proof");
  add_key(aw);
  aw->add_option("--timeout-ms", args->timeout_ms, "give up after T ms (0: wait)");
  aw->callback(run(await_job));

  auto* ca = app.add_subcommand("cancel", "daemon: cancel a queued or running job");
  add_key(ca);
  ca->callback(run(cancel));

  app.add_subcommand("status", "daemon: queues, jobs, workers, parameters, memory")->callback(run(status));
  app.add_subcommand("metrics", "daemon: Prometheus metrics text")->callback(run(metrics));

  auto* pl = app.add_subcommand(
      "preload",
      "daemon: load (or generate) a parameter set and make it resident on every GPU: --params FILE or --srs ID");
  pl->add_option("--params", args->params_file, "parameter file (demo-N.params, PoRep official or -dev name)");
  pl->add_option("--srs", args->circuit_id, "parameter-set id (demo-14, porep-32GiB, window-post-2KiB, ...)");
  pl->callback(run([](Context& c, const DaemonArgs& a) { preload(c, with_srs_id(a)); }));
  auto* ev =
      app.add_subcommand("evict", "daemon: drop a parameter set from memory and devices: --params FILE or --srs ID");
  ev->add_option("--params", args->params_file, "parameter file (demo-N.params, PoRep official or -dev name)");
  ev->add_option("--srs", args->circuit_id, "parameter-set id (demo-14, porep-32GiB, window-post-2KiB, ...)");
  ev->callback(run([](Context& c, const DaemonArgs& a) { evict(c, with_srs_id(a)); }));
}

}  // namespace cuzkctl
