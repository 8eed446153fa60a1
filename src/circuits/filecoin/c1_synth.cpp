#include "circuits/filecoin/c1_synth.hpp"

#include <cstdio>
#include <cstdlib>

#include "circuits/filecoin/c1_build.hpp"
#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/labels.hpp"
#include "circuits/filecoin/native_seal.hpp"
#include "circuits/native/merkle.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using ff::Fr;
using native::fr_to_le_bytes;

}  // namespace

C1Output make_synthetic_c1(SealProof proof, const SyntheticSealInputs& in, ThreadPool* pool) {
  const SealProofInfo& info = seal_proof_info(proof);
  if (info.nodes > (std::uint64_t(1) << 18)) {
    std::fprintf(stderr, "make_synthetic_c1: %s is too large to synthesise\n", info.name.data());
    std::abort();
  }
  const std::size_t n = info.nodes;

  // Piece data: fr32 nodes from a splitmix64 stream.
  std::vector<Digest32> data(n);
  std::uint64_t x = in.data_seed;
  for (auto& d : data) {
    for (std::size_t w = 0; w < 4; ++w) {
      x += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      for (std::size_t b = 0; b < 8; ++b) d[8 * w + b] = std::uint8_t(z >> (8 * b));
    }
    native::trim_to_fr32(d);
  }

  C1Output c1;
  c1.registered_proof = proof;
  c1.ticket = in.ticket;
  c1.seed = in.seed;
  const NativeSeal sealed = seal_natively(proof, data, in.prover_id, in.sector_id, in.ticket, pool);
  const native::Sha256MerkleTree& tree_d = sealed.tree_d;
  const native::PoseidonMerkleTree& tree_c = sealed.tree_c;
  const native::PoseidonMerkleTree& tree_r = sealed.tree_r;
  const StackedGraph& graph = sealed.graph;
  const std::vector<std::vector<Digest32>>& labels = sealed.labels;
  c1.comm_d = tree_d.root();
  c1.replica_id = sealed.replica_id;
  c1.comm_r = fr_to_le_bytes(native::poseidon2(tree_c.root(), tree_r.root()));

  const MerkleProofKind rc_kind = tree_rc_kind(info);
  auto fr_bytes = [](const Fr& f) { return fr_to_le_bytes(f); };
  auto same = [](const Digest32& d) { return d; };
  auto column_proof = [&](std::uint32_t node) {
    ColumnProof c;
    c.column.index = node;
    for (std::size_t l = 0; l < info.layers; ++l) c.column.rows.push_back(labels[l][node]);
    c.inclusion_proof =
        to_merkle_proof(tree_c.path(node), tree_c.leaf(node), tree_c.root(), rc_kind, info.base_levels, fr_bytes);
    return c;
  };

  c1.vanilla_proofs.resize(info.partitions);
  for (std::uint32_t k = 0; k < info.partitions; ++k) {
    for (std::uint64_t ch : interactive_challenges(n, c1.replica_id, c1.seed, info.challenges_per_partition, k)) {
      const auto node = std::uint32_t(ch);
      ChallengeProof p;
      p.comm_d_proofs = to_merkle_proof(tree_d.path(node), tree_d.leaf(node), tree_d.root(), MerkleProofKind::Single,
                                        info.comm_d_levels, same);
      p.comm_r_last_proof =
          to_merkle_proof(tree_r.path(node), tree_r.leaf(node), tree_r.root(), rc_kind, info.base_levels, fr_bytes);
      p.replica_column_proofs.c_x = column_proof(node);
      const Parents parents = graph.parents(node);
      for (std::size_t j = 0; j < kBaseDegree; ++j) {
        p.replica_column_proofs.drg_parents.push_back(column_proof(parents[j]));
      }
      for (std::size_t j = kBaseDegree; j < kDegree; ++j) {
        p.replica_column_proofs.exp_parents.push_back(column_proof(parents[j]));
      }
      for (std::uint32_t layer = 1; layer <= info.layers; ++layer) {
        const auto expanded = expand_parents(parent_labels(graph, labels, layer, node));
        p.labeling_proofs.push_back(
            LabelingProof{std::vector<Digest32>(expanded.begin(), expanded.end()), layer, node});
      }
      p.encoding_proof = p.labeling_proofs.back();
      c1.vanilla_proofs[k].push_back(std::move(p));
    }
  }
  return c1;
}

}  // namespace cuzk::circuits::filecoin
