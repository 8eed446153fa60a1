#include "circuits/filecoin/porep_c2.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <system_error>
#include <utility>

#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/stacked_circuit.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/constraint_system.hpp"
#include "groth16/proof.hpp"
#include "groth16/setup.hpp"

namespace cuzk::circuits::filecoin {

std::string_view to_string(PorepC2ErrorKind kind) {
  switch (kind) {
    case PorepC2ErrorKind::kPartitionCount:
      return "partition count";
    case PorepC2ErrorKind::kShapeMismatch:
      return "shape mismatch";
    case PorepC2ErrorKind::kInputMismatch:
      return "public input mismatch";
    case PorepC2ErrorKind::kUnsatisfied:
      return "unsatisfied";
    case PorepC2ErrorKind::kSynthesis:
      return "synthesis";
    case PorepC2ErrorKind::kInvalidProof:
      return "invalid proof";
    case PorepC2ErrorKind::kWrongVk:
      return "wrong verifying key";
    case PorepC2ErrorKind::kParams:
      return "parameters";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------
// Names

namespace {

// rfp merkletree name: "merkletree-poseidon_hasher-<base>-<sub>-<top>".
std::string tree_name(const SealProofInfo& info) {
  return "merkletree-poseidon_hasher-" + std::to_string(info.base_arity) + "-" + std::to_string(info.sub_arity) + "-" +
         std::to_string(info.top_arity);
}

// "v28-stacked-proof-of-replication-<tree>-sha256_hasher-<sha256(identifier)>".
std::string param_stem(SealProof proof) {
  const SealProofInfo& info = seal_proof_info(proof);
  const std::string id = porep_params_identifier(proof);
  const Digest32 h = native::sha256({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  return "v28-stacked-proof-of-replication-" + tree_name(info) + "-sha256_hasher-" + to_hex(h);
}

// Writes through a temporary file and renames it into place, so a crash or a
// failed write (disk full) never leaves a truncated file under the final name;
// the temporary file of a failed write or rename is removed.
template <class Write>
void write_atomically(const std::filesystem::path& path, Write write) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  try {
    write(tmp);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw PorepC2Error(PorepC2ErrorKind::kParams, "cannot rename " + tmp.string() + ": " + ec.message());
  }
}

// Whether `dir`'s file system has `bytes` free plus a 1 GiB margin. The
// 32 GiB shape's development files are ~45 GB (.params) and ~9 GB (.r1cs):
// on a small disk (the lent H200 host has 64 GiB) they may not fit, and a
// cache that cannot be written must not fail the proof.
bool has_room(const std::filesystem::path& dir, std::uint64_t bytes) {
  std::error_code ec;
  const auto info = std::filesystem::space(dir, ec);
  if (ec) return true;  // unknown: try, and handle a failed write
  return info.available >= bytes + (std::uint64_t{1} << 30);
}

}  // namespace

std::string porep_params_identifier(SealProof proof) {
  // rfp storage-proofs-porep stacked/vanilla/params.rs PublicParams::identifier:
  // the graph's identifier, the layer challenges (max_count = challenges per
  // partition) and the tree type. The api version is not part of it: V1 and
  // V1_1 share their parameters.
  const SealProofInfo& info = seal_proof_info(proof);
  const StackedGraph graph(info.nodes, porep_id(proof), info.api_version);
  return "layered_drgporep::PublicParams{ graph: " + graph.identifier() +
         ", challenges: LayerChallenges { layers: " + std::to_string(info.layers) +
         ", max_count: " + std::to_string(info.challenges_per_partition) + " }, tree: " + tree_name(info) + " }";
}

ParamFileNames official_param_names(SealProof proof) {
  const std::string stem = param_stem(proof);
  return {stem + ".params", stem + ".vk"};
}

ParamFileNames dev_param_names(SealProof proof) {
  const std::string stem = param_stem(proof) + "-dev";
  return {stem + ".params", stem + ".vk"};
}

std::optional<SealProof> seal_proof_from_porep_id(const PorepId& id) {
  for (const SealProofInfo& info : seal_proofs()) {
    if (porep_id(info.proof) == id) return info.proof;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Shapes

std::filesystem::path r1cs_cache_path(const std::filesystem::path& cache_dir, SealProof proof) {
  return cache_dir / (param_stem(proof) + ".r1cs");
}

std::shared_ptr<const groth16::R1cs> load_or_compile_shape(const std::filesystem::path& path,
                                                           std::size_t expected_inputs,
                                                           const std::function<groth16::R1cs()>& compile,
                                                           std::string_view what, const R1csReader& read) {
  const std::string tag(what);
  if (!path.empty() && std::filesystem::exists(path)) {
    try {
      auto loaded = std::make_shared<groth16::R1cs>(read ? read(path) : groth16::load_r1cs(path));
      if (loaded->num_inputs() == expected_inputs) return loaded;
    } catch (const groth16::R1csError& e) {
      std::fprintf(stderr, "%s: ignoring R1CS cache %s (%s)\n", tag.c_str(), path.c_str(), e.what());
    }
  }
  auto r1cs = std::make_shared<const groth16::R1cs>(compile());
  if (path.empty()) return r1cs;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (!has_room(path.parent_path(), r1cs->memory_bytes())) {
    std::fprintf(stderr, "%s: not saving the R1CS cache %s: about %llu bytes needed, too little free space\n",
                 tag.c_str(), path.c_str(), static_cast<unsigned long long>(r1cs->memory_bytes()));
    return r1cs;
  }
  try {
    write_atomically(path, [&](const std::filesystem::path& tmp) { groth16::save_r1cs(*r1cs, tmp); });
  } catch (const std::exception& e) {
    // The in-memory copy is still good; only the next process pays again.
    std::fprintf(stderr, "%s: cannot save R1CS cache %s (%s)\n", tag.c_str(), path.c_str(), e.what());
  }
  return r1cs;
}

PorepC2::PorepC2(std::filesystem::path cache_dir, R1csReader read)
    : cache_dir_(std::move(cache_dir)), read_(std::move(read)) {}

std::shared_ptr<const groth16::R1cs> PorepC2::compiled_shape(SealProof proof) {
  const SealProofInfo& info = seal_proof_info(proof);
  // One lock for lookup and compilation: a second caller for the same shape
  // waits instead of compiling it again (compiling 32 GiB needs ~9 GB).
  std::lock_guard lock(mu_);
  if (auto it = by_sector_bytes_.find(info.sector_bytes); it != by_sector_bytes_.end()) {
    return it->second;
  }
  const StackedShape shape = stacked_shape(proof);
  const std::size_t expected_inputs = 4 + 18 * shape.challenges;  // ONE included
  std::shared_ptr<const groth16::R1cs> r1cs = load_or_compile_shape(
      cache_dir_.empty() ? std::filesystem::path{} : r1cs_cache_path(cache_dir_, proof), expected_inputs,
      [&shape] { return groth16::compile(StackedCircuit::blank(shape)); }, "porep c2", read_);
  by_sector_bytes_.emplace(info.sector_bytes, r1cs);
  return r1cs;
}

// ---------------------------------------------------------------------------
// Proving

std::vector<std::vector<ff::Fr>> porep_public_inputs(SealProof proof, const Digest32& replica_id,
                                                     const Digest32& comm_d, const Digest32& comm_r,
                                                     const Digest32& seed) {
  const std::uint32_t partitions = seal_proof_info(proof).partitions;
  std::vector<std::vector<ff::Fr>> out;
  out.reserve(partitions);
  for (std::uint32_t k = 0; k < partitions; ++k) {
    out.push_back(stacked_public_inputs(proof, replica_id, comm_d, comm_r, seed, k));
  }
  return out;
}

namespace {

void check_partition_count(const C1Output& c1) {
  const std::size_t expected = c1.info().partitions;
  if (c1.vanilla_proofs.size() != expected) {
    throw PorepC2Error(PorepC2ErrorKind::kPartitionCount, std::to_string(c1.vanilla_proofs.size()) + " partitions, " +
                                                              std::string(c1.info().name) + " has " +
                                                              std::to_string(expected));
  }
}

}  // namespace

std::vector<PartitionWitness> synthesize_partitions(const C1Output& c1, ThreadPool& pool, std::size_t max_concurrent) {
  check_partition_count(c1);
  const std::size_t n = c1.vanilla_proofs.size();
  const auto inputs = porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  std::vector<PartitionWitness> out(n);
  // `lanes` tasks each take the next partition until none is left; errors
  // are collected per partition (run_tasks's rethrow would lose the number).
  const std::size_t cap = max_concurrent == 0 ? pool.size() : max_concurrent;
  const std::size_t lanes = std::min(n, cap);
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(n);
  pool.run_tasks(lanes, [&](std::size_t) {
    for (std::size_t k = next++; k < n; k = next++) {
      try {
        out[k].witness = groth16::generate_witness(stacked_circuit_from_c1(c1, k));
      } catch (const groth16::SynthesisError& e) {
        errors[k] = e.what();
      }
    }
  });
  for (std::size_t k = 0; k < n; ++k) {
    if (!errors[k].empty()) {
      throw PorepC2Error(PorepC2ErrorKind::kSynthesis, "partition " + std::to_string(k) + ": " + errors[k]);
    }
    out[k].public_inputs = inputs[k];
  }
  return out;
}

groth16::Witness synthesize_partition(const C1Output& c1, std::size_t partition, ThreadPool* challenge_pool,
                                      groth16::WitnessShape shape, groth16::Witness storage) {
  check_partition_count(c1);
  if (partition >= c1.vanilla_proofs.size()) {
    throw PorepC2Error(PorepC2ErrorKind::kPartitionCount,
                       "partition " + std::to_string(partition) + " of " + std::to_string(c1.vanilla_proofs.size()));
  }
  try {
    const StackedCircuit circuit = stacked_circuit_from_c1(c1, partition);
    return challenge_pool != nullptr ? circuit.generate_witness(*challenge_pool, shape, std::move(storage))
                                     : groth16::generate_witness(circuit, shape, std::move(storage));
  } catch (const groth16::SynthesisError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kSynthesis, "partition " + std::to_string(partition) + ": " + e.what());
  }
}

void check_partition_witness(const groth16::R1cs& r1cs, const groth16::Witness& w,
                             std::span<const ff::Fr> public_inputs, std::size_t partition, ThreadPool& pool,
                             bool check_satisfaction) {
  const std::string where = "partition " + std::to_string(partition) + ": ";
  if (w.inputs.size() != r1cs.num_inputs() || w.aux.size() != r1cs.num_aux()) {
    throw PorepC2Error(PorepC2ErrorKind::kShapeMismatch, where + "witness has " + std::to_string(w.inputs.size()) +
                                                             " inputs, " + std::to_string(w.aux.size()) +
                                                             " aux; the R1CS " + std::to_string(r1cs.num_inputs()) +
                                                             ", " + std::to_string(r1cs.num_aux()));
  }
  // The circuit's inputs come from the vanilla proofs; the verifier's from
  // (replica_id, seed, comm_d, comm_r). They differ when the C1 output
  // answers other challenges than the seed asks for.
  const std::span<const ff::Fr> circuit_inputs(w.inputs.data() + 1, w.inputs.size() - 1);
  if (!std::equal(circuit_inputs.begin(), circuit_inputs.end(), public_inputs.begin(), public_inputs.end())) {
    throw PorepC2Error(PorepC2ErrorKind::kInputMismatch,
                       where + "the vanilla proofs do not answer the derived challenges");
  }
  if (!check_satisfaction) return;
  if (auto row = groth16::first_unsatisfied(r1cs, w.inputs, w.aux, pool)) {
    throw PorepC2Error(PorepC2ErrorKind::kUnsatisfied, where + "constraint " + std::to_string(*row) + " does not hold");
  }
}

groth16::VerifyResult verify_porep_proof(const groth16::PreparedVerifyingKey& pvk,
                                         std::span<const std::uint8_t> proof_bytes,
                                         std::span<const std::vector<ff::Fr>> public_inputs, std::string* detail) {
  std::string why;
  const auto proofs = groth16::decode_proofs(proof_bytes, &why);
  if (!proofs) {
    if (detail) *detail = "proof bytes do not decode: " + why;
    return groth16::VerifyResult::kInvalid;
  }
  if (proofs->size() != public_inputs.size()) {
    if (detail) {
      *detail = std::to_string(proofs->size()) + " proofs for " + std::to_string(public_inputs.size()) + " partitions";
    }
    return groth16::VerifyResult::kInvalid;
  }
  std::vector<groth16::BatchItem> items;
  for (std::size_t k = 0; k < proofs->size(); ++k) {
    items.push_back({&(*proofs)[k], public_inputs[k]});
  }
  const groth16::VerifyResult r = groth16::verify_batch(pvk, items);
  if (detail) *detail = std::string(groth16::to_string(r));
  return r;
}

std::vector<std::uint8_t> prove_c2(const C1Output& c1, const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                   groth16::Prover& prover, ThreadPool& pool, std::size_t max_concurrent_synthesis) {
  std::vector<PartitionWitness> parts = synthesize_partitions(c1, pool, max_concurrent_synthesis);
  std::vector<std::vector<ff::Fr>> inputs;
  std::vector<groth16::Witness> witnesses;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    groth16::Witness& w = parts[k].witness;
    check_partition_witness(r1cs, w, parts[k].public_inputs, k, pool);
    inputs.push_back(std::move(parts[k].public_inputs));
    witnesses.push_back(std::move(w));
  }
  parts.clear();

  std::vector<groth16::Blinding> blinding;
  for (std::size_t k = 0; k < witnesses.size(); ++k) blinding.push_back(groth16::random_blinding());
  const std::vector<groth16::Proof> proofs = prover.prove(params, r1cs, witnesses, blinding);
  witnesses.clear();

  std::vector<std::uint8_t> bytes = groth16::encode_proofs(proofs);
  std::string detail;
  const groth16::VerifyResult r = verify_porep_proof(groth16::prepare_verifying_key(params.vk), bytes, inputs, &detail);
  if (r != groth16::VerifyResult::kValid) {
    throw PorepC2Error(PorepC2ErrorKind::kInvalidProof,
                       "the proofs do not verify under the parameters' key (" + detail + ")");
  }
  return bytes;
}

// ---------------------------------------------------------------------------
// Development parameters

std::string_view to_string(ParamsOrigin origin) {
  switch (origin) {
    case ParamsOrigin::kOfficial:
      return "official";
    case ParamsOrigin::kDevelopment:
      return "development";
    case ParamsOrigin::kDevelopmentGenerated:
      return "development (generated)";
  }
  return "unknown";
}

namespace {

groth16::Parameters load_checked(const std::filesystem::path& path, const groth16::R1cs& r1cs, ThreadPool& pool,
                                 const ParamsReader& read) {
  groth16::Parameters p;
  try {
    p = read ? read(path, pool) : groth16::read_params(path, pool);
  } catch (const groth16::ParamsError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kParams, path.string() + ": " + e.what());
  }
  const groth16::ExpectedShape shape{r1cs.num_inputs(), r1cs.num_aux(), groth16::domain_size(r1cs),
                                     r1cs.num_inputs() + r1cs.a_aux_density().popcount(),
                                     r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount()};
  try {
    groth16::check_shape(p, shape);
  } catch (const groth16::ParamsError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kShapeMismatch, path.string() + ": " + e.what());
  }
  return p;
}

}  // namespace

LoadedParams ensure_dev_params(SealProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                               ThreadPool& pool) {
  return ensure_dev_params(proof, dir, r1cs, pool, {});
}

LoadedParams ensure_dev_params(SealProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                               ThreadPool& pool, const ParamsGenerator& generate) {
  return ensure_dev_params(official_param_names(proof), dev_param_names(proof), seal_proof_info(proof).name, dir, r1cs,
                           pool, generate);
}

LoadedParams ensure_dev_params(const ParamFileNames& official, const ParamFileNames& dev, std::string_view what,
                               const std::filesystem::path& dir, const groth16::R1cs& r1cs, ThreadPool& pool,
                               const ParamsGenerator& generate, const ParamsReader& read) {
  LoadedParams out;
  if (std::filesystem::exists(dir / official.params)) {
    out.params_path = dir / official.params;
    out.vk_path = dir / official.vk;
    out.params = load_checked(out.params_path, r1cs, pool, read);
    return out;
  }
  out.params_path = dir / dev.params;
  out.vk_path = dir / dev.vk;
  out.origin = ParamsOrigin::kDevelopment;
  if (std::filesystem::exists(out.params_path)) {
    out.params = load_checked(out.params_path, r1cs, pool, read);
    return out;
  }
  std::fprintf(stderr,
               "\n"
               "*****************************************************************\n"
               "* WARNING: generating DEVELOPMENT Groth16 parameters for %s.\n"
               "* They are FOR DEVELOPMENT ONLY: this process knew the toxic\n"
               "* waste, so proofs under them prove nothing. Never use them for\n"
               "* Filecoin; production needs the ceremony's %s.\n"
               "*****************************************************************\n\n",
               std::string(what).c_str(), official.params.c_str());
  try {
    out.params =
        generate ? generate(r1cs, pool) : groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool);
  } catch (const groth16::SetupError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kParams, std::string("setup: ") + e.what());
  }
  out.origin = ParamsOrigin::kDevelopmentGenerated;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const groth16::Parameters& p = out.params;
  const std::uint64_t file_bytes =
      groth16::params_file_bytes(p.vk.ic.size(), p.h.size(), p.l.size(), p.a.size(), p.b_g1.size());
  if (!has_room(dir, file_bytes)) {
    // Proving goes on with the parameters in memory; the next process
    // generates them again. Never a failed job for a cache write.
    std::fprintf(stderr,
                 "%s: DEVELOPMENT parameters NOT written to %s: %llu bytes needed, too little free space; "
                 "they live in this process only\n",
                 std::string(what).c_str(), dir.c_str(), static_cast<unsigned long long>(file_bytes));
    out.persisted = false;
    return out;
  }
  try {
    // The .vk first: a .params without its .vk is never left behind as "present".
    write_atomically(out.vk_path, [&](const std::filesystem::path& t) { groth16::write_vk(out.params.vk, t); });
    write_atomically(out.params_path, [&](const std::filesystem::path& t) { groth16::write_params(out.params, t); });
  } catch (const std::exception& e) {
    // A .vk without its .params is harmless (the .params decides presence).
    std::fprintf(stderr, "%s: cannot write DEVELOPMENT parameters to %s (%s); they live in this process only\n",
                 std::string(what).c_str(), dir.c_str(), e.what());
    out.persisted = false;
    return out;
  }
  std::fprintf(stderr, "%s: DEVELOPMENT parameters written to %s and %s\n", std::string(what).c_str(),
               out.params_path.c_str(), out.vk_path.c_str());
  return out;
}

}  // namespace cuzk::circuits::filecoin
