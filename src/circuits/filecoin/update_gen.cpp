#include "circuits/filecoin/update_gen.hpp"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>

#include "circuits/filecoin/c1_build.hpp"
#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/native_seal.hpp"
#include "circuits/native/merkle.hpp"
#include "circuits/native/poseidon.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using native::fr_from_le_bytes;
using native::fr_to_le_bytes;

// splitmix64 stream (also a u64 generator for Fr::random).
struct SplitMix {
  std::uint64_t x;
  std::uint64_t operator()() {
    x += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  SplitMix m{a * 0x100000001b3ULL ^ b};
  m.x ^= c * 0xc2b2ae3d27d4eb4fULL;
  m();
  return m();
}

Digest32 fr32(SplitMix& rng) {
  Digest32 d;
  for (std::size_t w = 0; w < 4; ++w) {
    const std::uint64_t z = rng();
    for (std::size_t b = 0; b < 8; ++b) d[8 * w + b] = std::uint8_t(z >> (8 * b));
  }
  native::trim_to_fr32(d);
  return d;
}

// Node accessors of the three trees (level 0 = leaves, top level = root).
struct Trees {
  std::vector<std::size_t> r_arities;
  std::function<Fr(std::size_t, std::uint64_t)> r_old, r_new;
  std::function<Digest32(std::size_t, std::uint64_t)> d_new;
  Fr comm_c;
};

// Opens every partition's challenges (rfp EmptySectorUpdate::prove).
UpdateInputs assemble(UpdateProof proof, const Trees& t) {
  const UpdateLayout l = update_layout(update_proof_info(proof).nodes);
  const std::vector<std::size_t> d_arities(l.challenge_bit_len, 2);
  const std::size_t rl = t.r_arities.size();
  const Fr root_r_old = t.r_old(rl, 0), root_r_new = t.r_new(rl, 0);
  UpdateInputs in;
  in.proof = proof;
  in.h = update_h_default(l.nodes);
  in.comm_r_old = fr_to_le_bytes(native::poseidon2(t.comm_c, root_r_old));
  in.comm_r_new = fr_to_le_bytes(native::poseidon2(t.comm_c, root_r_new));
  in.comm_d_new = t.d_new(l.challenge_bit_len, 0);
  const auto kind = l.tree_r.top_arity   ? MerkleProofKind::Top
                    : l.tree_r.sub_arity ? MerkleProofKind::Sub
                                         : MerkleProofKind::Single;
  const std::size_t base_levels = rl - (l.tree_r.sub_arity ? 1 : 0) - (l.tree_r.top_arity ? 1 : 0);
  auto fr_bytes = [](const Fr& f) { return fr_to_le_bytes(f); };
  auto same = [](const Digest32& d) { return d; };
  for (std::size_t k = 0; k < l.partition_count; ++k) {
    PartitionProof p;
    p.comm_c = fr_to_le_bytes(t.comm_c);
    const std::size_t apex_level = l.apex_leaf_height();
    for (std::size_t i = 0; i < l.apex_leaf_count; ++i)
      p.apex_leafs.push_back(t.d_new(apex_level, k * l.apex_leaf_count + i));
    for (std::uint32_t c : update_challenges(l.nodes, fr_from_le_bytes(in.comm_r_new), k)) {
      UpdateChallengeProof cp;
      cp.proof_r_old = to_merkle_proof(native::make_path<Fr>(t.r_arities, c, t.r_old), t.r_old(0, c), root_r_old, kind,
                                       base_levels, fr_bytes);
      cp.proof_d_new = to_merkle_proof(native::make_path<Digest32>(d_arities, c, t.d_new), t.d_new(0, c), in.comm_d_new,
                                       MerkleProofKind::Single, l.challenge_bit_len, same);
      cp.proof_r_new = to_merkle_proof(native::make_path<Fr>(t.r_arities, c, t.r_new), t.r_new(0, c), root_r_new, kind,
                                       base_levels, fr_bytes);
      p.challenge_proofs.push_back(std::move(cp));
    }
    in.partitions.push_back(std::move(p));
  }
  return in;
}

// A tree computed on demand: node(level, i) hashes its children, memoised by
// class(level, i); nodes of one class must be equal.
template <class H>
class ClassTree {
 public:
  using Node = typename H::Node;
  ClassTree(std::vector<std::size_t> arities, std::function<Node(std::uint64_t)> leaf,
            std::function<std::uint64_t(std::size_t, std::uint64_t)> cls)
      : arities_(std::move(arities)), leaf_(std::move(leaf)), cls_(std::move(cls)), memo_(arities_.size() + 1) {}

  Node node(std::size_t level, std::uint64_t i) {
    const std::uint64_t key = cls_(level, i);
    auto it = memo_[level].find(key);
    if (it != memo_[level].end()) return it->second;
    Node v;
    if (level == 0) {
      v = leaf_(i);
    } else {
      const std::size_t a = arities_[level - 1];
      std::vector<Node> ch;
      for (std::size_t j = 0; j < a; ++j) ch.push_back(node(level - 1, i * a + j));
      v = H{}.hash(ch);
    }
    memo_[level].emplace(key, v);
    return v;
  }

 private:
  std::vector<std::size_t> arities_;
  std::function<Node(std::uint64_t)> leaf_;
  std::function<std::uint64_t(std::size_t, std::uint64_t)> cls_;
  std::vector<std::map<std::uint64_t, Node>> memo_;
};

}  // namespace

UpdateInputs make_sealed_update(UpdateProof proof, std::uint64_t seed, ThreadPool* pool) {
  const UpdateProofInfo& upi = update_proof_info(proof);
  if (upi.nodes > (std::uint64_t(1) << 18)) {
    std::fprintf(stderr, "make_sealed_update: %s is too large to seal natively\n", upi.name.data());
    std::abort();
  }
  // The old sector: the V1_1 PoRep of the same size, sealed natively.
  SealProof seal = SealProof::StackedDrg2KiBV1_1;
  for (const auto& s : seal_proofs())
    if (s.nodes == upi.nodes && s.api_version == ApiVersion::V1_1_0) seal = s.proof;
  const SealProofInfo& info = seal_proof_info(seal);
  const std::size_t n = info.nodes;
  SplitMix rng{seed};
  std::vector<Digest32> data_old(n), data_new(n);
  for (auto& d : data_old) d = fr32(rng);
  for (auto& d : data_new) d = fr32(rng);
  Digest32 prover_id{}, ticket{};
  prover_id[0] = 0x11;
  ticket[0] = std::uint8_t(seed);
  const NativeSeal old = seal_natively(seal, data_old, prover_id, seed, ticket, pool);
  const native::PoseidonMerkleTree& tree_r_old = old.tree_r;
  const std::vector<Fr>& replica_old = tree_r_old.level(0);  // label_{layers} + data_old
  const std::vector<std::size_t>& arities = tree_r_old.arities();

  // The update.
  const native::Sha256MerkleTree tree_d_new(native::Sha256TreeHasher{}, old.tree_d.arities(), data_new, pool);
  const Fr comm_r_old = native::poseidon2(old.tree_c.root(), tree_r_old.root());
  const Fr phi = update_phi(fr_from_le_bytes(tree_d_new.root()), comm_r_old);
  const std::size_t shr = info.comm_d_levels - update_h_default(n);
  std::vector<Fr> replica_new(n);
  for (std::size_t v = 0; v < n; ++v) {
    replica_new[v] = replica_old[v] + fr_from_le_bytes(data_new[v]) * update_rho(phi, std::uint32_t(v >> shr));
  }
  const native::PoseidonMerkleTree tree_r_new(native::PoseidonTreeHasher{}, arities, replica_new, pool);

  Trees t;
  t.r_arities = arities;
  t.comm_c = old.tree_c.root();
  t.r_old = [&](std::size_t l, std::uint64_t i) { return tree_r_old.level(l)[i]; };
  t.r_new = [&](std::size_t l, std::uint64_t i) { return tree_r_new.level(l)[i]; };
  t.d_new = [&](std::size_t l, std::uint64_t i) { return tree_d_new.level(l)[i]; };
  return assemble(proof, t);
}

UpdateInputs make_sparse_update(UpdateProof proof, std::uint64_t seed) {
  const std::uint64_t nodes = update_proof_info(proof).nodes;
  const UpdateLayout l = update_layout(nodes);
  const std::size_t shr = l.challenge_bit_len - update_h_default(nodes);
  const std::uint64_t region = std::uint64_t(1) << shr;
  const std::uint64_t period = std::min<std::uint64_t>(64, region);
  // Leaf i's class: (its rho region, i mod period).
  auto leaf_key = [=](std::uint64_t i) { return (i >> shr) * period + i % period; };
  // Node classes of a tree with level arities `ar` (a level-l node spans the
  // product of ar[0..l) leaves): equal classes, equal nodes.
  auto classes = [=](std::vector<std::size_t> ar) {
    return [=](std::size_t level, std::uint64_t i) -> std::uint64_t {
      std::uint64_t w = 1;
      for (std::size_t j = 0; j < level; ++j) w *= ar[j];
      const std::uint64_t first = i * w;
      if (w <= period) return (first >> shr) * period + first % period;
      if (w <= region) return first >> shr;
      return i;
    };
  };
  SplitMix rng{seed};
  const Fr comm_c = Fr::random(rng);
  const std::uint64_t s_data = rng(), s_old = rng();
  auto data = [=](std::uint64_t i) {
    SplitMix r{mix(s_data, leaf_key(i), 1)};
    return fr32(r);
  };
  // replica_old takes the free pattern; comm_r_old, phi and the encoding follow.
  auto old_leaf = [=](std::uint64_t i) {
    SplitMix r{mix(s_old, leaf_key(i), 2)};
    return Fr::random(r);
  };
  const std::vector<std::size_t> d_ar(l.challenge_bit_len, 2);
  const auto r_ar = native::tree_shape_arities(nodes, l.tree_r.base_arity, l.tree_r.sub_arity, l.tree_r.top_arity);
  auto tree_d = std::make_shared<ClassTree<native::Sha256TreeHasher>>(d_ar, data, classes(d_ar));
  const Fr comm_d_new = fr_from_le_bytes(tree_d->node(l.challenge_bit_len, 0));
  auto tree_r_old = std::make_shared<ClassTree<native::PoseidonTreeHasher>>(r_ar, old_leaf, classes(r_ar));
  const Fr root_r_old = tree_r_old->node(r_ar.size(), 0);
  const Fr phi = update_phi(comm_d_new, native::poseidon2(comm_c, root_r_old));
  auto rhos = std::make_shared<std::map<std::uint32_t, Fr>>();  // by high bits
  auto enc_leaf = [=](std::uint64_t i) {
    const auto high = std::uint32_t(i >> shr);
    auto it = rhos->find(high);
    if (it == rhos->end()) it = rhos->emplace(high, update_rho(phi, high)).first;
    return old_leaf(i) + fr_from_le_bytes(data(i)) * it->second;
  };
  auto tree_r_enc = std::make_shared<ClassTree<native::PoseidonTreeHasher>>(r_ar, enc_leaf, classes(r_ar));

  Trees t;
  t.r_arities = r_ar;
  t.comm_c = comm_c;
  t.r_old = [tree_r_old](std::size_t lv, std::uint64_t i) { return tree_r_old->node(lv, i); };
  t.r_new = [tree_r_enc](std::size_t lv, std::uint64_t i) { return tree_r_enc->node(lv, i); };
  t.d_new = [tree_d](std::size_t lv, std::uint64_t i) { return tree_d->node(lv, i); };
  return assemble(proof, t);
}

}  // namespace cuzk::circuits::filecoin
