#include "circuits/filecoin/update_vanilla.hpp"

#include <algorithm>
#include <cstring>

#include "circuits/native/merkle.hpp"
#include "circuits/native/poseidon.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using native::fr_from_le_bytes;
using native::fr_to_le_bytes;

// Where an error is: partition, challenge and a field path.
struct Where {
  std::optional<std::size_t> partition, challenge;
  std::string field;
};

[[noreturn]] void fail(UpdateErrorKind kind, const Where& w, const std::string& detail) {
  throw UpdateError(kind, w.partition, w.challenge, w.field, detail);
}

// Appends ".name" (or "name" at the start) to the field path for a scope.
class Scope {
 public:
  Scope(Where& w, const std::string& name) : w_(w), saved_(w.field.size()) {
    if (!w.field.empty() && name[0] != '[') w.field += '.';
    w.field += name;
  }
  ~Scope() { w_.field.resize(saved_); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Where& w_;
  std::size_t saved_;
};

// The MerkleProof variant and level arities a tree's proofs must have.
struct TreeSpec {
  MerkleProofKind kind;
  std::size_t base_arity, base_levels, sub_arity, top_arity;
};

TreeSpec tree_r_spec(const UpdateLayout& l) {
  const auto& s = l.tree_r;
  std::size_t bits = l.challenge_bit_len;
  if (s.sub_arity) bits -= std::size_t(std::countr_zero(s.sub_arity));
  if (s.top_arity) bits -= std::size_t(std::countr_zero(s.top_arity));
  const MerkleProofKind kind = s.top_arity   ? MerkleProofKind::Top
                               : s.sub_arity ? MerkleProofKind::Sub
                                             : MerkleProofKind::Single;
  return {kind, s.base_arity, bits / 3, s.sub_arity, s.top_arity};
}

TreeSpec tree_d_spec(const UpdateLayout& l) { return {MerkleProofKind::Single, 2, l.challenge_bit_len, 0, 0}; }

bool canonical(const Digest32& d) {
  Fr x;
  return Fr::from_bytes_le(d, x);
}

class Reader {
 public:
  Reader(std::span<const std::uint8_t> b, Where& w) : b_(b), w_(w) {}

  std::uint64_t u64() { return read_le(8); }
  std::uint32_t u32() { return std::uint32_t(read_le(4)); }
  Digest32 digest() {
    need(32);
    Digest32 d;
    std::memcpy(d.data(), b_.data() + pos_, 32);
    pos_ += 32;
    if (!canonical(d)) fail(UpdateErrorKind::NonCanonicalField, w_, "value is not below the field modulus");
    return d;
  }
  // A Vec length that must equal `want`.
  void length(std::uint64_t want) {
    const std::uint64_t n = u64();
    if (n != want) {
      fail(UpdateErrorKind::LengthMismatch, w_, "length " + std::to_string(n) + ", expected " + std::to_string(want));
    }
  }
  std::size_t remaining() const { return b_.size() - pos_; }

 private:
  void need(std::size_t n) {
    if (remaining() < n) {
      fail(UpdateErrorKind::Truncated, w_,
           "needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left");
    }
  }
  std::uint64_t read_le(std::size_t n) {
    need(n);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(b_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
  Where& w_;
};

InclusionPath read_path(Reader& r, Where& w, const char* name, std::size_t levels, std::size_t arity) {
  Scope s(w, name);
  r.length(levels);
  InclusionPath path(levels);
  for (std::size_t i = 0; i < levels; ++i) {
    Scope si(w, "[" + std::to_string(i) + "]");
    {
      Scope sh(w, "hashes");
      r.length(arity - 1);
      path[i].hashes.resize(arity - 1);
      for (auto& h : path[i].hashes) h = r.digest();
    }
    Scope sx(w, "index");
    path[i].index = r.u64();
    if (path[i].index >= arity) {
      fail(UpdateErrorKind::PathArity, w,
           "index " + std::to_string(path[i].index) + " >= arity " + std::to_string(arity));
    }
  }
  return path;
}

MerkleProof read_merkle(Reader& r, Where& w, const char* name, const TreeSpec& t) {
  Scope s(w, name);
  MerkleProof m;
  const std::uint32_t tag = r.u32();
  if (tag != static_cast<std::uint32_t>(t.kind)) {
    fail(UpdateErrorKind::ProofShape, w,
         "variant tag " + std::to_string(tag) + ", expected " + std::to_string(static_cast<unsigned>(t.kind)));
  }
  m.kind = t.kind;
  auto root_leaf = [&] {
    {
      Scope sr(w, "root");
      m.root = r.digest();
    }
    Scope sl(w, "leaf");
    m.leaf = r.digest();
  };
  if (t.kind == MerkleProofKind::Single) {
    root_leaf();
    m.base = read_path(r, w, "path", t.base_levels, t.base_arity);
    return m;
  }
  m.base = read_path(r, w, "base", t.base_levels, t.base_arity);
  m.sub = read_path(r, w, "sub", 1, t.sub_arity);
  if (t.kind == MerkleProofKind::Top) m.top = read_path(r, w, "top", 1, t.top_arity);
  root_leaf();
  return m;
}

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}
void put_digest(std::vector<std::uint8_t>& out, const Digest32& d) { out.insert(out.end(), d.begin(), d.end()); }
void put_path(std::vector<std::uint8_t>& out, const InclusionPath& p) {
  put_u64(out, p.size());
  for (const auto& e : p) {
    put_u64(out, e.hashes.size());
    for (const auto& h : e.hashes) put_digest(out, h);
    put_u64(out, e.index);
  }
}
void put_merkle(std::vector<std::uint8_t>& out, const MerkleProof& m) {
  const auto tag = static_cast<std::uint32_t>(m.kind);
  for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(tag >> (8 * i)));
  if (m.kind == MerkleProofKind::Single) {
    put_digest(out, m.root);
    put_digest(out, m.leaf);
    put_path(out, m.base);
    return;
  }
  put_path(out, m.base);
  put_path(out, m.sub);
  if (m.kind == MerkleProofKind::Top) put_path(out, m.top);
  put_digest(out, m.root);
  put_digest(out, m.leaf);
}

Fr fr(const Digest32& d) { return fr_from_le_bytes(d); }

native::MerklePath<Fr> fr_path(const MerkleProof& m) {
  native::MerklePath<Fr> p;
  for (const auto& e : m.levels()) {
    native::MerklePath<Fr>::Level l;
    l.index = std::uint32_t(e.index);
    for (const auto& h : e.hashes) l.siblings.push_back(fr(h));
    p.levels.push_back(std::move(l));
  }
  return p;
}

native::MerklePath<Digest32> digest_path(const MerkleProof& m, std::size_t first, std::size_t count) {
  native::MerklePath<Digest32> p;
  const InclusionPath levels = m.levels();
  for (std::size_t i = first; i < first + count; ++i) {
    native::MerklePath<Digest32>::Level l;
    l.index = std::uint32_t(levels[i].index);
    l.siblings = levels[i].hashes;
    p.levels.push_back(std::move(l));
  }
  return p;
}

SiblingPath sibling_path(const MerkleProof& m) {
  SiblingPath out;
  for (const auto& e : m.levels()) {
    std::vector<std::optional<Fr>> row;
    for (const auto& h : e.hashes) row.emplace_back(fr(h));
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

std::string_view to_string(UpdateErrorKind k) {
  switch (k) {
    case UpdateErrorKind::Truncated:
      return "truncated";
    case UpdateErrorKind::TrailingBytes:
      return "trailing bytes";
    case UpdateErrorKind::LengthMismatch:
      return "length mismatch";
    case UpdateErrorKind::ProofShape:
      return "proof shape";
    case UpdateErrorKind::PathArity:
      return "path arity";
    case UpdateErrorKind::PartitionCount:
      return "partition count";
    case UpdateErrorKind::UnknownProof:
      return "unknown proof";
    case UpdateErrorKind::BadH:
      return "bad h";
    case UpdateErrorKind::NonCanonicalField:
      return "non-canonical field element";
    case UpdateErrorKind::RootMismatch:
      return "root mismatch";
    case UpdateErrorKind::ChallengeMismatch:
      return "challenge mismatch";
    case UpdateErrorKind::PathMismatch:
      return "path mismatch";
    case UpdateErrorKind::EncodingMismatch:
      return "encoding mismatch";
    case UpdateErrorKind::ApexMismatch:
      return "apex mismatch";
  }
  return "?";
}

namespace {
std::string describe(UpdateErrorKind kind, std::optional<std::size_t> partition, std::optional<std::size_t> challenge,
                     const std::string& field, const std::string& detail) {
  std::string s(to_string(kind));
  if (partition) s += ": partition " + std::to_string(*partition);
  if (challenge) s += ", challenge " + std::to_string(*challenge);
  if (!field.empty()) s += ", " + field;
  return s + ": " + detail;
}
}  // namespace

UpdateError::UpdateError(UpdateErrorKind kind, std::optional<std::size_t> partition,
                         std::optional<std::size_t> challenge, std::string field, const std::string& detail)
    : std::runtime_error(describe(kind, partition, challenge, field, detail)),
      kind_(kind),
      partition_(partition),
      challenge_(challenge),
      field_(std::move(field)) {}

PartitionProof parse_partition_proof(std::span<const std::uint8_t> bytes, UpdateProof proof, std::size_t partition) {
  const UpdateLayout l = update_layout(update_proof_info(proof).nodes);
  const TreeSpec r_spec = tree_r_spec(l), d_spec = tree_d_spec(l);
  Where w{partition, std::nullopt, ""};
  Reader r(bytes, w);
  PartitionProof p;
  {
    Scope s(w, "comm_c");
    p.comm_c = r.digest();
  }
  {
    Scope s(w, "apex_leafs");
    r.length(l.apex_leaf_count);
    p.apex_leafs.resize(l.apex_leaf_count);
    for (auto& a : p.apex_leafs) a = r.digest();
  }
  {
    Scope s(w, "challenge_proofs");
    r.length(l.challenge_count);
  }
  p.challenge_proofs.resize(l.challenge_count);
  for (std::size_t c = 0; c < l.challenge_count; ++c) {
    w.challenge = c;
    auto& cp = p.challenge_proofs[c];
    cp.proof_r_old = read_merkle(r, w, "proof_r_old", r_spec);
    cp.proof_d_new = read_merkle(r, w, "proof_d_new", d_spec);
    cp.proof_r_new = read_merkle(r, w, "proof_r_new", r_spec);
  }
  w.challenge.reset();
  if (r.remaining() != 0) {
    fail(UpdateErrorKind::TrailingBytes, w, std::to_string(r.remaining()) + " bytes after the proof");
  }
  return p;
}

std::vector<std::uint8_t> serialize_partition_proof(const PartitionProof& p) {
  std::vector<std::uint8_t> out;
  put_digest(out, p.comm_c);
  put_u64(out, p.apex_leafs.size());
  for (const auto& a : p.apex_leafs) put_digest(out, a);
  put_u64(out, p.challenge_proofs.size());
  for (const auto& c : p.challenge_proofs) {
    put_merkle(out, c.proof_r_old);
    put_merkle(out, c.proof_d_new);
    put_merkle(out, c.proof_r_new);
  }
  return out;
}

UpdateInputs parse_update_inputs(UpdateProof proof, const Digest32& comm_r_old, const Digest32& comm_d_new,
                                 const Digest32& comm_r_new, std::span<const std::vector<std::uint8_t>> partitions) {
  UpdateInputs in;
  in.proof = proof;
  const std::uint64_t nodes = in.nodes();
  in.h = update_h_default(nodes);
  const std::pair<const char*, const Digest32*> comms[] = {
      {"comm_r_old", &comm_r_old}, {"comm_d_new", &comm_d_new}, {"comm_r_new", &comm_r_new}};
  for (const auto& [name, d] : comms) {
    if (!canonical(*d)) {
      throw UpdateError(UpdateErrorKind::NonCanonicalField, std::nullopt, std::nullopt, name,
                        "commitment is not below the field modulus");
    }
  }
  in.comm_r_old = comm_r_old;
  in.comm_d_new = comm_d_new;
  in.comm_r_new = comm_r_new;
  if (partitions.size() != update_partition_count(nodes)) {
    throw UpdateError(UpdateErrorKind::PartitionCount, std::nullopt, std::nullopt, "vanilla_proofs",
                      std::to_string(partitions.size()) + " partition proofs, expected " +
                          std::to_string(update_partition_count(nodes)));
  }
  for (std::size_t k = 0; k < partitions.size(); ++k)
    in.partitions.push_back(parse_partition_proof(partitions[k], proof, k));
  return in;
}

std::vector<Fr> update_partition_public_inputs(const UpdateInputs& in, std::size_t k) {
  if (!update_h_select(in.nodes(), in.h)) {
    throw UpdateError(UpdateErrorKind::BadH, k, std::nullopt, "h",
                      "h = " + std::to_string(in.h) + " is not allowed for the size");
  }
  if (k >= update_partition_count(in.nodes())) {
    throw UpdateError(UpdateErrorKind::PartitionCount, k, std::nullopt, "k", "no such partition");
  }
  return update_public_inputs(in.nodes(), k, in.h, fr(in.comm_r_old), fr(in.comm_d_new), fr(in.comm_r_new));
}

void check_partition_proof(const UpdateInputs& in, std::size_t k) {
  const std::uint64_t nodes = in.nodes();
  const UpdateLayout l = update_layout(nodes);
  update_partition_public_inputs(in, k);  // validates k and h
  const PartitionProof& p = in.partitions.at(k);
  Where w{k, std::nullopt, ""};
  const Fr comm_r_old = fr(in.comm_r_old), comm_r_new = fr(in.comm_r_new);
  const Fr comm_c = fr(p.comm_c);
  const Digest32 root_r_old = p.challenge_proofs.at(0).proof_r_old.root;
  const Digest32 root_r_new = p.challenge_proofs.at(0).proof_r_new.root;
  if (native::poseidon2(comm_c, fr(root_r_old)) != comm_r_old) {
    Scope s(w, "comm_c");
    fail(UpdateErrorKind::RootMismatch, w, "Poseidon2(comm_c, root_r_old) != comm_r_old");
  }
  if (native::poseidon2(comm_c, fr(root_r_new)) != comm_r_new) {
    Scope s(w, "comm_c");
    fail(UpdateErrorKind::RootMismatch, w, "Poseidon2(comm_c, root_r_new) != comm_r_new");
  }

  // The apex tree, its root and the partition path (from challenge 0) up to comm_d_new.
  std::vector<std::vector<Digest32>> apex{p.apex_leafs};
  for (std::size_t r = 0; r < l.apex_leaf_bit_len; ++r) {
    std::vector<Digest32> up;
    for (std::size_t i = 0; i + 1 < apex.back().size(); i += 2)
      up.push_back(native::sha256_hash2(apex.back()[i], apex.back()[i + 1]));
    apex.push_back(std::move(up));
  }
  const std::size_t apex_h = l.apex_leaf_height();
  const std::size_t top_h = apex_h + l.apex_leaf_bit_len;
  {
    const auto part = digest_path(p.challenge_proofs[0].proof_d_new, top_h, l.partition_bit_len);
    if (native::path_leaf_index(part) != k ||
        native::root_from_path(native::Sha256TreeHasher{}, apex.back().at(0), part) != in.comm_d_new) {
      Scope s(w, "apex_leafs");
      fail(UpdateErrorKind::ApexMismatch, w, "the apex root's partition path does not reach comm_d_new");
    }
  }

  const Fr phi = update_phi(fr(in.comm_d_new), comm_r_old);
  const auto challenges = update_challenges(nodes, comm_r_new, k);
  const std::size_t shr = l.challenge_bit_len - in.h;
  for (std::size_t c = 0; c < challenges.size(); ++c) {
    w.challenge = c;
    const UpdateChallengeProof& cp = p.challenge_proofs[c];
    const std::pair<const char*, const MerkleProof*> proofs[] = {
        {"proof_r_old", &cp.proof_r_old}, {"proof_d_new", &cp.proof_d_new}, {"proof_r_new", &cp.proof_r_new}};
    for (const auto& [name, m] : proofs) {
      Scope s(w, name);
      if (m->leaf_index() != challenges[c]) {
        fail(UpdateErrorKind::ChallengeMismatch, w,
             "opens node " + std::to_string(m->leaf_index()) + ", challenge is " + std::to_string(challenges[c]));
      }
    }
    {
      Scope s(w, "proof_r_old.root");
      if (cp.proof_r_old.root != root_r_old) fail(UpdateErrorKind::RootMismatch, w, "differs from challenge 0's");
    }
    {
      Scope s(w, "proof_r_new.root");
      if (cp.proof_r_new.root != root_r_new) fail(UpdateErrorKind::RootMismatch, w, "differs from challenge 0's");
    }
    {
      Scope s(w, "proof_d_new.root");
      if (cp.proof_d_new.root != in.comm_d_new) fail(UpdateErrorKind::RootMismatch, w, "is not comm_d_new");
    }
    for (const auto* name : {"proof_r_old", "proof_r_new"}) {
      const MerkleProof& m = std::string_view(name) == "proof_r_old" ? cp.proof_r_old : cp.proof_r_new;
      if (native::root_from_path(native::PoseidonTreeHasher{}, fr(m.leaf), fr_path(m)) != fr(m.root)) {
        Scope s(w, name);
        fail(UpdateErrorKind::PathMismatch, w, "path does not hash to its root");
      }
    }
    {
      const auto dp = digest_path(cp.proof_d_new, 0, l.challenge_bit_len);
      if (native::root_from_path(native::Sha256TreeHasher{}, cp.proof_d_new.leaf, dp) != cp.proof_d_new.root) {
        Scope s(w, "proof_d_new");
        fail(UpdateErrorKind::PathMismatch, w, "path does not hash to its root");
      }
      // The node at the apex leaf height must be the selected apex leaf, and
      // the path above it the partition's.
      const auto low = digest_path(cp.proof_d_new, 0, apex_h);
      const std::size_t apex_index = challenges[c] >> apex_h & (l.apex_leaf_count - 1);
      if (native::root_from_path(native::Sha256TreeHasher{}, cp.proof_d_new.leaf, low) != p.apex_leafs[apex_index] ||
          !std::equal(cp.proof_d_new.base.begin() + std::ptrdiff_t(top_h), cp.proof_d_new.base.end(),
                      p.challenge_proofs[0].proof_d_new.base.begin() + std::ptrdiff_t(top_h))) {
        Scope s(w, "proof_d_new");
        fail(UpdateErrorKind::ApexMismatch, w, "path disagrees with the apex leaves");
      }
    }
    const Fr rho = update_rho(phi, challenges[c] >> shr);
    if (fr(cp.proof_r_old.leaf) + fr(cp.proof_d_new.leaf) * rho != fr(cp.proof_r_new.leaf)) {
      Scope s(w, "proof_r_new.leaf");
      fail(UpdateErrorKind::EncodingMismatch, w, "leaf_r_new != leaf_r_old + leaf_d_new * rho");
    }
  }
}

void check_update(const UpdateInputs& in) {
  for (std::size_t k = 0; k < in.partitions.size(); ++k) check_partition_proof(in, k);
}

UpdateCircuit update_circuit_from_proof(const UpdateInputs& in, std::size_t k) {
  const std::vector<Fr> pub = update_partition_public_inputs(in, k);
  const PartitionProof& p = in.partitions.at(k);
  UpdateCircuit::Public pi{pub[0], pub[1], pub[2], pub[3]};
  UpdateCircuit::Private priv;
  priv.comm_c = fr(p.comm_c);
  priv.root_r_old = fr(p.challenge_proofs.at(0).proof_r_old.root);
  priv.root_r_new = fr(p.challenge_proofs.at(0).proof_r_new.root);
  for (const auto& a : p.apex_leafs) priv.apex_leafs.emplace_back(fr(a));
  for (const auto& cp : p.challenge_proofs) {
    UpdateChallengeWitness cw;
    cw.leaf_r_old = fr(cp.proof_r_old.leaf);
    cw.leaf_d_new = fr(cp.proof_d_new.leaf);
    cw.leaf_r_new = fr(cp.proof_r_new.leaf);
    cw.path_r_old = sibling_path(cp.proof_r_old);
    cw.path_d_new = sibling_path(cp.proof_d_new);
    cw.path_r_new = sibling_path(cp.proof_r_new);
    priv.challenges.push_back(std::move(cw));
  }
  return UpdateCircuit(in.nodes(), UpdateVariant::kSha256TreeD, pi, std::move(priv));
}

}  // namespace cuzk::circuits::filecoin
