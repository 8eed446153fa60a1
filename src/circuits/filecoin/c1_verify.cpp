// verify_c1: the checks of rust-fil-proofs' vanilla verification
// (stacked/vanilla/proof_scheme.rs verify_all_partitions, params.rs
// Proof::verify) that a C2 prover can run on its input before spending GPU
// time: challenges, parents, every Merkle path, column hashes, labels and
// encodings.
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/labels.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using ff::Fr;

struct Ctx {
  const C1Output& c1;
  std::string base;  // "/vanilla_proofs/<key>/<k>/<i>"
  [[noreturn]] void fail(C1ErrorKind k, const std::string& rel, const std::string& detail) const {
    throw C1Error(k, base + rel, detail);
  }
};

std::string merkle_path_prefix(const MerkleProof& m) {
  return std::string("/data/") + (m.kind == MerkleProofKind::Single ? "Single"
                                  : m.kind == MerkleProofKind::Sub  ? "Sub"
                                                                    : "Top");
}

Fr to_fr(const Ctx& ctx, const Digest32& d, const std::string& rel) {
  Fr x;
  if (!Fr::from_bytes_le(d, x)) ctx.fail(C1ErrorKind::NonCanonicalField, rel, "value >= r");
  return x;
}

// Recomputes a Poseidon (tree R / tree C) root from the leaf.
void verify_poseidon_path(const Ctx& ctx, const MerkleProof& m, const std::string& rel) {
  const std::string pre = rel + merkle_path_prefix(m);
  Fr node = to_fr(ctx, m.leaf, pre + "/leaf");
  std::vector<Fr> group;
  for (const auto& e : m.levels()) {
    group.clear();
    for (const auto& h : e.hashes) group.push_back(to_fr(ctx, h, pre));
    group.insert(group.begin() + std::ptrdiff_t(e.index), node);
    node = native::poseidon_hash(native::filecoin_poseidon(group.size()), group);
  }
  if (native::fr_to_le_bytes(node) != m.root) {
    ctx.fail(C1ErrorKind::PathMismatch, pre + "/root", "path does not hash to the root");
  }
}

void verify_sha_path(const Ctx& ctx, const MerkleProof& m, const std::string& rel) {
  Digest32 node = m.leaf;
  for (const auto& e : m.base) {
    node = e.index == 0 ? native::sha256_hash2(node, e.hashes[0]) : native::sha256_hash2(e.hashes[0], node);
  }
  if (node != m.root) {
    ctx.fail(C1ErrorKind::PathMismatch, rel + merkle_path_prefix(m) + "/root", "path does not hash to the root");
  }
}

void verify_column(const Ctx& ctx, const ColumnProof& c, const std::string& rel) {
  std::vector<Fr> rows;
  for (std::size_t l = 0; l < c.column.rows.size(); ++l) {
    rows.push_back(to_fr(ctx, c.column.rows[l], rel + "/column/rows/" + std::to_string(l)));
  }
  const Fr h = native::poseidon_hash(native::filecoin_poseidon(rows.size()), rows);
  if (native::fr_to_le_bytes(h) != c.inclusion_proof.leaf) {
    ctx.fail(C1ErrorKind::PathMismatch, rel + "/inclusion_proof" + merkle_path_prefix(c.inclusion_proof) + "/leaf",
             "leaf is not the column hash");
  }
  verify_poseidon_path(ctx, c.inclusion_proof, rel + "/inclusion_proof");
}

void verify_full(const Ctx& ctx, const ChallengeProof& c, std::uint32_t layers) {
  const auto& r = c.replica_column_proofs;
  verify_sha_path(ctx, c.comm_d_proofs, "/comm_d_proofs");
  verify_poseidon_path(ctx, c.comm_r_last_proof, "/comm_r_last_proof");
  verify_column(ctx, r.c_x, "/replica_column_proofs/c_x");
  for (std::size_t j = 0; j < r.drg_parents.size(); ++j) {
    verify_column(ctx, r.drg_parents[j], "/replica_column_proofs/drg_parents/" + std::to_string(j));
  }
  for (std::size_t j = 0; j < r.exp_parents.size(); ++j) {
    verify_column(ctx, r.exp_parents[j], "/replica_column_proofs/exp_parents/" + std::to_string(j));
  }
  // Labels: the parents of layer l are the DRG columns' row l and (l > 1)
  // the expander columns' row l - 1, expanded to 37; the label is c_x row l.
  for (std::uint32_t l = 1; l <= layers; ++l) {
    const std::string rel = "/labeling_proofs/" + std::to_string(l - 1);
    const LabelingProof& lp = c.labeling_proofs[l - 1];
    std::vector<Digest32> parents;
    for (const auto& col : r.drg_parents) parents.push_back(col.column.rows[l - 1]);
    if (l > 1) {
      for (const auto& col : r.exp_parents) parents.push_back(col.column.rows[l - 2]);
    }
    const auto expanded = expand_parents(parents);
    if (!std::equal(expanded.begin(), expanded.end(), lp.parents.begin())) {
      ctx.fail(C1ErrorKind::LabelMismatch, rel + "/parents", "parents differ from the parent columns");
    }
    const auto label = create_label(ctx.c1.replica_id, l, lp.node, expanded);
    if (label != r.c_x.column.rows[l - 1]) {
      ctx.fail(C1ErrorKind::LabelMismatch, rel, "label differs from c_x row " + std::to_string(l - 1));
    }
  }
  // Encoding: replica leaf = label_L + data leaf (in Fr).
  const EncodingProof& ep = c.encoding_proof;
  if (ep.parents != c.labeling_proofs[layers - 1].parents) {
    ctx.fail(C1ErrorKind::LabelMismatch, "/encoding_proof/parents", "differ from the last labeling proof");
  }
  std::array<Digest32, kTotalParents> ep_parents;
  std::copy(ep.parents.begin(), ep.parents.end(), ep_parents.begin());
  const Digest32 key = create_label(ctx.c1.replica_id, layers, ep.node, ep_parents);
  const Fr data = to_fr(ctx, c.comm_d_proofs.leaf, "/comm_d_proofs/data/Single/leaf");
  const Fr encoded = native::fr_from_le_bytes(key) + data;
  if (native::fr_to_le_bytes(encoded) != c.comm_r_last_proof.leaf) {
    ctx.fail(C1ErrorKind::LabelMismatch, "/encoding_proof", "label + data leaf differs from the tree R leaf");
  }
}

}  // namespace

void verify_c1(const C1Output& c1, C1VerifyDepth depth) {
  check_structure(c1);
  const SealProofInfo& info = c1.info();
  const StackedGraph graph(info.nodes, porep_id(c1.registered_proof), info.api_version);
  for (std::uint32_t k = 0; k < c1.vanilla_proofs.size(); ++k) {
    const auto want = interactive_challenges(info.nodes, c1.replica_id, c1.seed, info.challenges_per_partition, k);
    for (std::size_t i = 0; i < c1.vanilla_proofs[k].size(); ++i) {
      const ChallengeProof& c = c1.vanilla_proofs[k][i];
      const Ctx ctx{c1,
                    "/vanilla_proofs/" + std::string(info.v1_name) + "/" + std::to_string(k) + "/" + std::to_string(i)};
      const auto& r = c.replica_column_proofs;
      if (r.c_x.column.index != want[i]) {
        ctx.fail(C1ErrorKind::ChallengeMismatch, "/replica_column_proofs/c_x/column/index",
                 "challenge " + std::to_string(r.c_x.column.index) + ", derived " + std::to_string(want[i]));
      }
      const Parents parents = graph.parents(r.c_x.column.index);
      for (std::size_t j = 0; j < kDegree; ++j) {
        const bool drg = j < kBaseDegree;
        const ColumnProof& col = drg ? r.drg_parents[j] : r.exp_parents[j - kBaseDegree];
        if (col.column.index != parents[j]) {
          ctx.fail(C1ErrorKind::ParentMismatch,
                   std::string("/replica_column_proofs/") + (drg ? "drg_parents/" : "exp_parents/") +
                       std::to_string(drg ? j : j - kBaseDegree) + "/column/index",
                   "column " + std::to_string(col.column.index) + ", graph parent " + std::to_string(parents[j]));
        }
      }
      if (depth == C1VerifyDepth::Full) verify_full(ctx, c, info.layers);
    }
  }
}

}  // namespace cuzk::circuits::filecoin
