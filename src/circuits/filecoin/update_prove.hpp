// SnapDeals Groth16 proving on the CPU (offline; the daemon job follows the
// same steps): parse_update_inputs -> per partition update_circuit_from_proof
// -> witness -> check (sizes, inputs against update_partition_public_inputs,
// satisfaction) -> prove -> batch verification, partitions x 192 B out.
//
// Parameter names follow rust-fil-proofs (parameters.json):
//   v28-empty-sector-update-merkletree-poseidon_hasher-B-S-T-<sha256 hex of
//   "empty_sector_update::PublicParams{ sector_nodes: N }">.params / .vk
// e.g. 2 KiB: ...-8-0-0-fb9e095b..., 32 GiB: ...-8-8-0-3b7f44a9...
// Development parameters take the same stem with "-dev" appended.
// Errors are PorepC2Error (its kinds are not PoRep-specific).
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/update_vanilla.hpp"

namespace cuzk::circuits::filecoin {

std::string update_params_identifier(UpdateProof proof);
ParamFileNames update_official_param_names(UpdateProof proof);
ParamFileNames update_dev_param_names(UpdateProof proof);

// The R1CS of one partition (compiled from the blank circuit).
groth16::R1cs compile_update_shape(UpdateProof proof);

// Official parameters in `dir` when present, else development ones (loaded
// or generated with `generate`, or the CPU setup when empty, and written).
LoadedParams ensure_update_dev_params(UpdateProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                                      ThreadPool& pool, const ParamsGenerator& generate = {});

// Partition k's witness (inputs[0] = ONE); with a pool its challenges are
// synthesized in parallel (UpdateCircuit::generate_witness, same witness),
// else on this thread, allocated once when `shape` (the R1cs's counts) is
// given. Throws PorepC2Error kSynthesis.
groth16::Witness synthesize_update_partition(const UpdateInputs& in, std::size_t k, ThreadPool* pool = nullptr,
                                             groth16::WitnessShape shape = {}, groth16::Witness storage = {});

// All partitions proven and batch-verified; an invalid proof is never returned.
std::vector<std::uint8_t> prove_update(const UpdateInputs& in, const groth16::Parameters& params,
                                       const groth16::R1cs& r1cs, groth16::Prover& prover, ThreadPool& pool);

// The verifier's public inputs of every partition.
std::vector<std::vector<Fr>> update_public_inputs_all(const UpdateInputs& in);

}  // namespace cuzk::circuits::filecoin
