#include "circuits/filecoin/registry.hpp"

#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits::filecoin {
namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

// One row per size; the V1_1 twin differs only in name, id and api version.
// Columns: bytes, layers, partitions, minimum total challenges, sub, top, base levels.
// Base levels: 64 = 8^2, 2^18 = 8^6, 2^24 = 8^8; 32 GiB is 8 base trees of
// 8^9 leaves under one arity-8 sub level; 64 GiB is 16 such trees, sub 8, top 2.
constexpr SealProofInfo make(SealProof p, std::string_view name, std::string_view v1, std::uint64_t id, ApiVersion v,
                             std::uint64_t bytes, std::uint32_t layers, std::uint32_t partitions,
                             std::uint32_t min_challenges, std::uint32_t sub, std::uint32_t top,
                             std::uint32_t base_levels, std::uint32_t d_levels) {
  return SealProofInfo{p,     name,       v1,     id,          v,
                       bytes, bytes / 32, layers, partitions,  (min_challenges + partitions - 1) / partitions,
                       8,     sub,        top,    base_levels, d_levels};
}

constexpr std::array<SealProofInfo, 10> kProofs = {
    make(SealProof::StackedDrg2KiBV1, "StackedDrg2KiBV1", "StackedDrg2KiBV1", 0, ApiVersion::V1_0_0, 2 * kKiB, 2, 1, 2,
         0, 0, 2, 6),
    make(SealProof::StackedDrg8MiBV1, "StackedDrg8MiBV1", "StackedDrg8MiBV1", 1, ApiVersion::V1_0_0, 8 * kMiB, 2, 1, 2,
         0, 0, 6, 18),
    make(SealProof::StackedDrg512MiBV1, "StackedDrg512MiBV1", "StackedDrg512MiBV1", 2, ApiVersion::V1_0_0, 512 * kMiB,
         2, 1, 2, 0, 0, 8, 24),
    make(SealProof::StackedDrg32GiBV1, "StackedDrg32GiBV1", "StackedDrg32GiBV1", 3, ApiVersion::V1_0_0, 32 * kGiB, 11,
         10, 176, 8, 0, 9, 30),
    make(SealProof::StackedDrg64GiBV1, "StackedDrg64GiBV1", "StackedDrg64GiBV1", 4, ApiVersion::V1_0_0, 64 * kGiB, 11,
         10, 176, 8, 2, 9, 31),
    make(SealProof::StackedDrg2KiBV1_1, "StackedDrg2KiBV1_1", "StackedDrg2KiBV1", 5, ApiVersion::V1_1_0, 2 * kKiB, 2, 1,
         2, 0, 0, 2, 6),
    make(SealProof::StackedDrg8MiBV1_1, "StackedDrg8MiBV1_1", "StackedDrg8MiBV1", 6, ApiVersion::V1_1_0, 8 * kMiB, 2, 1,
         2, 0, 0, 6, 18),
    make(SealProof::StackedDrg512MiBV1_1, "StackedDrg512MiBV1_1", "StackedDrg512MiBV1", 7, ApiVersion::V1_1_0,
         512 * kMiB, 2, 1, 2, 0, 0, 8, 24),
    make(SealProof::StackedDrg32GiBV1_1, "StackedDrg32GiBV1_1", "StackedDrg32GiBV1", 8, ApiVersion::V1_1_0, 32 * kGiB,
         11, 10, 176, 8, 0, 9, 30),
    make(SealProof::StackedDrg64GiBV1_1, "StackedDrg64GiBV1_1", "StackedDrg64GiBV1", 9, ApiVersion::V1_1_0, 64 * kGiB,
         11, 10, 176, 8, 2, 9, 31),
};

}  // namespace

std::span<const SealProofInfo> seal_proofs() { return kProofs; }

const SealProofInfo& seal_proof_info(SealProof p) {
  const auto i = static_cast<std::size_t>(p);
  if (i >= kProofs.size()) {
    std::fprintf(stderr, "seal_proof_info: bad enum %zu\n", i);
    std::abort();
  }
  return kProofs[i];
}

std::optional<SealProof> seal_proof_from_name(std::string_view name) {
  for (const auto& info : kProofs) {
    if (info.name == name) return info.proof;
  }
  return std::nullopt;
}

PorepId porep_id_from_number(std::uint64_t registered_id, std::uint64_t nonce) {
  PorepId id{};
  for (int i = 0; i < 8; ++i) {
    id[i] = std::uint8_t(registered_id >> (8 * i));
    id[8 + i] = std::uint8_t(nonce >> (8 * i));
  }
  return id;
}

PorepId porep_id(SealProof p) { return porep_id_from_number(seal_proof_info(p).registered_id); }

}  // namespace cuzk::circuits::filecoin
