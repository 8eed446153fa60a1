#include "circuits/filecoin/graph.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cuzk::circuits::filecoin {
namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "filecoin graph: %s\n", what);
  std::abort();
}

std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
std::uint64_t load_le64(const std::uint8_t* p) {
  return std::uint64_t(load_le32(p)) | std::uint64_t(load_le32(p + 4)) << 32;
}
void store_be64(std::uint8_t* p, std::uint64_t x) {
  for (int i = 0; i < 8; ++i) p[i] = std::uint8_t(x >> (56 - 8 * i));
}
void store_le32(std::uint8_t* p, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) p[i] = std::uint8_t(x >> (8 * i));
}

// ---- ChaCha quarter round (RFC 8439 2.1) ----
inline void quarter(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d) {
  a += b;
  d ^= a;
  d = std::rotl(d, 16);
  c += d;
  b ^= c;
  b = std::rotl(b, 12);
  a += b;
  d ^= a;
  d = std::rotl(d, 8);
  c += d;
  b ^= c;
  b = std::rotl(b, 7);
}

// ---- BLAKE2b (RFC 7693) ----
constexpr std::array<std::uint64_t, 8> kBlake2bIv = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
constexpr std::uint8_t kSigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

inline void blake_g(std::uint64_t* v, int a, int b, int c, int d, std::uint64_t x, std::uint64_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = std::rotr(v[d] ^ v[a], 32);
  v[c] = v[c] + v[d];
  v[b] = std::rotr(v[b] ^ v[c], 24);
  v[a] = v[a] + v[b] + y;
  v[d] = std::rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = std::rotr(v[b] ^ v[c], 63);
}

// F(R, k) of rfp's Feistel round, already masked.
std::uint64_t feistel_round(std::uint64_t right, std::uint64_t key, std::uint64_t right_mask) {
  std::uint8_t data[16];
  store_be64(data, right);
  store_be64(data + 8, key);
  const auto h = blake2b512_short(data);
  std::uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r = (r << 8) | h[i];
  return r & right_mask;
}

constexpr std::size_t kFeistelRounds = 3;

std::uint64_t feistel_encode(std::uint64_t index, const FeistelKeys& keys, const FeistelDomain& d) {
  std::uint64_t left = (index & d.left_mask) >> d.half_bits;
  std::uint64_t right = index & d.right_mask;
  for (std::size_t r = 0; r < kFeistelRounds; ++r) {
    const std::uint64_t next_right = left ^ feistel_round(right, keys[r], d.right_mask);
    left = right;
    right = next_right;
  }
  return (left << d.half_bits) | right;
}

std::uint64_t feistel_decode(std::uint64_t index, const FeistelKeys& keys, const FeistelDomain& d) {
  std::uint64_t left = (index & d.left_mask) >> d.half_bits;
  std::uint64_t right = index & d.right_mask;
  for (std::size_t r = kFeistelRounds; r-- > 0;) {
    const std::uint64_t prev_left = right ^ feistel_round(left, keys[r], d.right_mask);
    right = left;
    left = prev_left;
  }
  return (left << d.half_bits) | right;
}

}  // namespace

native::Digest32 porep_domain_seed(std::string_view dst, const PorepId& porep_id) {
  native::Sha256 h;
  h.update({reinterpret_cast<const std::uint8_t*>(dst.data()), dst.size()});
  h.update(porep_id);
  return h.finish();
}

DrgSeed drg_seed(const PorepId& porep_id) {
  const auto raw = porep_domain_seed("Filecoin_DRSample", porep_id);
  DrgSeed s;
  std::copy_n(raw.begin(), s.size(), s.begin());
  return s;
}

FeistelKeys feistel_keys(const PorepId& porep_id) {
  const auto raw = porep_domain_seed("Filecoin_Feistel", porep_id);
  FeistelKeys k;
  for (std::size_t i = 0; i < 4; ++i) k[i] = load_le64(raw.data() + 8 * i);
  return k;
}

ChaCha8Rng::ChaCha8Rng(const std::array<std::uint8_t, 32>& seed) {
  key_state_[0] = 0x61707865;  // "expand 32-byte k"
  key_state_[1] = 0x3320646e;
  key_state_[2] = 0x79622d32;
  key_state_[3] = 0x6b206574;
  for (std::size_t i = 0; i < 8; ++i) key_state_[4 + i] = load_le32(seed.data() + 4 * i);
  // Words 12..13: block counter (set per block); 14..15: stream id 0.
}

void ChaCha8Rng::refill() {
  std::array<std::uint32_t, 16> in = key_state_;
  in[12] = std::uint32_t(counter_);
  in[13] = std::uint32_t(counter_ >> 32);
  std::array<std::uint32_t, 16> x = in;
  for (int dr = 0; dr < 4; ++dr) {  // 8 rounds = 4 (column + diagonal) double rounds
    quarter(x[0], x[4], x[8], x[12]);
    quarter(x[1], x[5], x[9], x[13]);
    quarter(x[2], x[6], x[10], x[14]);
    quarter(x[3], x[7], x[11], x[15]);
    quarter(x[0], x[5], x[10], x[15]);
    quarter(x[1], x[6], x[11], x[12]);
    quarter(x[2], x[7], x[8], x[13]);
    quarter(x[3], x[4], x[9], x[14]);
  }
  for (std::size_t i = 0; i < 16; ++i) block_[i] = x[i] + in[i];
  ++counter_;
  used_words_ = 0;
}

std::uint32_t ChaCha8Rng::next_u32() {
  if (used_words_ == block_.size()) refill();
  return block_[used_words_++];
}

std::uint64_t ChaCha8Rng::next_u64() {
  const std::uint64_t lo = next_u32();
  const std::uint64_t hi = next_u32();
  return lo | hi << 32;
}

std::array<std::uint8_t, 64> blake2b512_short(std::span<const std::uint8_t> msg) {
  if (msg.size() > 128) die("blake2b512_short: message over one block");
  std::uint64_t h[8];
  std::copy(kBlake2bIv.begin(), kBlake2bIv.end(), h);
  h[0] ^= 0x01010000ULL ^ 64;  // depth 1, fanout 1, no key, 64-byte digest
  std::uint8_t block[128] = {};
  if (!msg.empty()) std::memcpy(block, msg.data(), msg.size());
  std::uint64_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le64(block + 8 * i);
  std::uint64_t v[16];
  for (int i = 0; i < 8; ++i) {
    v[i] = h[i];
    v[8 + i] = kBlake2bIv[i];
  }
  v[12] ^= msg.size();  // byte counter t (high word 0)
  v[14] = ~v[14];       // last block
  for (const auto& s : kSigma) {
    blake_g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    blake_g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    blake_g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    blake_g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    blake_g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    blake_g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    blake_g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    blake_g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  std::array<std::uint8_t, 64> out;
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t w = h[i] ^ v[i] ^ v[8 + i];
    for (int b = 0; b < 8; ++b) out[8 * i + b] = std::uint8_t(w >> (8 * b));
  }
  return out;
}

FeistelDomain feistel_domain(std::uint64_t num_elements) {
  // Smallest h >= 1 with 4^h >= num_elements: the domain is 2h bits wide.
  std::uint64_t pow4 = 4;
  std::uint32_t h = 1;
  while (pow4 < num_elements) {
    pow4 *= 4;
    ++h;
  }
  const std::uint64_t right_mask = (std::uint64_t(1) << h) - 1;
  return FeistelDomain{right_mask << h, right_mask, h};
}

std::uint64_t feistel_permute(std::uint64_t num_elements, std::uint64_t index, const FeistelKeys& keys,
                              const FeistelDomain& domain) {
  std::uint64_t u = feistel_encode(index, keys, domain);
  while (u >= num_elements) u = feistel_encode(u, keys, domain);  // cycle walking
  return u;
}

std::uint64_t feistel_invert(std::uint64_t num_elements, std::uint64_t index, const FeistelKeys& keys,
                             const FeistelDomain& domain) {
  std::uint64_t u = feistel_decode(index, keys, domain);
  while (u >= num_elements) u = feistel_decode(u, keys, domain);
  return u;
}

StackedGraph::StackedGraph(std::uint64_t nodes, const PorepId& porep_id, ApiVersion api_version)
    : nodes_(nodes),
      api_version_(api_version),
      drg_seed_(filecoin::drg_seed(porep_id)),
      feistel_keys_(filecoin::feistel_keys(porep_id)),
      feistel_domain_(feistel_domain(nodes * kExpDegree)) {
  // rfp: nodes <= u32::MAX and metagraph nodes (nodes * 5) <= 2^54.
  if (nodes < 2 || nodes > 0xffffffffULL) die("node count out of range");
}

StackedGraph StackedGraph::for_proof(SealProof p) {
  const auto& info = seal_proof_info(p);
  return StackedGraph(info.nodes, porep_id(p), info.api_version);
}

void StackedGraph::drg_parents(std::uint32_t node, std::span<std::uint32_t, kBaseDegree> out) const {
  if (node < 2) {
    std::fill(out.begin(), out.end(), 0u);
    return;
  }
  std::array<std::uint8_t, 32> seed{};
  std::copy(drg_seed_.begin(), drg_seed_.end(), seed.begin());
  store_le32(seed.data() + 28, node);
  ChaCha8Rng rng(seed);

  constexpr std::uint64_t m_prime = kBaseDegree - 1;
  const std::uint64_t metagraph_node = std::uint64_t(node) * m_prime;
  // ceil(log2(M)) for M >= 2; rfp computes it in f64, which is exact here
  // because M < 2^35 is exactly representable and never within rounding
  // distance of a power of two.
  const std::uint64_t n_buckets = std::uint64_t(std::bit_width(metagraph_node - 1));

  const bool predecessor_first = api_version_ != ApiVersion::V1_0_0;
  const std::size_t first_random = predecessor_first ? 1 : 0;
  for (std::size_t k = 0; k < m_prime; ++k) {
    const std::uint64_t bucket = rng.next_u64() % n_buckets + 1;
    const std::uint64_t largest = std::min(metagraph_node, std::uint64_t(1) << bucket);
    const std::uint64_t smallest = std::max<std::uint64_t>(2, largest >> 1);
    const std::uint64_t distance = smallest + rng.next_u64() % (largest - smallest + 1);
    const auto mapped = std::uint32_t((metagraph_node - distance) / m_prime);
    out[first_random + k] = mapped == node ? node - 1 : mapped;
  }
  out[predecessor_first ? 0 : m_prime] = node - 1;
}

void StackedGraph::expander_parents(std::uint32_t node, std::span<std::uint32_t, kExpDegree> out) const {
  const std::uint64_t n = nodes_ * kExpDegree;
  for (std::size_t i = 0; i < kExpDegree; ++i) {
    const std::uint64_t a = std::uint64_t(node) * kExpDegree + i;
    const std::uint64_t t = feistel_permute(n, a, feistel_keys_, feistel_domain_);
    if (api_version_ == ApiVersion::V1_0_0) {
      out[i] = std::uint32_t(t) / std::uint32_t(kExpDegree);  // legacy u32 truncation
    } else {
      out[i] = std::uint32_t(t / kExpDegree);
    }
  }
}

Parents StackedGraph::parents(std::uint32_t node) const {
  Parents p;
  drg_parents(node, std::span<std::uint32_t, kBaseDegree>(p.data(), kBaseDegree));
  expander_parents(node, std::span<std::uint32_t, kExpDegree>(p.data() + kBaseDegree, kExpDegree));
  return p;
}

std::string StackedGraph::identifier() const {
  return "stacked_graph::StackedGraph{expansion_degree: 8 base_graph: "
         "drgraph::BucketGraph{size: " +
         std::to_string(nodes_) + "; degree: 6; hasher: poseidon_hasher} }";
}

std::string StackedGraph::parent_cache_name() const {
  native::Sha256 h;
  const std::string_view hasher = "poseidon_hasher";
  const std::string id = identifier();
  h.update({reinterpret_cast<const std::uint8_t*>(hasher.data()), hasher.size()});
  h.update({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  for (std::uint64_t k : feistel_keys_) {
    std::uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = std::uint8_t(k >> (8 * i));
    h.update(b);
  }
  std::uint8_t entries[4];
  store_le32(entries, std::uint32_t(nodes_));
  h.update(entries);
  return "v28-sdr-parent-" + to_hex(h.finish());
}

void StackedGraph::write_parent_cache(std::uint64_t first_node, std::span<std::uint8_t> out, ThreadPool* pool) const {
  if (out.size() % kParentCacheBytesPerNode != 0) die("cache buffer not a whole number of nodes");
  const std::size_t count = out.size() / kParentCacheBytesPerNode;
  if (first_node + count > nodes_) die("cache range past the last node");
  auto body = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Parents p = parents(std::uint32_t(first_node + i));
      std::uint8_t* dst = out.data() + i * kParentCacheBytesPerNode;
      for (std::size_t k = 0; k < kDegree; ++k) store_le32(dst + 4 * k, p[k]);
    }
  };
  if (pool != nullptr && count > 1) {
    pool->parallel_for(count, body);
  } else {
    body(0, count);
  }
}

std::vector<std::uint8_t> StackedGraph::parent_cache(ThreadPool* pool) const {
  std::vector<std::uint8_t> out(nodes_ * kParentCacheBytesPerNode);
  write_parent_cache(0, out, pool);
  return out;
}

native::Digest32 StackedGraph::parent_cache_sha256(ThreadPool* pool) const {
  constexpr std::uint64_t kChunkNodes = std::uint64_t(1) << 20;  // 56 MiB per chunk
  native::Sha256 h;
  std::vector<std::uint8_t> buf;
  for (std::uint64_t first = 0; first < nodes_; first += kChunkNodes) {
    const std::uint64_t n = std::min(kChunkNodes, nodes_ - first);
    buf.resize(n * kParentCacheBytesPerNode);
    write_parent_cache(first, buf, pool);
    h.update(buf);
  }
  return h.finish();
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

}  // namespace cuzk::circuits::filecoin
