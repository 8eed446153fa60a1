// The partitioned proof kinds - PoRep C2, WindowPoSt, WinningPoSt and
// SnapDeals - made ready for the partition pipeline (engine/pipeline.hpp),
// from the request alone: no engine state, so the preparation and its
// errors are unit-testable. Every kind answers the same questions
// (FilecoinWork): its parameter set, its partitions, each partition's public
// inputs and witness, and an optional final check of the member's proofs;
// the engine runs every kind through one path (engine_partitioned.cpp).
//
//   PoRep C2 (porep_work.cpp): C1 JSON --parse--> partition count checked
//   --> public inputs from public data (replica_id, comm_d, comm_r, seed)
//   WindowPoSt, WinningPoSt (post_work.cpp), SnapDeals (snap_work.cpp):
//   input (engine/filecoin_request.hpp) --decode--> registered proof, public
//   data, vanilla proofs --parse (bincode)--> --native check (every path,
//   comm_r, the derived challenges)--> public inputs per partition and a
//   witness synthesizer
// filecoin_work.cpp routes by kind.
//
// A request that is malformed or whose vanilla proofs do not prove what they
// claim is refused here with kInvalidInput naming the sector (PoSt) or the
// partition and challenge (SnapDeals) and the field, before any parameter is
// loaded or any constraint synthesized.
//
// Parameter sets (the engine's residency ids):
//   porep-<size>         PoRep C2 (V1 and V1_1 share parameters)
//   window-post-<size>   WindowPoSt (V1 and V1_2 share parameters)
//   winning-post-<size>  WinningPoSt
//   snap-deals-<size>    SnapDeals (EmptySectorUpdate)
// with <size> one of 2KiB, 8MiB, 512MiB, 32GiB, 64GiB.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/post_proof.hpp"
#include "circuits/filecoin/update_params.hpp"
#include "engine/types.hpp"
#include "ff/fp.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verifier.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

// What the engine loads for one parameter set: the partition circuit (its
// R1cs is cached on disk beside the parameters) and the parameter files.
struct CircuitSetSpec {
  std::string id;                   // "window-post-32GiB"
  std::string what;                 // the registered proof's name, for logs and warnings
  std::size_t expected_inputs = 0;  // of the R1cs, ONE included
  std::function<groth16::R1cs()> compile;
  circuits::filecoin::ParamFileNames official, dev;
  // PoRep C2: the shape and parameters are PorepC2's for this proof
  // (compile, official and dev unused).
  std::optional<circuits::filecoin::SealProof> porep;
};

// Parameter-set ids: "porep-32GiB" (V1 and V1_1 of a size share
// parameters), "window-post-32GiB", "snap-deals-32GiB".
std::string porep_srs_id(circuits::filecoin::SealProof proof);
std::string post_set_id(circuits::filecoin::PostProof proof);
std::string snap_set_id(circuits::filecoin::UpdateProof proof);
// The set of a PoRep, PoSt or SnapDeals id; nullopt: none (spelled exactly
// as above; demo sets are not Filecoin sets).
std::optional<CircuitSetSpec> circuit_set_spec(std::string_view id);

// The deadline-bound kinds (PoSt, SnapDeals), whose CRITICAL jobs run on the
// engine's critical thread and pools (FilecoinWork::critical_synthesis_pool,
// Engine::prepare_pool): the critical thread is not for PoRep's minutes.
inline bool critical_pool_kind(ProofKind kind) { return kind != ProofKind::kPoRepC2; }

struct FilecoinWork {
  CircuitSetSpec set;
  std::uint32_t partitions = 1;
  // Per partition, ONE excluded, derived from public data only.
  std::vector<std::vector<ff::Fr>> public_inputs;
  // Partition k's witness (inputs[0] = ONE), its parts synthesized in
  // parallel on `pool` when given. Thread-safe; owns the parsed request.
  // Throws circuits::filecoin::PorepC2Error or SynthesisError.
  // `shape` (the R1cs's counts) lets a sequential synthesis allocate once.
  // `storage`: a previous witness whose memory the sequential path reuses.
  std::function<groth16::Witness(std::uint32_t k, ThreadPool* pool, groth16::WitnessShape shape,
                                 groth16::Witness storage)>
      synthesize;
  // Whether the partitions synthesize with `pool` = the engine's math pool
  // (one deadline-bound partition: worth the threads) or with a lane's
  // challenge pool, if any (several partitions in lanes).
  bool parallel_synthesis = false;
  // Whether a CRITICAL job synthesizes on the critical pool
  // (critical_pool_kind); a CRITICAL PoRep job keeps to the shared pool.
  bool critical_synthesis_pool = false;
  // Null, or a check of the member's encoded proofs once all are proved
  // (each partition's proof is verified by the pipeline already).
  using FinalCheck = std::function<std::optional<Error>(const groth16::PreparedVerifyingKey& pvk,
                                                        const std::vector<std::uint8_t>& proof_bytes)>;
  FinalCheck final_check;
  // Null, or a slower check of the request, run on a CPU worker when the
  // member failed as invalid input or internal (a witness the prover found
  // does not satisfy the circuit or, with that check off, a proof that does
  // not verify): an error it returns, naming the culprit, replaces the
  // pipeline's. PoSt: the native check of every inclusion path, left out of
  // preparation (the circuit enforces each path).
  using Explain = std::function<std::optional<Error>()>;
  Explain explain_invalid;
  std::string description;  // "StackedDrgWindow2KiBV1_2, 2 sectors, partition 0"
};

// The checks that read only the request's header, cheap enough for submit on
// the event loop (no vanilla proof is copied or parsed): the framing, the
// registered proof and its kind, the randomness length, the vanilla-proof
// count. prepare_filecoin_work repeats them. kind: as below.
std::optional<Error> screen_filecoin_request(ProofKind kind, std::string_view input);

// The parameter set a request's header names ("snap-deals-32GiB"), read
// without copying a vanilla proof (the batch collector's key); nullopt when
// the framing or the registered proof is bad (the job then runs alone and
// its preparation reports the error). kind: as below.
std::optional<std::string> filecoin_set_of_request(ProofKind kind, std::string_view input);

// kind: kPoRepC2, kWindowPost, kWinningPost or kSnapDeals. Blocking
// (parsing a 32 GiB C1 of ~51 MB of JSON; the native check of a 32 GiB
// WindowPoSt partition hashes ~235,000 Poseidon nodes, spread over `pool`):
// a worker thread's call.
Result<FilecoinWork> prepare_filecoin_work(ProofKind kind, std::string_view input, ThreadPool& pool);

// The PoRep C2 part of prepare_filecoin_work (porep_work.cpp).
Result<FilecoinWork> prepare_porep_work(std::string_view c1_json, ThreadPool* pool = nullptr);

}  // namespace cuzk::engine
