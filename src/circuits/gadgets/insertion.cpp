#include "circuits/gadgets/insertion.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cuzk::circuits::gadgets {

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "insertion: %s\n", what);
  std::abort();
}

AllocatedNum pick_ns(ConstraintSystem& cs, const char* name, const Boolean& cond, const AllocatedNum& a,
                     const AllocatedNum& b) {
  auto ns = cs.ns(name);
  return AllocatedNum::pick(cs, cond, a, b);
}

std::vector<AllocatedNum> insert_2(ConstraintSystem& cs, const AllocatedNum& x, std::span<const Boolean> bits,
                                   std::span<const AllocatedNum> e) {
  return {pick_ns(cs, "binary insert 0", bits[0], e[0], x), pick_ns(cs, "binary insert 1", bits[0], x, e[0])};
}

// Inserting A into [b, c, d] at n = b0 + 2 b1:
//   n=0: A b c d   n=1: b A c d   n=2: b c A d   n=3: b c d A
// Each output position is a 2-level choice on b0 then b1, sharing where the
// column repeats (rfp's table; names pX_yz read "position X given b1 b0 = yz").
std::vector<AllocatedNum> insert_4(ConstraintSystem& cs, const AllocatedNum& a, std::span<const Boolean> bits,
                                   std::span<const AllocatedNum> e) {
  const Boolean &b0 = bits[0], &b1 = bits[1];
  const AllocatedNum &b = e[0], &c = e[1], &d = e[2];
  auto p0_x0 = pick_ns(cs, "p0_x0", b0, b, a);
  auto p0 = pick_ns(cs, "p0", b1, b, p0_x0);
  auto p1_x0 = pick_ns(cs, "p1_x0", b0, a, b);
  auto p1 = pick_ns(cs, "p1", b1, c, p1_x0);
  auto p2_x1 = pick_ns(cs, "p2_x1", b0, d, a);
  auto p2 = pick_ns(cs, "p2", b1, p2_x1, c);
  auto p3_x1 = pick_ns(cs, "p3_x1", b0, a, d);
  auto p3 = pick_ns(cs, "p3", b1, p3_x1, d);
  return {p0, p1, p2, p3};
}

// Inserting A into [b..h] at n = b0 + 2 b1 + 4 b2 (rfp insert_8): two shared
// products (b0 nor b1, b0 and b1) and 20 picks.
std::vector<AllocatedNum> insert_8(ConstraintSystem& cs, const AllocatedNum& a, std::span<const Boolean> bits,
                                   std::span<const AllocatedNum> e) {
  const Boolean &b0 = bits[0], &b1 = bits[1], &b2 = bits[2];
  if (b0.kind() != Boolean::Kind::kIs || b1.kind() != Boolean::Kind::kIs) {
    die("bits must be allocated and unnegated");
  }
  const AllocatedNum &b = e[0], &c = e[1], &d = e[2], &ee = e[3], &f = e[4], &g = e[5], &h = e[6];
  Boolean b0_nor_b1, b0_and_b1;
  {
    auto ns = cs.ns("b0 nor b1");
    b0_nor_b1 = AllocatedBit::nor(cs, b0.bit(), b1.bit());
  }
  {
    auto ns = cs.ns("b0 and b1");
    b0_and_b1 = AllocatedBit::and_(cs, b0.bit(), b1.bit());
  }
  auto p0_xx0 = pick_ns(cs, "p0_xx0", b0_nor_b1, a, b);
  auto p0 = pick_ns(cs, "p0", b2, b, p0_xx0);
  auto p1_x00 = pick_ns(cs, "p1_x00", b0, a, b);
  auto p1_xx0 = pick_ns(cs, "p1_xx0", b1, c, p1_x00);
  auto p1 = pick_ns(cs, "p1", b2, c, p1_xx0);
  auto p2_x10 = pick_ns(cs, "p2_x10", b0, d, a);
  auto p2_xx0 = pick_ns(cs, "p2_xx0", b1, p2_x10, c);
  auto p2 = pick_ns(cs, "p2", b2, d, p2_xx0);
  auto p3_xx0 = pick_ns(cs, "p3_xx0", b0_and_b1, a, d);
  auto p3 = pick_ns(cs, "p3", b2, ee, p3_xx0);
  auto p4_xx1 = pick_ns(cs, "p4_xx1", b0_nor_b1, a, f);
  auto p4 = pick_ns(cs, "p4", b2, p4_xx1, ee);
  auto p5_x01 = pick_ns(cs, "p5_x01", b0, a, f);
  auto p5_xx1 = pick_ns(cs, "p5_xx1", b1, g, p5_x01);
  auto p5 = pick_ns(cs, "p5", b2, p5_xx1, f);
  auto p6_x11 = pick_ns(cs, "p6_x11", b0, h, a);
  auto p6_xx1 = pick_ns(cs, "p6_xx1", b1, p6_x11, g);
  auto p6 = pick_ns(cs, "p6", b2, p6_xx1, g);
  auto p7_xx1 = pick_ns(cs, "p7_xx1", b0_and_b1, a, h);
  auto p7 = pick_ns(cs, "p7", b2, p7_xx1, h);
  return {p0, p1, p2, p3, p4, p5, p6, p7};
}

}  // namespace

AllocatedNum select(ConstraintSystem& cs, std::span<const AllocatedNum> from, std::span<const Boolean> path_bits) {
  if ((std::size_t{1} << path_bits.size()) != from.size()) die("select: size != 2^bits");
  std::vector<AllocatedNum> state(from.begin(), from.end());
  std::size_t half = from.size() / 2;
  // Most significant bit first: each bit halves the candidates.
  for (std::size_t i = 0; i < path_bits.size(); ++i) {
    const Boolean& bit = path_bits[path_bits.size() - 1 - i];
    std::vector<AllocatedNum> next;
    for (std::size_t j = 0; j < half; ++j) {
      auto ns = cs.ns(groth16::Name("pick " + std::to_string(i) + ",", j));
      next.push_back(AllocatedNum::pick(cs, bit, state[half + j], state[j]));
    }
    state = std::move(next);
    half /= 2;
  }
  return state[0];
}

std::vector<AllocatedNum> insert(ConstraintSystem& cs, const AllocatedNum& element, std::span<const Boolean> bits,
                                 std::span<const AllocatedNum> elements) {
  const std::size_t size = elements.size() + 1;
  if ((std::size_t{1} << bits.size()) != size) die("insert: size != 2^bits");
  if (size == 2) return insert_2(cs, element, bits, elements);
  if (size == 4) return insert_4(cs, element, bits, elements);
  if (size == 8) return insert_8(cs, element, bits, elements);
  // General case: output position `pos` selects, by the index, among the
  // values that land there for each possible index.
  std::vector<AllocatedNum> result;
  for (std::size_t pos = 0; pos < size; ++pos) {
    std::vector<AllocatedNum> choices;
    for (std::size_t index = 0; index < size; ++index) {
      if (pos < index) {
        choices.push_back(elements[pos]);
      } else if (pos == index) {
        choices.push_back(element);
      } else {
        choices.push_back(elements[pos - 1]);
      }
    }
    auto ns = cs.ns("choice at", pos);
    result.push_back(select(cs, choices, bits));
  }
  return result;
}

}  // namespace cuzk::circuits::gadgets
