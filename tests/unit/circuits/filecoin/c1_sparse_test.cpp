// The sparse synthetic C1 generator (any sector size, nothing materialised)
// and verify_c1_circuit_relations.
//
// Independent references used here: for 2 KiB and 8 MiB the sector data is
// materialised and comm_d recomputed with a full Merkle tree, replica_id
// with derive.hpp; the 2 KiB C1 passes vanilla verification (verify_c1 Full)
// and its partition circuit is satisfied constraint by constraint (TestCs).
#include "circuits/filecoin/c1_sparse.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/labels.hpp"
#include "circuits/filecoin/stacked_circuit.hpp"
#include "circuits/native/merkle.hpp"
#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using groth16::TestCs;

// Runs `check` and expects a C1Error of `kind` at `path`.
void expect_c1_error(const std::function<void()>& check, C1ErrorKind kind, const std::string& path) {
  try {
    check();
    ADD_FAILURE() << "no error, expected " << to_string(kind) << " at " << path;
  } catch (const C1Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(e.json_path(), path) << e.what();
  }
}

void flip_byte(Digest32& d) { d[5] ^= 0x21; }  // stays fr32 (byte 31 untouched)

// Re-derives a challenge's labeling/encoding parents from its parent columns,
// as a forger who changed a column row would (parse_c1 rejects copies that
// disagree): only the Merkle paths can then catch the change.
void resync_labeling_parents(ChallengeProof& c) {
  const auto& r = c.replica_column_proofs;
  const std::size_t layers = c.labeling_proofs.size();
  for (std::size_t l = 1; l <= layers; ++l) {
    std::vector<Digest32> parents;
    for (const auto& col : r.drg_parents) parents.push_back(col.column.rows[l - 1]);
    if (l > 1) {
      for (const auto& col : r.exp_parents) parents.push_back(col.column.rows[l - 2]);
    }
    const auto expanded = expand_parents(parents);
    c.labeling_proofs[l - 1].parents.assign(expanded.begin(), expanded.end());
  }
  c.encoding_proof.parents = c.labeling_proofs[layers - 1].parents;
}

// The first challenge of partition 0 one of whose parents (DRG parents only
// with `drg_only`) is a challenged node, itself included: that node's column
// is then both computed and read as a parent's. A DRG parent is read in the
// same layer, so this case needs the labels computed in node order.
std::optional<std::size_t> challenge_with_challenged_parent(const C1Output& c1, bool drg_only) {
  std::vector<std::uint64_t> challenged;
  for (const auto& part : c1.vanilla_proofs) {
    for (const ChallengeProof& p : part) challenged.push_back(p.challenge());
  }
  for (std::size_t i = 0; i < c1.vanilla_proofs[0].size(); ++i) {
    const auto& r = c1.vanilla_proofs[0][i].replica_column_proofs;
    for (const auto* cols : {&r.drg_parents, &r.exp_parents}) {
      if (drg_only && cols == &r.exp_parents) continue;
      for (const ColumnProof& col : *cols) {
        if (std::find(challenged.begin(), challenged.end(), col.column.index) != challenged.end()) return i;
      }
    }
  }
  return std::nullopt;
}

// The first seed whose 2 KiB C1 has a challenged node among the parents
// (two challenges of 14 parents among 63 nodes: about one seed in three;
// DRG parents only: about one in ten).
std::uint64_t seed_with_challenged_parent(SealProof proof, bool drg_only) {
  for (std::uint64_t seed = 0;; ++seed) {
    if (challenge_with_challenged_parent(make_sparse_synthetic_c1(proof, seed), drg_only)) return seed;
  }
}

TEST(SparseC1, Small2KiBPassesParseVanillaAndCircuitRelations) {
  for (SealProof proof : {SealProof::StackedDrg2KiBV1, SealProof::StackedDrg2KiBV1_1}) {
    const C1Output c1 = make_sparse_synthetic_c1(proof, 11);
    const C1Output back = parse_c1(to_json(c1));
    EXPECT_EQ(back, c1);
    EXPECT_NO_THROW(verify_c1_circuit_relations(back));
    // The native vanilla checks (paths, column hashes, labels of the
    // challenged nodes, encodings) hold as well.
    EXPECT_NO_THROW(verify_c1(back, C1VerifyDepth::Full));
  }
  // A challenged node read as another challenge's parent keeps one column.
  for (SealProof proof : {SealProof::StackedDrg2KiBV1, SealProof::StackedDrg2KiBV1_1}) {
    for (bool drg_only : {false, true}) {
      const C1Output c1 = make_sparse_synthetic_c1(proof, seed_with_challenged_parent(proof, drg_only));
      EXPECT_NO_THROW(verify_c1_circuit_relations(c1));
      EXPECT_NO_THROW(verify_c1(c1, C1VerifyDepth::Full));
    }
  }
  // The seed changes everything.
  EXPECT_NE(make_sparse_synthetic_c1(SealProof::StackedDrg2KiBV1_1, 1).comm_r,
            make_sparse_synthetic_c1(SealProof::StackedDrg2KiBV1_1, 2).comm_r);
}

// Public data against the materialised sector: comm_d is the full tree's
// root over the periodic data, replica_id derives from it, every data leaf
// is the sector's.
// A 32 GiB C1 (10 partitions, 37.6 MB of JSON) parsed with a pool, its
// partitions as separate documents, equals the whole-document parse; a
// syntax error inside one partition gives the whole parse's error.
TEST(SparseC1, PartitionsParsedApartEqualTheWholeParse) {
  ThreadPool pool(4);
  const std::string text = to_json(make_sparse_synthetic_c1(SealProof::StackedDrg32GiBV1_1, 3, &pool));
  const C1Output whole = parse_c1(text);
  const C1Output apart = parse_c1(text, &pool);
  EXPECT_EQ(apart, whole);
  EXPECT_EQ(apart.vanilla_proofs.size(), 10u);
  EXPECT_EQ(to_json(apart), to_json(whole));
  EXPECT_EQ(to_json(apart), text);
  std::string broken = text;
  const std::size_t at = broken.find("\"index\"", broken.size() / 2);
  ASSERT_NE(at, std::string::npos);
  broken[at] = '{';
  std::string whole_error, apart_error;
  try {
    parse_c1(broken);
  } catch (const C1Error& e) {
    whole_error = e.what();
  }
  try {
    parse_c1(broken, &pool);
  } catch (const C1Error& e) {
    apart_error = e.what();
  }
  EXPECT_FALSE(whole_error.empty());
  EXPECT_EQ(apart_error, whole_error);
}

TEST(SparseC1, PublicDataMatchesTheMaterialisedSector) {
  for (SealProof proof : {SealProof::StackedDrg2KiBV1_1, SealProof::StackedDrg8MiBV1}) {
    for (bool zero : {false, true}) {
      const SealProofInfo& info = seal_proof_info(proof);
      const SyntheticSealInputs in = sparse_c1_inputs(5);
      SparseC1Options opts;
      opts.data = zero ? SparseC1Data::Zero : SparseC1Data::PeriodicRandom;
      const C1Output c1 = make_sparse_synthetic_c1(proof, in, opts);
      std::vector<Digest32> data(info.nodes);
      for (std::uint64_t v = 0; v < info.nodes; ++v) data[v] = sparse_c1_data_leaf(proof, in, opts, v);
      const native::Sha256MerkleTree tree_d(native::Sha256TreeHasher{}, std::vector<std::size_t>(info.comm_d_levels, 2),
                                            data);
      EXPECT_EQ(c1.comm_d, tree_d.root());
      EXPECT_EQ(c1.replica_id, replica_id(in.prover_id, in.sector_id, in.ticket, c1.comm_d, porep_id(proof)));
      EXPECT_EQ(c1.ticket, in.ticket);
      EXPECT_EQ(c1.seed, in.seed);
      for (const auto& part : c1.vanilla_proofs) {
        for (const ChallengeProof& p : part) {
          EXPECT_EQ(p.comm_d_proofs.leaf, data[p.challenge()]);
          EXPECT_EQ(p.comm_d_proofs.leaf == Digest32{}, zero);
        }
      }
      EXPECT_NO_THROW(verify_c1_circuit_relations(c1));
    }
  }
}

// The strongest check: the 2 KiB partition circuit built from the sparse C1
// (the C2 witness path) is satisfied, here with a challenged node among the
// parents (the global part and that challenge only, to keep the test fast).
TEST(SparseC1, Small2KiBPartitionCircuitIsSatisfied) {
  const SealProof proof = SealProof::StackedDrg2KiBV1_1;
  const C1Output c1 = make_sparse_synthetic_c1(proof, seed_with_challenged_parent(proof, true));
  const std::size_t i = *challenge_with_challenged_parent(c1, true);
  const StackedCircuit circuit = stacked_circuit_from_c1(c1, 0).with_challenges(i, 1);
  TestCs cs;
  circuit.synthesize(cs);
  const auto bad = cs.which_is_unsatisfied();
  EXPECT_FALSE(bad.has_value()) << *bad;
}

// What the sparse C1 is NOT: the parents' columns are free, so they are not
// the labels a real SDR labeling of this replica would give.
TEST(SparseC1, ParentColumnsAreFreeNotARealLabeling) {
  const SealProof proof = SealProof::StackedDrg2KiBV1_1;
  const SealProofInfo& info = seal_proof_info(proof);
  const C1Output c1 = make_sparse_synthetic_c1(proof, 9);
  const StackedGraph graph(info.nodes, porep_id(proof), info.api_version);
  const auto real = label_layers(graph, c1.replica_id, info.layers);
  std::size_t differing = 0;
  for (const ColumnProof& col : c1.vanilla_proofs[0][0].replica_column_proofs.drg_parents) {
    differing += col.column.rows[0] != real[0][col.column.index];
  }
  EXPECT_GT(differing, 0u);
}

TEST(SparseC1, CorruptionsAreDetected) {
  const C1Output good = make_sparse_synthetic_c1(SealProof::StackedDrg2KiBV1_1, 4);
  const std::string p01 = "/vanilla_proofs/StackedDrg2KiBV1/0/1";
  // A label of a parent column (read by the circuit): its column hash is no
  // longer the tree C leaf.
  C1Output bad = good;
  flip_byte(bad.vanilla_proofs[0][1].replica_column_proofs.drg_parents[2].column.rows[1]);
  resync_labeling_parents(bad.vanilla_proofs[0][1]);
  expect_c1_error([&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::PathMismatch,
                  p01 + "/replica_column_proofs/drg_parents/2/inclusion_proof/data/Single");
  EXPECT_THROW(verify_c1(bad, C1VerifyDepth::Full), C1Error);
  // A label of the challenged node's own column: the circuit recomputes the
  // labels and never reads c_x rows, so only vanilla verification sees it.
  bad = good;
  flip_byte(bad.vanilla_proofs[0][1].replica_column_proofs.c_x.column.rows[0]);
  EXPECT_NO_THROW(verify_c1_circuit_relations(bad));
  expect_c1_error([&] { verify_c1(bad, C1VerifyDepth::Full); }, C1ErrorKind::PathMismatch,
                  p01 + "/replica_column_proofs/c_x/inclusion_proof/data/Single/leaf");
  // Path elements of tree R, tree C and tree D.
  bad = good;
  flip_byte(bad.vanilla_proofs[0][1].comm_r_last_proof.base[1].hashes[3]);
  expect_c1_error([&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::PathMismatch,
                  p01 + "/comm_r_last_proof/data/Single");
  bad = good;
  flip_byte(bad.vanilla_proofs[0][0].replica_column_proofs.exp_parents[7].inclusion_proof.base[0].hashes[0]);
  expect_c1_error(
      [&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::PathMismatch,
      "/vanilla_proofs/StackedDrg2KiBV1/0/0/replica_column_proofs/exp_parents/7/inclusion_proof/data/Single");
  bad = good;
  flip_byte(bad.vanilla_proofs[0][1].comm_d_proofs.base[4].hashes[0]);
  expect_c1_error([&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::PathMismatch,
                  p01 + "/comm_d_proofs/data/Single");
  // The data leaf: tree D path and encoding both depend on it.
  bad = good;
  flip_byte(bad.vanilla_proofs[0][1].comm_d_proofs.leaf);
  expect_c1_error([&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::PathMismatch,
                  p01 + "/comm_d_proofs/data/Single");
  // Another replica_id derives other challenges.
  bad = good;
  flip_byte(bad.replica_id);
  expect_c1_error([&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::ChallengeMismatch,
                  "/vanilla_proofs/StackedDrg2KiBV1/0/0/labeling_proofs/0/node");
  // A non-canonical (>= r) value in a column the circuit allocates.
  bad = good;
  bad.vanilla_proofs[0][1].replica_column_proofs.exp_parents[0].column.rows[1].fill(0xff);
  expect_c1_error([&] { verify_c1_circuit_relations(bad); }, C1ErrorKind::NonCanonicalField,
                  p01 + "/replica_column_proofs/exp_parents/0/column/rows/1");
}

// Production shapes (Sub proofs for 32 GiB, Top for 64 GiB, 11 layers,
// 10 x 18 challenges): structure and the circuit relations, then a corrupted
// sub/top-level path element and parent label. 32 GiB is checked whole
// (with a JSON round trip); the others and the corruptions (in the last
// challenge) one partition at a time, to keep the test fast.
void check_large(SealProof proof, const std::string& kind, bool whole) {
  ThreadPool pool(2);
  const SealProofInfo& info = seal_proof_info(proof);
  const C1Output c1 = make_sparse_synthetic_c1(proof, 2026, &pool);
  const std::size_t k = info.partitions - 1, i = info.challenges_per_partition - 1;
  if (whole) {
    EXPECT_EQ(parse_c1(to_json(c1)), c1);
    EXPECT_NO_THROW(verify_c1_circuit_relations(c1, &pool));
  } else {
    EXPECT_NO_THROW(verify_c1_partition_circuit_relations(c1, k, &pool));
  }
  const std::string at =
      "/vanilla_proofs/" + std::string(info.v1_name) + "/" + std::to_string(k) + "/" + std::to_string(i);
  C1Output bad = c1;
  MerkleProof& m = bad.vanilla_proofs[k][i].replica_column_proofs.drg_parents[5].inclusion_proof;
  flip_byte(kind == "Single" ? m.base.back().hashes[6] : kind == "Sub" ? m.sub[0].hashes[0] : m.top[0].hashes[0]);
  expect_c1_error([&] { verify_c1_partition_circuit_relations(bad, k, &pool); }, C1ErrorKind::PathMismatch,
                  at + "/replica_column_proofs/drg_parents/5/inclusion_proof/data/" + kind);
  bad = c1;
  flip_byte(bad.vanilla_proofs[k][i].replica_column_proofs.exp_parents[3].column.rows[info.layers - 2]);
  resync_labeling_parents(bad.vanilla_proofs[k][i]);
  expect_c1_error([&] { verify_c1_partition_circuit_relations(bad, k, &pool); }, C1ErrorKind::PathMismatch,
                  at + "/replica_column_proofs/exp_parents/3/inclusion_proof/data/" + kind);
  // The corruption is in partition k only.
  if (k > 0) {
    EXPECT_NO_THROW(verify_c1_partition_circuit_relations(bad, 0, &pool));
  }
}

TEST(SparseC1, Sector8MiBPassesCircuitRelations) { check_large(SealProof::StackedDrg8MiBV1_1, "Single", true); }
TEST(SparseC1, Sector32GiBPassesCircuitRelations) { check_large(SealProof::StackedDrg32GiBV1_1, "Sub", true); }
TEST(SparseC1, Sector64GiBPassesCircuitRelations) { check_large(SealProof::StackedDrg64GiBV1, "Top", false); }

}  // namespace
}  // namespace cuzk::circuits::filecoin
