#include "circuits/filecoin/update_circuit.hpp"

#include <bit>
#include <cstdio>
#include <cstdlib>

#include "circuits/gadgets/insertion.hpp"
#include "circuits/gadgets/multipack.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/por.hpp"
#include "circuits/gadgets/poseidon.hpp"
#include "circuits/gadgets/sha256.hpp"
#include "groth16/witness_parts.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using gadgets::AllocatedBit;
using gadgets::AllocatedNum;
using gadgets::Boolean;
using groth16::ConstraintSystem;
using groth16::LinearCombination;
using groth16::Variable;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "update circuit: %s\n", what);
  std::abort();
}

// Levels of a tree R path for the size (rfp ChallengeProof::empty).
SiblingPath blank_r_path(const UpdateLayout& l) {
  std::size_t bits = l.challenge_bit_len;
  SiblingPath top;
  if (l.tree_r.sub_arity) {
    top.emplace_back(l.tree_r.sub_arity - 1);
    bits -= std::size_t(std::countr_zero(l.tree_r.sub_arity));
  }
  if (l.tree_r.top_arity) {
    top.emplace_back(l.tree_r.top_arity - 1);
    bits -= std::size_t(std::countr_zero(l.tree_r.top_arity));
  }
  SiblingPath path(bits / std::size_t(std::countr_zero(l.tree_r.base_arity)),
                   std::vector<std::optional<Fr>>(l.tree_r.base_arity - 1));
  path.insert(path.end(), top.begin(), top.end());
  return path;
}

std::vector<std::vector<AllocatedNum>> alloc_path(ConstraintSystem& cs, const char* what, const SiblingPath& path,
                                                  std::size_t levels) {
  if (levels > path.size()) die("path shorter than the circuit needs");
  std::vector<std::vector<AllocatedNum>> out(levels);
  for (std::size_t row = 0; row < levels; ++row) {
    for (std::size_t s = 0; s < path[row].size(); ++s) {
      auto ns = cs.ns(std::string(what) + " sibling " + std::to_string(row) + "." + std::to_string(s));
      out[row].push_back(AllocatedNum::alloc(cs, path[row][s]));
    }
  }
  return out;
}

// sum(2^i bits_i) * 1 = num (rfp's "binary decomp" constraints).
void enforce_binary_decomposition(ConstraintSystem& cs, const std::vector<AllocatedBit>& bits,
                                  const AllocatedNum& num) {
  cs.enforce(
      "binary decomp",
      [&] {
        LinearCombination lc;
        Fr pow2 = Fr::one();
        for (const auto& b : bits) {
          lc.add(pow2, b.variable());
          pow2 = pow2.dbl();
        }
        return lc;
      },
      [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(num.variable()); });
}

// `bits` allocated from the low bits of num's value, and sum(2^i b_i) * 1 = num.
std::vector<AllocatedBit> decompose(ConstraintSystem& cs, const AllocatedNum& num, std::size_t n) {
  std::optional<ff::BigInt<4>> v;
  if (num.value()) v = num.value()->to_int();
  std::vector<AllocatedBit> bits;
  for (std::size_t i = 0; i < n; ++i) {
    auto ns = cs.ns("bit", i);
    bits.push_back(AllocatedBit::alloc(cs, v ? std::optional<bool>(v->bit(i)) : std::nullopt));
  }
  enforce_binary_decomposition(cs, bits, num);
  return bits;
}

AllocatedNum alloc_input(ConstraintSystem& cs, const char* name, std::optional<Fr> v) {
  auto ns = cs.ns(name);
  AllocatedNum n = AllocatedNum::alloc(cs, v);
  n.inputize(cs);
  return n;
}

// rfp gen_challenge_bits: the random bits of every challenge.
std::vector<std::vector<AllocatedBit>> gen_challenge_bits(ConstraintSystem& cs, const AllocatedNum& comm_r_new,
                                                          const AllocatedNum& partition, std::size_t challenges,
                                                          std::size_t bits_per_challenge) {
  const std::size_t per_digest = (Fr::kBits - 1) / bits_per_challenge;
  const std::uint64_t digests = (challenges + per_digest - 1) / per_digest;
  std::vector<std::vector<AllocatedBit>> out;
  for (std::uint64_t j = 0; j < digests; ++j) {
    auto ns = cs.ns("digest", j);
    std::optional<Fr> idx;
    if (partition.value()) idx = *partition.value() * Fr::from_u64(digests) + Fr::from_u64(j);
    AllocatedNum digest_index = AllocatedNum::alloc(cs, idx);
    cs.enforce(
        "digest_index",
        [&] {
          LinearCombination lc;
          lc.add(Fr::from_u64(digests), partition.variable());
          lc.add(Fr::from_u64(j), Variable::one());
          return lc;
        },
        [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(digest_index.variable()); });
    const AllocatedNum pre[2] = {comm_r_new, digest_index};
    AllocatedNum digest;
    {
      auto ns2 = cs.ns("digest hash");
      digest = gadgets::poseidon_hash(cs, pre, gen_randomness_constants());
    }
    std::vector<AllocatedBit> bits;
    {
      auto ns2 = cs.ns("digest bits");
      bits = gadgets::field_into_allocated_bits_le(cs, digest.value());
      enforce_binary_decomposition(cs, bits, digest);
    }
    const std::size_t take = j + 1 == digests ? challenges - out.size() : per_digest;
    for (std::size_t c = 0; c < take; ++c) {
      out.emplace_back(bits.begin() + std::ptrdiff_t(c * bits_per_challenge),
                       bits.begin() + std::ptrdiff_t((c + 1) * bits_per_challenge));
    }
  }
  return out;
}

// rfp get_challenge_high_bits.
AllocatedNum challenge_high_bits(ConstraintSystem& cs, const std::vector<AllocatedBit>& c_bits,
                                 const std::vector<AllocatedBit>& h_select_bits, const std::array<std::size_t, 6>& hs) {
  const std::vector<Boolean> bits(c_bits.begin(), c_bits.end());
  std::vector<AllocatedNum> terms;
  for (std::size_t k = 0; k < hs.size(); ++k) {
    auto ns = cs.ns("h", k);
    AllocatedNum high;
    {
      auto ns2 = cs.ns("c_high");
      high = gadgets::pack_bits(cs, std::span<const Boolean>(bits).subspan(bits.size() - hs[k]));
    }
    std::optional<Fr> v;
    if (h_select_bits[k].value() && high.value()) v = *h_select_bits[k].value() ? *high.value() : Fr::zero();
    AllocatedNum or_zero;
    {
      auto ns2 = cs.ns("c_high_or_zero");
      or_zero = AllocatedNum::alloc(cs, v);
    }
    cs.enforce(
        "c_high_or_zero == c_high * h_select_bit", [&] { return LinearCombination(high.variable()); },
        [&] { return LinearCombination(h_select_bits[k].variable()); },
        [&] { return LinearCombination(or_zero.variable()); });
    terms.push_back(or_zero);
  }
  std::optional<Fr> sum = Fr::zero();
  for (const auto& t : terms) {
    if (!t.value() || !sum) {
      sum.reset();
    } else {
      *sum += *t.value();
    }
  }
  AllocatedNum selected;
  {
    auto ns = cs.ns("c_high_selected");
    selected = AllocatedNum::alloc(cs, sum);
  }
  cs.enforce(
      "c_high_selected == dot(c_highs, h_select_bits)",
      [&] {
        LinearCombination lc;
        for (const auto& t : terms) lc += t.variable();
        return lc;
      },
      [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(selected.variable()); });
  return selected;
}

// rfp label_r_new: leaf_r_new = leaf_r_old + leaf_d_new * rho.
AllocatedNum label_r_new(ConstraintSystem& cs, const AllocatedNum& r_old, const AllocatedNum& d_new,
                         const AllocatedNum& rho) {
  AllocatedNum prod;
  {
    auto ns = cs.ns("label_d_new * rho");
    prod = d_new.mul(cs, rho);
  }
  std::optional<Fr> v;
  if (r_old.value() && prod.value()) v = *r_old.value() + *prod.value();
  AllocatedNum r_new;
  {
    auto ns = cs.ns("label_r_new");
    r_new = AllocatedNum::alloc(cs, v);
  }
  cs.enforce(
      "label_r_new == label_r_old + label_d_new * rho",
      [&] {
        LinearCombination lc(r_old.variable());
        lc += prod.variable();
        return lc;
      },
      [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(r_new.variable()); });
  return r_new;
}

void enforce_equal(ConstraintSystem& cs, const char* name, const AllocatedNum& a, const AllocatedNum& b) {
  cs.enforce(
      name, [&] { return LinearCombination(a.variable()); }, [] { return LinearCombination(Variable::one()); },
      [&] { return LinearCombination(b.variable()); });
}

const gadgets::TreeShape kTreeD{2, 0, 0};

}  // namespace

UpdateChallengeWitness UpdateChallengeWitness::blank(const UpdateLayout& l, bool poseidon) {
  UpdateChallengeWitness w;
  w.path_r_old = blank_r_path(l);
  w.path_r_new = w.path_r_old;
  w.path_d_new = poseidon ? w.path_r_old : SiblingPath(l.challenge_bit_len, std::vector<std::optional<Fr>>(1));
  return w;
}

UpdateCircuit::UpdateCircuit(std::uint64_t nodes, UpdateVariant variant, Public pub, Private priv)
    : layout_(update_layout(nodes)), variant_(variant), pub_(pub), priv_(std::move(priv)) {
  if (priv_.challenges.size() != challenge_count()) die("wrong number of challenge witnesses");
  if (variant_ == UpdateVariant::kSha256TreeD && priv_.apex_leafs.size() != layout_.apex_leaf_count)
    die("wrong number of apex leaves");
}

UpdateCircuit UpdateCircuit::blank(std::uint64_t nodes, UpdateVariant variant) {
  const UpdateLayout l = update_layout(nodes);
  const bool poseidon = variant == UpdateVariant::kPoseidon;
  Private priv;
  if (!poseidon) priv.apex_leafs.resize(l.apex_leaf_count);
  priv.challenges.assign(poseidon ? update_challenge_count_poseidon(nodes) : l.challenge_count,
                         UpdateChallengeWitness::blank(l, poseidon));
  return UpdateCircuit(nodes, variant, Public{}, std::move(priv));
}

std::size_t UpdateCircuit::challenge_count() const {
  return variant_ == UpdateVariant::kPoseidon ? update_challenge_count_poseidon(layout_.nodes)
                                              : layout_.challenge_count;
}

void UpdateCircuit::synthesize(ConstraintSystem& cs) const {
  synthesize_parts(cs, [](std::size_t) {});
}

void UpdateCircuit::synthesize_parts(ConstraintSystem& cs, const std::function<void(std::size_t)>& after_part,
                                     std::size_t max_challenges) const {
  const Globals g = synthesize_global(cs);
  after_part(0);
  for (std::size_t c = 0; c < challenge_count() && c < max_challenges; ++c) {
    synthesize_one(cs, c, g);
    after_part(c + 1);
  }
}

groth16::Witness UpdateCircuit::generate_witness(ThreadPool& pool, groth16::WitnessShape shape,
                                                 groth16::Witness storage) const {
  groth16::WitnessCs global_cs(std::move(storage));
  global_cs.reserve(shape.inputs, shape.aux);
  const Globals g = synthesize_global(global_cs);
  // A challenge only reads the global variables and allocates as many as any
  // other: the challenges are the uniform parts of synthesize_uniform_parts.
  return groth16::synthesize_uniform_parts(pool, global_cs, challenge_count(),
                                           [&](groth16::WitnessCs& cs, std::size_t i) {
                                             const std::size_t inputs = cs.num_inputs();
                                             synthesize_one(cs, i, g);
                                             if (cs.num_inputs() != inputs) die("a challenge allocated a public input");
                                           });
}

UpdateCircuit::Globals UpdateCircuit::synthesize_global(ConstraintSystem& cs) const {
  const UpdateLayout& l = layout_;
  const bool poseidon = variant_ == UpdateVariant::kPoseidon;
  const auto hs = update_hs(l.nodes);
  const std::size_t pbits = poseidon ? 0 : l.partition_bit_len;

  // k_and_h_select (h_select) and its bits.
  const AllocatedNum khs = alloc_input(cs, "k_and_h_select", pub_.k_and_h_select);
  std::vector<AllocatedBit> kh_bits;
  {
    auto ns = cs.ns("k_and_h_select bits");
    kh_bits = decompose(cs, khs, pbits + hs.size());
  }
  const std::vector<AllocatedBit> partition_bits(kh_bits.begin(), kh_bits.begin() + std::ptrdiff_t(pbits));
  const std::vector<AllocatedBit> h_select_bits(kh_bits.begin() + std::ptrdiff_t(pbits), kh_bits.end());
  AllocatedNum partition;
  if (!poseidon) {
    auto ns = cs.ns("pack partition bits");
    const std::vector<Boolean> pb(partition_bits.begin(), partition_bits.end());
    partition = gadgets::pack_bits(cs, pb);
  }

  const AllocatedNum comm_r_old = alloc_input(cs, "comm_r_old", pub_.comm_r_old);
  const AllocatedNum comm_d_new = alloc_input(cs, "comm_d_new", pub_.comm_d_new);
  const AllocatedNum comm_r_new = alloc_input(cs, "comm_r_new", pub_.comm_r_new);
  AllocatedNum phi;
  {
    auto ns = cs.ns("phi");
    const AllocatedNum pre[2] = {comm_d_new, comm_r_old};
    phi = gadgets::poseidon_hash(cs, pre, gen_randomness_constants());
  }

  AllocatedNum comm_c, root_r_old, root_r_new;
  {
    auto ns = cs.ns("private");
    comm_c = AllocatedNum::alloc(cs, priv_.comm_c);
    root_r_old = AllocatedNum::alloc(cs, priv_.root_r_old);
    root_r_new = AllocatedNum::alloc(cs, priv_.root_r_new);
  }
  std::vector<AllocatedNum> apex_leafs;
  std::vector<std::vector<AllocatedNum>> partition_path;
  if (!poseidon) {
    auto ns = cs.ns("apex leafs");
    for (const auto& v : priv_.apex_leafs) apex_leafs.push_back(AllocatedNum::alloc(cs, v));
    // The partition path is the top of challenge 0's tree D path.
    const SiblingPath& d0 = priv_.challenges.at(0).path_d_new;
    if (d0.size() != l.challenge_bit_len) die("tree D path length");
    SiblingPath top(d0.end() - std::ptrdiff_t(pbits), d0.end());
    for (const auto& s : top)
      if (s.size() != 1) die("partition path sibling count");
    partition_path = alloc_path(cs, "partition_path", top, top.size());
  }

  {
    auto ns = cs.ns("comm_r_old_calc");
    const AllocatedNum calc = gadgets::poseidon_hash2(cs, comm_c, root_r_old);
    enforce_equal(cs, "comm_r_old_calc == comm_r_old", calc, comm_r_old);
  }
  {
    auto ns = cs.ns("comm_r_new_calc");
    const AllocatedNum calc = gadgets::poseidon_hash2(cs, comm_c, root_r_new);
    enforce_equal(cs, "comm_r_new_calc == comm_r_new", calc, comm_r_new);
  }

  if (!poseidon) {
    auto ns = cs.ns("apex_gadget");
    std::vector<AllocatedNum> row = apex_leafs;
    for (std::size_t r = 0; r < l.apex_leaf_bit_len; ++r) {
      std::vector<AllocatedNum> up;
      for (std::size_t i = 0; i + 1 < row.size(); i += 2) {
        auto ns2 = cs.ns("apex hash " + std::to_string(r) + "." + std::to_string(i / 2));
        up.push_back(gadgets::sha256_hash2_circuit(cs, row[i], row[i + 1]));
      }
      row = std::move(up);
    }
    auto ns2 = cs.ns("partition-tree por");
    gadgets::por_no_challenge_input(cs, kTreeD, gadgets::TreeHasher::kSha256, partition_bits, row.at(0), partition_path,
                                    comm_d_new);
  } else {
    auto ns = cs.ns("gen_challenge_bits partition zero");
    partition = AllocatedNum::alloc(cs, Fr::zero());
  }

  const std::size_t n_challenges = challenge_count();
  const std::size_t rb = poseidon ? l.challenge_bit_len : l.random_bits_per_challenge();
  std::vector<std::vector<AllocatedBit>> generated;
  {
    auto ns = cs.ns("gen_challenge_bits");
    generated = gen_challenge_bits(cs, comm_r_new, partition, n_challenges, rb);
  }
  return Globals{partition_bits, h_select_bits, phi,        root_r_old,
                 root_r_new,     comm_d_new,    apex_leafs, std::move(generated)};
}

void UpdateCircuit::synthesize_one(ConstraintSystem& cs, std::size_t c, const Globals& g) const {
  const UpdateLayout& l = layout_;
  const bool poseidon = variant_ == UpdateVariant::kPoseidon;
  const auto hs = update_hs(l.nodes);
  const auto& [partition_bits, h_select_bits, phi, root_r_old, root_r_new, comm_d_new, apex_leafs, generated] = g;
  const std::size_t apex_height = l.apex_leaf_height();
  {
    auto ns = cs.ns("challenge", c);
    const UpdateChallengeWitness& w = priv_.challenges[c];
    std::vector<AllocatedBit> c_bits = generated[c];
    c_bits.insert(c_bits.end(), partition_bits.begin(), partition_bits.end());

    AllocatedNum c_high, rho;
    {
      auto ns2 = cs.ns("get_challenge_high_bits");
      c_high = challenge_high_bits(cs, c_bits, h_select_bits, hs);
    }
    {
      auto ns2 = cs.ns("rho");
      const AllocatedNum pre[2] = {phi, c_high};
      rho = gadgets::poseidon_hash(cs, pre, gen_randomness_constants());
    }
    AllocatedNum leaf_r_old, leaf_d_new, leaf_r_new;
    {
      auto ns2 = cs.ns("leaf_r_old");
      leaf_r_old = AllocatedNum::alloc(cs, w.leaf_r_old);
    }
    {
      auto ns2 = cs.ns("leaf_d_new");
      leaf_d_new = AllocatedNum::alloc(cs, w.leaf_d_new);
    }
    {
      auto ns2 = cs.ns("leaf_r_new");
      leaf_r_new = label_r_new(cs, leaf_r_old, leaf_d_new, rho);
    }
    {
      const auto path = alloc_path(cs, "path_r_old", w.path_r_old, w.path_r_old.size());
      auto ns2 = cs.ns("por tree_r_old");
      gadgets::por_no_challenge_input(cs, l.tree_r, gadgets::TreeHasher::kPoseidon, c_bits, leaf_r_old, path,
                                      root_r_old);
    }
    {
      const auto path = alloc_path(cs, "path_r_new", w.path_r_new, w.path_r_new.size());
      auto ns2 = cs.ns("por tree_r_new");
      gadgets::por_no_challenge_input(cs, l.tree_r, gadgets::TreeHasher::kPoseidon, c_bits, leaf_r_new, path,
                                      root_r_new);
    }
    if (poseidon) {
      const auto path = alloc_path(cs, "path_d_new", w.path_d_new, w.path_d_new.size());
      auto ns2 = cs.ns("por tree_d_new");
      gadgets::por_no_challenge_input(cs, l.tree_r, gadgets::TreeHasher::kPoseidon, c_bits, leaf_d_new, path,
                                      comm_d_new);
    } else {
      const std::vector<Boolean> apex_bits(c_bits.begin() + std::ptrdiff_t(apex_height),
                                           c_bits.begin() + std::ptrdiff_t(apex_height + l.apex_leaf_bit_len));
      AllocatedNum apex_leaf;
      {
        auto ns2 = cs.ns("select_apex_leaf");
        apex_leaf = gadgets::select(cs, apex_leafs, apex_bits);
      }
      const std::vector<AllocatedBit> low(c_bits.begin(), c_bits.begin() + std::ptrdiff_t(apex_height));
      const auto path = alloc_path(cs, "path_to_apex_leaf", w.path_d_new, apex_height);
      auto ns2 = cs.ns("por to_apex_leaf");
      gadgets::por_no_challenge_input(cs, kTreeD, gadgets::TreeHasher::kSha256, low, leaf_d_new, path, apex_leaf);
    }
  }
}

ShapeStats update_shape_stats(std::uint64_t nodes, UpdateVariant variant, UpdateCountMode mode) {
  const UpdateCircuit circuit = UpdateCircuit::blank(nodes, variant);
  const std::size_t n = circuit.challenge_count();
  if (mode == UpdateCountMode::kFull || n <= 3) return shape_stats(circuit);
  ShapeStatsCs cs;
  std::vector<ShapeStats> snap;
  circuit.synthesize_parts(
      cs, [&](std::size_t) { snap.push_back(cs.stats()); }, 3);
  const ShapeStats d = snap[2] - snap[1];
  if (!(snap[3] - snap[2] == d)) die("challenge increments differ: cannot extrapolate");
  return add_scaled(snap[1], d, n - 1);
}

bool update_circuit_by_name(const std::string& name, std::uint64_t& nodes, UpdateVariant& variant) {
  std::string size;
  if (name.rfind("update-poseidon-", 0) == 0) {
    variant = UpdateVariant::kPoseidon;
    size = name.substr(16);
  } else if (name.rfind("update-", 0) == 0) {
    variant = UpdateVariant::kSha256TreeD;
    size = name.substr(7);
  } else {
    return false;
  }
  static const std::pair<const char*, std::uint64_t> kSizes[] = {
      {"1k", 1 << 5},  {"2k", 1 << 6},   {"4k", 1 << 7},    {"8k", 1 << 8},      {"16k", 1 << 9},    {"32k", 1 << 10},
      {"8m", 1 << 18}, {"16m", 1 << 19}, {"512m", 1 << 24}, {"32g", 1ull << 30}, {"64g", 1ull << 31}};
  for (const auto& [s, n] : kSizes) {
    if (size == s) {
      nodes = n;
      return true;
    }
  }
  return false;
}

}  // namespace cuzk::circuits::filecoin
