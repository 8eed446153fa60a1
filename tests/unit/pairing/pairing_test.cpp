// Optimal ate pairing: known answers from @noble/curves, bilinearity,
// non-degeneracy, order, multi-pairing, identities, prepared G2 points and the
// exact exponent of the final exponentiation.
#include "pairing/pairing.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <string_view>
#include <vector>

#include "ec/curve.hpp"

namespace cuzk::pairing {
namespace {

using ec::G1Affine;
using ec::G2Affine;
using ff::BigInt;
using ff::Fp;
using ff::Fp12;
using ff::Fr;
using G1G2 = std::pair<G1Affine, G2Affine>;

G1Affine g1_mul(const Fr& k) { return ec::to_affine(ec::mul(ec::kG1Generator, k)); }
G2Affine g2_mul(const Fr& k) { return ec::to_affine(ec::mul(ec::kG2Generator, k)); }

Fp12 from_hex_coefficients(const std::array<std::string_view, 12>& hex) {
  std::array<Fp, 12> c;
  for (std::size_t i = 0; i < 12; ++i) c[i] = Fp::from_hex(hex[i]);
  return Fp12::from_coefficients(c);
}

// @noble/curves 2.4.0, bls12_381.pairing(G1.Point.BASE, G2.Point.BASE), the
// twelve coefficients in Fp12::coefficients() order (printed with
// f.c0.c0.c0, f.c0.c0.c1, ..., f.c1.c2.c1). The first one also matches the
// value in zcash's bls12_381 crate tests.
constexpr std::array<std::string_view, 12> kNobleGeneratorPairing = {
    "1250ebd871fc0a92a7b2d83168d0d727272d441befa15c503dd8e90ce98db3e7b6d194f60839c508a84305aaca1789b6",
    "089a1c5b46e5110b86750ec6a532348868a84045483c92b7af5af689452eafabf1a8943e50439f1d59882a98eaa0170f",
    "1368bb445c7c2d209703f239689ce34c0378a68e72a6b3b216da0e22a5031b54ddff57309396b38c881c4c849ec23e87",
    "193502b86edb8857c273fa075a50512937e0794e1e65a7617c90d8bd66065b1fffe51d7a579973b1315021ec3c19934f",
    "01b2f522473d171391125ba84dc4007cfbf2f8da752f7c74185203fcca589ac719c34dffbbaad8431dad1c1fb597aaa5",
    "018107154f25a764bd3c79937a45b84546da634b8f6be14a8061e55cceba478b23f7dacaa35c8ca78beae9624045b4b6",
    "19f26337d205fb469cd6bd15c3d5a04dc88784fbb3d0b2dbdea54d43b2b73f2cbb12d58386a8703e0f948226e47ee89d",
    "06fba23eb7c5af0d9f80940ca771b6ffd5857baaf222eb95a7d2809d61bfe02e1bfd1b68ff02f0b8102ae1c2d5d5ab1a",
    "11b8b424cd48bf38fcef68083b0b0ec5c81a93b330ee1a677d0d15ff7b984e8978ef48881e32fac91b93b47333e2ba57",
    "03350f55a7aefcd3c31b4fcb6ce5771cc6a0e9786ab5973320c806ad360829107ba810c5a09ffdd9be2291a0c25a99a2",
    "04c581234d086a9902249b64728ffd21a189e87935a954051c7cdba7b3872629a4fafc05066245cb9108f0242d0fe3ef",
    "0f41e58663bf08cf068672cbd01a7ec73baca4d72ca93544deff686bfd6df543d48eaa24afe47e1efde449383b676631",
};

// @noble/curves 2.4.0, bls12_381.pairing(G1.BASE.multiply(0x1234567n), G2.BASE.multiply(0x89abcdefn)).
constexpr std::array<std::string_view, 12> kNobleScaledPairing = {
    "04692d50d21eee69235aad15b19b47bb1830c17edc4084642ea036d92384f0c3296d5ad35e177ad05f17c0ad670ca19d",
    "08015d1e35c16259cfed9d519e4c0e6d38a85b3d994c064be21b03402528aa9edfba4eb1be545b620702bcee1b692d36",
    "1279b1cbe68ed9e32e202f522a201856fd1ed174a6b29169cc2348c0f5baf968e8a8b705c2c8f8f1d9ccd403a8798e10",
    "0a95aa383bc09f4b5b8206c88f0e69b40073a06ac752270f8c26e17c900c23fff8b232f88276f9fec889a9be75a2bae4",
    "11bc88d09b5bdfe03eb5e43210df29f2fc5c94ca69222777ed57e2efb7a3f1a17994ac0ef94f617655c28c289196f4f6",
    "0b145c930c478565047fb6e57fb161b51d1cba42ecbe1702bdf4b69eb8709f1a9d37fbd5ac3442ab68936b1fd4166ff5",
    "00e0a1be145a1d523cca6945fb0af84accf63a61f3680553fccdf7887c57d7d15a59d1a6e889b73fdebebc178365c359",
    "12ed78e22b09646f22bf39e534fe67baccde4f7094dcf85d23c34242888999e436a344ff57e59e9182776854160422c5",
    "1564bfce4ea57bf2f29942d3a96c275c1f7b66fb50e78d1e545e49d18472640348b44d746316f7aeb1cbc07d97db1484",
    "0d792b06599c11fb14fd7b4e4f02f754c42da8f828d7465bc3caed874d6a1a475e9a35d3e1f1e10b2fcd3fc9b8cbc0d5",
    "1194e824f6d21470fada2c9d5099fe11df325b396d8d3021223ee693a4182f66d10116060f63377fe6f366dd8fa86c8d",
    "041effa1d436d7d826ee942881cbbbede7ea99bebd73fd9794b7987b9041e8c97580f6f7bce20c79b8ce2ffd15dd63b6",
};

TEST(Pairing, KnownAnswerFromNobleGenerators) {
  Fp12 e = pairing(ec::kG1Generator, ec::kG2Generator);
  EXPECT_EQ(e, from_hex_coefficients(kNobleGeneratorPairing));
}

TEST(Pairing, KnownAnswerFromNobleScaledPoints) {
  G1Affine p = g1_mul(Fr::from_u64(0x1234567));
  G2Affine q = g2_mul(Fr::from_u64(0x89abcdef));
  EXPECT_EQ(pairing(p, q), from_hex_coefficients(kNobleScaledPairing));
}

TEST(Pairing, Bilinear) {
  std::mt19937_64 rng(21);
  const Fp12 base = pairing(ec::kG1Generator, ec::kG2Generator);
  for (int i = 0; i < 2; ++i) {
    Fr a = Fr::random(rng), b = Fr::random(rng);
    G1Affine ap = g1_mul(a);
    G2Affine bq = g2_mul(b);
    EXPECT_EQ(pairing(ap, bq), base.pow((a * b).to_int()));
    // Moving the scalar across: e(aP, bQ) = e(abP, Q) = e(P, abQ).
    EXPECT_EQ(pairing(ap, bq), pairing(g1_mul(a * b), ec::kG2Generator));
    EXPECT_EQ(pairing(ap, bq), pairing(ec::kG1Generator, g2_mul(a * b)));
  }
  // Additivity in each argument: e(P1 + P2, Q) = e(P1, Q) e(P2, Q).
  Fr s = Fr::random(rng), t = Fr::random(rng);
  G2Affine q = g2_mul(Fr::random(rng));
  EXPECT_EQ(pairing(g1_mul(s + t), q), pairing(g1_mul(s), q) * pairing(g1_mul(t), q));
}

TEST(Pairing, NonDegenerateAndOfOrderR) {
  Fp12 e = pairing(ec::kG1Generator, ec::kG2Generator);
  EXPECT_FALSE(e.is_one());
  EXPECT_TRUE(e.pow(Fr::kModulus).is_one());
  // The value is unitary (in the cyclotomic subgroup): e * conj(e) = 1.
  EXPECT_EQ(e * e.conjugate(), Fp12::one());
  // e(-P, Q) = e(P, Q)^-1.
  EXPECT_EQ(pairing(ec::neg(ec::kG1Generator), ec::kG2Generator), e.conjugate());
  EXPECT_EQ(pairing(ec::kG1Generator, ec::neg(ec::kG2Generator)), e.conjugate());
}

TEST(Pairing, IdentityContributesOne) {
  EXPECT_TRUE(pairing(G1Affine::identity(), ec::kG2Generator).is_one());
  EXPECT_TRUE(pairing(ec::kG1Generator, G2Affine::identity()).is_one());
  EXPECT_TRUE(pairing(G1Affine::identity(), G2Affine::identity()).is_one());
  EXPECT_TRUE(miller_loop(std::span<const G1G2>()).is_one());
  EXPECT_TRUE(pairing_product_is_one(std::span<const G1G2>()));
  // Identity pairs inside a batch change nothing.
  const G1G2 with[] = {{G1Affine::identity(), ec::kG2Generator},
                       {ec::kG1Generator, ec::kG2Generator},
                       {ec::kG1Generator, G2Affine::identity()}};
  const G1G2 without[] = {{ec::kG1Generator, ec::kG2Generator}};
  EXPECT_EQ(miller_loop(with), miller_loop(without));
  EXPECT_TRUE(prepare(G2Affine::identity()).is_identity());
}

TEST(Pairing, MultiPairingIsProductOfPairings) {
  std::mt19937_64 rng(22);
  std::vector<G1G2> pairs;
  Fp12 product = Fp12::one();
  for (int i = 0; i < 3; ++i) {
    pairs.emplace_back(g1_mul(Fr::random(rng)), g2_mul(Fr::random(rng)));
    product *= pairing(pairs.back().first, pairs.back().second);
  }
  EXPECT_EQ(final_exponentiation(miller_loop(pairs)), product);
}

TEST(Pairing, ProductIsOneDetectsBalancedAndUnbalancedProducts) {
  std::mt19937_64 rng(23);
  Fr a = Fr::random(rng), b = Fr::random(rng);
  // e(aP, bQ) e(-abP, Q) = 1.
  const G1G2 balanced[] = {{g1_mul(a), g2_mul(b)}, {ec::neg(g1_mul(a * b)), ec::kG2Generator}};
  EXPECT_TRUE(pairing_product_is_one(balanced));
  const G1G2 unbalanced[] = {{g1_mul(a), g2_mul(b)}, {ec::neg(g1_mul(a * b + Fr::one())), ec::kG2Generator}};
  EXPECT_FALSE(pairing_product_is_one(unbalanced));
}

TEST(Pairing, PreparedPathEqualsDirectPath) {
  std::mt19937_64 rng(24);
  G1Affine p1 = g1_mul(Fr::random(rng)), p2 = g1_mul(Fr::random(rng));
  G2Affine q1 = g2_mul(Fr::random(rng)), q2 = g2_mul(Fr::random(rng));
  const G2Prepared pq1 = prepare(q1), pq2 = prepare(q2), pid = prepare(G2Affine::identity());
  const G1G2 direct[] = {{p1, q1}, {p2, q2}};
  const PreparedTerm prepared[] = {{p1, pq1}, {p2, pq2}, {p1, pid}, {G1Affine::identity(), pq1}};
  // Same Miller loop value, not just the same pairing.
  EXPECT_EQ(miller_loop(prepared), miller_loop(direct));
  // A Groth16-shaped check: e(A, B) e(-A, B) with B prepared once and reused.
  const PreparedTerm cancel[] = {{p1, pq1}, {ec::neg(p1), pq1}};
  EXPECT_TRUE(pairing_product_is_one(cancel));
  const PreparedTerm no_cancel[] = {{p1, pq1}, {ec::neg(p2), pq1}};
  EXPECT_FALSE(pairing_product_is_one(no_cancel));
}

// ---- The exact exponent of final_exponentiation ----------------------------

constexpr std::size_t kWide = 24;  // p^4 has 1524 bits
using Wide = BigInt<kWide>;

template <std::size_t N>
Wide widen(const BigInt<N>& a) {
  Wide r{};
  for (std::size_t i = 0; i < N; ++i) r.limb[i] = a.limb[i];
  return r;
}

Wide mul_wide(const Wide& a, const Wide& b) {
  Wide r{};
  for (std::size_t i = 0; i < kWide; ++i) {
    ff::u64 carry = 0;
    for (std::size_t j = 0; i + j < kWide; ++j) {
      ff::u128 t = ff::u128(a.limb[i]) * b.limb[j] + r.limb[i + j] + carry;
      r.limb[i + j] = ff::u64(t);
      carry = ff::u64(t >> 64);
    }
  }
  return r;
}

// Schoolbook binary long division: n = q d + rem.
void divmod_wide(const Wide& n, const Wide& d, Wide& q, Wide& rem) {
  q = Wide{};
  rem = Wide{};
  for (std::size_t i = n.bit_length(); i-- > 0;) {
    // rem = 2 rem + bit
    for (std::size_t k = kWide; k-- > 1;) rem.limb[k] = (rem.limb[k] << 1) | (rem.limb[k - 1] >> 63);
    rem.limb[0] = (rem.limb[0] << 1) | ff::u64(n.bit(i));
    if (!ff::less_than(rem, d)) {
      ff::sub_with_borrow(rem, rem, d);
      q.limb[i / 64] |= ff::u64{1} << (i % 64);
    }
  }
}

TEST(Pairing, FinalExponentiationIsThreeTimesTheReducedTatePower) {
  // Lambda = (p^4 - p^2 + 1)/r, exactly (Phi_12(p) is divisible by r).
  const Wide p = widen(Fp::kModulus);
  const Wide p2 = mul_wide(p, p);
  Wide phi12 = mul_wide(p2, p2);
  ff::sub_with_borrow(phi12, phi12, p2);
  phi12 = ff::add_small(phi12, 1);
  Wide lambda, rem;
  divmod_wide(phi12, widen(Fr::kModulus), lambda, rem);
  ASSERT_TRUE(rem.is_zero());
  Wide three_lambda{};
  ff::add_with_carry(three_lambda, lambda, lambda);
  ff::add_with_carry(three_lambda, three_lambda, lambda);

  std::mt19937_64 rng(25);
  Fp12 f = Fp12::random(rng);
  // Easy part by definition: f^(p^6 - 1) = conj(f)/f, then ^(p^2 + 1).
  Fp12 g = f.conjugate() * f.inverse();
  g = g.pow(Fp::kModulus).pow(Fp::kModulus) * g;
  EXPECT_EQ(final_exponentiation(f), g.pow(three_lambda));
}

// ---- Timing (printed, not asserted) -----------------------------------------

TEST(PairingTiming, PrintsPerOperationTimes) {
  using Clock = std::chrono::steady_clock;
  constexpr int kIters = 20;
  const G1Affine p = ec::kG1Generator;
  const G2Affine q = ec::kG2Generator;
  const G1G2 one_pair[] = {{p, q}};
  const G2Prepared pq = prepare(q);
  const PreparedTerm groth16_shape[] = {{p, pq}, {p, pq}, {p, pq}};
  Fp12 sink = Fp12::one();
  auto time_us = [&](auto&& fn) {
    auto t0 = Clock::now();
    for (int i = 0; i < kIters; ++i) fn();
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kIters;
  };
  double ml_us = time_us([&] { sink *= miller_loop(one_pair); });
  double fe_us = time_us([&] { sink = final_exponentiation(sink); });
  double prep_us = time_us([&] { sink.c0.c0 += prepare(q).lines()[0].c0; });
  double pairing_us = time_us([&] { sink *= pairing(p, q); });
  double verify_us = time_us([&] { sink *= final_exponentiation(miller_loop(groth16_shape)); });
  std::printf(
      "miller_loop(1 pair) %.0f us, prepare(G2) %.0f us, final_exponentiation %.0f us,\n"
      "pairing %.0f us, 3 prepared Miller loops + final exp %.0f us\n",
      ml_us, prep_us, fe_us, pairing_us, verify_us);
  EXPECT_FALSE(sink.is_zero());
}

}  // namespace
}  // namespace cuzk::pairing
