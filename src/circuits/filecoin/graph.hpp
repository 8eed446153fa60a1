// SDR graph parents exactly as rust-fil-proofs generates them
// (storage-proofs-core drgraph.rs, crypto/feistel.rs; storage-proofs-porep
// stacked/vanilla/graph.rs, cache.rs).
//
// Each node v has 14 parents: 6 DRG ("base") parents in the same layer and
// 8 expander parents in the previous layer.
//
// DRG (BucketGraph, degree 6, m' = 5): for v >= 2 a ChaCha8 stream seeded with
// drg_seed(28 B) || v as u32 LE gives, per parent, two u64 draws r1, r2:
//   M = v * m'                      metagraph node
//   B = ceil(log2 M)                bucket count
//   b = r1 % B + 1
//   hi = min(M, 2^b), lo = max(2, hi >> 1)
//   d  = lo + r2 % (hi - lo + 1)
//   p  = (M - d) / m',  replaced by v - 1 if p == v
// V1.0.0 writes the 5 draws to slots 0..4 and v - 1 to slot 5; V1.1.0 puts
// v - 1 in slot 0 and the draws in 1..5. Nodes 0 and 1 have all-zero parents.
// ("rng.gen::<u64>() % n", not rand's gen_range: rfp never calls gen_range.)
//
// Expander (degree 8): a 3-round Feistel permutation over [0, 8N), keys
// from sha256("Filecoin_Feistel" || porep_id) as four u64 LE (the fourth is
// unused). Parent i of v is permute(8v + i) / 8. The domain is 2·h bits, h
// the smallest with 4^h >= 8N; out-of-range outputs are re-encrypted (cycle
// walking). Round: L, R -> R, L ^ (F(R, k) & mask_h) with F = the first 8
// bytes (BE) of BLAKE2b-512(R as u64 BE || k as u64 BE). V1.0.0 truncates
// the permuted index to u32 before dividing by 8 (only matters above 2^29
// nodes); V1.1.0 divides the u64.
//
// Parent cache file: per node 14 u32 LE (6 DRG then 8 expander), node order.
// Its name is v28-sdr-parent-<hex sha256("poseidon_hasher" || graph
// identifier || 4 Feistel keys u64 LE || node count u32 LE)>.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "circuits/filecoin/registry.hpp"
#include "circuits/native/sha256.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

inline constexpr std::size_t kBaseDegree = 6;
inline constexpr std::size_t kExpDegree = 8;
inline constexpr std::size_t kDegree = kBaseDegree + kExpDegree;  // 14
inline constexpr std::size_t kParentCacheBytesPerNode = kDegree * 4;

using DrgSeed = std::array<std::uint8_t, 28>;
using FeistelKeys = std::array<std::uint64_t, 4>;
using Parents = std::array<std::uint32_t, kDegree>;

// sha256(dst || porep_id): rfp derive_porep_domain_seed.
native::Digest32 porep_domain_seed(std::string_view dst, const PorepId& porep_id);
DrgSeed drg_seed(const PorepId& porep_id);          // "Filecoin_DRSample", first 28 bytes
FeistelKeys feistel_keys(const PorepId& porep_id);  // "Filecoin_Feistel", 4 x u64 LE

// ChaCha with 8 rounds, 256-bit key = seed, 64-bit block counter from 0,
// 64-bit stream id 0 (rand_chacha 0.3 ChaCha8Rng::from_seed). next_u64 takes
// two consecutive u32 outputs, low word first (rand_core BlockRng).
class ChaCha8Rng {
 public:
  explicit ChaCha8Rng(const std::array<std::uint8_t, 32>& seed);
  std::uint32_t next_u32();
  std::uint64_t next_u64();

 private:
  void refill();
  std::array<std::uint32_t, 16> key_state_{};
  std::array<std::uint32_t, 16> block_{};
  std::uint64_t counter_ = 0;
  std::size_t used_words_ = 16;
};

// Unkeyed BLAKE2b-512 of a message of at most 128 bytes (one compression).
std::array<std::uint8_t, 64> blake2b512_short(std::span<const std::uint8_t> msg);

// rfp crypto/feistel.rs.
struct FeistelDomain {
  std::uint64_t left_mask;
  std::uint64_t right_mask;
  std::uint32_t half_bits;
};
FeistelDomain feistel_domain(std::uint64_t num_elements);
std::uint64_t feistel_permute(std::uint64_t num_elements, std::uint64_t index, const FeistelKeys& keys,
                              const FeistelDomain& domain);
std::uint64_t feistel_invert(std::uint64_t num_elements, std::uint64_t index, const FeistelKeys& keys,
                             const FeistelDomain& domain);

// The stacked (DRG + expander) graph of one sector size and porep id.
class StackedGraph {
 public:
  StackedGraph(std::uint64_t nodes, const PorepId& porep_id, ApiVersion api_version);
  static StackedGraph for_proof(SealProof p);

  std::uint64_t nodes() const { return nodes_; }
  ApiVersion api_version() const { return api_version_; }
  const DrgSeed& drg_seed() const { return drg_seed_; }
  const FeistelKeys& feistel_keys() const { return feistel_keys_; }

  void drg_parents(std::uint32_t node, std::span<std::uint32_t, kBaseDegree> out) const;
  void expander_parents(std::uint32_t node, std::span<std::uint32_t, kExpDegree> out) const;
  Parents parents(std::uint32_t node) const;  // 6 DRG then 8 expander

  // rfp ParameterSetMetadata::identifier() (hasher = poseidon_hasher).
  std::string identifier() const;
  // "v28-sdr-parent-<hex>", the parent_cache.json key.
  std::string parent_cache_name() const;

  // Cache bytes of nodes [first, first + out.size() / 56).
  void write_parent_cache(std::uint64_t first_node, std::span<std::uint8_t> out, ThreadPool* pool = nullptr) const;
  std::vector<std::uint8_t> parent_cache(ThreadPool* pool = nullptr) const;
  // sha256 of the whole cache, generated in bounded chunks (any size).
  native::Digest32 parent_cache_sha256(ThreadPool* pool = nullptr) const;

 private:
  std::uint64_t nodes_;
  ApiVersion api_version_;
  DrgSeed drg_seed_;
  FeistelKeys feistel_keys_;
  FeistelDomain feistel_domain_;
};

std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace cuzk::circuits::filecoin
