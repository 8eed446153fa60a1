#include "circuits/filecoin/stacked_circuit.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/registry.hpp"
#include "circuits/gadgets/boolean.hpp"
#include "circuits/gadgets/constraint.hpp"
#include "circuits/gadgets/label.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/poseidon.hpp"
#include "circuits/gadgets/uint32.hpp"
#include "circuits/gadgets/uint64.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/witness_parts.hpp"

namespace cuzk::circuits::filecoin {

using gadgets::AllocatedNum;
using gadgets::Boolean;
using gadgets::PathLevel;
using gadgets::TreeHasher;
using gadgets::TreeShape;
using groth16::ConstraintSystem;

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "stacked circuit: %s\n", what);
  std::abort();
}

const TreeShape kCommDShape{2, 0, 0};  // tree D: binary SHA-256

// rfp ColumnProof::alloc + AllocatedColumn::hash + enforce_inclusion, under
// the three namespaces "<kind>_parent_<i>_{num,constraint,inclusion}".
std::vector<AllocatedNum> alloc_and_check_column(ConstraintSystem& cs, const char* kind, std::size_t i,
                                                 const ColumnOpening& col, const StackedShape& shape,
                                                 const AllocatedNum& comm_c) {
  if (col.rows.size() != shape.layers) die("column height != layers");
  const std::string base = std::string(kind) + "_parent_" + std::to_string(i);
  std::vector<AllocatedNum> rows;
  {
    const std::string n = base + "_num";
    auto ns = cs.ns(n);
    auto ns_col = cs.ns("column");
    for (std::size_t r = 0; r < col.rows.size(); ++r) {
      const std::string row_name = "column_num_row_" + std::to_string(r);
      auto ns_row = cs.ns(row_name);
      rows.push_back(AllocatedNum::alloc(cs, col.rows[r]));
    }
  }
  AllocatedNum hash;
  {
    const std::string n = base + "_constraint";
    auto ns = cs.ns(n);
    hash = gadgets::hash_single_column(cs, rows);
  }
  {
    const std::string n = base + "_inclusion";
    auto ns = cs.ns(n);
    gadgets::enforce_inclusion(cs, hash, col.path, shape.tree, TreeHasher::kPoseidon, comm_c);
  }
  return rows;
}

// The 255 bits of a label, BE per byte as SHA-256 consumes them.
std::vector<Boolean> label_bits(ConstraintSystem& cs, const std::string& name, const AllocatedNum& label) {
  auto ns = cs.ns(name);
  return gadgets::reverse_bit_numbering(label.to_bits_le(cs));
}

// rfp stacked::circuit::Proof::synthesize.
void synthesize_challenge(ConstraintSystem& cs, const StackedShape& shape, const ChallengeWitness& p,
                          const AllocatedNum& comm_d, const AllocatedNum& comm_c, const AllocatedNum& comm_r_last,
                          std::span<const Boolean> replica_id_bits) {
  if (p.drg_parents.size() != kDrgParents || p.exp_parents.size() != kExpParents) {
    die("parent column count");
  }
  AllocatedNum data_leaf;
  {
    auto ns = cs.ns("data_leaf");
    data_leaf = AllocatedNum::alloc(cs, p.data_leaf);
  }
  {
    auto ns = cs.ns("comm_d_inclusion");
    gadgets::enforce_inclusion(cs, data_leaf, p.comm_d_path, kCommDShape, TreeHasher::kSha256, comm_d);
  }

  std::vector<std::vector<AllocatedNum>> drg, exp;
  for (std::size_t i = 0; i < kDrgParents; ++i) {
    drg.push_back(alloc_and_check_column(cs, "drg", i, p.drg_parents[i], shape, comm_c));
  }
  for (std::size_t i = 0; i < kExpParents; ++i) {
    exp.push_back(alloc_and_check_column(cs, "exp", i, p.exp_parents[i], shape, comm_c));
  }

  gadgets::UInt64 challenge;
  {
    auto ns = cs.ns("challenge");
    challenge = gadgets::UInt64::alloc(cs, p.challenge);
  }
  {
    auto ns = cs.ns("challenge input");
    challenge.pack_into_input(cs);
  }

  std::vector<AllocatedNum> labels;
  for (std::size_t layer = 1; layer <= shape.layers; ++layer) {
    const std::string ns_name = "labeling_" + std::to_string(layer);
    auto ns = cs.ns(ns_name);
    // Parent bits are allocated once per distinct parent; the 37-parent
    // message repeats them (rfp create_label's hashing order).
    std::vector<std::vector<Boolean>> parents;
    for (const auto& col : drg) {
      parents.push_back(label_bits(cs, "drg_parent_" + std::to_string(parents.size()) + "_bits", col[layer - 1]));
    }
    // Expander parents point into the previous layer, absent in layer 1.
    if (layer > 1) {
      for (const auto& col : exp) {
        parents.push_back(label_bits(cs, "exp_parent_" + std::to_string(parents.size()) + "_bits", col[layer - 2]));
      }
    }
    std::vector<std::vector<Boolean>> expanded;
    expanded.reserve(gadgets::kTotalParents);
    if (layer > 1) {
      // 14 + 14 + the first 9 = 37
      for (int rep = 0; rep < 2; ++rep) expanded.insert(expanded.end(), parents.begin(), parents.end());
      expanded.insert(expanded.end(), parents.begin(), parents.begin() + 9);
    } else {
      // 6 x 6 + the first = 37
      for (int rep = 0; rep < 6; ++rep) expanded.insert(expanded.end(), parents.begin(), parents.end());
      expanded.push_back(parents[0]);
    }
    auto ns_label = cs.ns("create_label");
    labels.push_back(gadgets::create_label_circuit(cs, replica_id_bits, expanded,
                                                   gadgets::UInt32::constant(std::uint32_t(layer)), challenge));
  }

  {
    AllocatedNum encoded;
    {
      auto ns = cs.ns("encode_node");
      encoded = gadgets::encode(cs, labels.back(), data_leaf);
    }
    auto ns = cs.ns("comm_r_last_data_inclusion");
    gadgets::enforce_inclusion(cs, encoded, p.comm_r_last_path, shape.tree, TreeHasher::kPoseidon, comm_r_last);
  }
  {
    AllocatedNum column_hash;
    {
      auto ns = cs.ns("c_x_column_hash");
      column_hash = gadgets::hash_single_column(cs, labels);
    }
    auto ns = cs.ns("c_x_inclusion");
    gadgets::enforce_inclusion(cs, column_hash, p.comm_c_path, shape.tree, TreeHasher::kPoseidon, comm_c);
  }
}

AllocatedNum alloc_inputized(ConstraintSystem& cs, const char* name, const char* input_name,
                             const std::optional<Fr>& value) {
  AllocatedNum n;
  {
    auto ns = cs.ns(name);
    n = AllocatedNum::alloc(cs, value);
  }
  auto ns = cs.ns(input_name);
  n.inputize(cs);
  return n;
}

std::uint64_t path_index(const std::vector<PathLevel>& path) {
  std::uint64_t idx = 0, scale = 1;
  for (const PathLevel& l : path) {
    if (!l.index) die("public_inputs: a path index is absent");
    idx += scale * *l.index;
    scale *= l.arity;
  }
  return idx;
}

}  // namespace

ChallengeWitness ChallengeWitness::blank(const StackedShape& shape) {
  ChallengeWitness w;
  w.comm_d_path = gadgets::blank_path(kCommDShape, shape.nodes);
  w.comm_r_last_path = gadgets::blank_path(shape.tree, shape.nodes);
  w.comm_c_path = w.comm_r_last_path;
  const ColumnOpening col{std::vector<std::optional<Fr>>(shape.layers), w.comm_r_last_path};
  w.drg_parents.assign(kDrgParents, col);
  w.exp_parents.assign(kExpParents, col);
  return w;
}

StackedCircuit::StackedCircuit(StackedShape shape, std::optional<Fr> replica_id, std::optional<Fr> comm_d,
                               std::optional<Fr> comm_r, std::optional<Fr> comm_r_last, std::optional<Fr> comm_c,
                               std::vector<ChallengeWitness> proofs)
    : shape_(shape),
      replica_id_(replica_id),
      comm_d_(comm_d),
      comm_r_(comm_r),
      comm_r_last_(comm_r_last),
      comm_c_(comm_c),
      proofs_(std::move(proofs)) {}

StackedCircuit StackedCircuit::blank(const StackedShape& shape) {
  return StackedCircuit(shape, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                        std::vector<ChallengeWitness>(shape.challenges, ChallengeWitness::blank(shape)));
}

StackedCircuit StackedCircuit::with_challenges(std::size_t first, std::size_t count) const {
  if (first + count > proofs_.size()) die("with_challenges: range out of bounds");
  StackedShape s = shape_;
  s.challenges = count;
  return StackedCircuit(s, replica_id_, comm_d_, comm_r_, comm_r_last_, comm_c_,
                        std::vector<ChallengeWitness>(proofs_.begin() + std::ptrdiff_t(first),
                                                      proofs_.begin() + std::ptrdiff_t(first + count)));
}

void StackedCircuit::synthesize(ConstraintSystem& cs) const { synthesize_parts(cs, {}); }

StackedCircuit::Globals StackedCircuit::synthesize_global(ConstraintSystem& cs) const {
  if (shape_.layers < 2) die("need at least 2 layers");
  Globals g;
  const AllocatedNum replica_id = alloc_inputized(cs, "replica_id", "replica_id_input", replica_id_);
  {
    auto ns = cs.ns("replica_id_bits");
    g.replica_id_bits = gadgets::reverse_bit_numbering(replica_id.to_bits_le(cs));
  }
  g.comm_d = alloc_inputized(cs, "comm_d", "comm_d_input", comm_d_);
  const AllocatedNum comm_r = alloc_inputized(cs, "comm_r", "comm_r_input", comm_r_);
  {
    auto ns = cs.ns("comm_r_last");
    g.comm_r_last = AllocatedNum::alloc(cs, comm_r_last_);
  }
  {
    auto ns = cs.ns("comm_c");
    g.comm_c = AllocatedNum::alloc(cs, comm_c_);
  }
  AllocatedNum h;
  {
    auto ns = cs.ns("H_comm_c_comm_r_last");
    h = gadgets::poseidon_hash2(cs, g.comm_c, g.comm_r_last);
  }
  gadgets::enforce_equal(cs, "enforce comm_r = H(comm_c || comm_r_last)", comm_r, h);
  return g;
}

void StackedCircuit::synthesize_one(ConstraintSystem& cs, std::size_t i, const Globals& g) const {
  const std::string ns_name = "challenge_" + std::to_string(i);
  auto ns = cs.ns(ns_name);
  synthesize_challenge(cs, shape_, proofs_[i], g.comm_d, g.comm_c, g.comm_r_last, g.replica_id_bits);
}

void StackedCircuit::synthesize_parts(ConstraintSystem& cs, const std::function<void(std::size_t)>& after_part) const {
  const Globals g = synthesize_global(cs);
  if (after_part) after_part(0);
  for (std::size_t i = 0; i < proofs_.size(); ++i) {
    synthesize_one(cs, i, g);
    if (after_part) after_part(i + 1);
  }
}

groth16::Witness StackedCircuit::generate_witness(ThreadPool& pool, groth16::WitnessShape shape,
                                                  groth16::Witness storage) const {
  groth16::WitnessCs global_cs(std::move(storage));
  global_cs.reserve(shape.inputs, shape.aux);
  const Globals g = synthesize_global(global_cs);
  // A challenge only reads the global variables (never re-allocates them)
  // and allocates as many variables as any other: the challenges are the
  // uniform parts of groth16::synthesize_uniform_parts.
  return groth16::synthesize_uniform_parts(pool, global_cs, proofs_.size(),
                                           [&](groth16::WitnessCs& cs, std::size_t i) { synthesize_one(cs, i, g); });
}

std::vector<Fr> StackedCircuit::public_inputs() const {
  if (!replica_id_ || !comm_d_ || !comm_r_) die("public_inputs: a commitment is absent");
  std::vector<Fr> in{*replica_id_, *comm_d_, *comm_r_};
  for (const ChallengeWitness& p : proofs_) {
    if (!p.challenge) die("public_inputs: a challenge is absent");
    in.push_back(Fr::from_u64(path_index(p.comm_d_path)));
    for (const auto& c : p.drg_parents) in.push_back(Fr::from_u64(path_index(c.path)));
    for (const auto& c : p.exp_parents) in.push_back(Fr::from_u64(path_index(c.path)));
    in.push_back(Fr::from_u64(*p.challenge));
    in.push_back(Fr::from_u64(path_index(p.comm_r_last_path)));
    in.push_back(Fr::from_u64(path_index(p.comm_c_path)));
  }
  return in;
}

ShapeStats stacked_shape_stats(const StackedShape& shape, CountMode mode) {
  if (mode == CountMode::kFull || shape.challenges <= 2) return shape_stats(StackedCircuit::blank(shape));
  StackedShape two = shape;
  two.challenges = 2;
  ShapeStatsCs cs;
  std::vector<ShapeStats> snap;
  StackedCircuit::blank(two).synthesize_parts(cs, [&](std::size_t) { snap.push_back(cs.stats()); });
  const ShapeStats d1 = snap[1] - snap[0];
  if (!(snap[2] - snap[1] == d1)) die("challenge increments differ: cannot extrapolate");
  return add_scaled(snap[0], d1, shape.challenges);
}

StackedShape stacked_shape(SealProof proof) {
  const SealProofInfo& info = seal_proof_info(proof);
  return StackedShape{info.nodes, info.layers, TreeShape{info.base_arity, info.sub_arity, info.top_arity},
                      info.challenges_per_partition};
}

namespace {

std::vector<PathLevel> to_path(const MerkleProof& proof) {
  std::vector<PathLevel> out;
  for (const PathElement& e : proof.levels()) {
    PathLevel l;
    l.arity = e.hashes.size() + 1;
    for (const Digest32& h : e.hashes) l.siblings.emplace_back(native::fr_from_le_bytes(h));
    l.index = std::uint32_t(e.index);
    out.push_back(std::move(l));
  }
  return out;
}

ColumnOpening to_column(const ColumnProof& p) {
  ColumnOpening c;
  for (const Digest32& r : p.column.rows) c.rows.emplace_back(native::fr_from_le_bytes(r));
  c.path = to_path(p.inclusion_proof);
  return c;
}

}  // namespace

StackedCircuit stacked_circuit_from_c1(const C1Output& c1, std::size_t partition) {
  if (partition >= c1.vanilla_proofs.size()) die("stacked_circuit_from_c1: no such partition");
  const StackedShape shape = stacked_shape(c1.registered_proof);
  std::vector<ChallengeWitness> proofs;
  for (const ChallengeProof& p : c1.vanilla_proofs[partition]) {
    ChallengeWitness w;
    w.data_leaf = native::fr_from_le_bytes(p.comm_d_proofs.leaf);
    w.challenge = p.challenge();
    w.comm_d_path = to_path(p.comm_d_proofs);
    w.comm_r_last_path = to_path(p.comm_r_last_proof);
    w.comm_c_path = to_path(p.replica_column_proofs.c_x.inclusion_proof);
    for (const ColumnProof& c : p.replica_column_proofs.drg_parents) w.drg_parents.push_back(to_column(c));
    for (const ColumnProof& c : p.replica_column_proofs.exp_parents) w.exp_parents.push_back(to_column(c));
    proofs.push_back(std::move(w));
  }
  auto fr = [](const Digest32& d) { return std::optional<Fr>(native::fr_from_le_bytes(d)); };
  return StackedCircuit(shape, fr(c1.replica_id), fr(c1.comm_d), fr(c1.comm_r), fr(c1.comm_r_last()), fr(c1.comm_c()),
                        std::move(proofs));
}

std::vector<Fr> stacked_public_inputs(SealProof proof, const Digest32& replica_id, const Digest32& comm_d,
                                      const Digest32& comm_r, const Digest32& seed, std::uint32_t partition) {
  const SealProofInfo& info = seal_proof_info(proof);
  const StackedGraph graph = StackedGraph::for_proof(proof);
  std::vector<Fr> in{native::fr_from_le_bytes(replica_id), native::fr_from_le_bytes(comm_d),
                     native::fr_from_le_bytes(comm_r)};
  for (std::uint64_t c :
       interactive_challenges(info.nodes, replica_id, seed, info.challenges_per_partition, partition)) {
    const Fr challenge = Fr::from_u64(c);
    in.push_back(challenge);
    for (std::uint32_t p : graph.parents(std::uint32_t(c))) in.push_back(Fr::from_u64(p));
    in.insert(in.end(), {challenge, challenge, challenge});
  }
  return in;
}

std::optional<StackedShape> stacked_shape_by_name(const std::string& name) {
  // rfp tests/stacked_circuit.rs: nodes = 8 * base tree count, 2 layers, 1 challenge.
  auto test_shape = [](TreeShape t) {
    const std::uint64_t trees = (t.sub_arity ? t.sub_arity : 1) * (t.top_arity ? t.top_arity : 1);
    return StackedShape{8 * trees, 2, t, 1};
  };
  if (name == "stacked-base-2") return test_shape({2, 0, 0});
  if (name == "stacked-base-8") return test_shape({8, 0, 0});
  if (name == "stacked-8-4") return test_shape({8, 4, 0});
  if (name == "stacked-8-4-2") return test_shape({8, 4, 2});
  auto production = [](SealProof p) { return stacked_shape(p); };
  if (name == "porep-2k") return production(SealProof::StackedDrg2KiBV1_1);
  if (name == "porep-8m") return production(SealProof::StackedDrg8MiBV1_1);
  if (name == "porep-512m") return production(SealProof::StackedDrg512MiBV1_1);
  if (name == "porep-32g") return production(SealProof::StackedDrg32GiBV1_1);
  if (name == "porep-64g") return production(SealProof::StackedDrg64GiBV1_1);
  return std::nullopt;
}

}  // namespace cuzk::circuits::filecoin
