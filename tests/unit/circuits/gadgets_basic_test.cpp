// Boolean, UInt32, UInt64, AllocatedNum and packing gadgets: values, counts
// (bellpepper's tests) and rejection of corrupted witnesses.
#include <gtest/gtest.h>

#include <random>

#include "circuits/gadgets/constraint.hpp"
#include "circuits/gadgets/multipack.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/uint32.hpp"
#include "circuits/gadgets/uint64.hpp"

namespace cuzk::circuits::gadgets {
namespace {

using groth16::SynthesisError;
using groth16::TestCs;

// All five flavours of a Boolean with value v: constant, Is, Not.
std::vector<Boolean> flavours(TestCs& cs, bool v) {
  return {Boolean::constant(v), Boolean(AllocatedBit::alloc(cs, v)), Boolean(AllocatedBit::alloc(cs, !v)).not_()};
}

TEST(BooleanGadget, TruthTablesOverAllFlavours) {
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) {
        TestCs cs;
        auto fa = flavours(cs, a), fb = flavours(cs, b), fc = flavours(cs, c);
        for (const auto& x : fa)
          for (const auto& y : fb) {
            EXPECT_EQ(Boolean::xor_(cs, x, y).value(), (a != b));
            EXPECT_EQ(Boolean::and_(cs, x, y).value(), (a && b));
            EXPECT_EQ(Boolean::or_(cs, x, y).value(), (a || b));
            for (const auto& z : fc) {
              EXPECT_EQ(Boolean::sha256_ch(cs, x, y, z).value(), ((a && b) != (!a && c)));
              EXPECT_EQ(Boolean::sha256_maj(cs, x, y, z).value(), (((a && b) != (a && c)) != (b && c)));
            }
          }
        EXPECT_TRUE(cs.is_satisfied()) << cs.which_is_unsatisfied().value_or("");
      }
}

TEST(BooleanGadget, ConstantOperandsCostNothing) {
  TestCs cs;
  auto t = Boolean::constant(true), f = Boolean::constant(false);
  Boolean::xor_(cs, t, f);
  Boolean::sha256_ch(cs, t, f, t);
  Boolean::sha256_maj(cs, t, t, f);
  EXPECT_EQ(cs.num_constraints(), 0u);
  EXPECT_THROW(Boolean::enforce_equal(cs, t, f), SynthesisError);
}

TEST(BooleanGadget, NonBooleanValueIsRejected) {
  TestCs cs;
  auto b = AllocatedBit::alloc(cs, true);
  EXPECT_TRUE(cs.is_satisfied());
  cs.set_value(b.variable(), Fr::from_u64(2));
  EXPECT_FALSE(cs.is_satisfied());
}

TEST(BooleanGadget, EnforceEqual) {
  TestCs cs;
  auto x = Boolean(AllocatedBit::alloc(cs, true));
  auto y = Boolean(AllocatedBit::alloc(cs, false));
  Boolean::enforce_equal(cs, x, y.not_());
  Boolean::enforce_equal(cs, x, Boolean::constant(true));
  Boolean::enforce_equal(cs, y, Boolean::constant(false));
  EXPECT_TRUE(cs.is_satisfied());
  Boolean::enforce_equal(cs, x, y);
  EXPECT_FALSE(cs.is_satisfied());
}

TEST(BooleanGadget, AllocConditionally) {
  TestCs cs;
  auto gate = AllocatedBit::alloc(cs, true);
  AllocatedBit::alloc_conditionally(cs, false, gate);
  EXPECT_TRUE(cs.is_satisfied());
  auto forced = AllocatedBit::alloc_conditionally(cs, true, gate);
  EXPECT_FALSE(cs.is_satisfied());
  (void)forced;
}

TEST(UInt32Gadget, AddmanyMatchesWrappingAdd) {
  std::mt19937 rng(31);
  for (int it = 0; it < 50; ++it) {
    TestCs cs;
    const std::uint32_t a = rng(), b = rng(), c = rng(), d = rng();
    UInt32 ab;
    {
      auto ns = cs.ns("a_bit");
      ab = UInt32::alloc(cs, a);
    }
    UInt32 db;
    {
      auto ns = cs.ns("d_bit");
      db = UInt32::alloc(cs, d);
    }
    UInt32 x = ab.xor_(cs, UInt32::constant(b));
    UInt32 r;
    {
      MultiEq eq(cs);
      const UInt32 ops[] = {x, UInt32::constant(c), db};
      r = UInt32::addmany(eq, ops);
      eq.flush();
    }
    const std::uint32_t expected = (a ^ b) + c + d;
    EXPECT_EQ(r.value(), expected);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(r.bits()[i].value(), ((expected >> i) & 1) != 0);
    EXPECT_TRUE(cs.is_satisfied());
    // 64 + 32 (xor with a constant folds to negations: 0) + 34 result bits + 1 multieq.
    EXPECT_EQ(cs.num_constraints(), 64u + 34u + 1u);
    // Flip one result bit (still boolean): the packed equality fails.
    const Variable v = r.bits()[3].bit().variable();
    cs.set_value(v, Fr::one() - cs.value(v));
    EXPECT_FALSE(cs.is_satisfied());
  }
}

TEST(UInt32Gadget, AddmanyOfConstantsIsConstant) {
  TestCs cs;
  MultiEq eq(cs);
  const UInt32 ops[] = {UInt32::constant(0xffffffffu), UInt32::constant(2), UInt32::constant(7)};
  UInt32 r = UInt32::addmany(eq, ops);
  eq.flush();
  EXPECT_EQ(r.value(), 8u);
  for (const auto& b : r.bits()) EXPECT_TRUE(b.is_constant());
  EXPECT_EQ(cs.num_constraints(), 0u);
}

TEST(UInt32Gadget, RotateShiftAndBitOrders) {
  std::mt19937 rng(32);
  for (int it = 0; it < 100; ++it) {
    const std::uint32_t v = rng();
    UInt32 x = UInt32::constant(v);
    for (std::size_t by : {0u, 1u, 7u, 31u}) {
      EXPECT_EQ(x.rotr(by).value(), by ? (v >> by) | (v << (32 - by)) : v);
      EXPECT_EQ(x.shr(by).value(), v >> by);
      UInt32 r = x.rotr(by);
      UInt32 back = UInt32::from_bits(r.into_bits());
      EXPECT_EQ(back.value(), r.value());
    }
    EXPECT_EQ(UInt32::from_bits_be(x.into_bits_be()).value(), v);
  }
}

TEST(UInt32Gadget, MultiEqBatchesUpToCapacity) {
  // Each 2-operand addmany adds a 33-bit equality: 7 fit below 254 bits,
  // the 8th starts a new constraint.
  TestCs cs;
  MultiEq eq(cs);
  for (int i = 0; i < 8; ++i) {
    const UInt32 ops[] = {UInt32::alloc(cs, 5u + i), UInt32::alloc(cs, 9u)};
    UInt32::addmany(eq, ops);
  }
  eq.flush();
  EXPECT_EQ(cs.num_constraints(), 8u * (64 + 33) + 2);
  EXPECT_TRUE(cs.is_satisfied());
}

TEST(UInt64Gadget, AllocPackAndBitOrders) {
  TestCs cs;
  const std::uint64_t v = 0x0123456789abcdefull;
  UInt64 x = UInt64::alloc(cs, v);
  EXPECT_EQ(UInt64::from_bits_be(x.to_bits_be()).value(), v);
  EXPECT_EQ(UInt64::from_bits(x.to_bits_le()).value(), v);
  x.pack_into_input(cs);
  EXPECT_EQ(cs.num_constraints(), 65u);
  EXPECT_EQ(cs.num_inputs(), 2u);
  EXPECT_EQ(cs.inputs()[1], Fr::from_u64(v));
  EXPECT_TRUE(cs.is_satisfied());
}

TEST(NumGadget, Arithmetic) {
  std::mt19937_64 rng(33);
  TestCs cs;
  const Fr a = Fr::random(rng), b = Fr::random(rng);
  auto an = AllocatedNum::alloc(cs, a), bn = AllocatedNum::alloc(cs, b);
  EXPECT_EQ(*an.add(cs, bn).value(), a + b);
  EXPECT_EQ(*an.mul(cs, bn).value(), a * b);
  EXPECT_EQ(*an.square(cs).value(), a * a);
  EXPECT_EQ(*an.inverse(cs).value(), a.inverse());
  an.assert_nonzero(cs);
  EXPECT_EQ(cs.num_constraints(), 5u);
  EXPECT_TRUE(cs.is_satisfied());
  auto zero = AllocatedNum::alloc(cs, Fr::zero());
  try {
    zero.assert_nonzero(cs);
    ADD_FAILURE() << "no error";
  } catch (const SynthesisError& e) {
    EXPECT_EQ(e.kind(), groth16::SynthesisErrorKind::kDivisionByZero);
  }
}

TEST(NumGadget, ConditionalReverseAndPick) {
  TestCs cs;
  auto a = AllocatedNum::alloc(cs, Fr::from_u64(10)), b = AllocatedNum::alloc(cs, Fr::from_u64(20));
  for (bool cond : {false, true}) {
    Boolean c = AllocatedBit::alloc(cs, cond);
    auto [x, y] = AllocatedNum::conditionally_reverse(cs, a, b, c);
    EXPECT_EQ(*x.value(), Fr::from_u64(cond ? 20 : 10));
    EXPECT_EQ(*y.value(), Fr::from_u64(cond ? 10 : 20));
    auto p = AllocatedNum::pick(cs, c, a, b);
    EXPECT_EQ(*p.value(), Fr::from_u64(cond ? 10 : 20));
  }
  EXPECT_TRUE(cs.is_satisfied());
}

TEST(NumGadget, ToBitsStrictAndNonStrict) {
  std::mt19937_64 rng(34);
  for (const Fr v : {Fr::zero(), Fr::one(), -Fr::one(), Fr::random(rng)}) {
    TestCs cs;
    auto n = AllocatedNum::alloc(cs, v);
    auto strict = n.to_bits_le_strict(cs);
    auto loose = n.to_bits_le(cs);
    ASSERT_EQ(strict.size(), 255u);
    ASSERT_EQ(loose.size(), 255u);
    const auto x = v.to_int();
    for (std::size_t i = 0; i < 255; ++i) {
      EXPECT_EQ(strict[i].value(), x.bit(i));
      EXPECT_EQ(loose[i].value(), x.bit(i));
    }
    EXPECT_TRUE(cs.is_satisfied());
  }
}

// bellpepper num.rs test_into_bits_strict: the bits of -1 rewritten to encode
// r (its least significant bit, allocated last as "bit 254", set to 1) must
// trip that bit's conditional boolean constraint, while the non-strict gadget
// accepts the non-canonical encoding r of 0.
TEST(NumGadget, StrictRejectsNonCanonicalEncoding) {
  TestCs cs;
  auto n = AllocatedNum::alloc(cs, -Fr::one());
  auto bits = n.to_bits_le_strict(cs);
  ASSERT_TRUE(cs.is_satisfied());
  // r - 1 is even, so bit 0 of -1 is 0; setting it to 1 encodes r (= 0 mod r).
  cs.set_value(bits[0].bit().variable(), Fr::one());
  EXPECT_FALSE(cs.is_satisfied());

  TestCs loose_cs;
  auto m = AllocatedNum::alloc(loose_cs, Fr::zero());
  auto lb = m.to_bits_le(loose_cs);
  ASSERT_TRUE(loose_cs.is_satisfied());
  const auto r = Fr::kModulus;
  for (std::size_t i = 0; i < 255; ++i) {
    loose_cs.set_value(lb[i].bit().variable(), r.bit(i) ? Fr::one() : Fr::zero());
  }
  EXPECT_TRUE(loose_cs.is_satisfied());  // 0 and r pack to the same field element
}

TEST(ConstraintGadget, EncodeDecodeRoundTrip) {
  std::mt19937_64 rng(36);
  TestCs cs;
  const Fr key = Fr::random(rng), data = Fr::random(rng);
  auto k = AllocatedNum::alloc(cs, key), d = AllocatedNum::alloc(cs, data);
  auto enc = encode(cs, k, d);
  auto dec = decode(cs, k, enc);
  EXPECT_EQ(*enc.value(), key + data);
  EXPECT_EQ(*dec.value(), data);
  enforce_equal(cs, "round trip", dec, d);
  EXPECT_EQ(cs.num_constraints(), 3u);
  EXPECT_TRUE(cs.is_satisfied());
  cs.set_value(enc.variable(), *enc.value() + Fr::one());
  EXPECT_FALSE(cs.is_satisfied());
}

TEST(Multipack, InputsMatchComputeMultipacking) {
  std::mt19937_64 rng(35);
  std::vector<bool> raw(600);
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = (rng() & 1) != 0;
  TestCs cs;
  std::vector<Boolean> bits;
  for (bool b : raw) bits.emplace_back(AllocatedBit::alloc(cs, b));
  bits.push_back(Boolean::constant(true));
  raw.push_back(true);
  pack_into_inputs(cs, bits);
  auto expected = compute_multipacking(raw);
  ASSERT_EQ(expected.size(), 3u);  // ceil(601 / 254)
  ASSERT_EQ(cs.num_inputs(), 4u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(cs.inputs()[1 + i], expected[i]);
  EXPECT_TRUE(cs.is_satisfied());
  EXPECT_EQ(cs.num_constraints(), 600u + 3u);
}

TEST(Multipack, ReverseBitNumberingAndByteOrders) {
  const std::uint8_t bytes[] = {0x01, 0x80};
  auto le = bytes_to_bits_le(bytes);
  auto be = bytes_to_bits(bytes);
  EXPECT_TRUE(le[0] && !le[7] && le[15]);
  EXPECT_TRUE(be[7] && !be[0] && be[8]);
  std::vector<Boolean> bits;
  for (bool b : le) bits.push_back(Boolean::constant(b));
  bits.push_back(Boolean::constant(true));  // partial byte, padded with zeros
  auto rev = reverse_bit_numbering(bits);
  ASSERT_EQ(rev.size(), 24u);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(rev[i].value(), be[i]);
  EXPECT_EQ(rev[23].value(), true);
  EXPECT_EQ(rev[16].value(), false);
}

}  // namespace
}  // namespace cuzk::circuits::gadgets
