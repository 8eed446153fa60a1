#include "circuits/filecoin/c1.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <utility>

#include "circuits/filecoin/c1_build.hpp"
#include "circuits/native/poseidon.hpp"
#include "circuits/filecoin/labels.hpp"
#include "util/json_input.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

using json = nlohmann::json;

// ---------------------------------------------------------------- errors

std::string_view to_string(C1ErrorKind k) {
  switch (k) {
    case C1ErrorKind::JsonSyntax:
      return "JsonSyntax";
    case C1ErrorKind::MissingField:
      return "MissingField";
    case C1ErrorKind::WrongType:
      return "WrongType";
    case C1ErrorKind::ByteValue:
      return "ByteValue";
    case C1ErrorKind::ByteLength:
      return "ByteLength";
    case C1ErrorKind::IntegerRange:
      return "IntegerRange";
    case C1ErrorKind::UnknownProof:
      return "UnknownProof";
    case C1ErrorKind::ProofKeyMismatch:
      return "ProofKeyMismatch";
    case C1ErrorKind::PartitionCount:
      return "PartitionCount";
    case C1ErrorKind::ChallengeCount:
      return "ChallengeCount";
    case C1ErrorKind::ProofShape:
      return "ProofShape";
    case C1ErrorKind::PathLength:
      return "PathLength";
    case C1ErrorKind::PathArity:
      return "PathArity";
    case C1ErrorKind::ParentCount:
      return "ParentCount";
    case C1ErrorKind::LayerCount:
      return "LayerCount";
    case C1ErrorKind::LayerIndex:
      return "LayerIndex";
    case C1ErrorKind::ChallengeMismatch:
      return "ChallengeMismatch";
    case C1ErrorKind::ParentMismatch:
      return "ParentMismatch";
    case C1ErrorKind::RootMismatch:
      return "RootMismatch";
    case C1ErrorKind::NonCanonicalField:
      return "NonCanonicalField";
    case C1ErrorKind::PathMismatch:
      return "PathMismatch";
    case C1ErrorKind::LabelMismatch:
      return "LabelMismatch";
  }
  return "?";
}

C1Error::C1Error(C1ErrorKind kind, std::string json_path, const std::string& detail)
    : std::runtime_error("C1 " + std::string(to_string(kind)) + " at '" + json_path + "': " + detail),
      kind_(kind),
      json_path_(std::move(json_path)) {}

namespace {

// JSON pointer under construction: Scope appends "/token" and restores the
// previous length when it goes out of scope.
class JPath {
 public:
  class Scope {
   public:
    Scope(JPath& p, std::string_view token) : p_(p), saved_(p.s_.size()) {
      p_.s_.push_back('/');
      p_.s_.append(token);
    }
    Scope(JPath& p, std::size_t index) : Scope(p, std::to_string(index)) {}
    ~Scope() { p_.s_.resize(saved_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    JPath& p_;
    std::size_t saved_;
  };
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

// An untrusted object key as a JSON pointer token, at most 64 bytes
// (longer keys are cut and marked with "...").
std::string path_token(const std::string& key) {
  constexpr std::size_t kMax = 64;
  return key.size() <= kMax ? key : key.substr(0, kMax) + "...";
}

[[noreturn]] void fail(C1ErrorKind k, const JPath& p, const std::string& detail) { throw C1Error(k, p.str(), detail); }

// ---------------------------------------------------------------- JSON readers

// obj[key]; the caller has already pushed `key` onto `p`, so errors point at
// the value being read.
const json& field(const json& obj, std::string_view key, const JPath& p) {
  if (!obj.is_object()) fail(C1ErrorKind::WrongType, p, "parent is not an object");
  auto it = obj.find(key);
  if (it == obj.end()) fail(C1ErrorKind::MissingField, p, "missing key '" + std::string(key) + "'");
  return *it;
}

const json& array(const json& j, const JPath& p) {
  if (!j.is_array()) fail(C1ErrorKind::WrongType, p, "expected an array");
  return j;
}

std::uint64_t read_uint(const json& j, std::uint64_t max, const JPath& p) {
  if (!j.is_number_integer()) fail(C1ErrorKind::WrongType, p, "expected an unsigned integer");
  if (j.is_number_unsigned()) {
    const auto v = j.get<std::uint64_t>();
    if (v > max) fail(C1ErrorKind::IntegerRange, p, std::to_string(v) + " > " + std::to_string(max));
    return v;
  }
  const auto v = j.get<std::int64_t>();
  if (v < 0) fail(C1ErrorKind::IntegerRange, p, "negative value " + std::to_string(v));
  if (std::uint64_t(v) > max) fail(C1ErrorKind::IntegerRange, p, std::to_string(v) + " too large");
  return std::uint64_t(v);
}

Digest32 read_domain(const json& j, JPath& p) {
  array(j, p);
  if (j.size() != 32) {
    fail(C1ErrorKind::ByteLength, p, "expected 32 bytes, got " + std::to_string(j.size()));
  }
  Digest32 d;
  for (std::size_t i = 0; i < 32; ++i) {
    const json& b = j[i];
    if (!b.is_number_integer() || (b.is_number_unsigned() ? b.get<std::uint64_t>() > 255 : true)) {
      // nlohmann stores non-negative integer literals as unsigned.
      JPath::Scope s(p, i);
      fail(C1ErrorKind::ByteValue, p, "expected an integer 0..255, got " + json_excerpt(b));
    }
    d[i] = std::uint8_t(b.get<std::uint64_t>());
  }
  return d;
}

std::vector<Digest32> read_domains(const json& j, JPath& p) {
  array(j, p);
  std::vector<Digest32> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    JPath::Scope s(p, i);
    out.push_back(read_domain(j[i], p));
  }
  return out;
}

InclusionPath read_inclusion_path(const json& j, JPath& p) {
  JPath::Scope s(p, "path");
  const json& elems = array(field(j, "path", p), p);
  InclusionPath out;
  out.reserve(elems.size());
  for (std::size_t i = 0; i < elems.size(); ++i) {
    JPath::Scope se(p, i);
    PathElement e;
    {
      JPath::Scope sh(p, "hashes");
      e.hashes = read_domains(field(elems[i], "hashes", p), p);
    }
    {
      JPath::Scope si(p, "index");
      e.index = read_uint(field(elems[i], "index", p), std::numeric_limits<std::uint64_t>::max(), p);
    }
    out.push_back(std::move(e));
  }
  return out;
}

MerkleProof read_merkle_proof(const json& j, JPath& p) {
  JPath::Scope sd(p, "data");
  const json& data = field(j, "data", p);
  if (!data.is_object() || data.size() != 1) {
    fail(C1ErrorKind::WrongType, p, "expected {\"Single\"|\"Sub\"|\"Top\": {...}}");
  }
  const std::string& variant = data.begin().key();
  const json& body = data.begin().value();
  JPath::Scope sv(p, path_token(variant));
  if (variant != "Single" && variant != "Sub" && variant != "Top") {
    fail(C1ErrorKind::WrongType, p, "unknown MerkleProof variant");
  }
  MerkleProof m;
  if (variant == "Single") {
    m.kind = MerkleProofKind::Single;
    JPath::Scope s(p, "path");
    m.base = read_inclusion_path(field(body, "path", p), p);
  } else if (variant == "Sub" || variant == "Top") {
    m.kind = variant == "Sub" ? MerkleProofKind::Sub : MerkleProofKind::Top;
    {
      JPath::Scope s(p, "base_proof");
      m.base = read_inclusion_path(field(body, "base_proof", p), p);
    }
    {
      JPath::Scope s(p, "sub_proof");
      m.sub = read_inclusion_path(field(body, "sub_proof", p), p);
    }
    if (m.kind == MerkleProofKind::Top) {
      JPath::Scope s(p, "top_proof");
      m.top = read_inclusion_path(field(body, "top_proof", p), p);
    }
  }
  {
    JPath::Scope s(p, "root");
    m.root = read_domain(field(body, "root", p), p);
  }
  {
    JPath::Scope s(p, "leaf");
    m.leaf = read_domain(field(body, "leaf", p), p);
  }
  return m;
}

ColumnProof read_column_proof(const json& j, JPath& p) {
  ColumnProof c;
  {
    JPath::Scope s(p, "column");
    const json& col = field(j, "column", p);
    {
      JPath::Scope si(p, "index");
      c.column.index = std::uint32_t(read_uint(field(col, "index", p), 0xffffffffULL, p));
    }
    {
      JPath::Scope sr(p, "rows");
      c.column.rows = read_domains(field(col, "rows", p), p);
    }
  }
  JPath::Scope s(p, "inclusion_proof");
  c.inclusion_proof = read_merkle_proof(field(j, "inclusion_proof", p), p);
  return c;
}

std::vector<ColumnProof> read_column_proofs(const json& j, JPath& p) {
  array(j, p);
  std::vector<ColumnProof> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    JPath::Scope s(p, i);
    out.push_back(read_column_proof(j[i], p));
  }
  return out;
}

LabelingProof read_labeling_proof(const json& j, JPath& p) {
  LabelingProof l;
  {
    JPath::Scope s(p, "parents");
    l.parents = read_domains(field(j, "parents", p), p);
  }
  {
    JPath::Scope s(p, "layer_index");
    l.layer_index = std::uint32_t(read_uint(field(j, "layer_index", p), 0xffffffffULL, p));
  }
  {
    JPath::Scope s(p, "node");
    l.node = read_uint(field(j, "node", p), std::numeric_limits<std::uint64_t>::max(), p);
  }
  return l;
}

ChallengeProof read_challenge_proof(const json& j, JPath& p) {
  ChallengeProof c;
  {
    JPath::Scope s(p, "comm_d_proofs");
    c.comm_d_proofs = read_merkle_proof(field(j, "comm_d_proofs", p), p);
  }
  {
    JPath::Scope s(p, "comm_r_last_proof");
    c.comm_r_last_proof = read_merkle_proof(field(j, "comm_r_last_proof", p), p);
  }
  {
    JPath::Scope s(p, "replica_column_proofs");
    const json& r = field(j, "replica_column_proofs", p);
    {
      JPath::Scope sc(p, "c_x");
      c.replica_column_proofs.c_x = read_column_proof(field(r, "c_x", p), p);
    }
    {
      JPath::Scope sc(p, "drg_parents");
      c.replica_column_proofs.drg_parents = read_column_proofs(field(r, "drg_parents", p), p);
    }
    {
      JPath::Scope sc(p, "exp_parents");
      c.replica_column_proofs.exp_parents = read_column_proofs(field(r, "exp_parents", p), p);
    }
  }
  {
    JPath::Scope s(p, "labeling_proofs");
    const json& ls = array(field(j, "labeling_proofs", p), p);
    c.labeling_proofs.reserve(ls.size());
    for (std::size_t i = 0; i < ls.size(); ++i) {
      JPath::Scope si(p, i);
      c.labeling_proofs.push_back(read_labeling_proof(ls[i], p));
    }
  }
  {
    JPath::Scope s(p, "encoding_proof");
    c.encoding_proof = read_labeling_proof(field(j, "encoding_proof", p), p);
  }
  return c;
}

// ---------------------------------------------------------------- structure checks

struct TreeShape {
  MerkleProofKind kind;
  std::size_t base_levels;
  std::size_t base_arity;
  std::size_t sub_arity;  // 0 = none
  std::size_t top_arity;  // 0 = none
};

TreeShape tree_rc_shape(const SealProofInfo& info) {
  return TreeShape{tree_rc_kind(info), info.base_levels, info.base_arity, info.sub_arity, info.top_arity};
}

TreeShape tree_d_shape(const SealProofInfo& info) {
  return TreeShape{MerkleProofKind::Single, info.comm_d_levels, 2, 0, 0};
}

std::string_view kind_name(MerkleProofKind k) {
  return k == MerkleProofKind::Single ? "Single" : k == MerkleProofKind::Sub ? "Sub" : "Top";
}

void check_path(const InclusionPath& path, std::size_t levels, std::size_t arity, JPath& p) {
  JPath::Scope s(p, "path");
  if (path.size() != levels) {
    fail(C1ErrorKind::PathLength, p,
         "expected " + std::to_string(levels) + " levels, got " + std::to_string(path.size()));
  }
  for (std::size_t i = 0; i < path.size(); ++i) {
    JPath::Scope si(p, i);
    if (path[i].hashes.size() != arity - 1) {
      JPath::Scope sh(p, "hashes");
      fail(C1ErrorKind::PathArity, p,
           "expected " + std::to_string(arity - 1) + " siblings, got " + std::to_string(path[i].hashes.size()));
    }
    if (path[i].index >= arity) {
      JPath::Scope sx(p, "index");
      fail(C1ErrorKind::PathArity, p, "index " + std::to_string(path[i].index) + " >= arity " + std::to_string(arity));
    }
  }
}

// `p` points at the MerkleProof object.
void check_merkle_shape(const MerkleProof& m, const TreeShape& shape, JPath& p) {
  JPath::Scope sd(p, "data");
  if (m.kind != shape.kind) {
    fail(C1ErrorKind::ProofShape, p,
         "expected a " + std::string(kind_name(shape.kind)) + " proof, got " + std::string(kind_name(m.kind)));
  }
  JPath::Scope sv(p, kind_name(m.kind));
  if (m.kind == MerkleProofKind::Single) {
    JPath::Scope s(p, "path");  // {"path": {"path": [...]}}
    check_path(m.base, shape.base_levels, shape.base_arity, p);
    return;
  }
  {
    JPath::Scope s(p, "base_proof");
    check_path(m.base, shape.base_levels, shape.base_arity, p);
  }
  {
    JPath::Scope s(p, "sub_proof");
    check_path(m.sub, 1, shape.sub_arity, p);
  }
  if (m.kind == MerkleProofKind::Top) {
    JPath::Scope s(p, "top_proof");
    check_path(m.top, 1, shape.top_arity, p);
  }
}

void expect_root(const MerkleProof& m, const Digest32& want, std::string_view what, JPath& p) {
  if (m.root != want) {
    JPath::Scope sd(p, "data");
    JPath::Scope sv(p, kind_name(m.kind));
    JPath::Scope sr(p, "root");
    fail(C1ErrorKind::RootMismatch, p, "root differs from " + std::string(what));
  }
}

void check_column_proof(const ColumnProof& c, const SealProofInfo& info, const TreeShape& shape, const Digest32& comm_c,
                        JPath& p) {
  {
    JPath::Scope s(p, "column");
    JPath::Scope sr(p, "rows");
    if (c.column.rows.size() != info.layers) {
      fail(C1ErrorKind::LayerCount, p,
           "expected " + std::to_string(info.layers) + " rows, got " + std::to_string(c.column.rows.size()));
    }
  }
  JPath::Scope s(p, "inclusion_proof");
  check_merkle_shape(c.inclusion_proof, shape, p);
  if (c.inclusion_proof.leaf_index() != c.column.index) {
    fail(C1ErrorKind::ChallengeMismatch, p,
         "inclusion path opens node " + std::to_string(c.inclusion_proof.leaf_index()) + ", column index is " +
             std::to_string(c.column.index));
  }
  expect_root(c.inclusion_proof, comm_c, "the first column proof's (comm_c)", p);
}

void check_labeling(const LabelingProof& l, std::uint32_t want_layer, std::uint64_t want_node, JPath& p) {
  {
    JPath::Scope s(p, "parents");
    if (l.parents.size() != 37) {
      fail(C1ErrorKind::ParentCount, p, "expected 37 parents, got " + std::to_string(l.parents.size()));
    }
  }
  if (l.layer_index != want_layer) {
    JPath::Scope s(p, "layer_index");
    fail(C1ErrorKind::LayerIndex, p,
         "expected layer " + std::to_string(want_layer) + ", got " + std::to_string(l.layer_index));
  }
  if (l.node != want_node) {
    JPath::Scope s(p, "node");
    fail(C1ErrorKind::ChallengeMismatch, p,
         "node " + std::to_string(l.node) + " differs from the challenge " + std::to_string(want_node));
  }
}

// Every domain value of a genuine C1 is a canonical Fr: Poseidon outputs are
// field elements and SHA-256 ones are trimmed to 254 bits (fr32). The
// synthesis and the public inputs convert them to Fr and abort on a value
// >= r, so the parse refuses one (a replica_id of 32 x 0xff crashed cuzkd).
void expect_canonical(const Digest32& d, JPath& p) {
  ff::Fr x;
  if (!ff::Fr::from_bytes_le(d, x)) fail(C1ErrorKind::NonCanonicalField, p, "value >= r");
}

void expect_canonical(const std::vector<Digest32>& v, JPath& p) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    JPath::Scope s(p, i);
    expect_canonical(v[i], p);
  }
}

// `p` points at the MerkleProof object.
void expect_canonical(const MerkleProof& m, JPath& p) {
  JPath::Scope sd(p, "data");
  JPath::Scope sv(p, kind_name(m.kind));
  {
    JPath::Scope s(p, "root");
    expect_canonical(m.root, p);
  }
  {
    JPath::Scope s(p, "leaf");
    expect_canonical(m.leaf, p);
  }
  const std::pair<const char*, const InclusionPath*> parts[] = {
      {m.kind == MerkleProofKind::Single ? "path" : "base_proof", &m.base},
      {"sub_proof", &m.sub},
      {"top_proof", &m.top}};
  for (const auto& [name, path] : parts) {
    JPath::Scope s(p, name);
    JPath::Scope s2(p, "path");
    for (std::size_t i = 0; i < path->size(); ++i) {
      JPath::Scope si(p, i);
      JPath::Scope sh(p, "hashes");
      expect_canonical((*path)[i].hashes, p);
    }
  }
}

void expect_canonical(const ColumnProof& c, JPath& p) {
  {
    JPath::Scope s(p, "column");
    JPath::Scope sr(p, "rows");
    expect_canonical(c.column.rows, p);
  }
  JPath::Scope s(p, "inclusion_proof");
  expect_canonical(c.inclusion_proof, p);
}

void expect_canonical(const ChallengeProof& c, JPath& p) {
  {
    JPath::Scope s(p, "comm_d_proofs");
    expect_canonical(c.comm_d_proofs, p);
  }
  {
    JPath::Scope s(p, "comm_r_last_proof");
    expect_canonical(c.comm_r_last_proof, p);
  }
  JPath::Scope s(p, "replica_column_proofs");
  {
    JPath::Scope sc(p, "c_x");
    expect_canonical(c.replica_column_proofs.c_x, p);
  }
  const std::pair<const char*, const std::vector<ColumnProof>*> groups[] = {
      {"drg_parents", &c.replica_column_proofs.drg_parents}, {"exp_parents", &c.replica_column_proofs.exp_parents}};
  for (const auto& [name, cols] : groups) {
    JPath::Scope sg(p, name);
    for (std::size_t i = 0; i < cols->size(); ++i) {
      JPath::Scope si(p, i);
      expect_canonical((*cols)[i], p);
    }
  }
  // The labeling/encoding parents equal column rows (check_labeling_parents).
}

// The labeling proofs repeat the parent labels that the column proofs open:
// layer l's parents are the DRG columns' row l and (l > 1) the expander
// columns' row l - 1, expanded to 37; the encoding proof repeats the last
// layer's. The circuit computes labels from the columns only, so a C1 whose
// copies disagree still proves, yet rust-fil-proofs' vanilla verification
// (LabelingProof::verify: the label of its own parents must be c_x's row)
// rejects it. Cheap (comparisons only), so every parse checks it. Runs after
// the counts are checked (6 + 8 columns of `layers` rows, 37 parents).
void check_labeling_parents(const ChallengeProof& c, const SealProofInfo& info, JPath& p) {
  const auto& r = c.replica_column_proofs;
  for (std::uint32_t l = 1; l <= info.layers; ++l) {
    std::vector<Digest32> parents;
    for (const auto& col : r.drg_parents) parents.push_back(col.column.rows[l - 1]);
    if (l > 1) {
      for (const auto& col : r.exp_parents) parents.push_back(col.column.rows[l - 2]);
    }
    const auto expanded = expand_parents(parents);
    if (!std::equal(expanded.begin(), expanded.end(), c.labeling_proofs[l - 1].parents.begin())) {
      JPath::Scope s(p, "labeling_proofs");
      JPath::Scope si(p, l - 1);
      JPath::Scope sp(p, "parents");
      fail(C1ErrorKind::LabelMismatch, p, "parents differ from the parent column proofs' rows");
    }
  }
  if (c.encoding_proof.parents != c.labeling_proofs[info.layers - 1].parents) {
    JPath::Scope s(p, "encoding_proof");
    JPath::Scope sp(p, "parents");
    fail(C1ErrorKind::LabelMismatch, p, "parents differ from the last labeling proof's");
  }
}

void check_challenge(const ChallengeProof& c, const SealProofInfo& info, const Digest32& comm_d,
                     const Digest32& comm_r_last, const Digest32& comm_c, JPath& p) {
  const TreeShape rc = tree_rc_shape(info);
  // The challenge is the c_x column index (checked against the paths and the
  // labeling proofs below).
  const std::uint64_t challenge = c.replica_column_proofs.c_x.column.index;
  if (challenge >= info.nodes) {
    JPath::Scope s1(p, "replica_column_proofs");
    JPath::Scope s2(p, "c_x");
    JPath::Scope s3(p, "column");
    JPath::Scope s4(p, "index");
    fail(C1ErrorKind::IntegerRange, p, "challenge " + std::to_string(challenge) + " >= nodes");
  }
  {
    JPath::Scope s(p, "comm_d_proofs");
    check_merkle_shape(c.comm_d_proofs, tree_d_shape(info), p);
    expect_root(c.comm_d_proofs, comm_d, "comm_d", p);
    if (c.comm_d_proofs.leaf_index() != challenge) {
      fail(
          C1ErrorKind::ChallengeMismatch, p,
          "opens node " + std::to_string(c.comm_d_proofs.leaf_index()) + ", challenge is " + std::to_string(challenge));
    }
  }
  {
    JPath::Scope s(p, "comm_r_last_proof");
    check_merkle_shape(c.comm_r_last_proof, rc, p);
    expect_root(c.comm_r_last_proof, comm_r_last, "the first tree R root (comm_r_last)", p);
    if (c.comm_r_last_proof.leaf_index() != challenge) {
      fail(C1ErrorKind::ChallengeMismatch, p,
           "opens node " + std::to_string(c.comm_r_last_proof.leaf_index()) + ", challenge is " +
               std::to_string(challenge));
    }
  }
  {
    JPath::Scope s(p, "replica_column_proofs");
    const auto& r = c.replica_column_proofs;
    {
      JPath::Scope sc(p, "c_x");
      check_column_proof(r.c_x, info, rc, comm_c, p);
    }
    const std::pair<const char*, const std::vector<ColumnProof>*> groups[] = {{"drg_parents", &r.drg_parents},
                                                                              {"exp_parents", &r.exp_parents}};
    for (const auto& [name, cols] : groups) {
      JPath::Scope sg(p, name);
      const std::size_t want = std::string_view(name) == "drg_parents" ? 6 : 8;
      if (cols->size() != want) {
        fail(C1ErrorKind::ParentCount, p,
             "expected " + std::to_string(want) + " column proofs, got " + std::to_string(cols->size()));
      }
      for (std::size_t i = 0; i < cols->size(); ++i) {
        JPath::Scope si(p, i);
        check_column_proof((*cols)[i], info, rc, comm_c, p);
      }
    }
  }
  {
    JPath::Scope s(p, "labeling_proofs");
    if (c.labeling_proofs.size() != info.layers) {
      fail(C1ErrorKind::LayerCount, p,
           "expected " + std::to_string(info.layers) + " labeling proofs, got " +
               std::to_string(c.labeling_proofs.size()));
    }
    for (std::size_t l = 0; l < c.labeling_proofs.size(); ++l) {
      JPath::Scope si(p, l);
      check_labeling(c.labeling_proofs[l], std::uint32_t(l + 1), challenge, p);
    }
  }
  {
    JPath::Scope s(p, "encoding_proof");
    check_labeling(c.encoding_proof, info.layers, challenge, p);
  }
  check_labeling_parents(c, info, p);
  expect_canonical(c, p);
}

bool canonical_fr(const Digest32& d, ff::Fr& out) { return ff::Fr::from_bytes_le(d, out); }

ff::Fr fr_or_fail(const Digest32& d, C1ErrorKind kind_if_bad, const JPath& p, std::string_view what) {
  ff::Fr x;
  if (!canonical_fr(d, x)) fail(kind_if_bad, p, std::string(what) + " is not a canonical Fr");
  return x;
}

// ---------------------------------------------------------------- JSON writer

class Writer {
 public:
  std::string take() { return std::move(s_); }
  void raw(std::string_view t) { s_.append(t); }
  void key(std::string_view k) {
    s_.push_back('"');
    s_.append(k);
    s_.append("\":");
  }
  void uint(std::uint64_t v) { s_.append(std::to_string(v)); }
  void domain(const Digest32& d) {
    s_.push_back('[');
    for (std::size_t i = 0; i < 32; ++i) {
      if (i) s_.push_back(',');
      uint(d[i]);
    }
    s_.push_back(']');
  }
  void domains(const std::vector<Digest32>& v) {
    s_.push_back('[');
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) s_.push_back(',');
      domain(v[i]);
    }
    s_.push_back(']');
  }
  void path(const InclusionPath& p) {
    raw("{\"path\":[");
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (i) s_.push_back(',');
      raw("{");
      key("hashes");
      domains(p[i].hashes);
      raw(",");
      key("index");
      uint(p[i].index);
      raw("}");
    }
    raw("]}");
  }
  void merkle(const MerkleProof& m) {
    raw("{\"data\":{\"");
    raw(kind_name(m.kind));
    raw("\":{");
    if (m.kind == MerkleProofKind::Single) {
      key("root");
      domain(m.root);
      raw(",");
      key("leaf");
      domain(m.leaf);
      raw(",");
      key("path");
      path(m.base);
    } else {
      key("base_proof");
      path(m.base);
      raw(",");
      key("sub_proof");
      path(m.sub);
      raw(",");
      if (m.kind == MerkleProofKind::Top) {
        key("top_proof");
        path(m.top);
        raw(",");
      }
      key("root");
      domain(m.root);
      raw(",");
      key("leaf");
      domain(m.leaf);
    }
    raw("}}}");
  }
  void column_proof(const ColumnProof& c) {
    raw("{\"column\":{");
    key("index");
    uint(c.column.index);
    raw(",");
    key("rows");
    domains(c.column.rows);
    raw(",\"_h\":null},");
    key("inclusion_proof");
    merkle(c.inclusion_proof);
    raw("}");
  }
  void column_proofs(const std::vector<ColumnProof>& v) {
    raw("[");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) raw(",");
      column_proof(v[i]);
    }
    raw("]");
  }
  void labeling(const LabelingProof& l) {
    raw("{");
    key("parents");
    domains(l.parents);
    raw(",");
    key("layer_index");
    uint(l.layer_index);
    raw(",");
    key("node");
    uint(l.node);
    raw("}");
  }
  void challenge(const ChallengeProof& c) {
    raw("{");
    key("comm_d_proofs");
    merkle(c.comm_d_proofs);
    raw(",");
    key("comm_r_last_proof");
    merkle(c.comm_r_last_proof);
    raw(",");
    key("replica_column_proofs");
    raw("{");
    key("c_x");
    column_proof(c.replica_column_proofs.c_x);
    raw(",");
    key("drg_parents");
    column_proofs(c.replica_column_proofs.drg_parents);
    raw(",");
    key("exp_parents");
    column_proofs(c.replica_column_proofs.exp_parents);
    raw("},");
    key("labeling_proofs");
    raw("[");
    for (std::size_t i = 0; i < c.labeling_proofs.size(); ++i) {
      if (i) raw(",");
      labeling(c.labeling_proofs[i]);
    }
    raw("],");
    key("encoding_proof");
    labeling(c.encoding_proof);
    raw("}");
  }

 private:
  std::string s_;
};

}  // namespace

// ---------------------------------------------------------------- MerkleProof helpers

InclusionPath MerkleProof::levels() const {
  InclusionPath out = base;
  out.insert(out.end(), sub.begin(), sub.end());
  out.insert(out.end(), top.begin(), top.end());
  return out;
}

std::uint64_t MerkleProof::leaf_index() const {
  // Mixed radix: the arity of a level is its sibling count + 1.
  std::uint64_t idx = 0, scale = 1;
  for (const InclusionPath* part : {&base, &sub, &top}) {
    for (const auto& e : *part) {
      idx += scale * e.index;
      scale *= e.hashes.size() + 1;
    }
  }
  return idx;
}

Digest32 C1Output::comm_r_last() const {
  return vanilla_proofs.empty() || vanilla_proofs[0].empty() ? Digest32{} : vanilla_proofs[0][0].comm_r_last_proof.root;
}

Digest32 C1Output::comm_c() const {
  return vanilla_proofs.empty() || vanilla_proofs[0].empty()
             ? Digest32{}
             : vanilla_proofs[0][0].replica_column_proofs.c_x.inclusion_proof.root;
}

// ---------------------------------------------------------------- public API

void check_structure(const C1Output& c1) {
  const SealProofInfo& info = c1.info();
  JPath p;
  JPath::Scope sv(p, "vanilla_proofs");
  JPath::Scope sk(p, info.v1_name);
  if (c1.vanilla_proofs.size() != info.partitions) {
    fail(
        C1ErrorKind::PartitionCount, p,
        "expected " + std::to_string(info.partitions) + " partitions, got " + std::to_string(c1.vanilla_proofs.size()));
  }
  for (std::size_t k = 0; k < c1.vanilla_proofs.size(); ++k) {
    JPath::Scope sp(p, k);
    if (c1.vanilla_proofs[k].size() != info.challenges_per_partition) {
      fail(C1ErrorKind::ChallengeCount, p,
           "expected " + std::to_string(info.challenges_per_partition) + " challenges, got " +
               std::to_string(c1.vanilla_proofs[k].size()));
    }
  }
  const Digest32 comm_r_last = c1.comm_r_last();
  const Digest32 comm_c = c1.comm_c();
  for (std::size_t k = 0; k < c1.vanilla_proofs.size(); ++k) {
    JPath::Scope sp(p, k);
    for (std::size_t i = 0; i < c1.vanilla_proofs[k].size(); ++i) {
      JPath::Scope sc(p, i);
      check_challenge(c1.vanilla_proofs[k][i], info, c1.comm_d, comm_r_last, comm_c, p);
    }
  }
  // comm_r = Poseidon2(comm_c, comm_r_last).
  JPath top;
  for (const auto& [name, value] : {std::pair<const char*, const Digest32*>{"replica_id", &c1.replica_id},
                                    {"comm_d", &c1.comm_d},
                                    {"comm_r", &c1.comm_r}}) {
    JPath::Scope s(top, name);
    expect_canonical(*value, top);
  }
  const ff::Fr c = fr_or_fail(comm_c, C1ErrorKind::NonCanonicalField, p, "comm_c (tree C root)");
  const ff::Fr r = fr_or_fail(comm_r_last, C1ErrorKind::NonCanonicalField, p, "comm_r_last");
  if (native::fr_to_le_bytes(native::poseidon2(c, r)) != c1.comm_r) {
    JPath::Scope s(top, "comm_r");
    fail(C1ErrorKind::RootMismatch, top, "comm_r != Poseidon2(comm_c, comm_r_last)");
  }
}

namespace {

// Where the partitions' arrays lie in a C1 text:
//   {..., "vanilla_proofs": {"<key>": [ [...], [...], ... ]}, ...}
// `array_begin` / `array_end`: the '[' and ']' of the partitions array;
// `parts`: each element's [begin, end).
struct PartitionSpans {
  std::size_t array_begin = 0, array_end = 0;
  std::vector<std::pair<std::size_t, std::size_t>> parts;
};

// One pass over the text's structure (strings with their escapes, nesting,
// key positions) that finds the top-level key "vanilla_proofs" (spelt
// without escapes, once), its object of one key, that key's array and the
// array's elements, all arrays. nullopt for anything else, malformed text
// included: the whole-document parse decides then.
std::optional<PartitionSpans> find_partition_spans(std::string_view t) {
  constexpr std::string_view kVanilla = "\"vanilla_proofs\"";
  struct Open {
    char kind;        // '{' or '['
    bool expect_key;  // an object's next string is a key
    int role;         // 0 other, 1 vanilla_proofs' object, 2 the partitions array, 3 a partition
  };
  std::vector<Open> stack;
  PartitionSpans out;
  int vanilla_seen = 0, vanilla_keys = 0;
  int next_role = 0;  // the role of the value that follows the current key
  std::size_t part_begin = 0;
  bool done = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char ch = t[i];
    switch (ch) {
      case '"': {
        const std::size_t begin = i;
        for (++i; i < t.size() && t[i] != '"'; ++i) {
          if (t[i] == '\\') ++i;
        }
        if (i >= t.size()) return std::nullopt;
        if (!stack.empty() && stack.back().kind == '{' && stack.back().expect_key) {
          stack.back().expect_key = false;
          const std::string_view key = t.substr(begin, i + 1 - begin);
          next_role = 0;
          if (stack.size() == 1 && key == kVanilla) {
            ++vanilla_seen;
            next_role = 1;
          } else if (stack.back().role == 1) {
            ++vanilla_keys;
            next_role = 2;
          }
        } else if (!stack.empty() && (stack.back().role == 2)) {
          return std::nullopt;  // a partition that is not an array
        }
        break;
      }
      case '{':
      case '[': {
        int role = 0;
        if (!stack.empty() && stack.back().kind == '{') role = next_role;
        if (!stack.empty() && stack.back().role == 2) {
          if (ch != '[') return std::nullopt;
          role = 3;
          part_begin = i;
        }
        if (role == 1 && ch != '{') return std::nullopt;
        if (role == 2) {
          if (ch != '[' || !out.parts.empty() || done) return std::nullopt;  // one partitions array
          out.array_begin = i;
        }
        next_role = 0;
        stack.push_back({ch, ch == '{', role});
        break;
      }
      case '}':
      case ']': {
        if (stack.empty() || (ch == '}') != (stack.back().kind == '{')) return std::nullopt;
        const int role = stack.back().role;
        stack.pop_back();
        if (role == 3) out.parts.emplace_back(part_begin, i + 1);
        if (role == 2) {
          out.array_end = i;
          done = true;
        }
        break;
      }
      case ',':
        if (!stack.empty() && stack.back().kind == '{') stack.back().expect_key = true;
        next_role = 0;
        break;
      default:
        if (!stack.empty() && stack.back().role == 2 && ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') {
          return std::nullopt;  // a scalar among the partitions
        }
        break;
    }
  }
  if (!stack.empty() || !done || vanilla_seen != 1 || vanilla_keys != 1 || out.parts.empty()) return std::nullopt;
  return out;
}

// One partition's challenges read into `out` (p: the partition's path).
void read_partition(const json& challenges_json, const SealProofInfo& info, std::vector<ChallengeProof>& out,
                    JPath& p) {
  const json& challenges = array(challenges_json, p);
  if (challenges.size() != info.challenges_per_partition) {
    fail(C1ErrorKind::ChallengeCount, p,
         "expected " + std::to_string(info.challenges_per_partition) + " challenges, got " +
             std::to_string(challenges.size()));
  }
  out.reserve(challenges.size());
  for (std::size_t i = 0; i < challenges.size(); ++i) {
    JPath::Scope sc(p, i);
    out.push_back(read_challenge_proof(challenges[i], p));
  }
}

// The document's values read into a C1Output, the partitions from
// `partition_docs` when given (the document's own array is then empty),
// each on `pool` when given: the first error in document order is thrown,
// as reading them one after another would.
C1Output c1_from_doc(const json& doc, const std::vector<json>* partition_docs, ThreadPool* pool) {
  JPath p;
  C1Output c1;
  {
    JPath::Scope s(p, "registered_proof");
    const json& rp = field(doc, "registered_proof", p);
    if (!rp.is_string()) fail(C1ErrorKind::WrongType, p, "expected a string");
    const auto proof = seal_proof_from_name(rp.get<std::string>());
    if (!proof) fail(C1ErrorKind::UnknownProof, p, "unsupported registered proof " + json_excerpt(rp));
    c1.registered_proof = *proof;
  }
  const std::pair<const char*, Digest32*> commitments[] = {{"comm_r", &c1.comm_r},
                                                           {"comm_d", &c1.comm_d},
                                                           {"replica_id", &c1.replica_id},
                                                           {"seed", &c1.seed},
                                                           {"ticket", &c1.ticket}};
  for (const auto& [name, dst] : commitments) {
    JPath::Scope s(p, name);
    *dst = read_domain(field(doc, name, p), p);
  }
  {
    JPath::Scope s(p, "vanilla_proofs");
    const json& vp = field(doc, "vanilla_proofs", p);
    if (!vp.is_object() || vp.size() != 1) {
      fail(C1ErrorKind::WrongType, p, "expected {\"StackedDrg<size>V1\": [[...]]}");
    }
    const std::string& key = vp.begin().key();
    JPath::Scope sk(p, path_token(key));
    if (key != c1.info().v1_name) {
      fail(C1ErrorKind::ProofKeyMismatch, p, "the key does not match " + std::string(c1.info().v1_name));
    }
    // Counts are checked before anything is read, so the work done on a
    // document is bounded by the declared sector shape.
    const SealProofInfo& info = c1.info();
    const json& in_doc = array(vp.begin().value(), p);
    const std::size_t count = partition_docs != nullptr ? partition_docs->size() : in_doc.size();
    if (count != info.partitions) {
      fail(C1ErrorKind::PartitionCount, p,
           "expected " + std::to_string(info.partitions) + " partitions, got " + std::to_string(count));
    }
    c1.vanilla_proofs.resize(count);
    auto partition = [&](std::size_t k) -> const json& {
      return partition_docs != nullptr ? (*partition_docs)[k] : in_doc[k];
    };
    if (pool == nullptr) {
      for (std::size_t k = 0; k < count; ++k) {
        JPath::Scope sp(p, k);
        read_partition(partition(k), info, c1.vanilla_proofs[k], p);
      }
    } else {
      std::vector<std::optional<C1Error>> errors(count);
      pool->run_tasks(count, [&](std::size_t k) {
        JPath own = p;
        JPath::Scope sp(own, k);
        try {
          read_partition(partition(k), info, c1.vanilla_proofs[k], own);
        } catch (const C1Error& e) {
          errors[k] = e;
        }
      });
      for (std::optional<C1Error>& e : errors)
        if (e) throw *e;
    }
  }
  return c1;
}

// The partitions parsed apart on `pool` (see parse_c1); nullopt where the
// whole-document parse must decide.
std::optional<C1Output> parse_c1_split(std::string_view text, ThreadPool& pool) {
  const JsonLimits limits;
  if (text.size() > limits.max_bytes) return std::nullopt;
  std::optional<PartitionSpans> spans = find_partition_spans(text);
  if (!spans) return std::nullopt;
  std::string head;
  head.reserve(spans->array_begin + 2 + (text.size() - spans->array_end - 1));
  head.append(text.substr(0, spans->array_begin)).append("[]").append(text.substr(spans->array_end + 1));
  json doc;
  try {
    doc = parse_json_input(head, limits);
  } catch (const JsonInputError&) {
    return std::nullopt;
  }
  // A partition's array is the document's fourth level.
  JsonLimits part_limits = limits;
  part_limits.max_depth = limits.max_depth - 3;
  std::vector<json> parts(spans->parts.size());
  std::atomic<bool> bad{false};
  pool.run_tasks(parts.size(), [&](std::size_t k) {
    const auto [begin, end] = spans->parts[k];
    try {
      parts[k] = parse_json_input(text.substr(begin, end - begin), part_limits);
    } catch (const JsonInputError&) {
      bad = true;
    }
  });
  if (bad) return std::nullopt;
  // The DOMs go on the pool too (millions of nodes: ~10% of a one-thread parse).
  struct Teardown {
    std::vector<json>& parts;
    ThreadPool& pool;
    ~Teardown() {
      pool.run_tasks(parts.size(), [this](std::size_t k) { parts[k] = json(); });
    }
  } teardown{parts, pool};
  return c1_from_doc(doc, &parts, &pool);
}

}  // namespace

C1Output parse_c1(std::string_view json_text, ThreadPool* pool) {
  std::optional<C1Output> split;
  if (pool != nullptr && pool->size() > 1) split = parse_c1_split(json_text, *pool);
  C1Output c1;
  if (split) {
    c1 = std::move(*split);
  } else {
    json doc;
    try {
      doc = parse_json_input(json_text);
    } catch (const JsonInputError& e) {
      throw C1Error(C1ErrorKind::JsonSyntax, "", e.what());
    }
    c1 = c1_from_doc(doc, nullptr, nullptr);
  }
  check_structure(c1);
  return c1;
}

std::string to_json(const C1Output& c1) {
  Writer w;
  w.raw("{");
  w.key("registered_proof");
  w.raw("\"");
  w.raw(c1.info().name);
  w.raw("\",");
  w.key("vanilla_proofs");
  w.raw("{\"");
  w.raw(c1.info().v1_name);
  w.raw("\":[");
  for (std::size_t k = 0; k < c1.vanilla_proofs.size(); ++k) {
    if (k) w.raw(",");
    w.raw("[");
    for (std::size_t i = 0; i < c1.vanilla_proofs[k].size(); ++i) {
      if (i) w.raw(",");
      w.challenge(c1.vanilla_proofs[k][i]);
    }
    w.raw("]");
  }
  w.raw("]},");
  w.key("comm_r");
  w.domain(c1.comm_r);
  w.raw(",");
  w.key("comm_d");
  w.domain(c1.comm_d);
  w.raw(",");
  w.key("replica_id");
  w.domain(c1.replica_id);
  w.raw(",");
  w.key("seed");
  w.domain(c1.seed);
  w.raw(",");
  w.key("ticket");
  w.domain(c1.ticket);
  w.raw("}");
  return w.take();
}

}  // namespace cuzk::circuits::filecoin
