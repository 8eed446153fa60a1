#include "circuits/filecoin/post_gen.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "circuits/filecoin/c1_build.hpp"
#include "circuits/filecoin/native_seal.hpp"
#include "circuits/native/merkle.hpp"
#include "circuits/native/poseidon.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using ff::Fr;
using native::fr_from_le_bytes;
using native::fr_to_le_bytes;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "generate_post_vanilla: %s\n", what);
  std::abort();
}

// A deterministic fr32 value: sha256(tag || seed || a || b) trimmed.
Digest32 derive(std::string_view tag, std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  std::vector<std::uint8_t> msg(tag.begin(), tag.end());
  for (std::uint64_t v : {seed, a, b}) {
    for (int i = 0; i < 8; ++i) msg.push_back(std::uint8_t(v >> (8 * i)));
  }
  return native::sha256_fr32(msg);
}

// A 2 KiB sector sealed natively (native_seal.hpp) with piece data derived
// from the seed and sector id.
NativeSeal seal_small(SealProof proof, const Digest32& prover_id, std::uint64_t sector_id, std::uint64_t data_seed,
                      ThreadPool* pool) {
  std::vector<Digest32> data(seal_proof_info(proof).nodes);
  for (std::size_t v = 0; v < data.size(); ++v) data[v] = derive("cuzk post data", data_seed, sector_id, v);
  const Digest32 ticket = derive("cuzk post ticket", data_seed, sector_id);
  return seal_natively(proof, data, prover_id, sector_id, ticket, pool);
}

MerkleProofKind kind_of(const gadgets::TreeShape& t) {
  return t.top_arity ? MerkleProofKind::Top : t.sub_arity ? MerkleProofKind::Sub : MerkleProofKind::Single;
}

template <class Tree>
FallbackPostSectorProof make_proof(const PostProofInfo& info, std::uint64_t sector_id, const Fr& comm_c,
                                   const Tree& tree, const std::vector<std::uint64_t>& challenges) {
  FallbackPostSectorProof p;
  p.sector_id = sector_id;
  p.comm_r = fr_to_le_bytes(native::poseidon2(comm_c, tree.root()));
  PostSectorProof s;
  s.comm_c = fr_to_le_bytes(comm_c);
  s.comm_r_last = fr_to_le_bytes(tree.root());
  auto conv = [](const Fr& f) { return fr_to_le_bytes(f); };
  for (std::uint64_t c : challenges) {
    s.inclusion_proofs.push_back(
        to_merkle_proof(tree.path(c), tree.leaf(c), tree.root(), kind_of(info.tree), info.base_levels, conv));
  }
  p.sectors.push_back(std::move(s));
  return p;
}

}  // namespace

PostGenOutput generate_post_vanilla(const PostGenOptions& opts, ThreadPool* pool) {
  const PostProofInfo& info = post_proof_info(opts.proof);
  if (opts.sectors == 0) die("no sectors");
  if (info.kind == PostKind::kWinning && (opts.sectors != 1 || opts.partition != 0)) {
    die("WinningPoSt proves one sector in partition 0");
  }
  if (info.kind == PostKind::kWindow && opts.sectors > info.config_sector_count) {
    die("more sectors than one partition holds");
  }
  if (opts.mode == PostGenMode::kSealed && info.sector_bytes != 2048) die("kSealed is for 2 KiB only");

  PostGenOutput out;
  out.prover_id = prover_id_from_actor(opts.actor_id);
  out.randomness = post_randomness(opts.randomness ? *opts.randomness : derive("cuzk post randomness", opts.seed, 0));
  const auto arities =
      native::tree_shape_arities(info.nodes, info.tree.base_arity, info.tree.sub_arity, info.tree.top_arity);
  for (std::size_t i = 0; i < opts.sectors; ++i) {
    const std::uint64_t id = opts.first_sector_id + i;
    const auto challenges = vanilla_challenges(opts.proof, out.randomness, opts.partition, i, id);
    if (opts.mode == PostGenMode::kSealed) {
      // The seal proof of the same size (V1_1: the current network's).
      const SealProof seal = SealProof::StackedDrg2KiBV1_1;
      const NativeSeal sealed = seal_small(seal, out.prover_id, id, opts.seed, pool);
      if (sealed.tree_r.arities() != arities) die("the seal's tree R is not the PoSt's shape");
      out.sectors.push_back(make_proof(info, id, sealed.tree_c.root(), sealed.tree_r, challenges));
    } else {
      native::PoseidonSparseTree tree(native::PoseidonTreeHasher{}, arities, Fr::zero());
      for (std::uint64_t c : challenges) {
        tree.set_leaf(c, fr_from_le_bytes(derive("cuzk post leaf", opts.seed, id, c)));
      }
      const Fr comm_c = fr_from_le_bytes(derive("cuzk post comm_c", opts.seed, id));
      out.sectors.push_back(make_proof(info, id, comm_c, tree, challenges));
    }
  }
  return out;
}

}  // namespace cuzk::circuits::filecoin
