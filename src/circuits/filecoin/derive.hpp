// Public data of a PoRep derived from the C1 inputs, as rust-fil-proofs does:
//
//   replica_id = sha256(prover_id || sector_id u64 BE || ticket || comm_d ||
//                porep_id[32]) with bits 6,7 of byte 31 cleared (Fr-safe)
//                (storage-proofs-porep stacked/vanilla/params.rs
//                generate_replica_id).
//   interactive challenge i of partition k (n per partition), j = n*k + i:
//                c = (sha256(replica_id || seed || j u32 LE) read as a LE
//                256-bit integer) mod (nodes - 1) + 1, so node 0 is never
//                challenged (stacked/vanilla/challenges.rs). The formula is
//                the same for api versions 1.0.0 and 1.1.0; only synthetic
//                and non-interactive PoRep (not handled) differ.
#pragma once

#include <cstdint>
#include <vector>

#include "circuits/filecoin/registry.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {

using native::Digest32;

Digest32 replica_id(const Digest32& prover_id, std::uint64_t sector_id, const Digest32& ticket, const Digest32& comm_d,
                    const PorepId& porep_id);

std::vector<std::uint64_t> interactive_challenges(std::uint64_t nodes, const Digest32& replica_id, const Digest32& seed,
                                                  std::uint32_t challenges_per_partition, std::uint32_t partition);

// (LE 256-bit integer `x`) mod m, m >= 1.
std::uint64_t le256_mod(const Digest32& x, std::uint64_t m);

}  // namespace cuzk::circuits::filecoin
