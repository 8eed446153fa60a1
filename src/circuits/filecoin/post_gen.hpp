// Vanilla FallbackPoSt proofs we produce ourselves, for tests and benches.
//
//   kSealed (2 KiB only): each sector is sealed natively like the C1 sealer
//     (native_seal.hpp: random fr32 data, replica_id, 2-layer SDR labels, tree C
//     over the columns, tree R over label_2 + data), so comm_c, comm_r_last
//     and every path are those of a real sealed sector;
//   kSparse (any size, 32/64 GiB included): tree R is a sparse tree whose
//     leaves are 0 except the challenged ones (random fr32), comm_c is a
//     random fr32 value, comm_r = Poseidon2(comm_c, comm_r_last). Only the
//     challenged paths are materialised (SparseMerkleTree), so a 32 GiB
//     sector costs ~10 x 10 Poseidon hashes; the proofs pass
//     check_post_partition and satisfy the circuit, but no sealed sector
//     lies behind them.
// Challenges are derived exactly as the prover's
// generate_fallback_sector_challenges does (post_inputs.hpp), for sectors
// first_sector_id, first_sector_id + 1, ... in partition `partition`.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "circuits/filecoin/post_inputs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

enum class PostGenMode : std::uint8_t { kSealed, kSparse };

struct PostGenOptions {
  PostProof proof = PostProof::Window2KiBV1_2;
  PostGenMode mode = PostGenMode::kSealed;
  std::uint64_t seed = 0;   // data, comm_c, tree values, default randomness
  std::size_t sectors = 1;  // Winning: must be 1
  std::uint64_t first_sector_id = 1;
  std::uint32_t partition = 0;
  std::uint64_t actor_id = 1000;
  std::optional<Digest32> randomness;  // default: derived from seed; masked either way
};

struct PostGenOutput {
  Digest32 randomness{};  // masked
  Digest32 prover_id{};
  std::vector<FallbackPostSectorProof> sectors;  // in sector id order
};

// Aborts on impossible options (kSealed above 2 KiB, Winning with sectors !=
// 1, more sectors than a partition holds).
PostGenOutput generate_post_vanilla(const PostGenOptions& opts, ThreadPool* pool = nullptr);

}  // namespace cuzk::circuits::filecoin
