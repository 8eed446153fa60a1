// Daemon subcommands: talk to a running cuzkd over its Unix socket.
//
//   cuzkctl [--addr unix:///run/cuzkd/cuzkd.sock] [--json] <command>
//     prove --circuit demo --size N [--count K] [--seed S]   (also: prove-remote)
//         submit K proofs, await them, verify each locally against the
//         verifying key the daemon returns and the public inputs recomputed
//         here (x_0 = seed, y = chain(x_0)); all or nothing: when one
//         submission is refused (e.g. `overloaded`, K above what the queue
//         holds) the ones already submitted are cancelled and the error is
//         reported (exit 1), so no job is left that nobody awaits
//     prove --porep-c1 FILE [--proof OUT] [--request-id ID] [--priority P]
//         PoRep C2 on the daemon: C1 JSON in, partitions x 192 B out; the
//         proof is verified here too, against the returned verifying key and
//         public inputs derived from the C1's public data
//     submit --circuit demo --size N [--request-id ID] [--priority P] [--seed S]
//     await (--job ID | --request-id ID) [--timeout-ms T]
//     cancel (--job ID | --request-id ID)
//     status | metrics | preload-srs ID | evict-srs ID
//     preload | evict (--params FILE | --srs ID)
//     (watch: commands/watch.cpp)
//
// `prove` is shared with the offline prover: naming a built-in circuit with
// --circuit sends the work to the daemon; --params/--zkey prove offline.
//
// Exit statuses: 0 success; 1 a typed daemon error (a refused token too:
// kind "unauthenticated") or a proof that does not verify; 2 malformed
// command line; 3 daemon unreachable. Errors are one line on stderr:
// "error: <kind>: <message>".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "cuzkctl/commands.hpp"
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

inline constexpr int kExitUnavailable = 3;

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
  std::string porep_c1;   // prove --porep-c1 FILE
  std::string proof_out;  // prove --proof OUT (with --porep-c1)
};

// A typed daemon error: printed as one line, exit 1.
struct DaemonError {
  eng::Error error;
};

std::string default_addr() {
  const char* env = std::getenv("CUZK_ADDR");
  return env && *env ? env : "unix:///run/cuzkd/cuzkd.sock";
}

void print_error(const Context& ctx, const std::string& kind, const std::string& message) {
  if (ctx.json) std::cout << json{{"error", {{"kind", kind}, {"message", message}}}}.dump() << '\n';
  std::fprintf(stderr, "error: %s: %s\n", kind.c_str(), message.c_str());
}

template <class F>
void guarded(Context& ctx, F&& f) {
  try {
    f();
    ctx.exit_code = kExitOk;
  } catch (const DaemonError& e) {
    print_error(ctx, std::string(eng::to_string(e.error.kind)), e.error.message);
    ctx.exit_code = kExitInvalid;
  } catch (const cuzk::rpc::ClientError& e) {
    if (e.kind() == cuzk::rpc::ClientErrorKind::kUnauthenticated) {
      // The daemon answered: a typed refusal (exit 1), not an unreachable daemon.
      print_error(ctx, "unauthenticated", e.what());
      ctx.exit_code = kExitInvalid;
    } else {
      print_error(ctx, "unavailable", e.what());
      ctx.exit_code = kExitUnavailable;
    }
  } catch (const CLI::Error& e) {
    print_error(ctx, "usage", e.what());
    ctx.exit_code = kExitMalformed;
  }
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
  return {{"job_id", v.id}, {"request_id", v.request_id}, {"state", eng::to_string(v.state)},
          {"queue_position", v.queue_position}, {"deduplicated", v.deduplicated}};
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
  json results = json::array();
  bool all_valid = true;
  for (std::uint32_t i = 0; i < a.count; ++i) {
    eng::JobOutcome o = unwrap(client.await(jobs[i].id, a.timeout_ms));
    std::string why;
    bool valid = verify_locally(o, a.size, base_seed + i, why);
    all_valid = all_valid && valid;
    const eng::Timings& t = o.output.timings;
    if (ctx.json) {
      results.push_back({{"job", job_json(o.job)}, {"valid", valid}, {"verdict", why},
                         {"proof", hex(o.output.proof)},
                         {"timings_ms", {{"queue", t.queue_ms}, {"params", t.params_ms}, {"synthesis", t.synthesis_ms},
                                         {"prove", t.prove_ms}, {"verify", t.verify_ms}, {"total", t.total_ms}}}});
    } else {
      std::printf("job %llu (%s): %s  total %llu ms "
                  "(queue %llu, params %llu, synthesis %llu, prove %llu, verify %llu)\n",
                  static_cast<unsigned long long>(o.job.id), o.job.request_id.c_str(),
                  valid ? "proof verified locally" : ("INVALID: " + why).c_str(),
                  static_cast<unsigned long long>(t.total_ms), static_cast<unsigned long long>(t.queue_ms),
                  static_cast<unsigned long long>(t.params_ms), static_cast<unsigned long long>(t.synthesis_ms),
                  static_cast<unsigned long long>(t.prove_ms), static_cast<unsigned long long>(t.verify_ms));
    }
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

void prove_porep_remote(Context& ctx, const DaemonArgs& a) {
  std::ifstream in(a.porep_c1, std::ios::binary);
  if (!in) throw CLI::ValidationError("--porep-c1", "cannot read " + a.porep_c1);
  std::string c1_json{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  eng::JobRequest req;
  req.kind = eng::ProofKind::kPoRepC2;
  req.c1_json = c1_json;
  req.request_id = a.request_id;
  if (!a.priority.empty()) {
    req.priority = eng::parse_priority(a.priority);
    if (!req.priority) throw CLI::ValidationError("--priority", "expected low, normal, high or critical");
  }
  cuzk::rpc::Client client(a.addr);
  auto t0 = std::chrono::steady_clock::now();
  eng::JobView job = unwrap(client.submit(req));
  eng::JobOutcome o = unwrap(client.await(job.id, a.timeout_ms));
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string why;
  bool valid = verify_porep_locally(o, c1_json, why);
  if (!a.proof_out.empty()) {
    std::ofstream out(a.proof_out, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(o.output.proof.data()), static_cast<std::streamsize>(o.output.proof.size()));
    if (!out) throw CLI::ValidationError("--proof", "cannot write " + a.proof_out);
  }
  const eng::Timings& t = o.output.timings;
  std::size_t partitions = o.output.proof.size() / 192;
  if (ctx.json) {
    std::cout << json{{"job", job_json(o.job)}, {"valid", valid}, {"verdict", why}, {"partitions", partitions},
                      {"proof", hex(o.output.proof)}, {"wall_s", wall_s},
                      {"timings_ms", {{"queue", t.queue_ms}, {"params", t.params_ms}, {"prove", t.prove_ms},
                                      {"total", t.total_ms}}}}
                     .dump()
              << '\n';
  } else {
    std::printf("job %llu (%s): %zu partition(s), %zu bytes: %s  total %llu ms (queue %llu, params %llu, "
                "prove %llu)\n",
                static_cast<unsigned long long>(o.job.id), o.job.request_id.c_str(), partitions,
                o.output.proof.size(), valid ? "proof verified locally" : ("INVALID: " + why).c_str(),
                static_cast<unsigned long long>(t.total_ms), static_cast<unsigned long long>(t.queue_ms),
                static_cast<unsigned long long>(t.params_ms), static_cast<unsigned long long>(t.prove_ms));
  }
  if (!valid) throw DaemonError{{eng::ErrorKind::kInternal, "the returned proof did not verify locally: " + why}};
}

void submit(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::JobView v = unwrap(client.submit(demo_request(a, a.seed)));
  if (ctx.json) std::cout << job_json(v).dump() << '\n';
  else std::printf("%llu\n", static_cast<unsigned long long>(v.id));
}

void await_job(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::JobOutcome o = unwrap(client.await(job_key(a), a.timeout_ms));
  if (ctx.json) {
    std::cout << json{{"job", job_json(o.job)}, {"proof", hex(o.output.proof)},
                      {"verifying_key", hex(o.output.vk_bytes)}, {"total_ms", o.output.timings.total_ms}}
                     .dump()
              << '\n';
  } else {
    std::printf("job %llu done: proof %s\n", static_cast<unsigned long long>(o.job.id), hex(o.output.proof).c_str());
  }
}

void cancel(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::JobView v = unwrap(client.cancel(job_key(a)));
  if (ctx.json) std::cout << job_json(v).dump() << '\n';
  else
    std::printf("job %llu: %s\n", static_cast<unsigned long long>(v.id),
                std::string(eng::to_string(v.state)).c_str());
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
    json devices = json::array();
    for (const auto& d : e.devices) {
      devices.push_back({{"index", d.index}, {"name", d.name}, {"ordinal", d.ordinal}, {"busy", d.job.has_value()},
                         {"job", d.job.value_or(0)}, {"partition", d.partition.value_or(0)}, {"stage", d.stage},
                         {"jobs_placed", d.jobs_placed}, {"proofs_done", d.proofs_done},
                         {"verify_failures", d.verify_failures}, {"resident_srs", d.resident_srs},
                         {"resident_srs_bytes", d.resident_srs_bytes},
                         {"r1cs_matrices_bytes", d.r1cs_matrices_bytes}, {"msm_scratch_bytes", d.msm_scratch_bytes},
                         {"msm_scratch_limit_bytes", d.msm_scratch_limit_bytes},
                         {"memory_total_bytes", d.memory_total_bytes}, {"memory_free_bytes", d.memory_free_bytes}});
    }
    json srs = json::array();
    for (const auto& r : e.srs)
      srs.push_back({{"srs", r.srs}, {"tier", r.tier}, {"device", r.device}, {"bytes", r.bytes}});
    json memory = {{"total_bytes", e.memory.total_bytes},
                   {"reserved_bytes", e.memory.reserved_bytes},
                   {"available_bytes", e.memory.available_bytes},
                   {"peak_reserved_bytes", e.memory.peak_reserved_bytes},
                   {"waiting", e.memory.waiting},
                   {"waiting_bytes", e.memory.waiting_bytes}};
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
  if (ctx.json) std::cout << json{{"metrics", text}}.dump() << '\n';
  else std::fputs(text.c_str(), stdout);
}

void preload(Context& ctx, const DaemonArgs& a) {
  cuzk::rpc::Client client(a.addr);
  eng::ParamsInfo info = unwrap(client.preload(a.circuit_id));
  if (ctx.json)
    std::cout << json{{"circuit_id", a.circuit_id}, {"already_loaded", info.already_loaded}, {"load_ms", info.load_ms}}
                     .dump()
              << '\n';
  else std::printf("%s: %s (%llu ms)\n", a.circuit_id.c_str(), info.already_loaded ? "already loaded" : "loaded",
                   static_cast<unsigned long long>(info.load_ms));
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
  if (ctx.json) std::cout << json{{"circuit_id", a.circuit_id}, {"evicted", true}}.dump() << '\n';
  else std::printf("%s: evicted\n", a.circuit_id.c_str());
}

}  // namespace

void register_daemon(CLI::App& app, Context& ctx) {
  // Owned by the callbacks (and so by `app`), not a static.
  auto args = std::make_shared<DaemonArgs>();
  args->addr = default_addr();
  app.add_option("--addr", args->addr, "daemon address (default: $CUZK_ADDR, else unix:///run/cuzkd/cuzkd.sock)");

  auto add_demo = [&args](CLI::App* c) {
    c->add_option("--circuit", args->circuit, "built-in circuit (demo)");
    c->add_option("--size", args->size, "demo size: log2 of the domain")->required();
    c->add_option("--seed", args->seed, "witness x_0 (default 1; --count K uses seed .. seed+K-1)");
  };
  auto add_key = [&args](CLI::App* c) {
    c->add_option("--job", args->job, "job id");
    c->add_option("--request-id", args->request_id, "client request id");
  };

  auto* pr = app.add_subcommand("prove-remote", "prove on the daemon (submit + await) and verify locally");
  add_demo(pr);
  pr->add_option("--count", args->count, "number of proofs")->check(CLI::Range(1u, 100000u));
  pr->add_option("--request-id", args->request_id, "request id (suffixed -i when --count > 1)");
  pr->add_option("--priority", args->priority, "low | normal | high | critical");
  pr->add_option("--timeout-ms", args->timeout_ms, "per-proof await timeout (0: none)");
  pr->callback([&ctx, args] { guarded(ctx, [&] { prove_remote(ctx, *args); }); });

  // The CLI contract's `cuzkctl prove --circuit demo --size N [--count K]`:
  // the offline `prove` subcommand (registered first) proves through the
  // daemon when --circuit is given.
  CLI::App* offline = nullptr;
  try {
    offline = app.get_subcommand("prove");
  } catch (const CLI::OptionNotFound&) {
  }
  if (offline != nullptr) {
    CLI::Option* circuit = offline->add_option("--circuit", args->circuit, "built-in circuit: prove through the daemon");
    offline->add_option("--size", args->size, "demo size: log2 of the domain (with --circuit)");
    offline->add_option("--count", args->count, "number of proofs (with --circuit)")->check(CLI::Range(1u, 100000u));
    offline->add_option("--seed", args->seed, "witness x_0 (with --circuit)");
    offline->add_option("--priority", args->priority, "low | normal | high | critical (with --circuit)");
    offline->add_option("--request-id", args->request_id, "request id (with --circuit)");
    offline->add_option("--timeout-ms", args->timeout_ms, "per-proof await timeout (with --circuit)");
    CLI::Option* porep_c1 =
        offline->add_option("--porep-c1", args->porep_c1, "C1 output JSON: PoRep C2 through the daemon");
    // The offline prover owns --proof; with --porep-c1 it names the output.
    CLI::Option* proof_out = offline->get_option_no_throw("--proof");
    CLI::App* root = &app;
    offline->parse_complete_callback([&ctx, args, circuit, porep_c1, proof_out, root] {
      // This runs before the root app stores its own options into their
      // variables, so read the global --addr and --json here.
      if (CLI::Option* o = root->get_option_no_throw("--addr"); o != nullptr && o->count() > 0)
        args->addr = o->as<std::string>();
      if (CLI::Option* o = root->get_option_no_throw("--json"); o != nullptr && o->count() > 0) ctx.json = true;
      if (porep_c1->count() > 0) {
        ctx.handled = true;
        if (circuit->count() > 0) {
          print_error(ctx, "usage", "--porep-c1 and --circuit are exclusive");
          ctx.exit_code = kExitMalformed;
          return;
        }
        if (proof_out != nullptr && proof_out->count() > 0) args->proof_out = proof_out->as<std::string>();
        guarded(ctx, [&] { prove_porep_remote(ctx, *args); });
        return;
      }
      if (circuit->count() == 0) return;
      ctx.handled = true;
      if (args->size == 0) {
        print_error(ctx, "invalidInput", "--size is required with --circuit");
        ctx.exit_code = kExitMalformed;
        return;
      }
      guarded(ctx, [&] { prove_remote(ctx, *args); });
    });
  }

  auto* su = app.add_subcommand("submit", "submit a proof job; prints its job id");
  add_demo(su);
  su->add_option("--request-id", args->request_id, "idempotency key: resubmitting returns the same job");
  su->add_option("--priority", args->priority, "low | normal | high | critical");
  su->callback([&ctx, args] { guarded(ctx, [&] { submit(ctx, *args); }); });

  auto* aw = app.add_subcommand("await", "wait for a job's proof");
  add_key(aw);
  aw->add_option("--timeout-ms", args->timeout_ms, "give up after T ms (0: wait)");
  aw->callback([&ctx, args] { guarded(ctx, [&] { await_job(ctx, *args); }); });

  auto* ca = app.add_subcommand("cancel", "cancel a queued or running job");
  add_key(ca);
  ca->callback([&ctx, args] { guarded(ctx, [&] { cancel(ctx, *args); }); });

  app.add_subcommand("status", "queues, jobs, workers, parameters, memory")
      ->callback([&ctx, args] { guarded(ctx, [&] { status(ctx, *args); }); });
  app.add_subcommand("metrics", "Prometheus metrics text")
      ->callback([&ctx, args] { guarded(ctx, [&] { metrics(ctx, *args); }); });

  auto* pl = app.add_subcommand("preload-srs", "load (or generate) a circuit's parameters");
  pl->add_option("circuit_id", args->circuit_id, "e.g. demo-10")->required();
  pl->callback([&ctx, args] { guarded(ctx, [&] { preload(ctx, *args); }); });
  auto* ev = app.add_subcommand("evict-srs", "drop a circuit's parameters from memory");
  ev->add_option("circuit_id", args->circuit_id, "e.g. demo-10")->required();
  ev->callback([&ctx, args] { guarded(ctx, [&] { evict(ctx, *args); }); });
  // The CLI contract's spelling: preload/evict --params FILE (or --srs ID).
  auto* pl2 = app.add_subcommand("preload", "load (or generate) a parameter set: --params FILE or --srs ID");
  pl2->add_option("--params", args->params_file, "parameter file (demo-N.params, PoRep official or -dev name)");
  pl2->add_option("--srs", args->circuit_id, "parameter-set id (demo-14, porep-32GiB)");
  pl2->callback([&ctx, args] { guarded(ctx, [&] { preload(ctx, with_srs_id(*args)); }); });
  auto* ev2 = app.add_subcommand("evict", "drop a parameter set from memory and devices: --params FILE or --srs ID");
  ev2->add_option("--params", args->params_file, "parameter file (demo-N.params, PoRep official or -dev name)");
  ev2->add_option("--srs", args->circuit_id, "parameter-set id (demo-14, porep-32GiB)");
  ev2->callback([&ctx, args] { guarded(ctx, [&] { evict(ctx, with_srs_id(*args)); }); });
}

}  // namespace cuzkctl
