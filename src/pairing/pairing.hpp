// Optimal ate pairing on BLS12-381: e: G1 x G2 -> GT (a subgroup of Fp12^*).
//
//   e(P, Q) = final_exponentiation(miller_loop((P, Q)))
//   miller_loop: f_{x,Q}(P) over the BLS parameter x = -0xd201000000010000,
//                i.e. f_{|x|,Q}(P) conjugated; G2 in homogeneous projective
//                coordinates on the M-type twist y^2 = x^3 + 4(1+u).
//   final_exponentiation: f^(3 (p^12 - 1)/r). The factor 3 comes from the
//                x-chain for the hard part (Hayashida-Hayasaka-Teruya):
//                3 (p^4 - p^2 + 1)/r = (x-1)^2 (x+p) (x^2+p^2-1) + 3.
//                @noble/curves and zcash's bls12_381 use the same exponent,
//                so values compare equal to theirs; since gcd(3, r) = 1 this is
//                still a non-degenerate bilinear pairing.
//
// Inputs must be on their curves and in the order-r subgroups (the caller's
// decoding does that check); the identity is allowed and contributes 1.
// Everything here is variable time: pairings only see public data.
//
// Measured (thread CPU time, g++ 12 -O3, 2-core AMD EPYC build host, shared):
// Miller loop 0.57 ms per pair, prepare(G2) 0.10 ms, final exponentiation
// 0.70 ms, one pairing 1.27 ms, 3 prepared Miller loops + final exp 1.63 ms.
// Fp mul was 28 ns and Fp add 8 ns there; the additions are about half the
// tower's time, so faster Fp add/sub would speed this up directly.
//
// Line functions. A line through points of the twist E', pulled back to E and
// evaluated at P = (xP, yP), is (after scaling by w^3 and by a factor in Fp2,
// both of which the final exponentiation removes)
//   l(P) = c0 + (cx * xP) w^2 + (cy * yP) w^3,   c0, cx, cy in Fp2,
// i.e. an Fp12 element with only the slots 0, 1, 4 set (Fp12::mul_by_014).
// G2Prepared stores (c0, cx, cy) for every step so that a fixed G2 point (the
// Groth16 verifying key's -gamma and -delta) is processed once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "ec/point.hpp"
#include "ff/fp12.hpp"

namespace cuzk::pairing {

// |x| for the BLS12-381 parameter x = -0xd201000000010000 (p and r are
// polynomials in x; the Miller loop and the hard part run over its bits).
inline constexpr std::uint64_t kBlsXAbs = 0xd201000000010000ull;
inline constexpr bool kBlsXIsNegative = true;

// One line function, evaluated later at a G1 point (see the header comment).
struct LineCoeffs {
  ff::Fp2 c0, cx, cy;
};

// One doubling line per bit below the top of |x|, one addition line per set bit below the top.
inline constexpr std::size_t kMillerLineCount =
    std::size_t(63 - __builtin_clzll(kBlsXAbs)) + std::size_t(__builtin_popcountll(kBlsXAbs) - 1);
static_assert(kMillerLineCount == 68);

// Line coefficients of a fixed G2 point, in the order the Miller loop uses them.
// A value type (about 20 KiB, no allocation); the identity prepares to an
// empty object that every Miller loop skips.
class G2Prepared {
 public:
  G2Prepared() = default;
  bool is_identity() const { return identity_; }
  std::span<const LineCoeffs, kMillerLineCount> lines() const { return lines_; }

 private:
  friend G2Prepared prepare(const ec::G2Affine& q);
  std::array<LineCoeffs, kMillerLineCount> lines_{};
  bool identity_ = true;
};

G2Prepared prepare(const ec::G2Affine& q);

// A G1 point with a borrowed prepared G2 point (which must outlive the call).
struct PreparedTerm {
  ec::G1Affine p;
  const G2Prepared& q;
};

// prod_i f_{x,Q_i}(P_i), sharing the Fp12 squarings across pairs. Pairs with an
// identity on either side are skipped; an empty product is 1.
ff::Fp12 miller_loop(std::span<const std::pair<ec::G1Affine, ec::G2Affine>> pairs);
ff::Fp12 miller_loop(std::span<const PreparedTerm> terms);

// f^(3 (p^12 - 1)/r): easy part f^((p^6 - 1)(p^2 + 1)), then the hard part by
// five exponentiations by x in the cyclotomic subgroup.
ff::Fp12 final_exponentiation(const ff::Fp12& f);

ff::Fp12 pairing(const ec::G1Affine& p, const ec::G2Affine& q);

// prod_i e(P_i, Q_i) == 1 with one shared Miller loop and one final exponentiation.
bool pairing_product_is_one(std::span<const std::pair<ec::G1Affine, ec::G2Affine>> pairs);
bool pairing_product_is_one(std::span<const PreparedTerm> terms);

}  // namespace cuzk::pairing
