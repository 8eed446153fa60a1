#include "circuits/filecoin/post_inputs.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "circuits/native/merkle.hpp"
#include "circuits/native/poseidon.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using native::fr_from_le_bytes;

void put_u64_le(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = std::uint8_t(v >> (8 * i));
}

std::uint64_t le_u64(const Digest32& d) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(d[i]) << (8 * i);
  return v;
}

std::string inclusion_field(std::size_t i) {
  return "vanilla_proof.sectors[0].inclusion_proofs[" + std::to_string(i) + "]";
}

}  // namespace

Digest32 post_randomness(const Digest32& raw) {
  Digest32 r = raw;
  r[31] &= 0x3f;
  return r;
}

Digest32 prover_id_from_actor(std::uint64_t actor_id) {
  Digest32 id{};
  std::size_t i = 0;
  do {
    std::uint8_t b = actor_id & 0x7f;
    actor_id >>= 7;
    if (actor_id != 0) b |= 0x80;
    id[i++] = b;
  } while (actor_id != 0);  // at most 10 bytes for a u64
  return id;
}

std::uint64_t post_challenge_index(PostApiVersion v, std::uint64_t sector_index, std::uint64_t challenge_count,
                                   std::uint64_t n) {
  return v == PostApiVersion::kV1_2 ? n : sector_index * challenge_count + n;
}

std::uint64_t post_leaf_challenge(const Digest32& randomness, std::uint64_t sector_id, std::uint64_t challenge_index,
                                  std::uint64_t nodes) {
  std::array<std::uint8_t, 48> msg{};
  std::copy(randomness.begin(), randomness.end(), msg.begin());
  put_u64_le(msg.data() + 32, sector_id);
  put_u64_le(msg.data() + 40, challenge_index);
  return le_u64(native::sha256(msg)) % nodes;
}

std::uint64_t winning_sector_challenge(const Digest32& randomness, const Digest32& prover_id, std::uint64_t n,
                                       std::uint64_t sector_set_len) {
  std::array<std::uint8_t, 72> msg{};
  std::copy(prover_id.begin(), prover_id.end(), msg.begin());
  std::copy(randomness.begin(), randomness.end(), msg.begin() + 32);
  put_u64_le(msg.data() + 64, n);
  return le_u64(native::sha256(msg)) % sector_set_len;
}

std::vector<std::uint64_t> vanilla_challenges(PostProof proof, const Digest32& randomness, std::uint32_t partition,
                                              std::size_t position, std::uint64_t sector_id) {
  const PostProofInfo& info = post_proof_info(proof);
  // The prover's PoStConfig view: sector_count 1 / challenge_count 66 for
  // Winning (sector_index 0), the window config otherwise.
  const std::uint64_t sector_index = std::uint64_t(partition) * info.config_sector_count + position;
  std::vector<std::uint64_t> out;
  out.reserve(info.config_challenge_count);
  for (std::uint64_t n = 0; n < info.config_challenge_count; ++n) {
    const std::uint64_t ci = post_challenge_index(info.api_version, sector_index, info.config_challenge_count, n);
    out.push_back(post_leaf_challenge(randomness, sector_id, ci, info.nodes));
  }
  return out;
}

PostPartition make_post_partition(PostProof proof, const Digest32& randomness, const Digest32& prover_id,
                                  std::uint32_t partition_index, std::vector<FallbackPostSectorProof> sectors) {
  const PostProofInfo& info = post_proof_info(proof);
  if (sectors.empty()) throw PostError(PostErrorKind::kSectorCount, std::nullopt, "", "no sectors");
  const std::size_t max_sectors = info.kind == PostKind::kWinning ? 1 : info.config_sector_count;
  if (sectors.size() > max_sectors) {
    throw PostError(PostErrorKind::kSectorCount, std::nullopt, "",
                    std::to_string(sectors.size()) + " sectors, one " + std::string(info.name) +
                        " partition holds at most " + std::to_string(max_sectors));
  }
  if (info.kind == PostKind::kWinning && partition_index != 0) {
    throw PostError(PostErrorKind::kSectorCount, std::nullopt, "partition_index", "WinningPoSt has one partition");
  }
  std::sort(sectors.begin(), sectors.end(), [](const auto& a, const auto& b) { return a.sector_id < b.sector_id; });
  for (std::size_t i = 1; i < sectors.size(); ++i) {
    if (sectors[i].sector_id == sectors[i - 1].sector_id) {
      throw PostError(PostErrorKind::kDuplicateSector, sectors[i].sector_id, "sector_id", "given twice");
    }
  }
  for (const auto& s : sectors) {
    if (s.sectors.size() != 1 || s.sectors[0].inclusion_proofs.size() != info.vanilla_challenges()) {
      throw PostError(PostErrorKind::kLength, s.sector_id, "vanilla_proof.sectors", "not the registered proof's shape");
    }
  }
  return PostPartition{proof, post_randomness(randomness), prover_id, partition_index, std::move(sectors)};
}

std::vector<PostSlot> post_slots(const PostPartition& p) {
  const PostProofInfo& info = p.info();
  std::vector<PostSlot> slots;
  slots.reserve(info.circuit_sector_count);
  if (info.kind == PostKind::kWinning) {
    // rfp single_partition_vanilla_proofs unrolls the 66 inclusion proofs;
    // the verifier's slot i is the same sector at sector_index i.
    const std::uint64_t id = p.sectors[0].sector_id;
    for (std::uint32_t i = 0; i < info.circuit_sector_count; ++i) {
      PostSlot s{0, i, {}};
      for (std::uint32_t n = 0; n < info.circuit_challenge_count; ++n) {
        const std::uint64_t ci = post_challenge_index(info.api_version, i, info.circuit_challenge_count, n);
        s.challenges.push_back(post_leaf_challenge(p.randomness, id, ci, info.nodes));
      }
      slots.push_back(std::move(s));
    }
    return slots;
  }
  for (std::size_t i = 0; i < p.sectors.size(); ++i) {
    slots.push_back(
        PostSlot{i, 0, vanilla_challenges(p.proof, p.randomness, p.partition_index, i, p.sectors[i].sector_id)});
  }
  while (slots.size() < info.circuit_sector_count) slots.push_back(slots.back());
  return slots;
}

std::vector<ff::Fr> post_public_inputs(const PostPartition& p) {
  std::vector<ff::Fr> in;
  const std::vector<PostSlot> slots = post_slots(p);
  in.reserve(slots.size() * (1 + p.info().circuit_challenge_count));
  for (const PostSlot& s : slots) {
    in.push_back(fr_from_le_bytes(p.sectors[s.sector].comm_r));
    for (std::uint64_t c : s.challenges) in.push_back(ff::Fr::from_u64(c));
  }
  return in;
}

namespace {

// The checks of one slot (see check_post_partition).
void check_slot(const PostPartition& p, const PostSlot& slot, PostPaths paths) {
  const native::PoseidonTreeHasher hasher;
  const FallbackPostSectorProof& sector = p.sectors[slot.sector];
  const PostSectorProof& sp = sector.sectors[0];
  const auto id = sector.sector_id;
  if (slot.first_inclusion == 0 &&
      native::fr_to_le_bytes(native::poseidon2(fr_from_le_bytes(sp.comm_c), fr_from_le_bytes(sp.comm_r_last))) !=
          sector.comm_r) {
    throw PostError(PostErrorKind::kCommRMismatch, id, "comm_r", "Poseidon2(comm_c, comm_r_last) differs");
  }
  for (std::size_t n = 0; n < slot.challenges.size(); ++n) {
    const std::size_t i = slot.first_inclusion + n;
    const MerkleProof& m = sp.inclusion_proofs[i];
    if (m.root != sp.comm_r_last) {
      throw PostError(PostErrorKind::kRootMismatch, id, inclusion_field(i) + ".root", "differs from comm_r_last");
    }
    if (m.leaf_index() != slot.challenges[n]) {
      throw PostError(
          PostErrorKind::kChallengeMismatch, id, inclusion_field(i),
          "opens leaf " + std::to_string(m.leaf_index()) + ", the challenge is " + std::to_string(slot.challenges[n]));
    }
    if (paths == PostPaths::kLeaveToCircuit) continue;
    native::MerklePath<ff::Fr> path;
    for (const PathElement& e : m.levels()) {
      native::MerklePath<ff::Fr>::Level l;
      l.index = std::uint32_t(e.index);
      for (const Digest32& h : e.hashes) l.siblings.push_back(fr_from_le_bytes(h));
      path.levels.push_back(std::move(l));
    }
    if (native::fr_to_le_bytes(native::root_from_path(hasher, fr_from_le_bytes(m.leaf), path)) != m.root) {
      throw PostError(PostErrorKind::kPathMismatch, id, inclusion_field(i), "the path does not hash to the root");
    }
  }
}

}  // namespace

void check_post_partition(const PostPartition& p, ThreadPool* pool, PostPaths paths) {
  const PostProofInfo& info = p.info();
  // Padding slots repeat the last sector's: only the distinct ones are checked.
  const std::size_t distinct = info.kind == PostKind::kWinning ? info.circuit_sector_count : p.sectors.size();
  const std::vector<PostSlot> slots = post_slots(p);
  if (pool == nullptr) {
    for (std::size_t i = 0; i < distinct; ++i) check_slot(p, slots[i], paths);
    return;
  }
  std::vector<std::optional<PostError>> errors(distinct);
  pool->parallel_for(distinct, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      try {
        check_slot(p, slots[i], paths);
      } catch (const PostError& e) {
        errors[i] = e;
        return;  // later slots of this chunk cannot be reported first
      }
    }
  });
  for (auto& e : errors) {
    if (e) throw *e;
  }
}

}  // namespace cuzk::circuits::filecoin
