#include "circuits/gadgets/sha256.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "circuits/gadgets/multipack.hpp"
#include "circuits/gadgets/sha256_witness.hpp"

namespace cuzk::circuits::gadgets {

namespace {

// FIPS 180-4 §5.3.3: square roots of the first 8 primes.
constexpr std::array<std::uint32_t, 8> kIv = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "sha256 gadget: %s\n", what);
  std::abort();
}

std::vector<UInt32> iv_words() {
  std::vector<UInt32> iv;
  for (auto w : kIv) iv.push_back(UInt32::constant(w));
  return iv;
}

// A word that is either known (`concrete`) or a pending sum of words whose
// addmany is deferred until the word is used, so that e.g. e = d + temp1 is
// one 6-operand addition instead of two.
struct MaybeWord {
  bool deferred = false;
  UInt32 concrete;
  std::vector<UInt32> terms;

  UInt32 compute(MultiEq& eq, std::span<const UInt32> others) const {
    if (!deferred) return concrete;
    std::vector<UInt32> all = terms;
    all.insert(all.end(), others.begin(), others.end());
    return UInt32::addmany(eq, all);
  }
};

std::vector<Boolean> flatten_be(const std::vector<UInt32>& words) {
  std::vector<Boolean> out;
  out.reserve(words.size() * 32);
  for (const UInt32& w : words) {
    auto be = w.into_bits_be();
    out.insert(out.end(), be.begin(), be.end());
  }
  return out;
}

// LE bits per byte, padded to whole bytes, reordered to SHA-256's BE per byte.
void append_le_bytes_as_be(std::vector<Boolean>& out, std::span<const Boolean> le) {
  std::vector<Boolean> padded(le.begin(), le.end());
  while (padded.size() % 8 != 0) padded.push_back(Boolean::constant(false));
  for (std::size_t i = 0; i < padded.size(); i += 8)
    for (std::size_t k = 8; k-- > 0;) out.push_back(padded[i + k]);
}

}  // namespace

std::vector<UInt32> sha256_compression_function(ConstraintSystem& cs, std::span<const Boolean> input,
                                                std::span<const UInt32> current_hash_value) {
  if (input.size() != 512 || current_hash_value.size() != 8) die("compression arity");
  if (auto* witness_cs = dynamic_cast<groth16::WitnessCs*>(&cs)) {
    if (auto out = sha256_compression_witness(*witness_cs, input, current_hash_value)) return std::move(*out);
  }
  std::vector<UInt32> w;
  w.reserve(64);
  for (std::size_t i = 0; i < 16; ++i) w.push_back(UInt32::from_bits_be(input.subspan(i * 32, 32)));

  MultiEq eq(cs);

  // Message schedule: w[i] = w[i-16] + s0(w[i-15]) + w[i-7] + s1(w[i-2]).
  for (std::size_t i = 16; i < 64; ++i) {
    auto ns = cs.ns("w extension", i);
    UInt32 s0 = w[i - 15].rotr(7);
    {
      auto n1 = cs.ns("first xor for s0");
      s0 = s0.xor_(cs, w[i - 15].rotr(18));
    }
    {
      auto n2 = cs.ns("second xor for s0");
      s0 = s0.xor_(cs, w[i - 15].shr(3));
    }
    UInt32 s1 = w[i - 2].rotr(17);
    {
      auto n1 = cs.ns("first xor for s1");
      s1 = s1.xor_(cs, w[i - 2].rotr(19));
    }
    {
      auto n2 = cs.ns("second xor for s1");
      s1 = s1.xor_(cs, w[i - 2].shr(10));
    }
    auto n3 = cs.ns("computation of w[i]");
    const std::array<UInt32, 4> ops = {w[i - 16], s0, w[i - 7], s1};
    w.push_back(UInt32::addmany(eq, ops));
  }

  MaybeWord a{false, current_hash_value[0], {}};
  UInt32 b = current_hash_value[1];
  UInt32 c = current_hash_value[2];
  UInt32 d = current_hash_value[3];
  MaybeWord e{false, current_hash_value[4], {}};
  UInt32 f = current_hash_value[5];
  UInt32 g = current_hash_value[6];
  UInt32 h = current_hash_value[7];

  for (std::size_t i = 0; i < 64; ++i) {
    auto ns = cs.ns("compression round", i);
    UInt32 new_e;
    {
      auto n = cs.ns("deferred e computation");
      new_e = e.compute(eq, {});
    }
    UInt32 s1 = new_e.rotr(6);
    {
      auto n = cs.ns("first xor for s1");
      s1 = s1.xor_(cs, new_e.rotr(11));
    }
    {
      auto n = cs.ns("second xor for s1");
      s1 = s1.xor_(cs, new_e.rotr(25));
    }
    UInt32 ch;
    {
      auto n = cs.ns("ch");
      ch = UInt32::sha256_ch(cs, new_e, f, g);
    }
    const std::vector<UInt32> temp1 = {h, s1, ch, UInt32::constant(kSha256RoundConstants[i]), w[i]};

    UInt32 new_a;
    {
      auto n = cs.ns("deferred a computation");
      new_a = a.compute(eq, {});
    }
    UInt32 s0 = new_a.rotr(2);
    {
      auto n = cs.ns("first xor for s0");
      s0 = s0.xor_(cs, new_a.rotr(13));
    }
    {
      auto n = cs.ns("second xor for s0");
      s0 = s0.xor_(cs, new_a.rotr(22));
    }
    UInt32 maj;
    {
      auto n = cs.ns("maj");
      maj = UInt32::sha256_maj(cs, new_a, b, c);
    }

    // h g f e d c b a <- g f e (d + temp1) c b a (temp1 + s0 + maj)
    h = g;
    g = f;
    f = new_e;
    e.deferred = true;
    e.terms = temp1;
    e.terms.push_back(d);
    d = c;
    c = b;
    b = new_a;
    a.deferred = true;
    a.terms = temp1;
    a.terms.push_back(s0);
    a.terms.push_back(maj);
  }

  // H'_k = H_k + (a..h)_k
  auto add2 = [&](const char* name, const UInt32& x, const UInt32& y) {
    auto n = cs.ns(name);
    const std::array<UInt32, 2> ops = {x, y};
    return UInt32::addmany(eq, ops);
  };
  std::vector<UInt32> out;
  {
    auto n = cs.ns("deferred h0 computation");
    const std::array<UInt32, 1> extra = {current_hash_value[0]};
    out.push_back(a.compute(eq, extra));
  }
  out.push_back(add2("new h1", current_hash_value[1], b));
  out.push_back(add2("new h2", current_hash_value[2], c));
  out.push_back(add2("new h3", current_hash_value[3], d));
  {
    auto n = cs.ns("deferred h4 computation");
    const std::array<UInt32, 1> extra = {current_hash_value[4]};
    out.push_back(e.compute(eq, extra));
  }
  out.push_back(add2("new h5", current_hash_value[5], f));
  out.push_back(add2("new h6", current_hash_value[6], g));
  out.push_back(add2("new h7", current_hash_value[7], h));
  eq.flush();
  return out;
}

std::vector<Boolean> sha256_block_no_padding(ConstraintSystem& cs, std::span<const Boolean> input) {
  if (input.size() != 512) die("block must be 512 bits");
  return flatten_be(sha256_compression_function(cs, input, iv_words()));
}

std::vector<Boolean> sha256(ConstraintSystem& cs, std::span<const Boolean> input) {
  if (input.size() % 8 != 0) die("input must be whole bytes");
  // Padding: 1, zeros to 448 mod 512, 64-bit big-endian bit length.
  std::vector<Boolean> padded(input.begin(), input.end());
  const std::uint64_t bit_len = input.size();
  padded.push_back(Boolean::constant(true));
  while ((padded.size() + 64) % 512 != 0) padded.push_back(Boolean::constant(false));
  for (int i = 63; i >= 0; --i) padded.push_back(Boolean::constant(((bit_len >> i) & 1) != 0));

  std::vector<UInt32> cur = iv_words();
  for (std::size_t blk = 0; blk * 512 < padded.size(); ++blk) {
    auto ns = cs.ns("block", blk);
    cur = sha256_compression_function(cs, std::span<const Boolean>(padded).subspan(blk * 512, 512), cur);
  }
  return flatten_be(cur);
}

AllocatedNum sha256_hash_circuit(ConstraintSystem& cs, std::span<const Boolean> bits) {
  std::vector<Boolean> be;
  {
    auto ns = cs.ns("hash");
    be = sha256(cs, bits);
  }
  // Digest bytes in order, bits LSB first within each byte: the digest as a
  // little-endian integer; 254 bits = the fr32 trim of the top two.
  std::vector<Boolean> le;
  le.reserve(256);
  for (std::size_t i = 0; i < be.size(); i += 8)
    for (std::size_t k = 8; k-- > 0;) le.push_back(be[i + k]);
  auto ns = cs.ns("pack_le");
  return pack_bits(cs, std::span<const Boolean>(le).first(kFrCapacityBits));
}

AllocatedNum sha256_hash_leaf_bits_circuit(ConstraintSystem& cs, std::span<const Boolean> left,
                                           std::span<const Boolean> right) {
  std::vector<Boolean> preimage;
  append_le_bytes_as_be(preimage, left);
  append_le_bytes_as_be(preimage, right);
  return sha256_hash_circuit(cs, preimage);
}

AllocatedNum sha256_hash2_circuit(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b) {
  std::vector<Boolean> abits, bbits;
  {
    auto ns = cs.ns("a_bits");
    abits = a.to_bits_le(cs);
  }
  {
    auto ns = cs.ns("b_bits");
    bbits = b.to_bits_le(cs);
  }
  return sha256_hash_leaf_bits_circuit(cs, abits, bbits);
}

AllocatedNum sha256_hash_multi_leaf_circuit(ConstraintSystem& cs, std::span<const AllocatedNum> leaves) {
  std::vector<Boolean> preimage;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    std::vector<Boolean> bits;
    {
      auto ns = cs.ns(std::to_string(i) + "_num_into_bits");
      bits = leaves[i].to_bits_le(cs);
    }
    append_le_bytes_as_be(preimage, bits);
  }
  return sha256_hash_circuit(cs, preimage);
}

}  // namespace cuzk::circuits::gadgets
