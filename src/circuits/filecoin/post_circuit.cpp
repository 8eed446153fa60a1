#include "circuits/filecoin/post_circuit.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

#include "circuits/gadgets/constraint.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/poseidon.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/witness_parts.hpp"

namespace cuzk::circuits::filecoin {

using gadgets::AllocatedNum;
using gadgets::PathLevel;
using gadgets::TreeShape;
using groth16::ConstraintSystem;

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "post circuit: %s\n", what);
  std::abort();
}

AllocatedNum alloc_named(ConstraintSystem& cs, const char* name, const std::optional<Fr>& v) {
  auto ns = cs.ns(name);
  return AllocatedNum::alloc(cs, v);
}

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

}  // namespace

PostSectorWitness PostSectorWitness::blank(const PostShape& shape) {
  PostSectorWitness w;
  w.leafs.assign(shape.challenges, std::nullopt);
  w.paths.assign(shape.challenges, gadgets::blank_path(shape.tree, shape.nodes));
  return w;
}

FallbackPostCircuit::FallbackPostCircuit(PostShape shape, std::vector<PostSectorWitness> sectors)
    : shape_(shape), sectors_(std::move(sectors)) {
  if (sectors_.size() != shape_.sectors) die("slot count != shape.sectors");
  for (const auto& s : sectors_) {
    if (s.leafs.size() != shape_.challenges || s.paths.size() != shape_.challenges) {
      die("challenge count != shape.challenges");
    }
  }
}

FallbackPostCircuit FallbackPostCircuit::blank(const PostShape& shape) {
  return FallbackPostCircuit(shape, std::vector<PostSectorWitness>(shape.sectors, PostSectorWitness::blank(shape)));
}

FallbackPostCircuit FallbackPostCircuit::with_sectors(std::size_t first, std::size_t count) const {
  if (first + count > sectors_.size()) die("with_sectors: range out of bounds");
  PostShape s = shape_;
  s.sectors = count;
  return FallbackPostCircuit(s, std::vector<PostSectorWitness>(sectors_.begin() + std::ptrdiff_t(first),
                                                               sectors_.begin() + std::ptrdiff_t(first + count)));
}

void FallbackPostCircuit::synthesize_sector(ConstraintSystem& cs, std::size_t i) const {
  const PostSectorWitness& s = sectors_[i];
  const std::string name = "sector_" + std::to_string(i);
  auto ns_sector = cs.ns(name);
  const AllocatedNum comm_r_last = alloc_named(cs, "comm_r_last", s.comm_r_last);
  const AllocatedNum comm_c = alloc_named(cs, "comm_c", s.comm_c);
  const AllocatedNum comm_r = alloc_named(cs, "comm_r", s.comm_r);
  {
    auto ns = cs.ns("comm_r_input");
    comm_r.inputize(cs);
  }
  AllocatedNum h;
  {
    auto ns = cs.ns("H_comm_c_comm_r_last");
    h = gadgets::poseidon_hash2(cs, comm_c, comm_r_last);
  }
  gadgets::enforce_equal(cs, "enforce_comm_c_comm_r_last_hash_comm_r", comm_r, h);
  for (std::size_t j = 0; j < s.leafs.size(); ++j) {
    const std::string ns_name = "challenge_inclusion_" + std::to_string(j);
    auto ns = cs.ns(ns_name);
    // rfp PoRCircuit::synthesize(value, path, Root::from_allocated(comm_r_last), private).
    const AllocatedNum leaf = alloc_named(cs, "value", s.leafs[j]);
    gadgets::enforce_inclusion(cs, leaf, s.paths[j], shape_.tree, gadgets::TreeHasher::kPoseidon, comm_r_last);
  }
}

void FallbackPostCircuit::synthesize(ConstraintSystem& cs) const { synthesize_parts(cs, {}); }

void FallbackPostCircuit::synthesize_parts(ConstraintSystem& cs,
                                           const std::function<void(std::size_t)>& after_sector) const {
  auto ns = cs.ns("outer namespace");
  for (std::size_t i = 0; i < sectors_.size(); ++i) {
    synthesize_sector(cs, i);
    if (after_sector) after_sector(i);
  }
}

groth16::Witness FallbackPostCircuit::generate_witness(ThreadPool& pool, groth16::Witness storage) const {
  // Slots only share ONE and each allocates the same variables: they are the
  // uniform parts of groth16::synthesize_uniform_parts.
  groth16::WitnessCs cs(std::move(storage));
  return groth16::synthesize_uniform_parts(
      pool, cs, sectors_.size(), [this](groth16::WitnessCs& part, std::size_t i) { synthesize_sector(part, i); });
}

PostShape post_shape(PostProof proof) {
  const PostProofInfo& info = post_proof_info(proof);
  return PostShape{info.nodes, info.tree, info.circuit_sector_count, info.circuit_challenge_count};
}

FallbackPostCircuit post_partition_circuit(const PostPartition& p) {
  const PostShape shape = post_shape(p.proof);
  std::vector<PostSectorWitness> slots;
  slots.reserve(shape.sectors);
  for (const PostSlot& slot : post_slots(p)) {
    const FallbackPostSectorProof& sector = p.sectors[slot.sector];
    const PostSectorProof& sp = sector.sectors[0];
    PostSectorWitness w;
    w.comm_r = native::fr_from_le_bytes(sector.comm_r);
    w.comm_c = native::fr_from_le_bytes(sp.comm_c);
    w.comm_r_last = native::fr_from_le_bytes(sp.comm_r_last);
    for (std::size_t n = 0; n < shape.challenges; ++n) {
      const MerkleProof& m = sp.inclusion_proofs[slot.first_inclusion + n];
      w.leafs.emplace_back(native::fr_from_le_bytes(m.leaf));
      w.paths.push_back(to_path(m));
    }
    slots.push_back(std::move(w));
  }
  return FallbackPostCircuit(shape, std::move(slots));
}

ShapeStats post_shape_stats(const PostShape& shape, CountMode mode) {
  if (mode == CountMode::kFull || shape.sectors <= 3) return shape_stats(FallbackPostCircuit::blank(shape));
  PostShape three = shape;
  three.sectors = 3;
  ShapeStatsCs cs;
  std::vector<ShapeStats> snap;
  FallbackPostCircuit::blank(three).synthesize_parts(cs, [&](std::size_t) { snap.push_back(cs.stats()); });
  const ShapeStats d = snap[1] - snap[0];
  if (!(snap[2] - snap[1] == d)) die("slot increments differ: cannot extrapolate");
  return add_scaled(snap[0], d, shape.sectors - 1);
}

std::optional<PostShape> post_shape_by_name(const std::string& name) {
  const TreeShape base8{8, 0, 0};
  if (name == "post-base-8") return PostShape{64, base8, 3, 5};
  if (name == "post-sub-8-4") return PostShape{64 * 4, TreeShape{8, 4, 0}, 3, 5};
  if (name == "post-top-8-4-2") return PostShape{64 * 8, TreeShape{8, 4, 2}, 3, 5};
  if (name == "post-base-8-2") return PostShape{64, base8, 2, 5};
  if (name == "post-blank-32g") return PostShape{std::uint64_t(1) << 30, base8, 5, 10};
  static const char* kSizes[] = {"2k", "8m", "512m", "32g", "64g"};
  for (std::size_t s = 0; s < 5; ++s) {
    if (name == std::string("winning-post-") + kSizes[s]) return post_shape(PostProof(s));
    if (name == std::string("window-post-") + kSizes[s]) return post_shape(PostProof(10 + s));
  }
  return std::nullopt;
}

bool post_shape_is_large(const std::string& name) { return name == "window-post-32g" || name == "window-post-64g"; }

}  // namespace cuzk::circuits::filecoin
