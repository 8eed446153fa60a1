// FallbackPoSt partition proving on the CPU, independent of the service:
//
//   PostPartition --post_partition_circuit--> FallbackPostCircuit
//     --generate_witness--> Witness --checks--> Prover --> 192 B
//     --verify (vk, post_public_inputs)--> bytes
//
// The R1cs depends only on the registered proof's shape (Window V1 and V1_2
// share it, as they share parameters). Parameter file names follow
// rust-fil-proofs' parameters.json:
//   v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-B-S-T-
//   <sha256 hex of "FallbackPoSt::PublicParams{sector_size: S, challenge_count: C, sector_count: N}">
// (Window: C = 10, N = 2 / 2349 / 2300; Winning: C = 1, N = 66); development
// parameters take the same stem + "-dev". Errors reuse PorepC2Error's kinds
// (shape, inputs, unsatisfied, invalid proof, params).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verifier.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

std::string post_params_identifier(PostProof proof);
ParamFileNames post_official_param_names(PostProof proof);
ParamFileNames post_dev_param_names(PostProof proof);

// The partition R1cs, compiled from the blank circuit (2 KiB Window 0.1 s).
// With more than three sectors, three slots are synthesized and the third,
// checked to repeat the second over its own variables, is copied for the
// others (groth16::RecordingCs::repeat_last): the same R1cs as synthesizing
// every slot (tested), without the minutes of a 2349-sector WindowPoSt.
groth16::R1cs compile_post_shape(PostProof proof);
groth16::R1cs compile_post_shape(const PostShape& shape);

// ensure_dev_params (porep_c2.hpp) under the PoSt file names: in `dir` the
// official parameters when present, else the "-dev" ones, else freshly
// generated DEVELOPMENT parameters (loud warning), written there when the
// disk has room. Checked against the R1cs shape. Throws PorepC2Error
// kParams / kShapeMismatch.
LoadedParams ensure_post_dev_params(PostProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                                    ThreadPool& pool);

// Witness, checks (sizes, the circuit's public inputs against
// post_public_inputs, R1cs satisfaction), proof, verification under
// params.vk. Returns the 192-byte proof. Throws PorepC2Error.
std::vector<std::uint8_t> prove_post_partition(const PostPartition& p, const groth16::Parameters& params,
                                               const groth16::R1cs& r1cs, groth16::Prover& prover, ThreadPool& pool);

// Verifies one partition proof against public inputs derived from public
// data. kInvalid also when the bytes do not decode.
groth16::VerifyResult verify_post_proof(const groth16::PreparedVerifyingKey& pvk,
                                        std::span<const std::uint8_t> proof_bytes,
                                        std::span<const ff::Fr> public_inputs, std::string* detail = nullptr);

}  // namespace cuzk::circuits::filecoin
