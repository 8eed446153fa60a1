// `cuzkctl update ...`: offline SnapDeals (EmptySectorUpdate) vanilla proofs.
//
//   update gen   --sector-size 2KiB --seed N --out DIR [--sealed]
//       writes DIR/update.json and DIR/partition-K.bin (one bincode
//       PartitionProof each): a genuine update of a natively sealed sector
//       (--sealed, 2 KiB / 8 MiB) or a sparse synthetic one (any size);
//   update check --dir DIR [--circuit [--partition K]]
//       parses every partition, checks it natively (commitments, challenges,
//       paths, encodings, apex leaves) and, with --circuit, that the
//       partition circuit is satisfied;
//   update setup  --sector-size 2KiB --out-dir DIR [--gpu auto|on|off]
//       development parameters under the rfp names + "-dev" (unless present);
//   update prove  --dir DIR --param-dir P [--proof OUT]
//       partitions x 192 B, batch-verified before being written;
//   update verify --dir DIR --proof FILE --vk VK
//       public inputs from update.json's commitments only.
// update.json: {"registered_proof": "StackedDrg2KiBV1", "comm_r_old": hex,
//   "comm_d_new": hex, "comm_r_new": hex, "h": N, "partitions": [file names]}
// (32-byte commitments as 64 hex digits of their LE bytes).
//
// Exit statuses: 0 valid, 1 a check failed, 2 malformed or unreadable input.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "circuits/filecoin/update_check.hpp"
#include "circuits/filecoin/update_gen.hpp"
#include "circuits/filecoin/update_prove.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "cuzkctl/commands.hpp"
#include "cuzkctl/commands/offline_util.hpp"
#include "cuzkctl/setup_backend.hpp"
#include "groth16/prover.hpp"
#include "groth16/verifier.hpp"

namespace cuzkctl {
namespace {

using namespace cuzk;
using namespace cuzk::circuits::filecoin;
using nlohmann::json;

void gen(Context& ctx, const std::string& size, std::uint64_t seed, const std::string& out, bool sealed) {
  std::optional<UpdateProof> proof;
  try {
    proof = update_proof_from_sector_bytes(parse_sector_size(size));
  } catch (const std::exception&) {
  }
  if (!proof) {
    report_error(ctx, cuzk::cli::kind::kInvalidArgument, "no update proof for sector size '" + size + "'",
                 kExitMalformed);
    return;
  }
  if (sealed && update_proof_info(*proof).nodes > (1u << 18)) {
    report_error(ctx, cuzk::cli::kind::kInvalidArgument, "--sealed supports 2KiB and 8MiB only", kExitMalformed);
    return;
  }
  ThreadPool pool(ctx.threads);
  const UpdateInputs in = sealed ? make_sealed_update(*proof, seed, &pool) : make_sparse_update(*proof, seed);
  std::filesystem::create_directories(out);
  json j = {{"registered_proof", std::string(update_proof_info(*proof).name)},
            {"comm_r_old", hex(in.comm_r_old)},
            {"comm_d_new", hex(in.comm_d_new)},
            {"comm_r_new", hex(in.comm_r_new)},
            {"h", in.h},
            {"partitions", json::array()}};
  for (std::size_t k = 0; k < in.partitions.size(); ++k) {
    const std::string name = "partition-" + std::to_string(k) + ".bin";
    write_bytes(std::filesystem::path(out) / name, serialize_partition_proof(in.partitions[k]));
    j["partitions"].push_back(name);
  }
  std::ofstream(std::filesystem::path(out) / "update.json") << j.dump(2) << "\n";
  if (ctx.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("wrote %zu partition proofs to %s (comm_r_new %s)\n", in.partitions.size(), out.c_str(),
                hex(in.comm_r_new).c_str());
  }
}

bool is_structural(UpdateErrorKind k) {
  switch (k) {
    case UpdateErrorKind::Truncated:
    case UpdateErrorKind::TrailingBytes:
    case UpdateErrorKind::LengthMismatch:
    case UpdateErrorKind::ProofShape:
    case UpdateErrorKind::PathArity:
    case UpdateErrorKind::PartitionCount:
    case UpdateErrorKind::UnknownProof:
    case UpdateErrorKind::BadH:
    case UpdateErrorKind::NonCanonicalField:
      return true;
    default:
      return false;
  }
}

// Malformed vanilla proofs exit 2 (invalid_input), wrong ones 1 (invalid_proof).
void report_update_error(Context& ctx, const UpdateError& e) {
  const bool structural = is_structural(e.kind());
  report_error(ctx, structural ? cuzk::cli::kind::kInvalidInput : cuzk::cli::kind::kInvalidProof, e.what(),
               structural ? kExitMalformed : kExitInvalid);
}

UpdateInputs load(const std::filesystem::path& dir) {
  json j;
  try {
    const auto text = read_bytes(dir / "update.json");
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw Malformed(std::string("update.json: ") + e.what());
  }
  try {
    const auto proof = update_proof_from_name(j.at("registered_proof").get<std::string>());
    if (!proof) {
      throw UpdateError(UpdateErrorKind::UnknownProof, std::nullopt, std::nullopt, "registered_proof",
                        "not a registered update proof");
    }
    std::vector<std::vector<std::uint8_t>> parts;
    for (const auto& name : j.at("partitions")) parts.push_back(read_bytes(dir / name.get<std::string>()));
    UpdateInputs in = parse_update_inputs(*proof, parse_hex32(j.at("comm_r_old").get<std::string>(), "comm_r_old"),
                                          parse_hex32(j.at("comm_d_new").get<std::string>(), "comm_d_new"),
                                          parse_hex32(j.at("comm_r_new").get<std::string>(), "comm_r_new"), parts);
    if (j.contains("h")) in.h = j.at("h").get<std::size_t>();
    return in;
  } catch (const json::exception& e) {
    throw Malformed(std::string("update.json: ") + e.what());
  }
}

void check(Context& ctx, const std::string& dir, bool circuit, int only_partition) {
  try {
    const UpdateInputs in = load(dir);
    check_update(in);
    for (std::size_t k = 0; circuit && k < in.partitions.size(); ++k) {
      if (only_partition >= 0 && k != std::size_t(only_partition)) continue;
      StreamCheckCs cs;
      update_circuit_from_proof(in, k).synthesize(cs);
      if (cs.first_unsatisfied()) {
        report_error(ctx, cuzk::cli::kind::kInvalidProof,
                     "partition " + std::to_string(k) + " circuit unsatisfied at row " +
                         std::to_string(*cs.first_unsatisfied()) + " (" + cs.first_unsatisfied_path() + ")",
                     kExitInvalid);
        return;
      }
      const auto pub = update_partition_public_inputs(in, k);
      if (std::vector<Fr>(cs.inputs().begin() + 1, cs.inputs().end()) != pub) {
        report_error(ctx, cuzk::cli::kind::kInvalidProof,
                     "partition " + std::to_string(k) + " circuit inputs differ from the derived ones", kExitInvalid);
        return;
      }
    }
    if (ctx.json) {
      std::cout << json{{"valid", true}, {"partitions", in.partitions.size()}}.dump() << "\n";
    } else {
      std::printf("valid: %zu partition proofs%s\n", in.partitions.size(), circuit ? ", circuits satisfied" : "");
    }
  } catch (const UpdateError& e) {
    report_update_error(ctx, e);
  } catch (const Malformed& e) {
    report_error(ctx, e.kind(), e.what(), e.exit_code());
  }
}

// Setup / prove / verify errors: malformed input, unusable parameters or
// an unsatisfied witness all exit 2 except a proof that does not verify (1).
template <class F>
void guarded(Context& ctx, F&& f) {
  try {
    run_reporting_errors(ctx, "", f);
  } catch (const UpdateError& e) {
    report_update_error(ctx, e);
  }
}

void setup(Context& ctx, const std::string& size, const std::string& out_dir, const std::string& gpu) {
  const auto proof = update_proof_from_sector_bytes(parse_sector_size(size));
  if (!proof) throw Usage("no update proof for sector size '" + size + "'");
  const auto mode = parse_setup_device(gpu);
  if (!mode) throw Usage("--gpu must be auto, on or off");
  std::optional<SetupBackend> backend;
  try {
    backend.emplace(*mode);
  } catch (const SetupBackendError& e) {
    throw Malformed(e.what());
  }
  ThreadPool pool(ctx.threads);
  const groth16::R1cs r1cs = compile_update_shape(*proof);
  const ParamsGenerator generate = [&](const groth16::R1cs& shape, ThreadPool& p) {
    std::fprintf(stderr, "update setup: fixed-base multiplications on %s\n", backend->description().c_str());
    Progress progress("update setup");
    return backend->generate(shape, groth16::random_toxic_waste(), p, [&](auto d, auto t) { progress(d, t); });
  };
  const LoadedParams p = ensure_update_dev_params(*proof, out_dir, r1cs, pool, generate);
  if (ctx.json) {
    std::cout << json{{"params", p.params_path.string()},
                      {"vk", p.vk_path.string()},
                      {"constraints", r1cs.num_constraints()},
                      {"development", is_development(p.origin)}}
                     .dump()
              << "\n";
  } else {
    std::printf("%s parameters %s\nvk %s\nconstraints %zu\n", is_development(p.origin) ? "DEVELOPMENT" : "official",
                p.params_path.c_str(), p.vk_path.c_str(), r1cs.num_constraints());
  }
}

void prove(Context& ctx, const std::string& dir, const std::string& param_dir, const std::string& out) {
  const UpdateInputs in = load(dir);
  ThreadPool pool(ctx.threads);
  const groth16::R1cs r1cs = compile_update_shape(in.proof);
  const LoadedParams p = ensure_update_dev_params(in.proof, param_dir, r1cs, pool);
  groth16::CpuProver prover(pool);
  const std::vector<std::uint8_t> bytes = prove_update(in, p.params, r1cs, prover, pool);
  if (!out.empty()) write_bytes(out, bytes);
  std::printf("proved %zu partitions, verified%s%s\n", bytes.size() / groth16::kProofBytes,
              out.empty() ? "" : ", written to ", out.c_str());
}

void verify(Context& ctx, const std::string& dir, const std::string& proof, const std::string& vk) {
  const UpdateInputs in = load(dir);
  groth16::VerifyingKey key;
  try {
    key = groth16::read_vk(vk);
  } catch (const std::exception& e) {
    throw Malformed(vk + ": " + e.what());
  }
  const auto pvk = groth16::prepare_verifying_key(key);
  std::string detail;
  const bool ok = verify_porep_proof(pvk, read_bytes(proof), update_public_inputs_all(in), &detail) ==
                  groth16::VerifyResult::kValid;
  std::printf("%s%s\n", ok ? "valid" : "INVALID: ", ok ? "" : detail.c_str());
  ctx.exit_code = ok ? kExitOk : kExitInvalid;
}

}  // namespace

void register_update(CLI::App& app, Context& ctx) {
  auto* update = app.add_subcommand("update", "SnapDeals (EmptySectorUpdate) vanilla proofs");
  update->require_subcommand(1);

  auto* g = update->add_subcommand("gen", "write a SnapDeals vanilla proof set");
  static std::string size = "2KiB", out;
  static std::uint64_t seed = 1;
  static bool sealed = false;
  g->add_option("--sector-size", size, "sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)");
  g->add_option("--seed", seed, "deterministic seed");
  g->add_option("--out", out, "output directory")->required();
  g->add_flag("--sealed", sealed, "genuine update of a natively sealed sector (2KiB, 8MiB)");
  g->callback([&ctx] { gen(ctx, size, seed, out, sealed); });

  auto* c = update->add_subcommand("check", "check a SnapDeals vanilla proof set");
  static std::string dir;
  static bool circuit = false;
  c->add_option("--dir", dir, "directory with update.json")->required();
  c->add_flag("--circuit", circuit, "also check that every partition circuit is satisfied");
  static int only_partition = -1;
  c->add_option("--partition", only_partition, "--circuit: check this partition's circuit only");
  c->callback([&ctx] { check(ctx, dir, circuit, only_partition); });

  auto* su = update->add_subcommand("setup", "development parameters for a sector size");
  static std::string setup_size = "2KiB", setup_out, gpu = "auto";
  su->add_option("--sector-size", setup_size, "sector size");
  su->add_option("--out-dir", setup_out, "parameter directory")->required();
  su->add_option("--gpu", gpu, "fixed-base back end: auto, on, off");
  su->callback([&ctx] { guarded(ctx, [&] { setup(ctx, setup_size, setup_out, gpu); }); });

  auto* pr = update->add_subcommand("prove", "prove a SnapDeals vanilla proof set (CPU)");
  static std::string prove_dir, param_dir, proof_out;
  pr->add_option("--dir", prove_dir, "directory with update.json")->required();
  pr->add_option("--param-dir", param_dir, "parameter directory")->required();
  pr->add_option("--proof", proof_out, "output file (partitions x 192 B)");
  pr->callback([&ctx] { guarded(ctx, [&] { prove(ctx, prove_dir, param_dir, proof_out); }); });

  auto* ve = update->add_subcommand("verify", "verify a SnapDeals proof");
  static std::string verify_dir, proof_in, vk;
  ve->add_option("--dir", verify_dir, "directory with update.json")->required();
  ve->add_option("--proof", proof_in, "proof file")->required();
  ve->add_option("--vk", vk, "verifying key")->required();
  ve->callback([&ctx] { guarded(ctx, [&] { verify(ctx, verify_dir, proof_in, vk); }); });
}

}  // namespace cuzkctl
