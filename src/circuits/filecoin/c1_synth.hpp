// A real (cryptographically valid) C1 output for small sectors, computed
// natively end to end: random fr32 data, replica_id, SDR labels, tree D
// (SHA-256), tree C (Poseidon over column hashes), tree R (labels of the
// last layer + data), comm_r = Poseidon2(comm_c, comm_r_last), interactive
// challenges and all vanilla proofs. It is what rust-fil-proofs' seal
// pre-commit + commit phase 1 produce for the same inputs, so circuit and
// end-to-end tests can run without Rust. Cost grows with the sector: 2 KiB
// takes milliseconds; sizes above 2^18 nodes are refused (abort).
#pragma once

#include <cstdint>

#include "circuits/filecoin/c1.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

struct SyntheticSealInputs {
  Digest32 prover_id{};
  std::uint64_t sector_id = 0;
  Digest32 ticket{};
  Digest32 seed{};
  std::uint64_t data_seed = 0;  // piece data = a deterministic stream from this
};

C1Output make_synthetic_c1(SealProof proof, const SyntheticSealInputs& in, ThreadPool* pool = nullptr);

}  // namespace cuzk::circuits::filecoin
