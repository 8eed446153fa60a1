#include "circuits/filecoin/post_proof.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "ff/fp.hpp"

namespace cuzk::circuits::filecoin {
namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

struct SizeRow {
  std::string_view tag;  // "2KiB", ...
  std::uint64_t bytes;
  std::uint32_t sub, top, base_levels, window_sectors;
};
// Base levels: 64 = 8^2, 2^18 = 8^6, 2^24 = 8^8; 32 GiB = 8 base trees of
// 8^9 under an arity-8 sub level; 64 GiB = 16 such trees, sub 8, top 2.
constexpr std::array<SizeRow, 5> kSizes = {{
    {"2KiB", 2 * kKiB, 0, 0, 2, 2},
    {"8MiB", 8 * kMiB, 0, 0, 6, 2},
    {"512MiB", 512 * kMiB, 0, 0, 8, 2},
    {"32GiB", 32 * kGiB, 8, 0, 9, 2349},
    {"64GiB", 64 * kGiB, 8, 2, 9, 2300},
}};

constexpr std::uint32_t kWindowChallenges = 10, kWinningChallenges = 66;

constexpr std::array<std::string_view, 15> kNames = {
    "StackedDrgWinning2KiBV1",    "StackedDrgWinning8MiBV1",   "StackedDrgWinning512MiBV1", "StackedDrgWinning32GiBV1",
    "StackedDrgWinning64GiBV1",   "StackedDrgWindow2KiBV1",    "StackedDrgWindow8MiBV1",    "StackedDrgWindow512MiBV1",
    "StackedDrgWindow32GiBV1",    "StackedDrgWindow64GiBV1",   "StackedDrgWindow2KiBV1_2",  "StackedDrgWindow8MiBV1_2",
    "StackedDrgWindow512MiBV1_2", "StackedDrgWindow32GiBV1_2", "StackedDrgWindow64GiBV1_2"};

constexpr PostProofInfo make(std::size_t id) {
  const SizeRow& s = kSizes[id % 5];
  const PostKind kind = id < 5 ? PostKind::kWinning : PostKind::kWindow;
  PostProofInfo info{};
  info.proof = PostProof(id);
  info.name = kNames[id];
  info.registered_id = id;
  info.kind = kind;
  info.api_version = id < 10 ? PostApiVersion::kV1_0 : PostApiVersion::kV1_2;
  info.sector_bytes = s.bytes;
  info.nodes = s.bytes / 32;
  info.tree = gadgets::TreeShape{8, s.sub, s.top};
  info.base_levels = s.base_levels;
  if (kind == PostKind::kWinning) {
    info.config_sector_count = 1;
    info.config_challenge_count = kWinningChallenges;
    info.circuit_sector_count = kWinningChallenges;  // 66 / 1
    info.circuit_challenge_count = 1;
  } else {
    info.config_sector_count = s.window_sectors;
    info.config_challenge_count = kWindowChallenges;
    info.circuit_sector_count = s.window_sectors;
    info.circuit_challenge_count = kWindowChallenges;
  }
  return info;
}

constexpr std::array<PostProofInfo, 15> kProofs = [] {
  std::array<PostProofInfo, 15> a{};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = make(i);
  return a;
}();

// Bounded reader over untrusted bytes; every failure names the field.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> b, std::optional<std::uint64_t> sector) : b_(b), sector_(sector) {}
  void set_sector(std::uint64_t id) { sector_ = id; }
  std::size_t remaining() const { return b_.size() - pos_; }

  std::uint64_t u64(const std::string& field) { return uint(8, field); }
  std::uint32_t u32(const std::string& field) { return std::uint32_t(uint(4, field)); }
  Digest32 bytes32(const std::string& field) {
    need(32, field);
    Digest32 d;
    for (std::size_t i = 0; i < 32; ++i) d[i] = b_[pos_ + i];
    pos_ += 32;
    return d;
  }
  // A Poseidon domain value: 32 bytes holding a canonical Fr (LE).
  Digest32 fr(const std::string& field) {
    Digest32 d = bytes32(field);
    ff::Fr x;
    if (!ff::Fr::from_bytes_le(d, x)) fail(PostErrorKind::kNonCanonical, field, "not a canonical field element");
    return d;
  }
  // A sequence length that must equal `want` (checked before any allocation).
  void length(std::uint64_t want, const std::string& field) {
    const std::uint64_t n = u64(field);
    if (n != want) {
      fail(PostErrorKind::kLength, field,
           "length " + std::to_string(n) + ", the registered proof needs " + std::to_string(want));
    }
  }
  void finish() {
    if (remaining() != 0) {
      fail(PostErrorKind::kTrailingBytes, "", std::to_string(remaining()) + " bytes after the proof");
    }
  }
  [[noreturn]] void fail(PostErrorKind k, const std::string& field, const std::string& detail) const {
    throw PostError(k, sector_, field, detail);
  }

 private:
  void need(std::size_t n, const std::string& field) {
    if (remaining() < n) {
      fail(PostErrorKind::kTruncated, field,
           "needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + ", " +
               std::to_string(remaining()) + " left");
    }
  }
  std::uint64_t uint(std::size_t n, const std::string& field) {
    need(n, field);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(b_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
  std::optional<std::uint64_t> sector_;
};

void read_path(Reader& r, InclusionPath& out, std::size_t levels, std::size_t arity, const std::string& field) {
  r.length(levels, field);
  out.resize(levels);
  for (std::size_t l = 0; l < levels; ++l) {
    const std::string f = field + "[" + std::to_string(l) + "]";
    r.length(arity - 1, f + ".hashes");
    out[l].hashes.resize(arity - 1);
    for (std::size_t h = 0; h < arity - 1; ++h) {
      out[l].hashes[h] = r.fr(f + ".hashes[" + std::to_string(h) + "]");
    }
    out[l].index = r.u64(f + ".index");
    if (out[l].index >= arity) {
      r.fail(PostErrorKind::kPathArity, f + ".index",
             "index " + std::to_string(out[l].index) + " >= arity " + std::to_string(arity));
    }
  }
}

MerkleProofKind kind_of(const gadgets::TreeShape& t) {
  return t.top_arity ? MerkleProofKind::Top : t.sub_arity ? MerkleProofKind::Sub : MerkleProofKind::Single;
}

MerkleProof read_merkle_proof(Reader& r, const PostProofInfo& info, const std::string& field) {
  MerkleProof m;
  const std::uint32_t tag = r.u32(field + ".tag");
  const MerkleProofKind want = kind_of(info.tree);
  if (tag != std::uint32_t(want)) {
    r.fail(PostErrorKind::kProofShape, field + ".tag",
           "enum tag " + std::to_string(tag) + ", the tree shape needs " + std::to_string(int(want)));
  }
  m.kind = want;
  if (want == MerkleProofKind::Single) {
    m.root = r.fr(field + ".root");
    m.leaf = r.fr(field + ".leaf");
    read_path(r, m.base, info.base_levels, info.tree.base_arity, field + ".path");
    return m;
  }
  read_path(r, m.base, info.base_levels, info.tree.base_arity, field + ".base_proof");
  read_path(r, m.sub, 1, info.tree.sub_arity, field + ".sub_proof");
  if (want == MerkleProofKind::Top) read_path(r, m.top, 1, info.tree.top_arity, field + ".top_proof");
  m.root = r.fr(field + ".root");
  m.leaf = r.fr(field + ".leaf");
  return m;
}

class Writer {
 public:
  void u64(std::uint64_t v) { uint(v, 8); }
  void u32(std::uint32_t v) { uint(v, 4); }
  void bytes32(const Digest32& d) { out_.insert(out_.end(), d.begin(), d.end()); }
  void path(const InclusionPath& p) {
    u64(p.size());
    for (const PathElement& e : p) {
      u64(e.hashes.size());
      for (const Digest32& h : e.hashes) bytes32(h);
      u64(e.index);
    }
  }
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  void uint(std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out_.push_back(std::uint8_t(v >> (8 * i)));
  }
  std::vector<std::uint8_t> out_;
};

}  // namespace

std::span<const PostProofInfo> post_proofs() { return kProofs; }

const PostProofInfo& post_proof_info(PostProof p) {
  const auto i = static_cast<std::size_t>(p);
  if (i >= kProofs.size()) {
    std::fprintf(stderr, "post_proof_info: bad enum %zu\n", i);
    std::abort();
  }
  return kProofs[i];
}

std::optional<PostProof> post_proof_from_name(std::string_view name) {
  for (const auto& info : kProofs) {
    if (info.name == name) return info.proof;
  }
  return std::nullopt;
}

std::optional<PostProof> post_proof_from_id(std::uint64_t id) {
  if (id >= kProofs.size()) return std::nullopt;
  return PostProof(id);
}

std::optional<PostProof> post_proof_for(PostKind kind, std::uint64_t sector_bytes) {
  for (std::size_t s = 0; s < kSizes.size(); ++s) {
    if (kSizes[s].bytes == sector_bytes) return PostProof(kind == PostKind::kWinning ? s : 10 + s);
  }
  return std::nullopt;
}

std::string_view to_string(PostErrorKind k) {
  switch (k) {
    case PostErrorKind::kTruncated:
      return "truncated";
    case PostErrorKind::kTrailingBytes:
      return "trailing bytes";
    case PostErrorKind::kLength:
      return "length";
    case PostErrorKind::kProofShape:
      return "proof shape";
    case PostErrorKind::kPathArity:
      return "path arity";
    case PostErrorKind::kNonCanonical:
      return "non-canonical field element";
    case PostErrorKind::kUnknownProof:
      return "unknown proof";
    case PostErrorKind::kSectorCount:
      return "sector count";
    case PostErrorKind::kDuplicateSector:
      return "duplicate sector";
    case PostErrorKind::kRandomness:
      return "randomness";
    case PostErrorKind::kCommRMismatch:
      return "comm_r mismatch";
    case PostErrorKind::kRootMismatch:
      return "root mismatch";
    case PostErrorKind::kChallengeMismatch:
      return "challenge mismatch";
    case PostErrorKind::kPathMismatch:
      return "path mismatch";
  }
  return "?";
}

bool is_invalid_proof(PostErrorKind k) {
  return k == PostErrorKind::kCommRMismatch || k == PostErrorKind::kRootMismatch ||
         k == PostErrorKind::kChallengeMismatch || k == PostErrorKind::kPathMismatch;
}

namespace {
std::string error_text(PostErrorKind kind, const std::optional<std::uint64_t>& sector, const std::string& field,
                       const std::string& detail) {
  std::string s(to_string(kind));
  if (sector) s += ": sector " + std::to_string(*sector);
  if (!field.empty()) s += (sector ? " " : ": ") + field;
  return s + ": " + detail;
}
}  // namespace

PostError::PostError(PostErrorKind kind, std::optional<std::uint64_t> sector_id, std::string field,
                     const std::string& detail)
    : std::runtime_error(error_text(kind, sector_id, field, detail)),
      kind_(kind),
      sector_id_(sector_id),
      field_(std::move(field)) {}

FallbackPostSectorProof parse_sector_proof(std::span<const std::uint8_t> bytes, PostProof proof) {
  const PostProofInfo& info = post_proof_info(proof);
  Reader r(bytes, std::nullopt);
  FallbackPostSectorProof p;
  p.sector_id = r.u64("sector_id");
  r.set_sector(p.sector_id);
  p.comm_r = r.fr("comm_r");
  r.length(1, "vanilla_proof.sectors");
  p.sectors.resize(1);
  PostSectorProof& s = p.sectors[0];
  const std::string base = "vanilla_proof.sectors[0].inclusion_proofs";
  r.length(info.vanilla_challenges(), base);
  s.inclusion_proofs.reserve(info.vanilla_challenges());
  for (std::uint32_t i = 0; i < info.vanilla_challenges(); ++i) {
    s.inclusion_proofs.push_back(read_merkle_proof(r, info, base + "[" + std::to_string(i) + "]"));
  }
  s.comm_c = r.fr("vanilla_proof.sectors[0].comm_c");
  s.comm_r_last = r.fr("vanilla_proof.sectors[0].comm_r_last");
  r.finish();
  return p;
}

std::vector<std::uint8_t> to_bincode(const FallbackPostSectorProof& p) {
  Writer w;
  w.u64(p.sector_id);
  w.bytes32(p.comm_r);
  w.u64(p.sectors.size());
  for (const PostSectorProof& s : p.sectors) {
    w.u64(s.inclusion_proofs.size());
    for (const MerkleProof& m : s.inclusion_proofs) {
      w.u32(std::uint32_t(m.kind));
      if (m.kind == MerkleProofKind::Single) {
        w.bytes32(m.root);
        w.bytes32(m.leaf);
        w.path(m.base);
        continue;
      }
      w.path(m.base);
      w.path(m.sub);
      if (m.kind == MerkleProofKind::Top) w.path(m.top);
      w.bytes32(m.root);
      w.bytes32(m.leaf);
    }
    w.bytes32(s.comm_c);
    w.bytes32(s.comm_r_last);
  }
  return w.take();
}

}  // namespace cuzk::circuits::filecoin
