// PoRep commit phase 2 (C2) on the CPU, independent of the service: a parsed
// C1 output in, one Groth16 proof per partition out (Filecoin's MultiProof:
// partitions x 192 B), verified before it is returned.
//
//   C1Output --stacked_circuit_from_c1--> StackedCircuit (per partition)
//            --WitnessCs--> Witness --Prover (params, R1cs)--> Proof
//            --verify_batch (vk, stacked_public_inputs)--> bytes
//
// The R1cs of one partition depends only on the sector shape (sector size;
// V1 and V1_1 share it), so it is compiled once from a blank circuit and kept
// in memory and on disk (PorepC2). Public inputs of the verifier are derived
// from public data only (replica_id, comm_d, comm_r, seed), never read from
// the witness, so a C1 whose vanilla proofs disagree with its commitments
// cannot yield a proof that is returned as valid.
//
// Parameter file names follow rust-fil-proofs (FILECOIN.md §1):
//   v28-stacked-proof-of-replication-merkletree-poseidon_hasher-B-S-T-sha256_hasher-
//   <sha256 hex of the PublicParams identifier>.params / .vk
// Development parameters (generated here, toxic waste known to this process)
// get the same stem with "-dev" appended, so they can never be mistaken for
// the ceremony's files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/registry.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verifier.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

enum class PorepC2ErrorKind : std::uint8_t {
  kPartitionCount,  // the C1 output does not hold the registered number of partitions
  kShapeMismatch,   // witness or parameters do not fit the compiled R1cs
  kInputMismatch,   // the circuit's public inputs differ from those derived from public data
  kUnsatisfied,     // the witness does not satisfy the R1cs (bad vanilla proofs)
  kSynthesis,       // the circuit could not be synthesized (missing value, ...)
  kInvalidProof,    // the proofs did not verify against the public inputs
  kWrongVk,         // the verifying key's IC count does not fit the proof's shape
  kParams,          // a parameter file could not be read or written
};
std::string_view to_string(PorepC2ErrorKind kind);

class PorepC2Error : public std::runtime_error {
 public:
  PorepC2Error(PorepC2ErrorKind kind, const std::string& what)
      : std::runtime_error(std::string(to_string(kind)) + ": " + what), kind_(kind) {}
  PorepC2ErrorKind kind() const { return kind_; }

 private:
  PorepC2ErrorKind kind_;
};

// ---------------------------------------------------------------------------
// Names

// rfp StackedDrg PublicParams::identifier() for the proof's sector size.
std::string porep_params_identifier(SealProof proof);

struct ParamFileNames {
  std::string params;  // file name only, no directory
  std::string vk;
};
// The published names (present in rust-fil-proofs' parameters.json).
ParamFileNames official_param_names(SealProof proof);
// The development names: the official stem + "-dev".
ParamFileNames dev_param_names(SealProof proof);

// ---------------------------------------------------------------------------
// Shapes

// Reads an R1CS cache file (groth16::load_r1cs's contract and R1csError
// kinds). The daemon passes its reader (io::load_r1cs: io_uring reads on its
// event loop); empty: groth16::load_r1cs (stdio).
using R1csReader = std::function<groth16::R1cs(const std::filesystem::path& path)>;

// Caches compiled partition R1cs per sector shape, in memory and (when
// cache_dir is non-empty) on disk as <cache_dir>/<official stem>.r1cs.
// Thread-safe; one instance per process is expected to be passed around.
class PorepC2 {
 public:
  explicit PorepC2(std::filesystem::path cache_dir = {}, R1csReader read = {});

  // The R1cs of one partition. Loads the disk copy when present and
  // consistent with the shape (public input count), else compiles a blank
  // circuit and saves it. Compiling the 2 KiB shape takes 2.6 s on the dev
  // VM; 32 GiB needs ~9 GB and minutes. The disk copy is keyed by shape and
  // file version only: after the circuit code changes, a stale copy makes
  // prove_c2 fail (kShapeMismatch or kUnsatisfied), never prove wrongly;
  // delete the file then.
  std::shared_ptr<const groth16::R1cs> compiled_shape(SealProof proof);

  const std::filesystem::path& cache_dir() const { return cache_dir_; }

 private:
  std::filesystem::path cache_dir_;
  R1csReader read_;
  std::mutex mu_;
  std::map<std::uint64_t, std::shared_ptr<const groth16::R1cs>> by_sector_bytes_;
};

// The path compiled_shape uses for the disk copy.
std::filesystem::path r1cs_cache_path(const std::filesystem::path& cache_dir, SealProof proof);

// A compiled shape with a disk copy at `path` (empty: none): the copy when it
// loads and has `expected_inputs` inputs (ONE included), else compile()'s
// result, saved there atomically when the disk has room. A stale or damaged
// copy is rebuilt, not fatal; a failed save only costs the next process.
// `what` prefixes the messages on stderr.
std::shared_ptr<const groth16::R1cs> load_or_compile_shape(const std::filesystem::path& path,
                                                           std::size_t expected_inputs,
                                                           const std::function<groth16::R1cs()>& compile,
                                                           std::string_view what, const R1csReader& read = {});

// ---------------------------------------------------------------------------
// Proving

struct PartitionWitness {
  groth16::Witness witness;           // inputs[0] = ONE
  std::vector<ff::Fr> public_inputs;  // the verifier's view (after ONE), from public data
};

// Witnesses of every partition, synthesized in parallel across partitions on
// `pool`, at most `max_concurrent` at a time (0 = the pool's size). Each
// partition is one sequential synthesis whose transient memory is about the
// size of its witness (a 32 GiB partition: 130M aux = 4.2 GB), so memory-
// bound callers cap the concurrency. Throws PorepC2Error kPartitionCount /
// kSynthesis.
std::vector<PartitionWitness> synthesize_partitions(const C1Output& c1, ThreadPool& pool,
                                                    std::size_t max_concurrent = 0);

// One partition's witness (the per-partition pipeline of the daemon calls
// this for each partition as memory allows). With a `challenge_pool`, the
// partition's challenges (18 for 32 GiB) are synthesized in parallel on it
// (StackedCircuit::generate_witness: the same witness, each challenge
// written in place), else sequentially on the calling thread (1.1-1.8 s for
// a 32 GiB partition on the GPU hosts' cores, bench/RESULTS.md). Throws
// PorepC2Error kPartitionCount / kSynthesis.
// `shape`: the partition R1cs's counts when the caller has them: the witness
// is then allocated once instead of grown (a 32 GiB partition on one thread
// of the 2-core VM: 10.0-11.4 s -> 7.8-8.3 s, kernel time 3.4-4.7 s -> 1.6-2.2
// s, bench/bench_synthesis). `storage`: a previous partition's witness whose
// memory is reused (no fresh pages to clear).
groth16::Witness synthesize_partition(const C1Output& c1, std::size_t partition, ThreadPool* challenge_pool = nullptr,
                                      groth16::WitnessShape shape = {}, groth16::Witness storage = {});

// The cheap checks prove_c2 runs on each witness before proving: sizes
// against the R1cs (kShapeMismatch), the circuit's public inputs against
// those derived from public data (kInputMismatch), and, when
// check_satisfaction, every constraint (kUnsatisfied; one pass over the
// R1cs on `pool`, small next to proving).
void check_partition_witness(const groth16::R1cs& r1cs, const groth16::Witness& w,
                             std::span<const ff::Fr> public_inputs, std::size_t partition, ThreadPool& pool,
                             bool check_satisfaction = true);

// The verifier's public inputs of every partition.
std::vector<std::vector<ff::Fr>> porep_public_inputs(SealProof proof, const Digest32& replica_id,
                                                     const Digest32& comm_d, const Digest32& comm_r,
                                                     const Digest32& seed);

// Proves all partitions with fresh blinding and batch-verifies them under
// params.vk before returning partitions x 192 bytes. Before proving, each
// witness is checked cheaply (sizes, public inputs against the derived ones,
// R1cs satisfaction) so a bad C1 fails in seconds with a typed error instead
// of after the MSMs. Throws PorepC2Error; kInvalidProof when the proofs do
// not verify (wrong parameters): an invalid proof is never returned.
std::vector<std::uint8_t> prove_c2(const C1Output& c1, const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                   groth16::Prover& prover, ThreadPool& pool, std::size_t max_concurrent_synthesis = 0);

// Batch-verifies a partitioned proof (partitions x 192 B) against public
// inputs. kWrongInputCount when the vk does not fit; kInvalid also when the
// bytes do not decode or the partition count differs.
groth16::VerifyResult verify_porep_proof(const groth16::PreparedVerifyingKey& pvk,
                                         std::span<const std::uint8_t> proof_bytes,
                                         std::span<const std::vector<ff::Fr>> public_inputs,
                                         std::string* detail = nullptr);

// The registered proof whose porep_id equals `id` (nonce 0), if any.
std::optional<SealProof> seal_proof_from_porep_id(const PorepId& id);

// ---------------------------------------------------------------------------
// Development parameters

enum class ParamsOrigin : std::uint8_t {
  kOfficial,              // the published file was present and loaded
  kDevelopment,           // development files were present and loaded
  kDevelopmentGenerated,  // development parameters generated by this call
};
std::string_view to_string(ParamsOrigin origin);
inline bool is_development(ParamsOrigin o) { return o != ParamsOrigin::kOfficial; }

struct LoadedParams {
  groth16::Parameters params;
  std::filesystem::path params_path, vk_path;
  ParamsOrigin origin = ParamsOrigin::kOfficial;
  // False when freshly generated parameters could not be written (too little
  // free space, or the write failed): the paths name where they would be.
  bool persisted = true;
};

// In `dir`: the official .params for the proof's size when present, else the
// "-dev" files when present, else fresh DEVELOPMENT parameters for `r1cs`
// (printed loudly on stderr), written as .params + .vk under the dev names
// when the disk has room (else kept in memory only, `persisted` false).
// The loaded parameters are checked against the R1cs shape. Throws
// PorepC2Error kParams / kShapeMismatch.
LoadedParams ensure_dev_params(SealProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                               ThreadPool& pool);

// Generates development parameters for `r1cs` (the CPU's
// groth16::generate_parameters, or a GPU generator of the same contract).
// Throws groth16::SetupError.
using ParamsGenerator = std::function<groth16::Parameters(const groth16::R1cs& r1cs, ThreadPool& pool)>;
// Same, generating with `generate` when development parameters must be made.
LoadedParams ensure_dev_params(SealProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                               ThreadPool& pool, const ParamsGenerator& generate);
// Reads a .params file (groth16::read_params's contract and ParamsError
// kinds). The daemon passes its io_uring loader (io::ParamsLoader: many large
// reads in flight, decoding overlapping them); empty: groth16::read_params.
using ParamsReader = std::function<groth16::Parameters(const std::filesystem::path& path, ThreadPool& pool)>;
// The same for any circuit, given its official and development file names;
// `what` names the proof in the warning.
LoadedParams ensure_dev_params(const ParamFileNames& official, const ParamFileNames& dev, std::string_view what,
                               const std::filesystem::path& dir, const groth16::R1cs& r1cs, ThreadPool& pool,
                               const ParamsGenerator& generate, const ParamsReader& read = {});

}  // namespace cuzk::circuits::filecoin
