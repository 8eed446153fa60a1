#include "circuits/filecoin/c1_sparse.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "circuits/filecoin/c1_build.hpp"
#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/labels.hpp"
#include "circuits/native/merkle.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using ff::Fr;
using native::fr_from_le_bytes;
using native::fr_to_le_bytes;

// sha256(tag || 0x00 || a u64 LE || b u64 LE || c u64 LE): domain-separated
// pseudo-random 32 bytes for every synthetic choice.
Digest32 derive_bytes(std::string_view tag, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
  std::vector<std::uint8_t> msg(tag.begin(), tag.end());
  msg.push_back(0);
  for (std::uint64_t v : {a, b, c}) {
    for (int i = 0; i < 8; ++i) msg.push_back(std::uint8_t(v >> (8 * i)));
  }
  return native::sha256(msg);
}

Digest32 derive_fr32(std::string_view tag, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
  Digest32 d = derive_bytes(tag, a, b, c);
  native::trim_to_fr32(d);
  return d;
}

std::uint64_t le_u64(const Digest32& d) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(d[i]) << (8 * i);
  return v;
}

std::uint32_t data_period_log2(const SealProofInfo& info) {
  return std::min(kSparseDataPeriodLog2, info.comm_d_levels);
}

// Tree D over periodic data: a full tree over one block of 2^k leaves, and
// above level k every node is the hash of two equal children (up[l]).
class PeriodicShaTree {
 public:
  PeriodicShaTree(std::vector<Digest32> block, std::uint32_t block_levels, std::uint32_t levels)
      : block_levels_(block_levels),
        levels_(levels),
        block_(native::Sha256TreeHasher{}, std::vector<std::size_t>(block_levels, 2), std::move(block)) {
    up_.push_back(block_.root());
    for (std::uint32_t l = block_levels_; l < levels_; ++l) {
      up_.push_back(native::sha256_hash2(up_.back(), up_.back()));
    }
  }

  const Digest32& root() const { return up_.back(); }
  const Digest32& leaf(std::uint64_t node) const { return block_.leaf(node & block_mask()); }

  native::MerklePath<Digest32> path(std::uint64_t node) const {
    native::MerklePath<Digest32> p = block_.path(node & block_mask());
    for (std::uint32_t l = block_levels_; l < levels_; ++l) {
      p.levels.push_back({std::uint32_t((node >> l) & 1), {up_[l - block_levels_]}});
    }
    return p;
  }

 private:
  std::uint64_t block_mask() const { return (std::uint64_t(1) << block_levels_) - 1; }

  std::uint32_t block_levels_;
  std::uint32_t levels_;
  native::Sha256MerkleTree block_;
  std::vector<Digest32> up_;  // up_[i]: the node at level block_levels_ + i
};

// The 6 DRG labels of layer l and (l > 1) the 8 expander labels of layer
// l - 1, from the parents' columns (row l - 1 holds layer l).
template <class RowsOf>
std::vector<Digest32> layer_parents(std::uint32_t layer, RowsOf rows_of) {
  std::vector<Digest32> out;
  for (std::size_t j = 0; j < kBaseDegree; ++j) out.push_back(rows_of(j)[layer - 1]);
  if (layer > 1) {
    for (std::size_t j = kBaseDegree; j < kDegree; ++j) out.push_back(rows_of(j)[layer - 2]);
  }
  return out;
}

}  // namespace

SyntheticSealInputs sparse_c1_inputs(std::uint64_t seed) {
  SyntheticSealInputs in;
  in.prover_id = derive_fr32("cuzk.sparse_c1.prover_id", seed);
  in.sector_id = le_u64(derive_bytes("cuzk.sparse_c1.sector_id", seed)) & 0xffffffffULL;
  in.ticket = derive_fr32("cuzk.sparse_c1.ticket", seed);
  in.seed = derive_fr32("cuzk.sparse_c1.seed", seed);
  in.data_seed = le_u64(derive_bytes("cuzk.sparse_c1.data_seed", seed));
  return in;
}

Digest32 sparse_c1_data_leaf(SealProof proof, const SyntheticSealInputs& in, const SparseC1Options& opts,
                             std::uint64_t node) {
  if (opts.data == SparseC1Data::Zero) return Digest32{};
  const std::uint64_t period = std::uint64_t(1) << data_period_log2(seal_proof_info(proof));
  return derive_fr32("cuzk.sparse_c1.data", in.data_seed, node % period);
}

C1Output make_sparse_synthetic_c1(SealProof proof, std::uint64_t seed, ThreadPool* pool) {
  return make_sparse_synthetic_c1(proof, sparse_c1_inputs(seed), SparseC1Options{}, pool);
}

C1Output make_sparse_synthetic_c1(SealProof proof, const SyntheticSealInputs& in, const SparseC1Options& opts,
                                  ThreadPool* pool) {
  const SealProofInfo& info = seal_proof_info(proof);
  const std::uint32_t layers = info.layers;

  // 1-2. Periodic data and tree D.
  const std::uint32_t block_levels = data_period_log2(info);
  std::vector<Digest32> block(std::size_t(1) << block_levels);
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = sparse_c1_data_leaf(proof, in, opts, i);
  const PeriodicShaTree tree_d(std::move(block), block_levels, info.comm_d_levels);

  // 3. Public data.
  C1Output c1;
  c1.registered_proof = proof;
  c1.comm_d = tree_d.root();
  c1.ticket = in.ticket;
  c1.seed = in.seed;
  c1.replica_id = replica_id(in.prover_id, in.sector_id, in.ticket, c1.comm_d, porep_id(proof));
  const StackedGraph graph(info.nodes, porep_id(proof), info.api_version);

  std::vector<std::vector<std::uint64_t>> challenges(info.partitions);
  std::map<std::uint32_t, Parents> challenged;  // node -> its 14 parents, ascending
  for (std::uint32_t k = 0; k < info.partitions; ++k) {
    challenges[k] = interactive_challenges(info.nodes, c1.replica_id, c1.seed, info.challenges_per_partition, k);
    for (std::uint64_t c : challenges[k]) {
      challenged.try_emplace(std::uint32_t(c), graph.parents(std::uint32_t(c)));
    }
  }

  // 4. Columns: free random labels for parents that are not challenged,
  // create_label for challenged nodes (layer by layer, ascending nodes).
  std::map<std::uint32_t, std::vector<Digest32>> columns;
  for (const auto& [node, parents] : challenged) {
    columns[node].resize(layers);
    for (std::uint32_t p : parents) {
      if (challenged.count(p) != 0 || columns.count(p) != 0) continue;
      std::vector<Digest32>& col = columns[p];
      for (std::uint32_t l = 1; l <= layers; ++l) {
        col.push_back(derive_fr32("cuzk.sparse_c1.free_label", in.data_seed, p, l));
      }
    }
  }
  for (std::uint32_t l = 1; l <= layers; ++l) {
    for (const auto& [node, parents] : challenged) {
      const auto expanded = expand_parents(
          layer_parents(l, [&](std::size_t j) -> const std::vector<Digest32>& { return columns.at(parents[j]); }));
      columns.at(node)[l - 1] = create_label(c1.replica_id, l, node, expanded);
    }
  }

  // 5. Tree C and tree R.
  std::vector<std::uint32_t> touched;
  for (const auto& kv : columns) touched.push_back(kv.first);
  std::vector<Fr> column_hash(touched.size());
  auto hash_columns = [&](std::size_t begin, std::size_t end) {
    std::vector<Fr> rows(layers);
    for (std::size_t i = begin; i < end; ++i) {
      const auto& col = columns.at(touched[i]);
      for (std::uint32_t l = 0; l < layers; ++l) rows[l] = fr_from_le_bytes(col[l]);
      column_hash[i] = native::poseidon_hash(native::filecoin_poseidon(layers), rows);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(touched.size(), hash_columns);
  } else {
    hash_columns(0, touched.size());
  }
  const auto arities = native::tree_shape_arities(info.nodes, info.base_arity, info.sub_arity, info.top_arity);
  native::PoseidonSparseTree tree_c(native::PoseidonTreeHasher{}, arities, Fr::zero());
  for (std::size_t i = 0; i < touched.size(); ++i) tree_c.set_leaf(touched[i], column_hash[i]);
  native::PoseidonSparseTree tree_r(native::PoseidonTreeHasher{}, arities, Fr::zero());
  for (const auto& kv : challenged) {
    const std::uint32_t node = kv.first;
    tree_r.set_leaf(node, fr_from_le_bytes(columns.at(node)[layers - 1]) + fr_from_le_bytes(tree_d.leaf(node)));
  }
  c1.comm_r = fr_to_le_bytes(native::poseidon2(tree_c.root(), tree_r.root()));

  // 6. Vanilla proofs (trees are read-only from here: paths in parallel).
  const MerkleProofKind kind = tree_rc_kind(info);
  auto fr_bytes = [](const Fr& f) { return fr_to_le_bytes(f); };
  auto same = [](const Digest32& d) { return d; };
  auto column_proof = [&](std::uint32_t node) {
    ColumnProof cp;
    cp.column.index = node;
    cp.column.rows = columns.at(node);
    cp.inclusion_proof =
        to_merkle_proof(tree_c.path(node), tree_c.leaf(node), tree_c.root(), kind, info.base_levels, fr_bytes);
    return cp;
  };
  c1.vanilla_proofs.resize(info.partitions);
  const std::size_t per = info.challenges_per_partition;
  for (auto& part : c1.vanilla_proofs) part.resize(per);
  auto build = [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto node = std::uint32_t(challenges[t / per][t % per]);
      const Parents& parents = challenged.at(node);
      ChallengeProof& p = c1.vanilla_proofs[t / per][t % per];
      p.comm_d_proofs = to_merkle_proof(tree_d.path(node), tree_d.leaf(node), tree_d.root(), MerkleProofKind::Single,
                                        info.comm_d_levels, same);
      p.comm_r_last_proof =
          to_merkle_proof(tree_r.path(node), tree_r.leaf(node), tree_r.root(), kind, info.base_levels, fr_bytes);
      p.replica_column_proofs.c_x = column_proof(node);
      for (std::size_t j = 0; j < kBaseDegree; ++j) {
        p.replica_column_proofs.drg_parents.push_back(column_proof(parents[j]));
      }
      for (std::size_t j = kBaseDegree; j < kDegree; ++j) {
        p.replica_column_proofs.exp_parents.push_back(column_proof(parents[j]));
      }
      for (std::uint32_t l = 1; l <= layers; ++l) {
        const auto expanded = expand_parents(
            layer_parents(l, [&](std::size_t j) -> const std::vector<Digest32>& { return columns.at(parents[j]); }));
        p.labeling_proofs.push_back(LabelingProof{std::vector<Digest32>(expanded.begin(), expanded.end()), l, node});
      }
      p.encoding_proof = p.labeling_proofs.back();
    }
  };
  const std::size_t total = std::size_t(info.partitions) * per;
  if (pool != nullptr) {
    pool->parallel_for(total, build);
  } else {
    build(0, total);
  }
  return c1;
}

// ---------------------------------------------------------------- circuit relations

namespace {

struct RelCtx {
  const C1Output& c1;
  std::string base;  // "/vanilla_proofs/<key>/<k>/<i>"
  [[noreturn]] void fail(C1ErrorKind k, const std::string& rel, const std::string& detail) const {
    throw C1Error(k, base + rel, detail);
  }
  Fr fr(const Digest32& d, const std::string& rel) const {
    Fr x;
    if (!Fr::from_bytes_le(d, x)) fail(C1ErrorKind::NonCanonicalField, rel, "value >= r");
    return x;
  }
};

std::string proof_prefix(const MerkleProof& m) {
  return std::string("/data/") + (m.kind == MerkleProofKind::Single ? "Single"
                                  : m.kind == MerkleProofKind::Sub  ? "Sub"
                                                                    : "Top");
}

// The circuit's enforce_inclusion: the path's index bits are the public
// input `want_index`, and the root computed from `leaf` equals the global
// root variable.
void poseidon_inclusion(const RelCtx& ctx, const Fr& leaf, const MerkleProof& m, std::uint64_t want_index,
                        const Fr& root, const std::string& rel) {
  const std::string pre = rel + proof_prefix(m);
  if (m.leaf_index() != want_index) {
    ctx.fail(C1ErrorKind::ChallengeMismatch, pre,
             "path opens node " + std::to_string(m.leaf_index()) + ", public input is " + std::to_string(want_index));
  }
  Fr node = leaf;
  std::vector<Fr> group;
  for (const auto& e : m.levels()) {
    group.clear();
    for (const auto& h : e.hashes) group.push_back(ctx.fr(h, pre));
    group.insert(group.begin() + std::ptrdiff_t(e.index), node);
    node = native::poseidon_hash(native::filecoin_poseidon(group.size()), group);
  }
  if (node != root) ctx.fail(C1ErrorKind::PathMismatch, pre, "path does not hash to the global root");
}

void verify_challenge_relations(const RelCtx& ctx, const ChallengeProof& c, std::uint64_t want,
                                const StackedGraph& graph, std::uint32_t layers, const Fr& comm_c,
                                const Fr& comm_r_last) {
  // The circuit's challenge input is labeling_proofs[0].node.
  const std::uint64_t challenge = c.challenge();
  if (challenge != want) {
    ctx.fail(C1ErrorKind::ChallengeMismatch, "/labeling_proofs/0/node",
             "challenge " + std::to_string(challenge) + ", derived " + std::to_string(want));
  }
  // 1. Data leaf in tree D.
  const MerkleProof& d = c.comm_d_proofs;
  const Fr data = ctx.fr(d.leaf, "/comm_d_proofs" + proof_prefix(d) + "/leaf");
  if (d.leaf_index() != challenge) {
    ctx.fail(C1ErrorKind::ChallengeMismatch, "/comm_d_proofs" + proof_prefix(d), "path index is not the challenge");
  }
  Digest32 node = d.leaf;
  for (const auto& e : d.base) {
    (void)ctx.fr(e.hashes[0], "/comm_d_proofs" + proof_prefix(d));
    node = e.index == 0 ? native::sha256_hash2(node, e.hashes[0]) : native::sha256_hash2(e.hashes[0], node);
  }
  if (node != ctx.c1.comm_d) {
    ctx.fail(C1ErrorKind::PathMismatch, "/comm_d_proofs" + proof_prefix(d), "path does not hash to comm_d");
  }
  // 2. Parent columns in tree C at the graph parents.
  const auto& r = c.replica_column_proofs;
  const Parents parents = graph.parents(std::uint32_t(challenge));
  std::vector<std::vector<Digest32>> parent_rows(kDegree);
  for (std::size_t j = 0; j < kDegree; ++j) {
    const bool drg = j < kBaseDegree;
    const ColumnProof& col = drg ? r.drg_parents[j] : r.exp_parents[j - kBaseDegree];
    const std::string rel = std::string("/replica_column_proofs/") + (drg ? "drg_parents/" : "exp_parents/") +
                            std::to_string(drg ? j : j - kBaseDegree);
    if (col.column.index != parents[j] || col.inclusion_proof.leaf_index() != parents[j]) {
      ctx.fail(C1ErrorKind::ParentMismatch, rel + "/column/index",
               "column " + std::to_string(col.column.index) + ", graph parent " + std::to_string(parents[j]));
    }
    std::vector<Fr> rows;
    for (std::uint32_t l = 0; l < col.column.rows.size(); ++l) {
      rows.push_back(ctx.fr(col.column.rows[l], rel + "/column/rows/" + std::to_string(l)));
    }
    const Fr h = native::poseidon_hash(native::filecoin_poseidon(rows.size()), rows);
    poseidon_inclusion(ctx, h, col.inclusion_proof, parents[j], comm_c, rel + "/inclusion_proof");
    parent_rows[j] = col.column.rows;
  }
  // 4. Labels from the parent columns.
  std::vector<Fr> labels;
  for (std::uint32_t l = 1; l <= layers; ++l) {
    const auto expanded =
        expand_parents(layer_parents(l, [&](std::size_t j) -> const std::vector<Digest32>& { return parent_rows[j]; }));
    labels.push_back(fr_from_le_bytes(create_label(ctx.c1.replica_id, l, challenge, expanded)));
  }
  // 5. Encoding in tree R.
  poseidon_inclusion(ctx, labels.back() + data, c.comm_r_last_proof, challenge, comm_r_last, "/comm_r_last_proof");
  // 6. The column of the computed labels in tree C.
  const Fr cx = native::poseidon_hash(native::filecoin_poseidon(labels.size()), labels);
  poseidon_inclusion(ctx, cx, r.c_x.inclusion_proof, challenge, comm_c, "/replica_column_proofs/c_x/inclusion_proof");
}

}  // namespace

namespace {

// Global relations, then the challenges of partitions [first, end).
void verify_relations(const C1Output& c1, std::size_t first, std::size_t end, ThreadPool* pool) {
  // Counts, lengths and arities (the circuit's shape); its root checks are
  // redundant with the ones below but harmless.
  check_structure(c1);
  const SealProofInfo& info = c1.info();
  if (first >= end || end > info.partitions) {
    throw C1Error(C1ErrorKind::PartitionCount, "/vanilla_proofs/" + std::string(info.v1_name),
                  "no partition " + std::to_string(end - 1));
  }
  const RelCtx top{c1, ""};
  (void)top.fr(c1.replica_id, "/replica_id");
  (void)top.fr(c1.comm_d, "/comm_d");
  const Fr comm_r = top.fr(c1.comm_r, "/comm_r");
  const Fr comm_c = top.fr(c1.comm_c(), "/comm_c");
  const Fr comm_r_last = top.fr(c1.comm_r_last(), "/comm_r_last");
  if (native::poseidon2(comm_c, comm_r_last) != comm_r) {
    top.fail(C1ErrorKind::RootMismatch, "/comm_r", "comm_r != Poseidon2(comm_c, comm_r_last)");
  }
  const StackedGraph graph(info.nodes, porep_id(c1.registered_proof), info.api_version);
  std::vector<std::vector<std::uint64_t>> want(end - first);
  for (std::size_t k = first; k < end; ++k) {
    want[k - first] =
        interactive_challenges(info.nodes, c1.replica_id, c1.seed, info.challenges_per_partition, std::uint32_t(k));
  }
  const std::size_t per = info.challenges_per_partition;
  auto run = [&](std::size_t begin, std::size_t stop) {
    for (std::size_t t = begin; t < stop; ++t) {
      const std::size_t k = first + t / per, i = t % per;
      const RelCtx ctx{
          c1, "/vanilla_proofs/" + std::string(info.v1_name) + "/" + std::to_string(k) + "/" + std::to_string(i)};
      verify_challenge_relations(ctx, c1.vanilla_proofs[k][i], want[k - first][i], graph, info.layers, comm_c,
                                 comm_r_last);
    }
  };
  const std::size_t total = (end - first) * per;
  if (pool != nullptr) {
    pool->parallel_for(total, run);
  } else {
    run(0, total);
  }
}

}  // namespace

void verify_c1_circuit_relations(const C1Output& c1, ThreadPool* pool) {
  verify_relations(c1, 0, c1.info().partitions, pool);
}

void verify_c1_partition_circuit_relations(const C1Output& c1, std::size_t partition, ThreadPool* pool) {
  verify_relations(c1, partition, partition + 1, pool);
}

}  // namespace cuzk::circuits::filecoin
