// Cross-checks our BLS12-381 arithmetic byte for byte against vectors that
// npm's @noble/curves 2.4.0 computed (tests/oracle/gen-vectors.mjs).
//
// Sources: the committed tests/oracle/vectors.txt (always), and the file named
// by CUZK_FRESH_VECTORS when that variable is set (scripts/test regenerates it
// with a new seed on every run). A set-but-missing or empty fresh file fails.
//
// Format: one vector per line, `<kind> <token> ...`, `#` starts a comment.
// Tokens are big-endian hex; README.md lists the kinds and their fields.
//
// Points in group-law vectors are read by a small trusted-input parser of the
// uncompressed zcash encoding below, so the group law is checked even before
// (and independently of) our own decoder; the encoding vectors then check our
// encoder and decoder against noble.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ec/curve.hpp"
#include "ec/point.hpp"
#include "ff/fp2.hpp"
#include "msm/msm.hpp"
#include "util/thread_pool.hpp"

#if __has_include("ec/encoding.hpp")
#include "ec/encoding.hpp"
#define CUZK_ORACLE_HAVE_ENCODING 1
#else
#define CUZK_ORACLE_HAVE_ENCODING 0
#endif

#if __has_include("pairing/pairing.hpp")
#include "pairing/pairing.hpp"
#define CUZK_ORACLE_HAVE_PAIRING 1
#else
#define CUZK_ORACLE_HAVE_PAIRING 0
#endif

namespace cuzk::oracle {
namespace {

using Bytes = std::vector<std::uint8_t>;
using ec::G1Affine;
using ec::G2Affine;
using ff::Fp;
using ff::Fp2;
using ff::Fr;

// ---------------------------------------------------------------------------
// Vector files
// ---------------------------------------------------------------------------

struct Vector {
  std::string where;  // "file:line", for failure messages
  std::string kind;
  std::vector<std::string> tokens;
};

struct VectorFile {
  std::string path;
  std::vector<Vector> vectors;
};

std::vector<Vector> parse_vectors(const std::string& path, std::istream& in) {
  std::vector<Vector> out;
  std::string line;
  for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Vector v;
    v.where = path + ":" + std::to_string(lineno);
    ls >> v.kind;
    for (std::string t; ls >> t;) v.tokens.push_back(t);
    out.push_back(std::move(v));
  }
  return out;
}

// Loads a file; an unreadable or vector-less file is a test failure (a
// truncated oracle run must not pass as "nothing to check").
VectorFile load_vectors(const std::string& path) {
  VectorFile f{path, {}};
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open oracle vector file " << path;
    return f;
  }
  f.vectors = parse_vectors(path, in);
  if (f.vectors.empty()) ADD_FAILURE() << "oracle vector file " << path << " holds no vectors";
  return f;
}

const std::vector<VectorFile>& vector_files() {
  static const std::vector<VectorFile> files = [] {
    std::vector<VectorFile> v;
    v.push_back(load_vectors(std::string(CUZK_ORACLE_DIR) + "/vectors.txt"));
    if (const char* fresh = std::getenv("CUZK_FRESH_VECTORS")) v.push_back(load_vectors(fresh));
    return v;
  }();
  return files;
}

// Calls fn(vector) for every vector of `kind` in every source; fails when a
// source has fewer than `min_count` of them (the generator always emits more).
template <class Fn>
void for_each_vector(const std::string& kind, std::size_t min_count, Fn&& fn) {
  for (const VectorFile& f : vector_files()) {
    std::size_t n = 0;
    for (const Vector& v : f.vectors) {
      if (v.kind != kind) continue;
      SCOPED_TRACE(v.where + " (" + kind + ")");
      fn(v);
      ++n;
    }
    EXPECT_GE(n, min_count) << "too few '" << kind << "' vectors in " << f.path;
  }
}

// ---------------------------------------------------------------------------
// Token decoding (test-side only; failures here are malformed vector files)
// ---------------------------------------------------------------------------

Bytes hex_bytes(const std::string& hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Bytes out;
  if (hex.size() % 2 != 0) {
    ADD_FAILURE() << "odd-length hex token " << hex;
    return out;
  }
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      ADD_FAILURE() << "bad hex token " << hex;
      return {};
    }
    out.push_back(std::uint8_t(hi << 4 | lo));
  }
  return out;
}

std::string to_hex(std::span<const std::uint8_t> b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t x : b) {
    s += kDigits[x >> 4];
    s += kDigits[x & 15];
  }
  return s;
}

template <class F>
Bytes field_bytes(const F& x) {
  Bytes b(F::kBytes);
  x.to_bytes_be(b);
  return b;
}
Bytes field_bytes(const Fp2& x) {
  Bytes b = field_bytes(x.c0), c1 = field_bytes(x.c1);
  b.insert(b.end(), c1.begin(), c1.end());
  return b;
}

// Canonical big-endian field element; the vector files only hold canonical values.
template <class F>
F parse_field(const std::string& hex) {
  Bytes b = hex_bytes(hex);
  F x;
  if (b.size() != F::kBytes || !F::from_bytes_be(b, x)) {
    ADD_FAILURE() << "not a canonical " << F::kBytes << "-byte field element: " << hex;
    return F::zero();
  }
  return x;
}
// Fp2 tokens in field vectors are c0 || c1.
Fp2 parse_fp2(const std::string& hex) {
  if (hex.size() != 4 * Fp::kBytes) {
    ADD_FAILURE() << "not a 96-byte Fp2 token: " << hex;
    return Fp2::zero();
  }
  return {parse_field<Fp>(hex.substr(0, 2 * Fp::kBytes)), parse_field<Fp>(hex.substr(2 * Fp::kBytes))};
}

// 32-byte big-endian scalar (any 256-bit value).
ff::BigInt<4> parse_scalar(const std::string& hex) {
  Bytes b = hex_bytes(hex);
  ff::BigInt<4> k{};
  if (b.size() != 32) {
    ADD_FAILURE() << "not a 32-byte scalar: " << hex;
    return k;
  }
  for (std::size_t i = 0; i < 32; ++i) k.limb[i / 8] |= ff::u64(b[31 - i]) << (8 * (i % 8));
  return k;
}

// Trusted-input reader of the uncompressed zcash encoding for points that noble
// produced (flag 0x40 = identity, G2 coordinates c1 || c0). It validates
// nothing beyond canonical coordinates; our real decoder is tested separately.
// The flag byte of an uncompressed encoding from noble: 0x40 and zeros for the
// identity, else no flags. Returns true for the identity.
bool read_uncompressed_flags(Bytes& b) {
  const bool identity = b[0] == 0x40 && std::all_of(b.begin() + 1, b.end(), [](std::uint8_t x) { return x == 0; });
  if (!identity && (b[0] & 0xe0) != 0)
    ADD_FAILURE() << "unexpected flags in an uncompressed vector point " << to_hex(b);
  return identity;
}

G1Affine parse_g1_uncompressed(const std::string& hex) {
  Bytes b = hex_bytes(hex);
  if (b.size() != 96) {
    ADD_FAILURE() << "not a 96-byte G1 point: " << hex;
    return G1Affine::identity();
  }
  if (read_uncompressed_flags(b)) return G1Affine::identity();
  G1Affine p;
  p.infinity = false;
  EXPECT_TRUE(Fp::from_bytes_be(std::span(b).subspan(0, 48), p.x));
  EXPECT_TRUE(Fp::from_bytes_be(std::span(b).subspan(48, 48), p.y));
  return p;
}
G2Affine parse_g2_uncompressed(const std::string& hex) {
  Bytes b = hex_bytes(hex);
  if (b.size() != 192) {
    ADD_FAILURE() << "not a 192-byte G2 point: " << hex;
    return G2Affine::identity();
  }
  if (read_uncompressed_flags(b)) return G2Affine::identity();
  G2Affine p;
  p.infinity = false;
  std::span<const std::uint8_t> s(b);
  EXPECT_TRUE(Fp::from_bytes_be(s.subspan(0, 48), p.x.c1));
  EXPECT_TRUE(Fp::from_bytes_be(s.subspan(48, 48), p.x.c0));
  EXPECT_TRUE(Fp::from_bytes_be(s.subspan(96, 48), p.y.c1));
  EXPECT_TRUE(Fp::from_bytes_be(s.subspan(144, 48), p.y.c0));
  return p;
}

G1Affine parse_point(const std::string& hex, const G1Affine*) { return parse_g1_uncompressed(hex); }
G2Affine parse_point(const std::string& hex, const G2Affine*) { return parse_g2_uncompressed(hex); }
template <class A>
A parse_point(const std::string& hex) {
  return parse_point(hex, static_cast<const A*>(nullptr));
}

// Built with += (GCC 12 raises a false -Wrestrict on "literal" + std::string).
template <class A>
std::string describe(const A& p) {
  if (p.infinity) return "identity";
  std::string s = "x=";
  s += to_hex(field_bytes(p.x));
  s += " y=";
  s += to_hex(field_bytes(p.y));
  return s;
}

#define EXPECT_BYTES_EQ(actual, expected_hex) EXPECT_EQ(to_hex(actual), (expected_hex))

// ---------------------------------------------------------------------------
// Meta: the files parse, every kind is one this test knows
// ---------------------------------------------------------------------------

const std::set<std::string> kKnownKinds = {"fp_add",        "fp_sub",           "fp_mul",
                                           "fp_inv",        "fp_sqrt",          "fr_add",
                                           "fr_sub",        "fr_mul",           "fr_inv",
                                           "fp2_add",       "fp2_sub",          "fp2_mul",
                                           "fp2_inv",       "fp2_sqrt",         "g1_mul",
                                           "g1_add",        "g1_msm",           "g1_encode",
                                           "g1_invalid",    "g2_mul",           "g2_add",
                                           "g2_msm",        "g2_encode",        "g2_invalid",
                                           "pairing",       "pairing_bilinear", "pairing_product_one",
                                           "fp12_mul",      "fp12_inv",         "fp12_frobenius",
                                           "fp12_final_exp"};

TEST(NobleVectors, FilesLoadAndKindsAreKnown) {
  const char* fresh = std::getenv("CUZK_FRESH_VECTORS");
  EXPECT_EQ(vector_files().size(), fresh ? 2u : 1u);
  for (const VectorFile& f : vector_files()) {
    EXPECT_GE(f.vectors.size(), 200u) << f.path;
    std::set<std::string> seen;
    for (const Vector& v : f.vectors) {
      EXPECT_TRUE(kKnownKinds.count(v.kind)) << v.where << ": unknown vector kind '" << v.kind << "'";
      seen.insert(v.kind);
    }
    for (const std::string& k : kKnownKinds) EXPECT_TRUE(seen.count(k)) << f.path << " lacks '" << k << "' vectors";
  }
  if (!fresh) std::cout << "[ note ] CUZK_FRESH_VECTORS unset: only the committed vectors.txt is checked\n";
}

// ---------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------

template <class F, class Op>
void check_binary(const std::string& kind, std::size_t min_count, Op op) {
  for_each_vector(kind, min_count, [&](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 3u);
    F a = parse_field<F>(v.tokens[0]), b = parse_field<F>(v.tokens[1]);
    EXPECT_BYTES_EQ(field_bytes(op(a, b)), v.tokens[2]);
  });
}

TEST(NobleVectors, FpArithmetic) {
  check_binary<Fp>("fp_add", 10, [](const Fp& a, const Fp& b) { return a + b; });
  check_binary<Fp>("fp_sub", 10, [](const Fp& a, const Fp& b) { return a - b; });
  check_binary<Fp>("fp_mul", 10, [](const Fp& a, const Fp& b) { return a * b; });
  for_each_vector("fp_inv", 5, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    EXPECT_BYTES_EQ(field_bytes(parse_field<Fp>(v.tokens[0]).inverse()), v.tokens[1]);
  });
}

// Square roots come in pairs; noble picks one by its own rule, so ours must be
// noble's root or its negation (and square back to the input).
TEST(NobleVectors, FpSqrt) {
  std::size_t squares = 0, non_squares = 0;
  for_each_vector("fp_sqrt", 10, [&](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    Fp a = parse_field<Fp>(v.tokens[0]), root;
    const bool ok = a.sqrt(root);
    if (v.tokens[1] == "none") {
      ++non_squares;
      EXPECT_FALSE(ok) << "we found a root of a non-square: " << to_hex(field_bytes(root));
      return;
    }
    ++squares;
    ASSERT_TRUE(ok) << "noble has a root, we have none";
    Fp expected = parse_field<Fp>(v.tokens[1]);
    EXPECT_EQ(root.square(), a);
    EXPECT_TRUE(root == expected || root == -expected) << "ours " << to_hex(field_bytes(root));
  });
  EXPECT_GT(squares, 0u);
  EXPECT_GT(non_squares, 0u);
}

TEST(NobleVectors, FrArithmetic) {
  check_binary<Fr>("fr_add", 8, [](const Fr& a, const Fr& b) { return a + b; });
  check_binary<Fr>("fr_sub", 8, [](const Fr& a, const Fr& b) { return a - b; });
  check_binary<Fr>("fr_mul", 8, [](const Fr& a, const Fr& b) { return a * b; });
  for_each_vector("fr_inv", 5, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    EXPECT_BYTES_EQ(field_bytes(parse_field<Fr>(v.tokens[0]).inverse()), v.tokens[1]);
  });
}

TEST(NobleVectors, Fp2Arithmetic) {
  auto binary = [](const std::string& kind, auto op) {
    for_each_vector(kind, 5, [&](const Vector& v) {
      ASSERT_EQ(v.tokens.size(), 3u);
      EXPECT_BYTES_EQ(field_bytes(op(parse_fp2(v.tokens[0]), parse_fp2(v.tokens[1]))), v.tokens[2]);
    });
  };
  binary("fp2_add", [](const Fp2& a, const Fp2& b) { return a + b; });
  binary("fp2_sub", [](const Fp2& a, const Fp2& b) { return a - b; });
  binary("fp2_mul", [](const Fp2& a, const Fp2& b) { return a * b; });
  // Squaring has its own formula; check it on the multiplication inputs.
  for_each_vector("fp2_mul", 5, [](const Vector& v) {
    Fp2 a = parse_fp2(v.tokens[0]);
    EXPECT_EQ(a.square(), a * a);
  });
  for_each_vector("fp2_inv", 5, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    EXPECT_BYTES_EQ(field_bytes(parse_fp2(v.tokens[0]).inverse()), v.tokens[1]);
  });
}

template <class T>
concept HasBoolSqrt = requires(const T& a, T& out) {
  { a.sqrt(out) } -> std::convertible_to<bool>;
};

template <class F>
void check_fp2_sqrt() {
  if constexpr (!HasBoolSqrt<F>) {
    GTEST_SKIP() << "missing API: bool Fp2::sqrt(Fp2&) const";
  } else {
    std::size_t squares = 0, non_squares = 0;
    for_each_vector("fp2_sqrt", 10, [&](const Vector& v) {
      ASSERT_EQ(v.tokens.size(), 2u);
      F a = parse_fp2(v.tokens[0]), root;
      const bool ok = a.sqrt(root);
      if (v.tokens[1] == "none") {
        ++non_squares;
        EXPECT_FALSE(ok) << "we found a root of a non-square: " << to_hex(field_bytes(root));
        return;
      }
      ++squares;
      ASSERT_TRUE(ok) << "noble has a root, we have none";
      F expected = parse_fp2(v.tokens[1]);
      EXPECT_EQ(root.square(), a);
      EXPECT_TRUE(root == expected || root == -expected) << "ours " << to_hex(field_bytes(root));
    });
    EXPECT_GT(squares, 0u);
    EXPECT_GT(non_squares, 0u);
  }
}

TEST(NobleVectors, Fp2Sqrt) { check_fp2_sqrt<Fp2>(); }

// ---------------------------------------------------------------------------
// Group law and MSM (points read with the trusted parser above)
// ---------------------------------------------------------------------------

template <class A>
void check_mul(const std::string& kind) {
  for_each_vector(kind, 10, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 4u);
    const ff::BigInt<4> k = parse_scalar(v.tokens[0]);
    const A p = parse_point<A>(v.tokens[1]);
    const A expected = parse_point<A>(v.tokens[3]);
    const A got = ec::to_affine(ec::mul(p, k));
    EXPECT_TRUE(got == expected) << "ours " << describe(got) << "\nnoble " << describe(expected);
  });
}
TEST(NobleVectors, G1ScalarMul) { check_mul<G1Affine>("g1_mul"); }
TEST(NobleVectors, G2ScalarMul) { check_mul<G2Affine>("g2_mul"); }

template <class A>
void check_add(const std::string& kind) {
  for_each_vector(kind, 7, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 3u);
    const A p = parse_point<A>(v.tokens[0]), q = parse_point<A>(v.tokens[1]);
    const A expected = parse_point<A>(v.tokens[2]);
    const auto pj = ec::from_affine(p), qj = ec::from_affine(q);
    const A full = ec::to_affine(ec::add(pj, qj));
    const A mixed = ec::to_affine(ec::add_mixed(pj, q));
    EXPECT_TRUE(full == expected) << "add: ours " << describe(full) << "\nnoble " << describe(expected);
    EXPECT_TRUE(mixed == expected) << "add_mixed: ours " << describe(mixed) << "\nnoble " << describe(expected);
    EXPECT_TRUE(ec::is_on_curve(expected));
  });
}
TEST(NobleVectors, G1Add) { check_add<G1Affine>("g1_add"); }
TEST(NobleVectors, G2Add) { check_add<G2Affine>("g2_add"); }

// Each MSM vector runs through the planner's choice and through forced
// Pippenger windows and the double-and-add path, on a 2-thread pool.
template <class A>
void check_msm(const std::string& kind) {
  ThreadPool pool(2);
  for_each_vector(kind, 3, [&](const Vector& v) {
    ASSERT_GE(v.tokens.size(), 1u);
    const std::size_t n = std::stoul(v.tokens[0]);
    ASSERT_EQ(v.tokens.size(), 2 + 2 * n);
    std::vector<msm::Scalar> scalars;
    std::vector<A> bases;
    for (std::size_t i = 0; i < n; ++i) scalars.push_back(parse_scalar(v.tokens[1 + i]));
    for (std::size_t i = 0; i < n; ++i) bases.push_back(parse_point<A>(v.tokens[1 + n + i]));
    const A expected = parse_point<A>(v.tokens[1 + 2 * n]);
    std::vector<msm::Config> configs = {{}, {msm::Method::kDoubleAndAdd, 0, 0}};
    for (unsigned c : {2u, 3u, 5u, 8u}) configs.push_back({msm::Method::kPippenger, c, 0});
    configs.push_back({msm::Method::kPippenger, 4, 3});
    for (const msm::Config& cfg : configs) {
      const A got =
          ec::to_affine(msm::msm(std::span<const A>(bases), std::span<const msm::Scalar>(scalars), pool, cfg));
      EXPECT_TRUE(got == expected) << "n=" << n << " method=" << int(cfg.method) << " c=" << cfg.window_bits
                                   << " chunks=" << cfg.point_chunks << "\nours " << describe(got) << "\nnoble "
                                   << describe(expected);
    }
  });
}
TEST(NobleVectors, G1Msm) { check_msm<G1Affine>("g1_msm"); }
TEST(NobleVectors, G2Msm) { check_msm<G2Affine>("g2_msm"); }

// ---------------------------------------------------------------------------
// zcash encodings (ec/encoding.hpp)
// ---------------------------------------------------------------------------

#if CUZK_ORACLE_HAVE_ENCODING

// Encoder/decoder entry points per group, so one template serves G1 and G2.
struct G1Codec {
  using Affine = G1Affine;
  static constexpr std::size_t kCompressed = ec::kG1CompressedBytes, kUncompressed = ec::kG1UncompressedBytes;
  static Bytes compressed(const Affine& p) {
    Bytes b(kCompressed);
    ec::encode_g1_compressed(p, std::span<std::uint8_t, kCompressed>(b));
    return b;
  }
  static Bytes uncompressed(const Affine& p) {
    Bytes b(kUncompressed);
    ec::encode_g1_uncompressed(p, std::span<std::uint8_t, kUncompressed>(b));
    return b;
  }
  static ec::DecodeError decode_c(const Bytes& b, Affine& p, ec::Subgroup s = ec::Subgroup::kCheck) {
    return ec::decode_g1_compressed(b, p, s);
  }
  static ec::DecodeError decode_u(const Bytes& b, Affine& p, ec::Subgroup s = ec::Subgroup::kCheck) {
    return ec::decode_g1_uncompressed(b, p, s);
  }
  static ec::DecodeError decode(const Bytes& b, Affine& p, ec::Subgroup s = ec::Subgroup::kCheck) {
    return ec::decode_g1(b, p, s);
  }
  static ec::BulkDecodeResult decode_many(const Bytes& b, std::span<Affine> out, ec::PointForm f, ThreadPool* pool) {
    return ec::decode_g1_many(b, out, f, ec::Subgroup::kCheck, pool);
  }
};
struct G2Codec {
  using Affine = G2Affine;
  static constexpr std::size_t kCompressed = ec::kG2CompressedBytes, kUncompressed = ec::kG2UncompressedBytes;
  static Bytes compressed(const Affine& p) {
    Bytes b(kCompressed);
    ec::encode_g2_compressed(p, std::span<std::uint8_t, kCompressed>(b));
    return b;
  }
  static Bytes uncompressed(const Affine& p) {
    Bytes b(kUncompressed);
    ec::encode_g2_uncompressed(p, std::span<std::uint8_t, kUncompressed>(b));
    return b;
  }
  static ec::DecodeError decode_c(const Bytes& b, Affine& p, ec::Subgroup s = ec::Subgroup::kCheck) {
    return ec::decode_g2_compressed(b, p, s);
  }
  static ec::DecodeError decode_u(const Bytes& b, Affine& p, ec::Subgroup s = ec::Subgroup::kCheck) {
    return ec::decode_g2_uncompressed(b, p, s);
  }
  static ec::DecodeError decode(const Bytes& b, Affine& p, ec::Subgroup s = ec::Subgroup::kCheck) {
    return ec::decode_g2(b, p, s);
  }
  static ec::BulkDecodeResult decode_many(const Bytes& b, std::span<Affine> out, ec::PointForm f, ThreadPool* pool) {
    return ec::decode_g2_many(b, out, f, ec::Subgroup::kCheck, pool);
  }
};

// Scalar multiplication results, re-encoded by our encoder.
template <class C>
void check_mul_encoding(const std::string& kind) {
  using A = typename C::Affine;
  for_each_vector(kind, 10, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 4u);
    const A got = ec::to_affine(ec::mul(parse_point<A>(v.tokens[1]), parse_scalar(v.tokens[0])));
    EXPECT_BYTES_EQ(C::compressed(got), v.tokens[2]);
    EXPECT_BYTES_EQ(C::uncompressed(got), v.tokens[3]);
  });
}
TEST(NobleVectors, G1ScalarMulEncoded) { check_mul_encoding<G1Codec>("g1_mul"); }
TEST(NobleVectors, G2ScalarMulEncoded) { check_mul_encoding<G2Codec>("g2_mul"); }

// Both forms decode to the same point, which re-encodes to noble's bytes;
// then all of a file's encodings go through the bulk decoder on a pool.
template <class C>
void check_encoding(const std::string& kind) {
  using A = typename C::Affine;
  ThreadPool pool(2);
  for (const VectorFile& f : vector_files()) {
    Bytes all_c, all_u;
    std::vector<A> expected;
    for (const Vector& v : f.vectors) {
      if (v.kind != kind) continue;
      SCOPED_TRACE(v.where + " (" + kind + ")");
      ASSERT_EQ(v.tokens.size(), 2u);
      const Bytes c = hex_bytes(v.tokens[0]), u = hex_bytes(v.tokens[1]);
      const A trusted = parse_point<A>(v.tokens[1]);
      A pc, pu, pc_any, pu_any;
      ASSERT_EQ(C::decode_c(c, pc), ec::DecodeError::kOk) << ec::to_string(C::decode_c(c, pc));
      ASSERT_EQ(C::decode_u(u, pu), ec::DecodeError::kOk) << ec::to_string(C::decode_u(u, pu));
      ASSERT_EQ(C::decode(c, pc_any), ec::DecodeError::kOk);
      ASSERT_EQ(C::decode(u, pu_any), ec::DecodeError::kOk);
      EXPECT_TRUE(pc == trusted && pu == trusted && pc_any == trusted && pu_any == trusted)
          << "decoded " << describe(pc) << " / " << describe(pu) << "\nnoble " << describe(trusted);
      EXPECT_BYTES_EQ(C::compressed(pc), v.tokens[0]);
      EXPECT_BYTES_EQ(C::uncompressed(pu), v.tokens[1]);
      all_c.insert(all_c.end(), c.begin(), c.end());
      all_u.insert(all_u.end(), u.begin(), u.end());
      expected.push_back(trusted);
    }
    EXPECT_GE(expected.size(), 5u) << "too few '" << kind << "' vectors in " << f.path;
    for (ec::PointForm form : {ec::PointForm::kCompressed, ec::PointForm::kUncompressed}) {
      std::vector<A> out(expected.size());
      const Bytes& in = form == ec::PointForm::kCompressed ? all_c : all_u;
      const ec::BulkDecodeResult r = C::decode_many(in, out, form, &pool);
      EXPECT_EQ(r.error, ec::DecodeError::kOk) << ec::to_string(r.error) << " at " << r.index;
      EXPECT_TRUE(out == expected) << "bulk decode of " << f.path;
    }
  }
}
TEST(NobleVectors, G1Encodings) { check_encoding<G1Codec>("g1_encode"); }
TEST(NobleVectors, G2Encodings) { check_encoding<G2Codec>("g2_encode"); }

// The DecodeError kinds our decoder may give for a noble rejection reason.
// A forbidden flag combination that includes the infinity bit (0x60, 0xe0) may
// be reported as a bad infinity as well; a compressed x without a y is
// kNoSquareRoot where an uncompressed point off the curve is kNotOnCurve.
std::set<ec::DecodeError> accepted_errors(const std::string& reason, const Bytes& b, bool compressed_length) {
  using E = ec::DecodeError;
  if (reason == "bad_flags") {
    if (b[0] & 0x40) return {E::kBadFlags, E::kBadInfinity};
    return {E::kBadFlags};
  }
  if (reason == "bad_infinity") return {E::kBadInfinity};
  if (reason == "non_canonical") return {E::kNotCanonical};
  if (reason == "not_on_curve") return {compressed_length ? E::kNoSquareRoot : E::kNotOnCurve};
  if (reason == "not_in_subgroup") return {E::kNotInSubgroup};
  ADD_FAILURE() << "unknown rejection reason '" << reason << "'";
  return {};
}

template <class C>
void check_invalid(const std::string& kind) {
  using A = typename C::Affine;
  std::map<std::string, std::size_t> per_reason;
  for_each_vector(kind, 15, [&](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    const Bytes b = hex_bytes(v.tokens[0]);
    const std::string& reason = v.tokens[1];
    ++per_reason[reason];
    const bool compressed_length = b.size() == C::kCompressed;
    ASSERT_TRUE(compressed_length || b.size() == C::kUncompressed);
    const std::set<ec::DecodeError> ok = accepted_errors(reason, b, compressed_length);
    A p;
    const ec::DecodeError by_length = C::decode(b, p);
    const ec::DecodeError by_form = compressed_length ? C::decode_c(b, p) : C::decode_u(b, p);
    EXPECT_TRUE(ok.count(by_length)) << "noble: " << reason << ", ours: " << ec::to_string(by_length);
    EXPECT_TRUE(ok.count(by_form)) << "noble: " << reason << ", ours: " << ec::to_string(by_form);
    if (reason == "not_in_subgroup") {
      // Only the subgroup is wrong: skipping that check yields a curve point.
      EXPECT_EQ(C::decode(b, p, ec::Subgroup::kSkip), ec::DecodeError::kOk);
      EXPECT_TRUE(ec::is_on_curve(p) && !p.infinity);
    }
  });
  for (const char* r : {"bad_flags", "bad_infinity", "non_canonical", "not_on_curve", "not_in_subgroup"}) {
    EXPECT_GT(per_reason[r], 0u) << "no '" << r << "' cases in " << kind;
  }
}
TEST(NobleVectors, G1InvalidEncodingsRejected) { check_invalid<G1Codec>("g1_invalid"); }
TEST(NobleVectors, G2InvalidEncodingsRejected) { check_invalid<G2Codec>("g2_invalid"); }

#else
TEST(NobleVectors, EncodingsMissingApi) {
  GTEST_FAIL() << "missing API: ec/encoding.hpp (zcash encode/decode); g1/g2 _encode, _invalid and the encoded "
                  "_mul vectors are unchecked";
}
#endif  // CUZK_ORACLE_HAVE_ENCODING

// ---------------------------------------------------------------------------
// Pairing (pairing/pairing.hpp)
// ---------------------------------------------------------------------------

#if CUZK_ORACLE_HAVE_PAIRING

// GT as 576 bytes: the twelve Fp coefficients in Fp12::coefficients() order,
// which is the order gen-vectors.mjs writes noble's Fp12 in.
Bytes gt_bytes(const ff::Fp12& f) {
  Bytes out;
  for (const Fp& c : f.coefficients()) {
    Bytes b = field_bytes(c);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

ff::Fp12 parse_fp12(const std::string& hex) {
  std::array<Fp, 12> c{};
  if (hex.size() != 2 * 576) {
    ADD_FAILURE() << "not a 576-byte Fp12 token: " << hex;
    return ff::Fp12::zero();
  }
  for (std::size_t i = 0; i < 12; ++i) c[i] = parse_field<Fp>(hex.substr(2 * 48 * i, 2 * 48));
  return ff::Fp12::from_coefficients(c);
}

// Tower arithmetic, independent of the Miller loop.
TEST(NobleVectors, Fp12Arithmetic) {
  for_each_vector("fp12_mul", 2, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 3u);
    const ff::Fp12 a = parse_fp12(v.tokens[0]), b = parse_fp12(v.tokens[1]);
    EXPECT_BYTES_EQ(gt_bytes(a * b), v.tokens[2]);
    EXPECT_EQ(a.square(), a * a);
  });
  for_each_vector("fp12_inv", 2, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    EXPECT_BYTES_EQ(gt_bytes(parse_fp12(v.tokens[0]).inverse()), v.tokens[1]);
  });
  for_each_vector("fp12_frobenius", 3, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 3u);
    const unsigned k = unsigned(std::stoul(v.tokens[0]));
    ASSERT_TRUE(k >= 1 && k <= 3);
    EXPECT_BYTES_EQ(gt_bytes(parse_fp12(v.tokens[1]).frobenius(k)), v.tokens[2]);
  });
  for_each_vector("fp12_final_exp", 1, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    EXPECT_BYTES_EQ(gt_bytes(pairing::final_exponentiation(parse_fp12(v.tokens[0]))), v.tokens[1]);
  });
}

TEST(NobleVectors, PairingValues) {
  for_each_vector("pairing", 5, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 5u);
    const G1Affine p = parse_g1_uncompressed(v.tokens[2]);
    const G2Affine q = parse_g2_uncompressed(v.tokens[3]);
    ASSERT_EQ(v.tokens[4].size(), 2 * 576u);
    // The vector's points are [a]G1 and [b]G2.
    EXPECT_TRUE(ec::to_affine(ec::mul(ec::kG1Generator, parse_scalar(v.tokens[0]))) == p);
    EXPECT_TRUE(ec::to_affine(ec::mul(ec::kG2Generator, parse_scalar(v.tokens[1]))) == q);
    EXPECT_BYTES_EQ(gt_bytes(pairing::pairing(p, q)), v.tokens[4]);
    // The prepared-G2 path (the verifier's) gives the same value.
    const pairing::G2Prepared qp = pairing::prepare(q);
    const pairing::PreparedTerm term{p, qp};
    const ff::Fp12 f = pairing::final_exponentiation(pairing::miller_loop(std::span(&term, 1)));
    EXPECT_BYTES_EQ(gt_bytes(f), v.tokens[4]);
  });
}

// e(aG1, bG2) == e(abG1, G2) == e(G1, abG2) == e(G1, G2)^(ab), and e(G1, G2)
// is noble's value from the `pairing 1 1` vector.
TEST(NobleVectors, PairingBilinearity) {
  const ff::Fp12 base = pairing::pairing(ec::kG1Generator, ec::kG2Generator);
  bool saw_generator_value = false;
  for_each_vector("pairing", 5, [&](const Vector& v) {
    const ff::BigInt<4> one = ff::from_u64<4>(1);
    if (parse_scalar(v.tokens[0]) == one && parse_scalar(v.tokens[1]) == one) {
      EXPECT_BYTES_EQ(gt_bytes(base), v.tokens[4]);
      saw_generator_value = true;
    }
  });
  EXPECT_TRUE(saw_generator_value) << "no 'pairing 1 1' vector for e(G1, G2)";
  EXPECT_FALSE(base.is_one());
  for_each_vector("pairing_bilinear", 2, [&](const Vector& v) {
    ASSERT_EQ(v.tokens.size(), 2u);
    const Fr a = parse_field<Fr>(v.tokens[0]), b = parse_field<Fr>(v.tokens[1]), ab = a * b;
    const G1Affine ag = ec::to_affine(ec::mul(ec::kG1Generator, a));
    const G1Affine abg = ec::to_affine(ec::mul(ec::kG1Generator, ab));
    const G2Affine bh = ec::to_affine(ec::mul(ec::kG2Generator, b));
    const G2Affine abh = ec::to_affine(ec::mul(ec::kG2Generator, ab));
    const ff::Fp12 lhs = pairing::pairing(ag, bh);
    EXPECT_EQ(lhs, pairing::pairing(abg, ec::kG2Generator));
    EXPECT_EQ(lhs, pairing::pairing(ec::kG1Generator, abh));
    EXPECT_EQ(lhs, base.pow(ab.to_int()));
  });
}

TEST(NobleVectors, PairingProductIsOne) {
  for_each_vector("pairing_product_one", 1, [](const Vector& v) {
    ASSERT_EQ(v.tokens.size() % 2, 0u);
    std::vector<std::pair<G1Affine, G2Affine>> pairs;
    for (std::size_t i = 0; i < v.tokens.size(); i += 2) {
      pairs.emplace_back(parse_g1_uncompressed(v.tokens[i]), parse_g2_uncompressed(v.tokens[i + 1]));
    }
    EXPECT_TRUE(pairing::pairing_product_is_one(pairs));
    std::vector<pairing::G2Prepared> prepared;
    for (const auto& pq : pairs) prepared.push_back(pairing::prepare(pq.second));
    std::vector<pairing::PreparedTerm> terms;
    for (std::size_t i = 0; i < pairs.size(); ++i) terms.push_back({pairs[i].first, prepared[i]});
    EXPECT_TRUE(pairing::pairing_product_is_one(terms));
    // Negating one G1 point breaks the product (each term is non-trivial).
    pairs[0].first = ec::neg(pairs[0].first);
    EXPECT_FALSE(pairing::pairing_product_is_one(pairs));
  });
}

#else
TEST(NobleVectors, PairingMissingApi) {
  GTEST_FAIL() << "missing API: pairing/pairing.hpp; pairing, pairing_bilinear and pairing_product_one vectors "
                  "are unchecked";
}
#endif  // CUZK_ORACLE_HAVE_PAIRING

}  // namespace
}  // namespace cuzk::oracle
