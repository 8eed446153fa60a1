#include "circuits/filecoin/derive.hpp"

#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits::filecoin {

Digest32 replica_id(const Digest32& prover_id, std::uint64_t sector_id, const Digest32& ticket, const Digest32& comm_d,
                    const PorepId& porep_id) {
  native::Sha256 h;
  h.update(prover_id);
  std::uint8_t sector_be[8];
  for (int i = 0; i < 8; ++i) sector_be[i] = std::uint8_t(sector_id >> (56 - 8 * i));
  h.update(sector_be);
  h.update(ticket);
  h.update(comm_d);
  h.update(porep_id);
  Digest32 d = h.finish();
  native::trim_to_fr32(d);
  return d;
}

std::uint64_t le256_mod(const Digest32& x, std::uint64_t m) {
  if (m == 0) {
    std::fprintf(stderr, "le256_mod: zero modulus\n");
    std::abort();
  }
  // Horner over 64-bit limbs, most significant first: r = (r * 2^64 + limb) mod m.
  unsigned __int128 r = 0;
  for (int limb = 3; limb >= 0; --limb) {
    std::uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | x[8 * limb + b];
    r = ((r << 64) | v) % m;
  }
  return std::uint64_t(r);
}

std::vector<std::uint64_t> interactive_challenges(std::uint64_t nodes, const Digest32& replica_id, const Digest32& seed,
                                                  std::uint32_t challenges_per_partition, std::uint32_t partition) {
  std::vector<std::uint64_t> out;
  out.reserve(challenges_per_partition);
  native::Sha256 h;
  for (std::uint32_t i = 0; i < challenges_per_partition; ++i) {
    const std::uint32_t j = challenges_per_partition * partition + i;
    const std::uint8_t j_le[4] = {std::uint8_t(j), std::uint8_t(j >> 8), std::uint8_t(j >> 16), std::uint8_t(j >> 24)};
    h.update(replica_id);
    h.update(seed);
    h.update(j_le);
    out.push_back(le256_mod(h.finish(), nodes - 1) + 1);
  }
  return out;
}

}  // namespace cuzk::circuits::filecoin
