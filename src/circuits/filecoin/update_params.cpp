#include "circuits/filecoin/update_params.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits::filecoin {
namespace {

constexpr std::uint64_t k1K = 1 << 5, k2K = 1 << 6, k4K = 1 << 7, k8K = 1 << 8, k16K = 1 << 9, k32K = 1 << 10,
                        k8M = 1 << 18, k16M = 1 << 19, k512M = 1 << 24, k32G = 1ull << 30, k64G = 1ull << 31;

constexpr std::array<UpdateProofInfo, 5> kProofs = {{
    {UpdateProof::StackedDrg2KiBV1, "StackedDrg2KiBV1", k2K * 32, k2K},
    {UpdateProof::StackedDrg8MiBV1, "StackedDrg8MiBV1", k8M * 32, k8M},
    {UpdateProof::StackedDrg512MiBV1, "StackedDrg512MiBV1", k512M * 32, k512M},
    {UpdateProof::StackedDrg32GiBV1, "StackedDrg32GiBV1", k32G * 32, k32G},
    {UpdateProof::StackedDrg64GiBV1, "StackedDrg64GiBV1", k64G * 32, k64G},
}};

[[noreturn]] void die_size(const char* what, std::uint64_t nodes) {
  std::fprintf(stderr, "%s: sector of %llu nodes is not an update size\n", what,
               static_cast<unsigned long long>(nodes));
  std::abort();
}

// The bits of a field element, least significant first.
std::vector<bool> fr_bits_le(const Fr& x) {
  const auto v = x.to_int();
  std::vector<bool> bits(Fr::kBits);
  for (std::size_t i = 0; i < Fr::kBits; ++i) bits[i] = (v.limb[i / 64] >> (i % 64)) & 1;
  return bits;
}

// Fr::CAPACITY.
constexpr std::size_t kCapacity = Fr::kBits - 1;

std::vector<std::uint32_t> gen_challenges(const Fr& comm_r_new, std::size_t rb, std::uint32_t partition_bits,
                                          std::size_t count, std::uint64_t first_digest) {
  const std::size_t per_digest = kCapacity / rb;
  std::vector<std::uint32_t> out;
  out.reserve(count);
  std::uint64_t digest_index = first_digest;
  std::vector<bool> bits;
  std::size_t i = 0;
  while (out.size() < count) {
    if (i == 0) {
      const Fr pre[2] = {comm_r_new, Fr::from_u64(digest_index)};
      bits = fr_bits_le(native::poseidon_hash(gen_randomness_constants(), pre));
    }
    std::uint32_t c = 0;
    for (std::size_t b = 0; b < rb; ++b) c |= std::uint32_t(bits[i * rb + b]) << b;
    out.push_back(c | partition_bits);
    if (++i == per_digest) {
      i = 0;
      ++digest_index;
    }
  }
  return out;
}

}  // namespace

std::span<const UpdateProofInfo> update_proofs() { return kProofs; }

const UpdateProofInfo& update_proof_info(UpdateProof p) {
  const auto i = static_cast<std::size_t>(p);
  if (i >= kProofs.size()) {
    std::fprintf(stderr, "update_proof_info: bad enum %zu\n", i);
    std::abort();
  }
  return kProofs[i];
}

std::optional<UpdateProof> update_proof_from_name(std::string_view name) {
  for (const auto& p : kProofs)
    if (p.name == name) return p.proof;
  return std::nullopt;
}

std::optional<UpdateProof> update_proof_from_id(std::uint64_t registered_id) {
  if (registered_id >= std::size(kProofs)) return std::nullopt;
  return static_cast<UpdateProof>(registered_id);
}

std::optional<UpdateProof> update_proof_from_sector_bytes(std::uint64_t bytes) {
  for (const auto& p : kProofs)
    if (p.sector_bytes == bytes) return p.proof;
  return std::nullopt;
}

bool update_nodes_allowed(std::uint64_t nodes) {
  for (std::uint64_t n : {k1K, k2K, k4K, k8K, k16K, k32K, k8M, k16M, k512M, k32G, k64G})
    if (n == nodes) return true;
  return false;
}

std::size_t update_partition_count(std::uint64_t nodes) {
  return nodes <= k8K ? 1 : nodes <= k32K ? 2 : nodes <= k16M ? 4 : 16;
}

std::size_t update_challenge_count(std::uint64_t nodes) { return nodes <= k16M ? 10 : 86; }

std::size_t update_challenge_count_poseidon(std::uint64_t nodes) {
  return update_challenge_count(nodes) * update_partition_count(nodes);
}

std::size_t update_apex_leaf_count(std::uint64_t nodes) { return nodes <= k8K ? 8 : 128; }

std::array<std::size_t, 6> update_hs(std::uint64_t nodes) {
  if (nodes <= k32K) return {1, 1, 1, 1, 1, 1};
  return {7, 8, 9, 10, 11, 12};
}

std::size_t update_h_default(std::uint64_t nodes) { return update_hs(nodes)[3]; }

std::optional<std::uint64_t> update_h_select(std::uint64_t nodes, std::size_t h) {
  const auto hs = update_hs(nodes);
  for (std::size_t i = 0; i < hs.size(); ++i)
    if (hs[i] == h) return std::uint64_t(1) << i;
  return std::nullopt;
}

gadgets::TreeShape update_tree_r_shape(std::uint64_t nodes) {
  switch (nodes) {
    case k1K:
      return {8, 4, 0};
    case k2K:
      return {8, 0, 0};
    case k4K:
      return {8, 2, 0};
    case k8K:
      return {8, 4, 0};
    case k16K:
      return {8, 8, 0};
    case k32K:
      return {8, 8, 2};
    case k8M:
      return {8, 0, 0};
    case k16M:
      return {8, 2, 0};
    case k512M:
      return {8, 0, 0};
    case k32G:
      return {8, 8, 0};
    case k64G:
      return {8, 8, 2};
    default:
      die_size("update_tree_r_shape", nodes);
  }
}

UpdateLayout update_layout(std::uint64_t nodes) {
  if (!update_nodes_allowed(nodes)) die_size("update_layout", nodes);
  UpdateLayout l;
  l.nodes = nodes;
  l.challenge_count = update_challenge_count(nodes);
  l.challenge_bit_len = std::size_t(std::countr_zero(nodes));
  l.partition_count = update_partition_count(nodes);
  l.partition_bit_len = std::size_t(std::countr_zero(l.partition_count));
  l.apex_leaf_count = update_apex_leaf_count(nodes);
  l.apex_leaf_bit_len = std::size_t(std::countr_zero(l.apex_leaf_count));
  l.tree_r = update_tree_r_shape(nodes);
  return l;
}

const native::PoseidonConstants& gen_randomness_constants() {
  static const native::PoseidonConstants c =
      native::PoseidonConstants::with_domain_tag(2, Fr::from_u64(std::uint64_t(1) << 40));
  return c;
}

Fr update_phi(const Fr& comm_d_new, const Fr& comm_r_old) {
  const Fr pre[2] = {comm_d_new, comm_r_old};
  return native::poseidon_hash(gen_randomness_constants(), pre);
}

Fr update_rho(const Fr& phi, std::uint32_t high) {
  const Fr pre[2] = {phi, Fr::from_u64(high)};
  return native::poseidon_hash(gen_randomness_constants(), pre);
}

std::vector<std::uint32_t> update_challenges(std::uint64_t nodes, const Fr& comm_r_new, std::size_t k) {
  const UpdateLayout l = update_layout(nodes);
  if (k >= l.partition_count) {
    std::fprintf(stderr, "update_challenges: partition %zu >= %zu\n", k, l.partition_count);
    std::abort();
  }
  const std::size_t rb = l.random_bits_per_challenge();
  const std::size_t per_digest = kCapacity / rb;
  // rfp computes ceil(count / per_digest) in f32; exact for these small values.
  const std::size_t digests_per_partition = (l.challenge_count + per_digest - 1) / per_digest;
  return gen_challenges(comm_r_new, rb, std::uint32_t(k << rb), l.challenge_count, k * digests_per_partition);
}

std::vector<std::uint32_t> update_challenges_poseidon(std::uint64_t nodes, const Fr& comm_r_new) {
  const UpdateLayout l = update_layout(nodes);
  return gen_challenges(comm_r_new, l.challenge_bit_len, 0, update_challenge_count_poseidon(nodes), 0);
}

std::optional<std::uint64_t> update_k_and_h_select(std::uint64_t nodes, std::size_t k, std::size_t h) {
  if (!update_nodes_allowed(nodes)) return std::nullopt;
  const UpdateLayout l = update_layout(nodes);
  const auto hsel = update_h_select(nodes, h);
  if (k >= l.partition_count || !hsel) return std::nullopt;
  return std::uint64_t(k) | (*hsel << l.partition_bit_len);
}

std::vector<Fr> update_public_inputs(std::uint64_t nodes, std::size_t k, std::size_t h, const Fr& comm_r_old,
                                     const Fr& comm_d_new, const Fr& comm_r_new) {
  const auto kh = update_k_and_h_select(nodes, k, h);
  if (!kh) {
    std::fprintf(stderr, "update_public_inputs: bad k %zu or h %zu\n", k, h);
    std::abort();
  }
  return {Fr::from_u64(*kh), comm_r_old, comm_d_new, comm_r_new};
}

}  // namespace cuzk::circuits::filecoin
