// `cuzkctl porep ...`: offline PoRep C2 (no daemon needed).
//
//   porep setup  --sector-size 2KiB --out-dir DIR
//       compile the partition R1CS (cached in DIR) and generate DEVELOPMENT
//       parameters under the "-dev" names, unless parameters are present;
//   porep prove  --c1 FILE [--params P [--vk V] | --param-dir DIR] [--proof OUT]
//       C1 JSON in, partitions x 192 B out, batch-verified before writing;
//   porep verify --c1 FILE --proof P --vk V
//       public inputs from the C1's public data, batch verification;
//   porep make-c1 --sector-size 2KiB --out FILE [--sector-id N] [--data-seed N]
//       a genuine C1 output of a natively sealed random sector (for tests);
//   porep verify-golden --vk OFFICIAL.vk --records FILE.json [--sector-size 2KiB]
//       rust-fil-proofs seal regression records (JSON lines) under a vk.
//
// Exit statuses: 0 valid / done, 1 a proof did not verify, 2 malformed or
// unreadable input, including proof bytes that do not decode (one-line reason
// on stderr).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/registry.hpp"
#include "circuits/filecoin/seal_record.hpp"
#include "cuzkctl/commands.hpp"
#include "cuzkctl/commands/offline_util.hpp"
#include "cuzkctl/setup_backend.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verifier.hpp"
#include "util/thread_pool.hpp"

namespace cuzkctl {
namespace {

using namespace cuzk;
using namespace cuzk::circuits::filecoin;
using nlohmann::json;

// The V1_1 proof of a sector size (V1 shares its circuit and parameters).
SealProof proof_for_size(std::uint64_t bytes) {
  for (const SealProofInfo& info : seal_proofs()) {
    if (info.sector_bytes == bytes && info.api_version == ApiVersion::V1_1_0) return info.proof;
  }
  throw Usage("no PoRep for sector size " + std::to_string(bytes) + " B");
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void emit(const Context& ctx, const json& j, const std::string& text) {
  if (ctx.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s", text.c_str());
  }
}

// ---- setup ------------------------------------------------------------------

struct SetupArgs {
  std::string sector_size = "2KiB";
  std::string out_dir;
  std::string gpu = "auto";
};

void setup(Context& ctx, const SetupArgs& a) {
  if (a.out_dir.empty()) throw Usage("--out-dir is required");
  const std::optional<SetupDevice> device_mode = parse_setup_device(a.gpu);
  if (!device_mode) throw Usage("--gpu must be auto, on or off");
  const SealProof proof = proof_for_size(parse_sector_size(a.sector_size));
  ThreadPool pool(ctx.threads);
  std::optional<SetupBackend> backend;
  try {
    backend.emplace(*device_mode);
  } catch (const SetupBackendError& e) {
    throw Malformed(e.what());
  }
  auto t0 = std::chrono::steady_clock::now();
  PorepC2 c2(a.out_dir);
  const auto r1cs = c2.compiled_shape(proof);
  const double compile_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  // Only consulted when the development parameters are not present yet.
  const ParamsGenerator generate = [&](const groth16::R1cs& shape, ThreadPool& p) {
    std::fprintf(stderr, "porep setup: fixed-base multiplications on %s\n", backend->description().c_str());
    Progress progress("porep setup");
    try {
      return backend->generate(shape, groth16::random_toxic_waste(), p, [&](auto d, auto t) { progress(d, t); });
    } catch (const SetupBackendError& e) {
      throw Malformed(e.what());
    }
  };
  const LoadedParams p = ensure_dev_params(proof, a.out_dir, *r1cs, pool, generate);
  const double params_s = since(t0);
  json j{{"params", p.params_path.string()},
         {"vk", p.vk_path.string()},
         {"backend", backend->on_gpu() ? "gpu" : "cpu"},
         {"r1cs", r1cs_cache_path(a.out_dir, proof).string()},
         {"constraints", r1cs->num_constraints()},
         {"development", is_development(p.origin)},
         {"generated", p.origin == ParamsOrigin::kDevelopmentGenerated},
         {"compile_seconds", compile_s},
         {"params_seconds", params_s}};
  char text[1024];
  std::snprintf(text, sizeof text, "%s parameters %s (%s)\nvk %s\nconstraints %zu\n",
                is_development(p.origin) ? "DEVELOPMENT" : "official", p.params_path.c_str(),
                p.origin == ParamsOrigin::kDevelopmentGenerated ? "generated" : "present", p.vk_path.c_str(),
                r1cs->num_constraints());
  emit(ctx, j, text);
}

// ---- prove ------------------------------------------------------------------

struct ProveArgs {
  std::string c1, params, vk, param_dir, proof_out, r1cs_cache;
};

void prove(Context& ctx, const ProveArgs& a) {
  if (a.c1.empty()) throw Usage("--c1 is required");
  if (a.params.empty() == a.param_dir.empty()) throw Usage("give either --params P [--vk V] or --param-dir DIR");
  const C1Output c1 = parse_c1(read_text(a.c1));
  ThreadPool pool(ctx.threads);
  const std::string cache = !a.r1cs_cache.empty() ? a.r1cs_cache : a.param_dir;
  PorepC2 c2(cache);
  auto t0 = std::chrono::steady_clock::now();
  const auto r1cs = c2.compiled_shape(c1.registered_proof);
  const double compile_s = since(t0);

  LoadedParams p;
  if (!a.param_dir.empty()) {
    p = ensure_dev_params(c1.registered_proof, a.param_dir, *r1cs, pool);
  } else {
    p.params = groth16::read_params(a.params, pool);
    p.params_path = a.params;
    // Only a file under the published name counts as official (its digest
    // is checked by `cuzkctl params inspect --parameters-json`, not here).
    p.origin = p.params_path.filename() == official_param_names(c1.registered_proof).params
                   ? ParamsOrigin::kOfficial
                   : ParamsOrigin::kDevelopment;
  }
  if (!a.vk.empty() && !(groth16::read_vk(a.vk) == p.params.vk)) {
    throw Malformed(a.vk + " is not the verifying key of " + p.params_path.string());
  }
  t0 = std::chrono::steady_clock::now();
  groth16::CpuProver prover(pool);
  const std::vector<std::uint8_t> proof = prove_c2(c1, p.params, *r1cs, prover, pool);
  const double prove_s = since(t0);
  if (!a.proof_out.empty()) write_bytes(a.proof_out, proof);
  json j{{"registered_proof", std::string(c1.info().name)},
         {"partitions", proof.size() / groth16::kProofBytes},
         {"proof_hex", hex(proof)},
         {"params", p.params_path.string()},
         {"params_origin", std::string(to_string(p.origin))},
         {"verified", true},
         {"compile_seconds", compile_s},
         {"prove_seconds", prove_s}};
  char text[512];
  std::snprintf(text, sizeof text, "proved %s: %zu partitions, verified, %.1f s%s%s\n",
                std::string(c1.info().name).c_str(), proof.size() / groth16::kProofBytes, prove_s,
                a.proof_out.empty() ? "" : ", written to ", a.proof_out.c_str());
  emit(ctx, j, text);
}

// ---- verify -----------------------------------------------------------------

struct VerifyArgs {
  std::string c1, proof, vk;
};

void verify(Context& ctx, const VerifyArgs& a) {
  if (a.c1.empty() || a.proof.empty() || a.vk.empty()) throw Usage("--c1, --proof and --vk are required");
  const C1Output c1 = parse_c1(read_text(a.c1));
  const auto pvk = groth16::prepare_verifying_key(groth16::read_vk(a.vk));
  const auto inputs = porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  // Bytes that are not proofs of this sector's partition count are malformed
  // input (exit 2, as `cuzkctl verify`), not an invalid proof.
  const std::vector<std::uint8_t> proof_bytes = read_bytes(a.proof);
  std::string why;
  const auto proofs = groth16::decode_proofs(proof_bytes, &why);
  if (!proofs) throw Malformed(a.proof + ": " + why);
  if (proofs->size() != inputs.size()) {
    throw Malformed(a.proof + ": " + std::to_string(proofs->size()) + " proofs, " + std::string(c1.info().name) +
                    " has " + std::to_string(inputs.size()) + " partitions");
  }
  std::string detail;
  const auto r = verify_porep_proof(pvk, proof_bytes, inputs, &detail);
  const bool ok = r == groth16::VerifyResult::kValid;
  emit(ctx, json{{"valid", ok}, {"detail", detail}},
       std::string(ok ? "valid\n" : "INVALID: ") + (ok ? "" : detail + "\n"));
  ctx.exit_code = ok ? kExitOk : kExitInvalid;
}

// ---- verify-golden ----------------------------------------------------------

struct GoldenArgs {
  std::string vk, records, sector_size = "2KiB";
  bool verbose = false;
};

void verify_golden(Context& ctx, const GoldenArgs& a) {
  if (a.vk.empty() || a.records.empty()) throw Usage("--vk and --records are required");
  const std::uint64_t size = parse_sector_size(a.sector_size);
  const auto pvk = groth16::prepare_verifying_key(groth16::read_vk(a.vk));
  std::ifstream in(a.records);
  if (!in) throw unreadable(a.records);
  std::size_t line_no = 0, valid = 0, invalid = 0, skipped = 0, malformed = 0, other_size = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    SealRecord r;
    try {
      r = parse_seal_record(line);
    } catch (const SealRecordError& e) {
      ++malformed;
      std::fprintf(stderr, "line %zu: malformed: %s\n", line_no, e.what());
      continue;
    }
    if (r.sector_size != size) {
      ++other_size;
      continue;
    }
    const RecordCheck c = verify_seal_record(r, pvk);
    switch (c.status) {
      case RecordStatus::kValid:
        ++valid;
        break;
      case RecordStatus::kInvalid:
        ++invalid;
        break;
      case RecordStatus::kSkipped:
        ++skipped;
        break;
    }
    if (a.verbose || c.status == RecordStatus::kInvalid) {
      std::fprintf(stderr, "line %zu (%s): %s %s\n", line_no, r.api_version.c_str(),
                   std::string(to_string(c.status)).c_str(), c.detail.c_str());
    }
  }
  const std::size_t checked = valid + invalid;
  json j{{"sector_size", size}, {"verified", valid},      {"invalid", invalid},
         {"skipped", skipped},  {"malformed", malformed}, {"other_sizes", other_size}};
  char text[512];
  std::snprintf(text, sizeof text, "%zu of %zu records of %llu B verified (%zu invalid, %zu skipped, %zu malformed)\n",
                valid, checked, static_cast<unsigned long long>(size), invalid, skipped, malformed);
  emit(ctx, j, text);
  ctx.exit_code = checked > 0 && invalid == 0 ? kExitOk : kExitInvalid;
  if (malformed > 0) ctx.exit_code = kExitMalformed;
}

// ---- make-c1 ----------------------------------------------------------------

struct MakeC1Args {
  std::string sector_size = "2KiB", out;
  std::uint64_t sector_id = 1, data_seed = 1;
};

void make_c1(Context& ctx, const MakeC1Args& a) {
  const SealProof proof = proof_for_size(parse_sector_size(a.sector_size));
  if (seal_proof_info(proof).nodes > (std::uint64_t{1} << 18)) {
    throw Usage("make-c1 seals natively: sectors up to 8MiB only");
  }
  SyntheticSealInputs in;
  in.sector_id = a.sector_id;
  in.data_seed = a.data_seed;
  // Public randomness derived from the two numbers, so runs are reproducible.
  for (std::size_t i = 0; i < 32; ++i) {
    in.prover_id[i] = std::uint8_t(a.sector_id * 31 + i);
    in.ticket[i] = std::uint8_t(a.data_seed * 17 + 3 * i);
    in.seed[i] = std::uint8_t(a.data_seed * 13 + 7 * i + 1);
  }
  ThreadPool pool(ctx.threads);
  const C1Output c1 = make_synthetic_c1(proof, in, &pool);
  const std::string text = to_json(c1);
  write_bytes(a.out, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  emit(ctx, json{{"c1", a.out}, {"registered_proof", std::string(c1.info().name)}},
       "wrote " + a.out + " (" + std::string(c1.info().name) + ")\n");
}

// The shared errors (offline_util.hpp) plus C1 parsing and R1CS errors.
template <class Fn>
void guarded(Context& ctx, Fn fn) {
  try {
    run_reporting_errors(ctx, "porep c2", fn);
  } catch (const C1Error& e) {
    report_error(ctx, cuzk::cli::kind::kInvalidInput, "c1: " + std::string(e.what()) + " at '" + e.json_path() + "'",
                 kExitMalformed);
  } catch (const groth16::R1csError& e) {
    report_error(ctx, cuzk::cli::kind::kInvalidInput, std::string("r1cs: ") + e.what(), kExitMalformed);
  }
}

}  // namespace

void register_porep(CLI::App& app, Context& ctx) {
  auto* porep = app.add_subcommand("porep", "PoRep C2 offline: setup, prove, verify, verify-golden");
  porep->require_subcommand(1);

  auto setup_args = std::make_shared<SetupArgs>();
  auto* su = porep->add_subcommand("setup", "compile the partition R1CS and generate DEVELOPMENT parameters");
  su->add_option("--sector-size", setup_args->sector_size, "2KiB, 8MiB, 512MiB, 32GiB or 64GiB (default 2KiB)");
  su->add_option("--out-dir", setup_args->out_dir, "directory for the .r1cs cache and the -dev .params/.vk")
      ->required();
  su->add_option("--gpu", setup_args->gpu,
                 "auto|on|off: fixed-base multiplications on CUDA device 0 (auto: when present)");
  su->callback([&ctx, setup_args] { guarded(ctx, [&] { setup(ctx, *setup_args); }); });

  auto prove_args = std::make_shared<ProveArgs>();
  auto* pr = porep->add_subcommand("prove", "prove a C1 output (JSON); the proof is verified before it is written");
  pr->add_option("--c1", prove_args->c1, "C1 output JSON (SealCommitPhase1Output)")->required();
  pr->add_option("--params", prove_args->params, "Groth16 .params file");
  pr->add_option("--vk", prove_args->vk, "its .vk (checked against the .params)");
  pr->add_option("--param-dir", prove_args->param_dir,
                 "directory with official or -dev parameters (DEVELOPMENT ones are generated when absent)");
  pr->add_option("--r1cs-cache", prove_args->r1cs_cache, "directory for the compiled R1CS (default: --param-dir)");
  pr->add_option("--proof", prove_args->proof_out, "write the proof bytes (partitions x 192) here");
  pr->callback([&ctx, prove_args] { guarded(ctx, [&] { prove(ctx, *prove_args); }); });

  auto verify_args = std::make_shared<VerifyArgs>();
  auto* ve = porep->add_subcommand("verify", "verify a PoRep proof against a C1 output's public data");
  ve->add_option("--c1", verify_args->c1, "C1 output JSON")->required();
  ve->add_option("--proof", verify_args->proof, "proof bytes (partitions x 192)")->required();
  ve->add_option("--vk", verify_args->vk, ".vk file")->required();
  ve->callback([&ctx, verify_args] { guarded(ctx, [&] { verify(ctx, *verify_args); }); });

  auto c1_args = std::make_shared<MakeC1Args>();
  auto* mk = porep->add_subcommand("make-c1", "write a genuine C1 output of a natively sealed random sector (tests)");
  mk->add_option("--sector-size", c1_args->sector_size, "2KiB (default) or 8MiB");
  mk->add_option("--out", c1_args->out, "output C1 JSON")->required();
  mk->add_option("--sector-id", c1_args->sector_id, "sector number (default 1)");
  mk->add_option("--data-seed", c1_args->data_seed, "seed of the random sector data (default 1)");
  mk->callback([&ctx, c1_args] { guarded(ctx, [&] { make_c1(ctx, *c1_args); }); });

  auto golden_args = std::make_shared<GoldenArgs>();
  auto* go = porep->add_subcommand("verify-golden", "verify rust-fil-proofs seal regression records under a .vk");
  go->add_option("--vk", golden_args->vk, "verifying key (the official .vk of the sector size)")->required();
  go->add_option("--records", golden_args->records, "seal_regression_records JSON lines")->required();
  go->add_option("--sector-size", golden_args->sector_size, "records of this size only (default 2KiB)");
  go->add_flag("--verbose", golden_args->verbose, "one line per record");
  go->callback([&ctx, golden_args] { guarded(ctx, [&] { verify_golden(ctx, *golden_args); }); });
}

}  // namespace cuzkctl
