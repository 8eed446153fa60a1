// `cuzkctl post ...`: WindowPoSt / WinningPoSt offline, no parameters needed.
//
//   post gen --kind window|winning --sector-size S --sectors N --seed X --out DIR
//            [--sparse] [--partition K] [--actor-id A] [--first-sector-id I] [--randomness HEX]
//            [--registered-proof NAME]
//       vanilla proofs (bincode FallbackPoStSectorProof, one file per sector:
//       DIR/vanilla-<sector id>.bin) plus DIR/post.json (randomness, actor
//       id, registered proof, partition, files). 2 KiB sectors are sealed
//       natively (genuine trees) unless --sparse; larger sizes are sparse
//       synthetic sectors (post_gen.hpp);
//   post check --kind window|winning --sector-size S --randomness HEX --prover-id ACTOR_ID
//            [--partition K] [--registered-proof NAME] [--circuit] FILE...
//       parses the vanilla proofs, derives the challenges and checks every
//       proof natively (comm_r, roots, challenged leaves, paths); with
//       --circuit also synthesizes each distinct slot of the partition
//       circuit, checks R1CS satisfaction and compares the circuit's public
//       inputs with those derived from the public data.
// The registered proof defaults to the current network's: Winning*V1,
// Window*V1_2 (challenge index n); --registered-proof picks e.g.
// StackedDrgWindow2KiBV1 (ApiVersion 1.0.0 challenge indexes).
//
//   post setup --kind K --sector-size S --out-dir DIR
//       compile the partition R1CS, generate DEVELOPMENT parameters under
//       rust-fil-proofs' file names + "-dev" unless parameters are present;
//   post prove  <partition options> --param-dir DIR [--proof OUT] FILE...
//       check, prove on the CPU, verify, write 192 bytes;
//   post verify <partition options> --vk V --proof P FILE...
//       public inputs from the files' sector ids and comm_r.
//
// Exit statuses: 0 valid, 1 not valid (the first failure on stderr: the
// failing check or the first unsatisfied constraint's name), 2 malformed or
// unreadable input.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_gen.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/post_proof.hpp"
#include "circuits/filecoin/post_prove.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/verifier.hpp"
#include "cuzkctl/commands.hpp"
#include "cuzkctl/commands/offline_util.hpp"
#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzkctl {
namespace {

using namespace cuzk;
using namespace cuzk::circuits::filecoin;
using nlohmann::json;

// --kind / --sector-size / --registered-proof -> the registered proof.
PostProof resolve_proof(const std::string& kind, const std::string& size, const std::string& name) {
  PostKind k;
  if (kind == "window") {
    k = PostKind::kWindow;
  } else if (kind == "winning") {
    k = PostKind::kWinning;
  } else {
    throw Usage("--kind must be window or winning");
  }
  const std::uint64_t bytes = parse_sector_size(size);
  if (!name.empty()) {
    const auto p = post_proof_from_name(name);
    if (!p) throw Usage("unknown registered proof '" + name + "'");
    const PostProofInfo& info = post_proof_info(*p);
    if (info.kind != k || info.sector_bytes != bytes) {
      throw Usage(name + " does not match --kind " + kind + " --sector-size " + size);
    }
    return *p;
  }
  const auto p = post_proof_for(k, bytes);
  if (!p) throw Usage("no PoSt for sector size " + std::to_string(bytes) + " B");
  return *p;
}

// The shared errors (offline_util.hpp) plus vanilla proof errors.
void guarded(Context& ctx, const std::function<void()>& fn) {
  try {
    run_reporting_errors(ctx, "post", fn);
  } catch (const PostError& e) {
    const bool invalid = is_invalid_proof(e.kind());
    report_error(ctx, invalid ? cuzk::cli::kind::kInvalidProof : cuzk::cli::kind::kInvalidInput,
                 std::string("post: ") + e.what(), invalid ? kExitInvalid : kExitMalformed);
  }
}

// ---- gen --------------------------------------------------------------------

struct GenArgs {
  std::string kind = "window", sector_size = "2KiB", out, randomness, registered_proof;
  std::size_t sectors = 1;
  std::uint64_t seed = 1, actor_id = 1000, first_sector_id = 1;
  std::uint32_t partition = 0;
  bool sparse = false;
};

void gen(Context& ctx, const GenArgs& a) {
  PostGenOptions o;
  o.proof = resolve_proof(a.kind, a.sector_size, a.registered_proof);
  const PostProofInfo& info = post_proof_info(o.proof);
  o.mode = (a.sparse || info.sector_bytes != 2048) ? PostGenMode::kSparse : PostGenMode::kSealed;
  o.seed = a.seed;
  o.sectors = a.sectors;
  o.first_sector_id = a.first_sector_id;
  o.partition = a.partition;
  o.actor_id = a.actor_id;
  if (!a.randomness.empty()) o.randomness = parse_hex32(a.randomness, "--randomness");
  if (a.sectors == 0) throw Usage("--sectors must be at least 1");
  if (info.kind == PostKind::kWinning && (a.sectors != 1 || a.partition != 0)) {
    throw Usage("WinningPoSt: one sector, partition 0");
  }
  if (info.kind == PostKind::kWindow && a.sectors > info.config_sector_count) {
    throw Usage("one " + std::string(info.name) + " partition holds at most " +
                std::to_string(info.config_sector_count) + " sectors");
  }
  ThreadPool pool(ctx.threads);
  const PostGenOutput g = generate_post_vanilla(o, &pool);
  std::filesystem::create_directories(a.out);
  json files = json::array(), ids = json::array();
  for (const auto& s : g.sectors) {
    const std::string name = "vanilla-" + std::to_string(s.sector_id) + ".bin";
    write_bytes(std::filesystem::path(a.out) / name, to_bincode(s));
    files.push_back(name);
    ids.push_back(s.sector_id);
  }
  const json manifest = {{"kind", a.kind},
                         {"registered_proof", std::string(info.name)},
                         {"sector_size", info.sector_bytes},
                         {"randomness", hex(g.randomness)},
                         {"actor_id", a.actor_id},
                         {"prover_id", hex(g.prover_id)},
                         {"partition", a.partition},
                         {"mode", o.mode == PostGenMode::kSealed ? "sealed" : "sparse"},
                         {"sector_ids", ids},
                         {"files", files}};
  std::ofstream(std::filesystem::path(a.out) / "post.json") << manifest.dump(2) << "\n";
  if (ctx.json) {
    std::printf("%s\n", manifest.dump().c_str());
  } else {
    std::printf("%zu %s vanilla proofs (%s) in %s\nrandomness %s\nactor id   %llu\n", g.sectors.size(),
                std::string(info.name).c_str(), o.mode == PostGenMode::kSealed ? "sealed" : "sparse", a.out.c_str(),
                hex(g.randomness).c_str(), static_cast<unsigned long long>(a.actor_id));
  }
}

// ---- check ------------------------------------------------------------------

struct CheckArgs {
  std::string kind = "window", sector_size = "2KiB", randomness, registered_proof;
  std::uint64_t prover_id = 0;
  std::uint32_t partition = 0;
  bool circuit = false;
  std::vector<std::string> files;
};

// Synthesizes each distinct slot (the padding repeats the last one) into its
// own TestCs, in parallel on `pool`; returns the first failing slot's
// unsatisfied constraint path or input mismatch, empty when all hold.
std::string check_circuit(const PostPartition& p, ThreadPool& pool) {
  const FallbackPostCircuit c = post_partition_circuit(p);
  const std::vector<ff::Fr> want = post_public_inputs(p);
  const PostProofInfo& info = p.info();
  const std::size_t distinct = info.kind == PostKind::kWinning ? info.circuit_sector_count : p.sectors.size();
  const std::size_t per_slot = 1 + info.circuit_challenge_count;
  std::vector<std::string> failures(distinct);
  pool.run_tasks(distinct, [&](std::size_t i) {
    groth16::TestCs cs;
    c.with_sectors(i, 1).synthesize(cs);
    if (auto bad = cs.which_is_unsatisfied()) {
      failures[i] = "slot " + std::to_string(i) + ": unsatisfied constraint " + *bad;
      return;
    }
    const auto inputs = cs.inputs();
    for (std::size_t j = 0; j < per_slot; ++j) {
      if (inputs[1 + j] != want[i * per_slot + j]) {
        failures[i] = "slot " + std::to_string(i) + ": public input " + std::to_string(j) +
                      " differs from the one derived from the public data";
        return;
      }
    }
  });
  for (const auto& f : failures) {
    if (!f.empty()) return f;
  }
  return {};
}

// The partition the vanilla proof files and the public data describe.
PostPartition load_partition(const CheckArgs& a) {
  const PostProof proof = resolve_proof(a.kind, a.sector_size, a.registered_proof);
  if (a.files.empty()) throw Usage("no vanilla proof files");
  const Digest32 randomness = parse_hex32(a.randomness, "--randomness");
  std::vector<FallbackPostSectorProof> sectors;
  for (const std::string& f : a.files) {
    try {
      sectors.push_back(parse_sector_proof(read_bytes(f), proof));
    } catch (const PostError& e) {
      if (is_invalid_proof(e.kind())) throw;
      throw Malformed(f + ": " + e.what());
    }
  }
  return make_post_partition(proof, randomness, prover_id_from_actor(a.prover_id), a.partition, std::move(sectors));
}

void check(Context& ctx, const CheckArgs& a) {
  const PostPartition p = load_partition(a);
  ThreadPool pool(ctx.threads);
  std::string failure;
  try {
    check_post_partition(p, &pool);
  } catch (const PostError& e) {
    if (!is_invalid_proof(e.kind())) throw;
    failure = std::string("vanilla: ") + e.what();
  }
  std::string circuit_failure;
  if (a.circuit) circuit_failure = check_circuit(p, pool);
  const bool ok = failure.empty() && circuit_failure.empty();
  if (!ok) {
    std::string why = failure;
    if (!circuit_failure.empty()) why += (why.empty() ? "circuit: " : "; circuit: ") + circuit_failure;
    cuzk::cli::print_error(cuzk::cli::kind::kInvalidProof, why);
  }
  const json j = {{"registered_proof", std::string(p.info().name)},
                  {"sectors", p.sectors.size()},
                  {"partition", p.partition_index},
                  {"vanilla_valid", failure.empty()},
                  {"circuit_checked", a.circuit},
                  {"circuit_satisfied", a.circuit ? json(circuit_failure.empty()) : json(nullptr)},
                  {"valid", ok}};
  if (ctx.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %zu sector(s), partition %u: %s\n", std::string(p.info().name).c_str(), p.sectors.size(),
                p.partition_index, ok ? "valid" : "INVALID");
  }
  ctx.exit_code = ok ? kExitOk : kExitInvalid;
}

// ---- setup / prove / verify (development parameters) -------------------------

struct SetupArgs {
  std::string kind = "window", sector_size = "2KiB", out_dir, registered_proof;
};

void setup(Context& ctx, const SetupArgs& a) {
  const PostProof proof = resolve_proof(a.kind, a.sector_size, a.registered_proof);
  ThreadPool pool(ctx.threads);
  const groth16::R1cs r1cs = compile_post_shape(proof);
  const LoadedParams p = ensure_post_dev_params(proof, a.out_dir, r1cs, pool);
  const json j = {{"params", p.params_path.string()},
                  {"vk", p.vk_path.string()},
                  {"r1cs_rows", r1cs.num_constraints()},  // incl. the input constraints
                  {"development", is_development(p.origin)},
                  {"generated", p.origin == ParamsOrigin::kDevelopmentGenerated}};
  if (ctx.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s parameters %s\nvk %s\n", is_development(p.origin) ? "DEVELOPMENT" : "official",
                p.params_path.c_str(), p.vk_path.c_str());
  }
}

struct ProveArgs : CheckArgs {
  std::string param_dir, proof_out;
};

void prove(Context& ctx, const ProveArgs& a) {
  const PostPartition p = load_partition(a);
  ThreadPool pool(ctx.threads);
  check_post_partition(p, &pool);  // an invalid vanilla proof is exit 1 before any setup
  const groth16::R1cs r1cs = compile_post_shape(p.proof);
  const LoadedParams params = ensure_post_dev_params(p.proof, a.param_dir, r1cs, pool);
  groth16::CpuProver prover(pool);
  const std::vector<std::uint8_t> proof = prove_post_partition(p, params.params, r1cs, prover, pool);
  if (!a.proof_out.empty()) write_bytes(a.proof_out, proof);
  const json j = {{"registered_proof", std::string(p.info().name)},
                  {"proof_hex", hex(proof)},
                  {"params", params.params_path.string()},
                  {"params_origin", std::string(to_string(params.origin))},
                  {"verified", true}};
  if (ctx.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("proved %s partition %u: verified%s%s\n", std::string(p.info().name).c_str(), p.partition_index,
                a.proof_out.empty() ? "" : ", written to ", a.proof_out.c_str());
  }
}

struct VerifyArgs : CheckArgs {
  std::string vk, proof;
};

// Public inputs from the sector ids and comm_r of the given vanilla proof
// files, the randomness and the partition index (nothing else is read).
void verify(Context& ctx, const VerifyArgs& a) {
  const PostPartition p = load_partition(a);
  const auto pvk = groth16::prepare_verifying_key(groth16::read_vk(a.vk));
  std::string detail;
  const auto r = verify_post_proof(pvk, read_bytes(a.proof), post_public_inputs(p), &detail);
  const bool ok = r == groth16::VerifyResult::kValid;
  if (ctx.json) {
    std::printf("%s\n", json{{"valid", ok}, {"detail", detail}}.dump().c_str());
  } else {
    std::printf("%s%s\n", ok ? "valid" : "INVALID: ", ok ? "" : detail.c_str());
  }
  if (r == groth16::VerifyResult::kWrongInputCount) {
    ctx.exit_code = kExitMalformed;  // a vk of another shape
  } else {
    ctx.exit_code = ok ? kExitOk : kExitInvalid;
  }
}

void add_partition_options(CLI::App* c, CheckArgs& a) {
  c->add_option("--kind", a.kind, "window or winning")->required();
  c->add_option("--sector-size", a.sector_size, "2KiB, 8MiB, 512MiB, 32GiB or 64GiB")->required();
  c->add_option("--randomness", a.randomness, "32 bytes hex; masked rand[31] &= 0x3f")->required();
  c->add_option("--prover-id", a.prover_id, "miner actor id")->required();
  c->add_option("--partition", a.partition, "WindowPoSt partition index");
  c->add_option("--registered-proof", a.registered_proof,
                "e.g. StackedDrgWindow2KiBV1 (default: Winning*V1 / Window*V1_2)");
  c->add_option("files", a.files, "vanilla proof files (bincode FallbackPoStSectorProof)")->required();
}

}  // namespace

void register_post(CLI::App& app, Context& ctx) {
  auto* post = app.add_subcommand("post", "WindowPoSt / WinningPoSt offline: gen, check");
  post->require_subcommand(1);

  auto g = std::make_shared<GenArgs>();
  auto* ge = post->add_subcommand("gen", "write vanilla proofs (bincode) of generated sectors");
  ge->add_option("--kind", g->kind, "window or winning")->required();
  ge->add_option("--sector-size", g->sector_size, "2KiB, 8MiB, 512MiB, 32GiB or 64GiB")->required();
  ge->add_option("--sectors", g->sectors, "number of sectors (Winning: 1)");
  ge->add_option("--seed", g->seed, "seed of the sector data and of the default randomness");
  ge->add_option("--out", g->out, "output directory")->required();
  ge->add_option("--partition", g->partition, "WindowPoSt partition index (challenge derivation)");
  ge->add_option("--actor-id", g->actor_id, "miner actor id (prover id), default 1000");
  ge->add_option("--first-sector-id", g->first_sector_id, "first sector number (default 1)");
  ge->add_option("--randomness", g->randomness, "32 bytes hex (default: from --seed); masked rand[31] &= 0x3f");
  ge->add_option("--registered-proof", g->registered_proof,
                 "e.g. StackedDrgWindow2KiBV1 (default: Winning*V1 / Window*V1_2)");
  ge->add_flag("--sparse", g->sparse, "2 KiB: sparse synthetic sectors instead of sealed ones");
  ge->callback([&ctx, g] { guarded(ctx, [&] { gen(ctx, *g); }); });

  auto c = std::make_shared<CheckArgs>();
  auto* ch = post->add_subcommand("check", "check vanilla proofs natively (and the partition circuit)");
  add_partition_options(ch, *c);
  ch->add_flag("--circuit", c->circuit, "also synthesize the circuit and check R1CS satisfaction");
  ch->callback([&ctx, c] { guarded(ctx, [&] { check(ctx, *c); }); });

  auto su = std::make_shared<SetupArgs>();
  auto* se = post->add_subcommand("setup", "compile the partition R1CS and generate DEVELOPMENT parameters");
  se->add_option("--kind", su->kind, "window or winning")->required();
  se->add_option("--sector-size", su->sector_size, "2KiB, 8MiB, 512MiB, 32GiB or 64GiB")->required();
  se->add_option("--out-dir", su->out_dir, "directory for the -dev .params/.vk")->required();
  se->add_option("--registered-proof", su->registered_proof, "e.g. StackedDrgWindow2KiBV1");
  se->callback([&ctx, su] { guarded(ctx, [&] { setup(ctx, *su); }); });

  auto pa = std::make_shared<ProveArgs>();
  auto* pr = post->add_subcommand("prove", "prove a partition from vanilla proofs; verified before it is written");
  add_partition_options(pr, *pa);
  pr->add_option("--param-dir", pa->param_dir,
                 "directory with official or -dev parameters (DEVELOPMENT ones are generated when absent)")
      ->required();
  pr->add_option("--proof", pa->proof_out, "write the 192-byte proof here");
  pr->callback([&ctx, pa] { guarded(ctx, [&] { prove(ctx, *pa); }); });

  auto va = std::make_shared<VerifyArgs>();
  auto* ve = post->add_subcommand("verify", "verify a partition proof (public inputs from the files' ids and comm_r)");
  add_partition_options(ve, *va);
  ve->add_option("--vk", va->vk, ".vk file")->required();
  ve->add_option("--proof", va->proof, "the 192-byte proof")->required();
  ve->callback([&ctx, va] { guarded(ctx, [&] { verify(ctx, *va); }); });
}

}  // namespace cuzkctl
