// WindowPoSt, WinningPoSt and SnapDeals jobs made ready for the partition
// pipeline (engine/pipeline.hpp), from the request alone: no engine state,
// so the preparation and its errors are unit-testable.
//
//   input (engine/filecoin_request.hpp) --decode--> registered proof, public
//   data, vanilla proofs --parse (bincode)--> --native check (every path,
//   comm_r, the derived challenges)--> public inputs per partition and a
//   witness synthesizer per partition
//
// A request that is malformed or whose vanilla proofs do not prove what they
// claim is refused here with kInvalidInput naming the sector (PoSt) or the
// partition and challenge (SnapDeals) and the field, before any parameter is
// loaded or any constraint synthesized.
//
// Parameter sets (the engine's residency ids):
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
};

std::string post_set_id(circuits::filecoin::PostProof proof);
std::string snap_set_id(circuits::filecoin::UpdateProof proof);
// nullopt: not a PoSt or SnapDeals set id (spelled exactly as above).
std::optional<CircuitSetSpec> circuit_set_spec(std::string_view id);

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

// kind: kWindowPost, kWinningPost or kSnapDeals. Blocking (parsing and the
// native check of a 32 GiB WindowPoSt partition hash ~235,000 Poseidon
// nodes, spread over `pool`): a worker thread's call.
Result<FilecoinWork> prepare_filecoin_work(ProofKind kind, std::string_view input, ThreadPool& pool);

}  // namespace cuzk::engine
