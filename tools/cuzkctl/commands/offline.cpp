// Offline subcommands (no daemon needed): params inspect, setup, prove,
// verify, export-vk.
//
// Exit statuses: 0 success / valid, 1 invalid proof (including a proof that
// `prove` made and that does not verify under its key: nothing is written),
// 2 malformed or unreadable input (with a one-line reason on stderr).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "circuits/demo.hpp"
#include "cuzkctl/commands.hpp"
#include "cuzkctl/commands/offline_util.hpp"
#include "cuzkctl/setup_backend.hpp"
#include "groth16/circom.hpp"
#include "groth16/digest.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/snarkjs_json.hpp"
#include "groth16/verifier.hpp"
#include "groth16/zkey.hpp"
#include "util/json_input.hpp"
#include "util/thread_pool.hpp"

namespace cuzkctl {
namespace {

using namespace cuzk;
using namespace cuzk::groth16;
using nlohmann::json;

// A proof we produced failed its own verification: exit status 1.
struct ProofCheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The size of a regular file; a missing path, a directory or a device is a
// malformed-input error (exit 2), never an uncaught filesystem_error.
std::uint64_t regular_file_bytes(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) throw unreadable(path);
  if (!std::filesystem::is_regular_file(st)) throw Malformed(path + " is not a regular file", cuzk::cli::kind::kIo);
  const std::uint64_t bytes = std::filesystem::file_size(path, ec);
  if (ec) throw Malformed("cannot stat " + path + ": " + ec.message(), cuzk::cli::kind::kIo);
  return bytes;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  regular_file_bytes(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw unreadable(path);
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

json read_json(const std::string& path) {
  auto bytes = read_file(path);
  try {
    return parse_json_input({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  } catch (const JsonInputError& e) {
    throw Malformed(path + ": " + e.what());
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text)) throw unwritable(path);
}

enum class FileKind { kZkey, kVk, kParams, kUnknown };

FileKind sniff(const std::string& path) {
  regular_file_bytes(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw unreadable(path);
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() == 4 && std::string_view(magic, 4) == "zkey") return FileKind::kZkey;
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size < kVkFixedBytes) return FileKind::kUnknown;
  in.seekg(864);
  unsigned char n[4] = {};
  in.read(reinterpret_cast<char*>(n), 4);
  std::uint64_t n_ic = std::uint64_t(n[0]) << 24 | std::uint64_t(n[1]) << 16 | std::uint64_t(n[2]) << 8 | n[3];
  if (size == vk_file_bytes(n_ic)) return FileKind::kVk;
  return FileKind::kParams;
}

// BLAKE2b-512 of the vk's bellperson encoding, first 32 hex chars (the
// convention of parameters.json digests).
std::string vk_digest(const VerifyingKey& vk) { return blake2b_hex(encode_vk(vk)).substr(0, 32); }

struct CircuitSource {
  std::string r1cs_path;
  std::string circuit;  // built-in name
  unsigned size = 0;    // log2 of the domain for built-in circuits
};

R1cs load_circuit(const CircuitSource& src) {
  if (!src.r1cs_path.empty()) return load_circom_r1cs(src.r1cs_path).r1cs;
  if (src.circuit == "demo") {
    if (src.size < 2 || src.size > 27) throw Usage("--size must be a log2 domain size in 2..27");
    circuits::DemoCircuit c(circuits::DemoCircuit::rounds_for_log_domain(src.size), std::nullopt);
    RecordingCs cs(RecordingCs::Values::kShapeOnly);
    c.synthesize(cs);
    return cs.finish();
  }
  throw Usage("give --r1cs FILE or --circuit demo --size N");
}

// ---- params inspect ---------------------------------------------------------

// A JSON value as text for people: strings unquoted, booleans yes/no,
// objects as "key value, key value".
std::string human(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_object()) {
    std::string s;
    for (auto& [k, x] : v.items()) s += (s.empty() ? "" : ", ") + k + " " + human(x);
    return s;
  }
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + human(x);
    return s;
  }
  return v.dump();
}

void params_inspect(Context& ctx, const std::string& path, bool subgroups, const std::string& params_json) {
  ThreadPool pool(ctx.threads);
  json out;
  out["file"] = path;
  out["bytes"] = regular_file_bytes(path);
  FileKind kind = sniff(path);
  try {
    if (kind == FileKind::kZkey) {
      Zkey z = read_zkey(path, pool);
      out["kind"] = "snarkjs-zkey";
      out["n_vars"] = z.n_vars;
      out["n_public"] = z.n_public;
      out["domain_size"] = z.domain_size;
      out["lengths"] = {
          {"ic", z.ic.size()}, {"a", z.a.size()}, {"b_g1", z.b_g1.size()},         {"b_g2", z.b_g2.size()},
          {"c", z.c.size()},   {"h", z.h.size()}, {"coefficients", z.coefs.size()}};
      out["vk_digest"] = vk_digest(z.verifying_key());
    } else if (kind == FileKind::kVk) {
      VerifyingKey vk = read_vk(path);
      out["kind"] = "bellperson-vk";
      out["lengths"] = {{"ic", vk.ic.size()}};
      out["num_public_inputs"] = vk.ic.size() - 1;
      out["vk_digest"] = vk_digest(vk);
    } else if (kind == FileKind::kParams) {
      Parameters p = read_params(path, pool, subgroups ? SubgroupCheck::kAll : SubgroupCheck::kVkOnly);
      out["kind"] = "bellperson-params";
      out["lengths"] = {{"ic", p.vk.ic.size()}, {"h", p.h.size()},       {"l", p.l.size()},
                        {"a", p.a.size()},      {"b_g1", p.b_g1.size()}, {"b_g2", p.b_g2.size()}};
      out["domain_size"] = p.h.size() + 1;
      out["num_public_inputs"] = p.vk.ic.size() - 1;
      out["num_aux"] = p.l.size();
      out["vk_digest"] = vk_digest(p.vk);
    } else {
      throw Malformed(path + ": neither a zkey nor a bellperson params/vk file");
    }
    out["validation"] = {{"ok", true},
                         {"subgroup_checks", kind == FileKind::kParams && !subgroups ? "vk only" : "all points"}};
  } catch (const ParamsError& e) {
    out["validation"] = {{"ok", false}, {"error", e.what()}};
    ctx.exit_code = kExitMalformed;
  } catch (const ZkeyError& e) {
    out["validation"] = {{"ok", false}, {"error", e.what()}};
    ctx.exit_code = kExitMalformed;
  }
  if (!params_json.empty()) {
    std::string name = std::filesystem::path(path).filename().string();
    auto bytes = read_file(params_json);
    auto pub = find_published(std::string(bytes.begin(), bytes.end()), name);
    if (!pub) {
      out["published"] = {{"known", false}};
    } else {
      Progress prog("blake2b " + name);
      std::string d = blake2b_file_hex(path, [&](auto a, auto b) { prog(a, b); }).substr(0, 32);
      out["published"] = {{"known", true},
                          {"cid", pub->cid},
                          {"expected_digest", pub->digest},
                          {"digest", d},
                          {"digest_ok", d == pub->digest}};
      if (d != pub->digest) ctx.exit_code = kExitInvalid;
    }
  }
  if (ctx.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    for (auto& [k, v] : out.items()) std::cout << k << ": " << human(v) << "\n";
  }
}

// ---- setup --------------------------------------------------------------------

void setup(Context& ctx, const CircuitSource& src, const std::string& params_out, const std::string& vk_out,
           const std::string& zkey_out, const std::string& gpu_mode) {
  const std::optional<SetupDevice> device_mode = parse_setup_device(gpu_mode);
  if (!device_mode) throw Usage("--gpu must be auto, on or off");
  ThreadPool pool(ctx.threads);
  R1cs r1cs = load_circuit(src);
  if (params_out.empty() && zkey_out.empty()) throw Usage("give --params (bellperson) and/or --zkey (snarkjs)");
  std::fprintf(stderr,
               "cuzkctl setup: generating DEVELOPMENT parameters from fresh random toxic waste.\n"
               "  They are for development and testing only: whoever holds the toxic waste can forge proofs.\n"
               "  circuit: %zu constraints (with %zu input constraints), %zu inputs, %zu aux, domain 2^%u\n",
               r1cs.num_constraints(), r1cs.num_inputs(), r1cs.num_inputs(), r1cs.num_aux(),
               unsigned(__builtin_ctzll(domain_size(r1cs))));
  Progress prog("setup");
  auto t0 = std::chrono::steady_clock::now();
  json out{{"public_inputs", r1cs.num_inputs() - 1}, {"domain_size", domain_size(r1cs)}};
  if (!zkey_out.empty()) {
    if (src.r1cs_path.empty()) throw Usage("--zkey needs a circom --r1cs circuit");
    write_zkey(r1cs, random_toxic_waste(), zkey_out, pool);
    out["zkey"] = zkey_out;
  }
  if (!params_out.empty()) {
    std::optional<SetupBackend> backend;
    try {
      backend.emplace(*device_mode);
    } catch (const SetupBackendError& e) {
      throw Malformed(e.what());
    }
    std::fprintf(stderr, "  fixed-base multiplications on %s\n", backend->description().c_str());
    out["backend"] = backend->on_gpu() ? "gpu" : "cpu";
    Parameters p;
    try {
      p = backend->generate(r1cs, random_toxic_waste(), pool, [&](auto a, auto b) { prog(a, b); });
    } catch (const SetupBackendError& e) {
      throw Malformed(e.what());
    }
    write_params(p, params_out);
    if (!vk_out.empty()) write_vk(p.vk, vk_out);
    out["params"] = params_out;
    out["vk"] = vk_out;
    out["lengths"] = {{"h", p.h.size()}, {"l", p.l.size()}, {"a", p.a.size()}, {"b", p.b_g1.size()}};
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out["seconds"] = s;
  if (ctx.json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::printf("setup done in %.2f s (domain %llu, %llu public inputs)\n", s,
              static_cast<unsigned long long>(domain_size(r1cs)),
              static_cast<unsigned long long>(r1cs.num_inputs() - 1));
  if (!zkey_out.empty()) std::printf("  zkey: %s\n", zkey_out.c_str());
  if (!params_out.empty()) {
    std::printf("  params: %s (fixed-base multiplications on the %s)\n", params_out.c_str(),
                out["backend"].get<std::string>().c_str());
  }
  if (!vk_out.empty()) std::printf("  vk: %s\n", vk_out.c_str());
}

// ---- prove ----------------------------------------------------------------------

struct ProveArgs {
  std::string params, zkey, r1cs, wtns, proof_out, snarkjs_proof, snarkjs_public;
};

void prove(Context& ctx, const ProveArgs& a) {
  ThreadPool pool(ctx.threads);
  if (a.wtns.empty()) {
    throw Usage(
        "offline proving needs a circom witness: --wtns W.wtns with --zkey Z or --params P --r1cs C. "
        "Through the daemon: --circuit demo --size N (or --porep-c1, --window-post, ...). "
        "An offline demo proof: `cuzkctl demo prove --size N --params P --proof OUT`");
  }
  std::vector<Fr> wires = load_circom_wtns(a.wtns);
  auto t0 = std::chrono::steady_clock::now();
  Proof proof;
  std::vector<Fr> pub;
  VerifyingKey vk;  // the proof is checked under it before anything is written
  if (!a.zkey.empty()) {
    std::fprintf(stderr, "cuzkctl prove: reading %s\n", a.zkey.c_str());
    Zkey z = read_zkey(a.zkey, pool);
    std::fprintf(stderr, "cuzkctl prove: proving (domain %u) on %zu threads\n", z.domain_size, pool.size());
    proof = prove_zkey(z, wires, random_blinding(), pool);
    if (wires.size() < z.n_public + 1) throw Malformed("witness shorter than the public inputs");
    pub.assign(wires.begin() + 1, wires.begin() + 1 + z.n_public);
    vk = z.verifying_key();
  } else {
    if (a.params.empty() || a.r1cs.empty()) throw Usage("give --zkey, or --params with --r1cs");
    R1cs r1cs = load_circom_r1cs(a.r1cs).r1cs;
    Witness w = split_wires(r1cs, wires);
    if (!is_satisfied(r1cs, w.inputs, w.aux, pool)) throw Malformed("the witness does not satisfy the circuit");
    std::fprintf(stderr, "cuzkctl prove: reading %s\n", a.params.c_str());
    Parameters params = read_params(a.params, pool);
    std::fprintf(stderr, "cuzkctl prove: proving %zu constraints (domain 2^%u) on %zu threads\n",
                 r1cs.num_constraints(), unsigned(__builtin_ctzll(domain_size(r1cs))), pool.size());
    CpuProver prover(pool);
    std::vector<Witness> ws{w};
    std::vector<Blinding> bl{random_blinding()};
    proof = prover.prove(params, r1cs, ws, bl).at(0);
    pub.assign(w.inputs.begin() + 1, w.inputs.end());
    vk = params.vk;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // A corrupted key file can yield a proof that does not verify (a wrong
  // coefficient, an H point off the subgroup): such a proof is never written.
  const VerifyResult check = verify(prepare_verifying_key(vk), proof, pub);
  if (check != VerifyResult::kValid) {
    throw ProofCheckFailed("the proof does not verify under the key's own verifying key (" +
                           std::string(to_string(check)) + "); the key file is corrupt or does not match the circuit");
  }
  if (!a.proof_out.empty()) write_bytes(a.proof_out, encode_proof(proof));
  if (!a.snarkjs_proof.empty()) write_text(a.snarkjs_proof, proof_to_json(proof).dump(1) + "\n");
  if (!a.snarkjs_public.empty()) write_text(a.snarkjs_public, public_to_json(pub).dump(1) + "\n");
  json out{{"seconds", s}, {"public_inputs", pub.size()}};
  if (ctx.json)
    std::cout << out.dump(2) << "\n";
  else
    std::cout << "proved in " << s << " s\n";
}

// ---- verify -----------------------------------------------------------------------

struct VerifyArgs {
  std::string vk, proof, pub, snarkjs_vk, snarkjs_proof, snarkjs_public;
};

void verify_cmd(Context& ctx, const VerifyArgs& a) {
  VerifyingKey vk;
  std::vector<Proof> proofs;
  std::vector<std::vector<Fr>> inputs;
  if (!a.snarkjs_vk.empty()) {
    if (a.snarkjs_proof.empty() || a.snarkjs_public.empty())
      throw Usage("--snarkjs-proof and --snarkjs-public are required");
    vk = vk_from_json(read_json(a.snarkjs_vk));
    proofs.push_back(proof_from_json(read_json(a.snarkjs_proof)));
    inputs.push_back(public_from_json(read_json(a.snarkjs_public)));
  } else {
    if (a.vk.empty() || a.proof.empty() || a.pub.empty()) throw Usage("--vk, --proof and --public are required");
    for (const std::string* path : {&a.vk, &a.proof, &a.pub}) regular_file_bytes(*path);  // not_found first
    vk = read_vk(a.vk);
    std::string why;
    auto bytes = read_file(a.proof);
    auto ps = decode_proofs(bytes, &why);
    if (!ps) throw Malformed(a.proof + ": " + why);
    proofs = *ps;
    json j = read_json(a.pub);
    // One proof: ["x1", ...]; several partitions: [["x1", ...], ...].
    if (j.is_array() && !j.empty() && j[0].is_array()) {
      for (const auto& e : j) inputs.push_back(public_from_json(e));
    } else {
      inputs.push_back(public_from_json(j));
    }
    if (inputs.size() != proofs.size()) {
      throw Malformed(std::to_string(proofs.size()) + " proofs but " + std::to_string(inputs.size()) +
                      " public input sets");
    }
  }
  PreparedVerifyingKey pvk = prepare_verifying_key(vk);
  VerifyResult r;
  if (proofs.size() == 1) {
    r = verify(pvk, proofs[0], inputs[0]);
  } else {
    std::vector<BatchItem> items;
    for (std::size_t i = 0; i < proofs.size(); ++i) items.push_back({&proofs[i], inputs[i]});
    r = verify_batch(pvk, items);
  }
  if (r == VerifyResult::kWrongInputCount) {
    throw Malformed("public input count does not match the verifying key (" + std::to_string(vk.ic.size() - 1) +
                    " expected)");
  }
  bool ok = r == VerifyResult::kValid;
  if (ctx.json)
    std::cout << json{{"valid", ok}, {"proofs", proofs.size()}}.dump() << "\n";
  else
    std::cout << (ok ? "valid" : "INVALID") << "\n";
  if (!ok) cuzk::cli::print_error(cuzk::cli::kind::kInvalidProof, "the pairing check failed");
  ctx.exit_code = ok ? kExitOk : kExitInvalid;
}

void export_vk(Context&, const std::string& vk_path, const std::string& out) {
  VerifyingKey vk = sniff(vk_path) == FileKind::kParams ? [&] {
    ThreadPool pool(1);
    return read_params(vk_path, pool).vk;
  }()
                                                         : read_vk(vk_path);
  write_text(out, vk_to_json(vk).dump(1) + "\n");
}

// Runs `fn`, turning every typed input error into a one-line message and
// exit 2 (the shared ones in offline_util.hpp), a self-check failure into 1.
template <class Fn>
void guarded(Context& ctx, Fn fn) {
  namespace kind = cuzk::cli::kind;
  try {
    run_reporting_errors(ctx, "", fn);
  } catch (const ProofCheckFailed& e) {
    report_error(ctx, kind::kInvalidProof, e.what(), kExitInvalid);
  } catch (const ZkeyError& e) {
    report_error(ctx, kind::kInvalidInput, std::string("zkey: ") + e.what(), kExitMalformed);
  } catch (const R1csError& e) {
    report_error(ctx, kind::kInvalidInput, std::string("circuit/witness: ") + e.what(), kExitMalformed);
  } catch (const JsonFormatError& e) {
    report_error(ctx, kind::kInvalidInput, std::string("json: ") + e.what(), kExitMalformed);
  } catch (const SetupError& e) {
    report_error(ctx, kind::kInvalidInput, std::string("setup: ") + e.what(), kExitMalformed);
  }
}

}  // namespace

void register_offline(CLI::App& app, Context& ctx) {
  auto* params = app.add_subcommand("params", "inspect parameter files");
  params->require_subcommand(1);
  auto* inspect = params->add_subcommand("inspect", "summarize and validate a .params, .vk or .zkey file");
  static std::string inspect_file, params_json;
  static bool subgroups = false;
  inspect->add_option("file", inspect_file, "parameter file")->required();
  inspect->add_flag("--check-subgroups", subgroups, "also check every point for subgroup membership");
  inspect->add_option("--parameters-json", params_json, "compare the BLAKE2b digest with Filecoin's parameters.json");
  inspect->callback([&ctx] { guarded(ctx, [&] { params_inspect(ctx, inspect_file, subgroups, params_json); }); });

  auto* su = app.add_subcommand("setup", "generate DEVELOPMENT Groth16 parameters for a circuit");
  static CircuitSource setup_src;
  static std::string setup_params, setup_vk, setup_zkey, setup_gpu = "auto";
  su->add_option("--r1cs", setup_src.r1cs_path, "circom .r1cs file");
  su->add_option("--circuit", setup_src.circuit, "built-in circuit name (demo)");
  su->add_option("--size", setup_src.size, "built-in circuit size: log2 of the domain");
  su->add_option("--params", setup_params, "output bellperson .params");
  su->add_option("--vk", setup_vk, "output bellperson .vk");
  su->add_option("--zkey", setup_zkey, "output a snarkjs .zkey (circom circuits; for development and benchmarks)");
  su->add_option("--gpu", setup_gpu, "auto|on|off: fixed-base multiplications on CUDA device 0 (auto: when present)");
  su->callback([&ctx] { guarded(ctx, [&] { setup(ctx, setup_src, setup_params, setup_vk, setup_zkey, setup_gpu); }); });

  auto* pr = app.add_subcommand(
      "prove",
      "offline: prove a circom witness (--wtns with --zkey, or --params and --r1cs); daemon: prove through cuzkd "
      "(--circuit demo --size N, --porep-c1, --window-post, --winning-post, --snap-deals). Never both");
  static ProveArgs pa;
  pr->add_option("--params", pa.params, "offline: bellperson .params");
  pr->add_option("--zkey", pa.zkey, "offline: snarkjs .zkey");
  pr->add_option("--r1cs", pa.r1cs, "offline: circom .r1cs (with --params)");
  pr->add_option("--wtns", pa.wtns, "offline: witness .wtns");
  pr->add_option("--proof", pa.proof_out, "output proof (192 bytes a partition), written once it verifies");
  pr->add_option("--snarkjs-proof", pa.snarkjs_proof, "offline: output proof.json");
  pr->add_option("--snarkjs-public", pa.snarkjs_public, "offline: output public.json");
  pr->callback([&ctx] {
    if (!ctx.handled) guarded(ctx, [&] { prove(ctx, pa); });
  });

  auto* ve = app.add_subcommand("verify", "verify a proof (exit 0 valid, 1 invalid, 2 malformed)");
  static VerifyArgs va;
  ve->add_option("--vk", va.vk, "bellperson .vk");
  ve->add_option("--proof", va.proof, "proof bytes (192 per partition)");
  ve->add_option("--public", va.pub, "public inputs JSON (array, or array of arrays per partition)");
  ve->add_option("--snarkjs-vk", va.snarkjs_vk, "snarkjs verification_key.json");
  ve->add_option("--snarkjs-proof", va.snarkjs_proof, "snarkjs proof.json");
  ve->add_option("--snarkjs-public", va.snarkjs_public, "snarkjs public.json");
  ve->callback([&ctx] { guarded(ctx, [&] { verify_cmd(ctx, va); }); });

  auto* ex = app.add_subcommand("export-vk", "write a bellperson verifying key as snarkjs verification_key.json");
  static std::string ex_vk, ex_out;
  ex->add_option("--vk", ex_vk, ".vk (or .params)")->required();
  ex->add_option("--snarkjs", ex_out, "output verification_key.json")->required();
  ex->callback([&ctx] { guarded(ctx, [&] { export_vk(ctx, ex_vk, ex_out); }); });
}

}  // namespace cuzkctl
