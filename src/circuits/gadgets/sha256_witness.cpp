#include "circuits/gadgets/sha256_witness.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>

namespace cuzk::circuits::gadgets {

namespace {

using groth16::WitnessCs;

// Fr::CAPACITY, the width MultiEq packs equalities into (uint32.cpp).
constexpr std::size_t kFrCapacityBits = Fr::kBits - 1;

enum class Kind : std::uint8_t { kConst, kIs, kNot };

// A Boolean: a constant (bv is its value), an aux variable (bv its value),
// or the negation of one (bv the variable's value).
struct Bit {
  std::uint32_t var = 0;
  Kind kind = Kind::kConst;
  bool bv = false;
};

bool bit_value(const Bit& x) { return x.kind == Kind::kNot ? !x.bv : x.bv; }
Bit not_(Bit x) {
  if (x.kind == Kind::kConst) {
    x.bv = !x.bv;
  } else {
    x.kind = x.kind == Kind::kIs ? Kind::kNot : Kind::kIs;
  }
  return x;
}
bool is_const(const Bit& x, bool v) { return x.kind == Kind::kConst && x.bv == v; }
Bit const_bit(bool v) { return {0, Kind::kConst, v}; }

// 32 Booleans, least significant first, as masks: most words of a
// compression have no constant bit, and their xor / ch / maj / addmany then
// run word-wide.
struct Word {
  std::array<std::uint32_t, 32> var{};  // bit i's aux variable (unused where constant)
  std::uint32_t value = 0;              // the Booleans' values
  std::uint32_t constant = 0;           // constant bits
  std::uint32_t negated = 0;            // Not bits (never constant)

  Bit get(unsigned i) const {
    const bool v = ((value >> i) & 1) != 0;
    if ((constant >> i) & 1) return const_bit(v);
    const bool neg = ((negated >> i) & 1) != 0;
    return {var[i], neg ? Kind::kNot : Kind::kIs, v != neg};
  }
  void set(unsigned i, const Bit& b) {
    const std::uint32_t m = 1u << i;
    value = (value & ~m) | (std::uint32_t(bit_value(b)) << i);
    constant = (constant & ~m) | (b.kind == Kind::kConst ? m : 0);
    negated = (negated & ~m) | (b.kind == Kind::kNot ? m : 0);
    var[i] = b.var;
  }
};

Word constant_word(std::uint32_t v) {
  Word w;
  w.value = v;
  w.constant = 0xffffffffu;
  return w;
}

Word rotr(const Word& x, unsigned by) {
  Word r;
  for (unsigned i = 0; i < 32; ++i) r.var[i] = x.var[(i + by) % 32];
  r.value = std::rotr(x.value, int(by));
  r.constant = std::rotr(x.constant, int(by));
  r.negated = std::rotr(x.negated, int(by));
  return r;
}

Word shr(const Word& x, unsigned by) {
  Word r;
  for (unsigned i = 0; i + by < 32; ++i) r.var[i] = x.var[i + by];
  r.value = x.value >> by;
  r.constant = (x.constant >> by) | ~(0xffffffffu >> by);  // constant false shifted in
  r.negated = x.negated >> by;
  return r;
}

// The gadgets' allocations, in their order, with their constant folding.
class Builder {
 public:
  explicit Builder(WitnessCs& cs) : cs_(cs) {}
  ~Builder() { cs_.count_constraints(constraints_); }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // AllocatedBit::alloc / xor / and / and_not / nor / ch / maj: one variable
  // and one constraint each.
  Bit alloc(bool v) {
    const std::uint32_t i = cs_.extend_aux(1);
    cs_.aux_data()[i] = v ? one_ : zero_;
    ++constraints_;
    return {i, Kind::kIs, v};
  }
  // n such allocations at once, bit j of `bits` the j-th value, every
  // `stride`-th slot from the first returned (the others for the caller).
  std::uint32_t alloc_run(std::uint64_t bits, unsigned n, unsigned stride = 1) {
    const std::uint32_t first = cs_.extend_aux(std::size_t(n) * stride);
    Fr* out = cs_.aux_data() + first;
    for (unsigned j = 0; j < n; ++j) out[std::size_t(j) * stride] = ((bits >> j) & 1) ? one_ : zero_;
    constraints_ += n;
    return first;
  }

  Bit xor_(const Bit& a, const Bit& b) {
    if (is_const(a, false)) return b;
    if (is_const(b, false)) return a;
    if (a.kind == Kind::kConst) return not_(b);
    if (b.kind == Kind::kConst) return not_(a);
    // Mixed polarity: the variables' xor, negated; same polarity: their xor.
    Bit r = alloc(a.bv != b.bv);
    if (a.kind != b.kind) r.kind = Kind::kNot;
    return r;
  }

  Bit and_(const Bit& a, const Bit& b) {
    if (a.kind == Kind::kConst) return a.bv ? b : const_bit(false);
    if (b.kind == Kind::kConst) return b.bv ? a : const_bit(false);
    return alloc(bit_value(a) && bit_value(b));
  }

  Bit ch(const Bit& a, const Bit& b, const Bit& c) {
    const bool va = bit_value(a), vb = bit_value(b), vc = bit_value(c);
    const bool v = (va && vb) != (!va && vc);
    if (a.kind == Kind::kConst && b.kind == Kind::kConst && c.kind == Kind::kConst) return const_bit(v);
    if (is_const(a, false)) return c;
    if (is_const(b, false)) return and_(not_(a), c);
    if (is_const(c, false)) return and_(a, b);
    if (is_const(c, true)) return not_(and_(a, not_(b)));
    if (is_const(b, true)) return not_(and_(not_(a), not_(c)));
    return alloc(v);
  }

  Bit maj(const Bit& a, const Bit& b, const Bit& c) {
    const bool va = bit_value(a), vb = bit_value(b), vc = bit_value(c);
    const bool v = ((va && vb) != (va && vc)) != (vb && vc);
    if (a.kind == Kind::kConst && b.kind == Kind::kConst && c.kind == Kind::kConst) return const_bit(v);
    if (is_const(a, false)) return and_(b, c);
    if (is_const(b, false)) return and_(a, c);
    if (is_const(c, false)) return and_(a, b);
    if (is_const(c, true)) return not_(and_(not_(a), not_(b)));
    if (is_const(b, true)) return not_(and_(not_(a), not_(c)));
    if (is_const(a, true)) return not_(and_(not_(b), not_(c)));
    const Bit m = alloc(v);  // with the maj computation's constraint
    and_(b, c);              // "b and c", allocated after maj
    return m;
  }

  Word xor_(const Word& x, const Word& y) {
    Word r;
    r.value = x.value ^ y.value;
    if ((x.constant | y.constant) == 0) {
      // Every bit allocated: the variables' xor; negated where the polarities differ.
      const std::uint32_t first = alloc_run((x.value ^ x.negated) ^ (y.value ^ y.negated), 32);
      for (unsigned i = 0; i < 32; ++i) r.var[i] = first + i;
      r.negated = x.negated ^ y.negated;
      return r;
    }
    for (unsigned i = 0; i < 32; ++i) r.set(i, xor_(x.get(i), y.get(i)));
    return r;
  }
  Word ch(const Word& a, const Word& b, const Word& c) {
    Word r;
    r.value = (a.value & b.value) ^ (~a.value & c.value);
    if ((a.constant | b.constant | c.constant) == 0) {
      const std::uint32_t first = alloc_run(r.value, 32);
      for (unsigned i = 0; i < 32; ++i) r.var[i] = first + i;
      return r;
    }
    for (unsigned i = 0; i < 32; ++i) r.set(i, ch(a.get(i), b.get(i), c.get(i)));
    return r;
  }
  Word maj(const Word& a, const Word& b, const Word& c) {
    Word r;
    r.value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
    if ((a.constant | b.constant | c.constant) == 0) {
      // Per bit: maj, then "b and c".
      const std::uint32_t first = alloc_run(r.value, 32, 2);
      const std::uint32_t bc = b.value & c.value;
      Fr* out = cs_.aux_data() + first;
      for (unsigned i = 0; i < 32; ++i) {
        out[2 * i + 1] = ((bc >> i) & 1) ? one_ : zero_;
        r.var[i] = first + 2 * i;
      }
      constraints_ += 32;
      return r;
    }
    for (unsigned i = 0; i < 32; ++i) r.set(i, maj(a.get(i), b.get(i), c.get(i)));
    return r;
  }

  // UInt32::addmany: all-constant operands fold; otherwise the full sum's
  // bits are allocated and the equality queued on the MultiEq.
  Word addmany(std::span<const Word* const> ops) {
    std::uint64_t sum = 0;
    std::uint32_t all_constant = 0xffffffffu;
    for (const Word* w : ops) {
      sum += w->value;
      all_constant &= w->constant;
    }
    if (all_constant == 0xffffffffu) return constant_word(std::uint32_t(sum));
    const auto n_bits = unsigned(std::bit_width(std::uint64_t(ops.size()) * 0xffffffffull));
    const std::uint32_t first = alloc_run(sum, n_bits);
    Word r;
    for (unsigned i = 0; i < 32; ++i) r.var[i] = first + i;
    r.value = std::uint32_t(sum);
    multieq(n_bits);
    return r;
  }

  // MultiEq::enforce_equal / flush: a constraint whenever the packed width
  // would reach Fr's capacity, and one for what is pending at the end.
  void multieq(std::size_t n_bits) {
    if (kFrCapacityBits <= eq_bits_ + n_bits) {
      ++constraints_;
      eq_bits_ = 0;
    }
    eq_bits_ += n_bits;
  }
  void flush() {
    if (eq_bits_ > 0) ++constraints_;
    eq_bits_ = 0;
  }

 private:
  WitnessCs& cs_;
  const Fr one_ = Fr::one();
  const Fr zero_ = Fr::zero();
  std::size_t constraints_ = 0;
  std::size_t eq_bits_ = 0;
};

// A word known, or the operands of its pending addition (sha256.cpp's MaybeWord).
struct Pending {
  bool deferred = false;
  Word concrete;
  std::array<Word, 7> terms;
  std::size_t n_terms = 0;

  Word compute(Builder& bld, const Word* extra) const {
    if (!deferred) return concrete;
    std::array<const Word*, 8> ops{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < n_terms; ++i) ops[n++] = &terms[i];
    if (extra != nullptr) ops[n++] = extra;
    return bld.addmany(std::span<const Word* const>(ops.data(), n));
  }
  void defer(std::span<const Word> first, std::initializer_list<const Word*> more) {
    deferred = true;
    n_terms = 0;
    for (const Word& w : first) terms[n_terms++] = w;
    for (const Word* w : more) terms[n_terms++] = *w;
  }
};

// Nullopt when a value is absent or the bit is not an aux variable.
std::optional<Bit> from_boolean(const Boolean& b) {
  if (b.is_constant()) return const_bit(*b.value());
  const std::optional<bool> v = b.bit().value();
  if (!v || b.bit().variable().kind() != groth16::VarKind::kAux) return std::nullopt;
  return Bit{b.bit().variable().index(), b.kind() == Boolean::Kind::kIs ? Kind::kIs : Kind::kNot, *v};
}

Boolean to_boolean(const Bit& x) {
  if (x.kind == Kind::kConst) return Boolean::constant(x.bv);
  const Boolean b(AllocatedBit(Variable::aux(x.var), x.bv));
  return x.kind == Kind::kNot ? b.not_() : b;
}

UInt32 to_uint32(const Word& w) {
  std::array<Boolean, 32> bits;
  for (unsigned i = 0; i < 32; ++i) bits[i] = to_boolean(w.get(i));
  return UInt32::from_bits(bits);
}

}  // namespace

std::optional<std::vector<UInt32>> sha256_compression_witness(WitnessCs& cs, std::span<const Boolean> input,
                                                              std::span<const UInt32> current_hash_value) {
  std::array<Word, 64> w;
  for (std::size_t i = 0; i < 16; ++i) {
    // 32 bits most significant first.
    for (unsigned k = 0; k < 32; ++k) {
      const auto bit = from_boolean(input[i * 32 + 31 - k]);
      if (!bit) return std::nullopt;
      w[i].set(k, *bit);
    }
  }
  std::array<Word, 8> hv;
  for (std::size_t j = 0; j < 8; ++j) {
    for (unsigned k = 0; k < 32; ++k) {
      const auto bit = from_boolean(current_hash_value[j].bits()[k]);
      if (!bit) return std::nullopt;
      hv[j].set(k, *bit);
    }
  }

  Builder bld(cs);
  for (std::size_t i = 16; i < 64; ++i) {
    const Word s0 = bld.xor_(bld.xor_(rotr(w[i - 15], 7), rotr(w[i - 15], 18)), shr(w[i - 15], 3));
    const Word s1 = bld.xor_(bld.xor_(rotr(w[i - 2], 17), rotr(w[i - 2], 19)), shr(w[i - 2], 10));
    const std::array<const Word*, 4> ops = {&w[i - 16], &s0, &w[i - 7], &s1};
    w[i] = bld.addmany(ops);
  }

  Pending a{false, hv[0], {}, 0};
  Word b = hv[1], c = hv[2], d = hv[3];
  Pending e{false, hv[4], {}, 0};
  Word f = hv[5], g = hv[6], h = hv[7];
  for (std::size_t i = 0; i < 64; ++i) {
    const Word new_e = e.compute(bld, nullptr);
    const Word s1 = bld.xor_(bld.xor_(rotr(new_e, 6), rotr(new_e, 11)), rotr(new_e, 25));
    const Word ch = bld.ch(new_e, f, g);
    const Word new_a = a.compute(bld, nullptr);
    const Word s0 = bld.xor_(bld.xor_(rotr(new_a, 2), rotr(new_a, 13)), rotr(new_a, 22));
    const Word maj = bld.maj(new_a, b, c);
    // h g f e d c b a <- g f e (d + temp1) c b a (temp1 + s0 + maj),
    // temp1 = h + s1 + ch + K[i] + w[i].
    const std::array<Word, 5> temp1 = {h, s1, ch, constant_word(kSha256RoundConstants[i]), w[i]};
    h = g;
    g = f;
    f = new_e;
    e.defer(temp1, {&d});
    d = c;
    c = b;
    b = new_a;
    a.defer(temp1, {&s0, &maj});
  }

  auto add2 = [&](const Word& x, const Word& y) {
    const std::array<const Word*, 2> ops = {&x, &y};
    return bld.addmany(ops);
  };
  std::vector<Word> out;
  out.reserve(8);
  out.push_back(a.compute(bld, &hv[0]));
  out.push_back(add2(hv[1], b));
  out.push_back(add2(hv[2], c));
  out.push_back(add2(hv[3], d));
  out.push_back(e.compute(bld, &hv[4]));
  out.push_back(add2(hv[5], f));
  out.push_back(add2(hv[6], g));
  out.push_back(add2(hv[7], h));
  bld.flush();

  std::vector<UInt32> result;
  result.reserve(8);
  for (const Word& word : out) result.push_back(to_uint32(word));
  return result;
}

}  // namespace cuzk::circuits::gadgets
