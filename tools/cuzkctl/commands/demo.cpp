// `cuzkctl demo prove`: the built-in demo circuit (src/circuits/demo.hpp)
// proved here, offline, with no daemon and no circom files.
//
//   cuzkctl demo prove --size N --params P --proof OUT [--vk V] [--seed S]
//                      [--public public.json] [--gpu auto|on|off]
//
// When P does not exist, DEVELOPMENT parameters for a 2^N domain are
// generated first and written to P and V (default: P with .vk). The proof is
// verified under the parameters' verifying key before OUT is written; a
// proof that does not verify is never written (exit 1, invalid_proof).
// --public writes [x_0, y] for `cuzkctl verify --vk V --proof OUT --public`.
// Proving through the daemon instead is `cuzkctl prove --circuit demo`.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "circuits/demo.hpp"
#include "cuzkctl/commands.hpp"
#include "cuzkctl/commands/offline_util.hpp"
#include "cuzkctl/setup_backend.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/snarkjs_json.hpp"
#include "groth16/verifier.hpp"
#include "util/thread_pool.hpp"

namespace cuzkctl {
namespace {

using namespace cuzk;
using nlohmann::json;

struct DemoProveArgs {
  unsigned size = 0;
  std::uint64_t seed = 1;
  std::string params, vk, proof, pub, gpu = "auto";
};

// The smallest and largest domains the demo takes offline (2^27: ~100 M
// constraints, far past what a CPU proves in minutes).
constexpr unsigned kMinLogDomain = 2;
constexpr unsigned kMaxLogDomain = 27;

struct DemoInstance {
  groth16::R1cs r1cs;
  groth16::Witness witness;
  std::vector<ff::Fr> public_inputs;  // x_0, y
};

DemoInstance synthesize_demo(unsigned log_domain, std::uint64_t seed) {
  const ff::Fr x0 = ff::Fr::from_u64(seed);
  circuits::DemoCircuit circuit(circuits::DemoCircuit::rounds_for_log_domain(log_domain), x0);
  groth16::RecordingCs cs(groth16::RecordingCs::Values::kCollect);
  circuit.synthesize(cs);
  DemoInstance d{cs.finish(), cs.take_witness(), {}};
  d.public_inputs.assign(d.witness.inputs.begin() + 1, d.witness.inputs.end());
  return d;
}

// Reads P, or generates development parameters into P and V. Says which.
groth16::Parameters load_or_generate(const DemoProveArgs& a, const groth16::R1cs& r1cs, ThreadPool& pool,
                                     bool& generated) {
  std::error_code ec;
  if (std::filesystem::exists(a.params, ec)) {
    if (!std::filesystem::is_regular_file(a.params, ec))
      throw Malformed(a.params + " is not a regular file", cuzk::cli::kind::kIo);
    std::fprintf(stderr, "demo prove: reading %s\n", a.params.c_str());
    generated = false;
    return groth16::read_params(a.params, pool);
  }
  const std::optional<SetupDevice> device_mode = parse_setup_device(a.gpu);
  if (!device_mode) throw Usage("--gpu must be auto, on or off");
  std::optional<SetupBackend> backend;
  try {
    backend.emplace(*device_mode);
  } catch (const SetupBackendError& e) {
    throw Malformed(e.what());
  }
  std::fprintf(stderr,
               "demo prove: %s does not exist: generating DEVELOPMENT parameters for 2^%u on %s\n"
               "  (for development only: whoever holds the toxic waste can forge proofs)\n",
               a.params.c_str(), a.size, backend->description().c_str());
  Progress progress("setup");
  groth16::Parameters p;
  try {
    p = backend->generate(r1cs, groth16::random_toxic_waste(), pool, [&](auto d, auto t) { progress(d, t); });
  } catch (const SetupBackendError& e) {
    throw Malformed(e.what());
  }
  groth16::write_params(p, a.params);
  groth16::write_vk(p.vk, a.vk);
  generated = true;
  return p;
}

void demo_prove(Context& ctx, DemoProveArgs a) {
  if (a.size < kMinLogDomain || a.size > kMaxLogDomain)
    throw Usage("--size must be a log2 domain size in " + std::to_string(kMinLogDomain) + ".." +
                std::to_string(kMaxLogDomain));
  if (a.vk.empty()) a.vk = std::filesystem::path(a.params).replace_extension(".vk").string();
  ThreadPool pool(ctx.threads);
  const auto t0 = std::chrono::steady_clock::now();
  DemoInstance d = synthesize_demo(a.size, a.seed);
  bool generated = false;
  groth16::Parameters params = load_or_generate(a, d.r1cs, pool, generated);
  std::fprintf(stderr, "demo prove: proving %zu constraints (domain 2^%u) on %zu threads\n", d.r1cs.num_constraints(),
               a.size, pool.size());
  groth16::CpuProver prover(pool);
  std::vector<groth16::Witness> witnesses{d.witness};
  std::vector<groth16::Blinding> blindings{groth16::random_blinding()};
  const groth16::Proof proof = prover.prove(params, d.r1cs, witnesses, blindings).at(0);
  const groth16::VerifyResult check =
      groth16::verify(groth16::prepare_verifying_key(params.vk), proof, d.public_inputs);
  if (check != groth16::VerifyResult::kValid) {
    throw Malformed("the proof does not verify under " + a.params + "'s verifying key (" +
                        std::string(groth16::to_string(check)) + "): the file is not for a 2^" +
                        std::to_string(a.size) + " demo circuit, or it is corrupt",
                    cuzk::cli::kind::kInvalidProof, kExitInvalid);
  }
  write_bytes(a.proof, groth16::encode_proof(proof));
  if (!a.pub.empty()) {
    const std::string text = groth16::public_to_json(d.public_inputs).dump(1) + "\n";
    write_bytes(a.pub, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (ctx.json) {
    std::cout << json{{"proof", a.proof},
                      {"public", a.pub},
                      {"params", a.params},
                      {"vk", a.vk},
                      {"params_generated", generated},
                      {"size", a.size},
                      {"seed", a.seed},
                      {"valid", true},
                      {"seconds", seconds}}
                     .dump()
              << std::endl;
  } else {
    std::printf("proof verified and written to %s (demo 2^%u, seed %llu, parameters %s %s, %.2f s)\n", a.proof.c_str(),
                a.size, static_cast<unsigned long long>(a.seed), generated ? "generated into" : "read from",
                a.params.c_str(), seconds);
    if (generated) std::printf("verifying key: %s\n", a.vk.c_str());
    if (!a.pub.empty()) std::printf("public inputs: %s\n", a.pub.c_str());
  }
}

}  // namespace

void register_demo(CLI::App& app, Context& ctx) {
  auto* demo = app.add_subcommand("demo", "the built-in demo circuit, offline (no daemon)");
  demo->require_subcommand(1);
  auto args = std::make_shared<DemoProveArgs>();  // owned by the callback (and so by `app`)
  auto* pr = demo->add_subcommand(
      "prove",
      "offline: prove the demo circuit here (no daemon), generating development parameters when --params does not "
      "exist; the proof is verified before it is written. Through the daemon: `cuzkctl prove --circuit demo`");
  pr->add_option("--size", args->size, "log2 of the domain (2..27)")->required();
  pr->add_option("--params", args->params, "bellperson .params: read, or generated when absent")->required();
  pr->add_option("--proof", args->proof, "output proof (192 bytes)")->required();
  pr->add_option("--vk", args->vk, "verifying key written with generated parameters (default: --params with .vk)");
  pr->add_option("--seed", args->seed, "witness x_0 (default 1)");
  pr->add_option("--public", args->pub, "output public inputs JSON [x_0, y] (for `cuzkctl verify`)");
  pr->add_option("--gpu", args->gpu,
                 "auto|on|off: where generated parameters are computed (auto: CUDA device 0 when present)");
  pr->callback([&ctx, args] { run_reporting_errors(ctx, "", [&] { demo_prove(ctx, *args); }); });
}

}  // namespace cuzkctl
