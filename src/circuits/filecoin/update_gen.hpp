// SnapDeals vanilla proofs produced here, for tests and benchmarks.
//
// make_sealed_update: genuine. The 2 KiB (or 8 MiB) sector is sealed by the
// native sealer (SDR labels, tree C, tree R, as c1_synth does), then updated
// with new random fr32 data: tree D new (SHA-256), the encoding
// replica_new[i] = replica_old[i] + data_new[i] * rho(i >> (log2 nodes - h)),
// tree R new (tree R's shape), comm_r_new = Poseidon2(comm_c, root_r_new),
// and every partition's challenges opened in the three trees, exactly what
// rust-fil-proofs' EmptySectorUpdate::prove returns for the same replicas.
//
// make_sparse_update: synthetic for any size (32 GiB included) without
// materialising the sector. Its new data and old replica are periodic:
// within each rho region (2^(log2 nodes - h) nodes sharing one rho) node i
// has the value of pseudo-random pattern entry (region, i mod 64), hence so
// has replica_new = replica_old + data * rho. Subtrees over whole periods of
// one region are then equal, so
// every tree is computed by memoised classes of nodes (a few thousand hashes
// for 32 GiB), the commitments are those of this full virtual sector, and the
// proofs check against them like genuine ones.
#pragma once

#include <cstdint>

#include "circuits/filecoin/update_vanilla.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

UpdateInputs make_sealed_update(UpdateProof proof, std::uint64_t seed, ThreadPool* pool = nullptr);
UpdateInputs make_sparse_update(UpdateProof proof, std::uint64_t seed);

}  // namespace cuzk::circuits::filecoin
