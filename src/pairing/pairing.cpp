#include "pairing/pairing.hpp"

#include <vector>

namespace cuzk::pairing {

namespace {

using ff::Fp;
using ff::Fp12;
using ff::Fp2;

// Homogeneous projective point (X : Y : Z) = (X/Z, Y/Z) on the twist
// E': y^2 = x^3 + b', b' = 4 xi.
struct G2Homogeneous {
  Fp2 x, y, z;
};

constexpr int kTopBit = 63 - __builtin_clzll(kBlsXAbs);

// T <- 2T and the tangent line at T (Costello-Lange-Naehrig 2010, with X3, Y3,
// Z3 scaled by 4 to avoid halvings). 3 m2 + 6 s2.
//   Tangent slope s = 3X^2/(2YZ); the line (s x_T - y_T) - s xP w^2 + yP w^3
//   times -2YZ^2, divided by Z, with X^3 = Y^2 Z - b' Z^3 (T is on E'):
//     c0 = 3b'Z^2 - Y^2,  cx = 3X^2,  cy = -2YZ.
//   With B = Y^2, C = Z^2, E = 3b'C, F = 3E, H = 2YZ:
//   X3 = 2XY(B - F),  Y3 = (B + F)^2 - 12E^2,  Z3 = 4BH.
LineCoeffs double_step(G2Homogeneous& t) {
  Fp2 b = t.y.square();
  Fp2 c = t.z.square();
  Fp2 xi_c4 = c.mul_by_xi().dbl().dbl();  // 4 xi C = b' C
  Fp2 e = xi_c4.dbl() + xi_c4;            // 3 b' C
  Fp2 f = e.dbl() + e;                    // 9 b' C
  Fp2 h = (t.y + t.z).square() - b - c;   // 2YZ
  Fp2 j = t.x.square();
  Fp2 e2 = e.square();
  Fp2 e2_4 = e2.dbl().dbl();
  LineCoeffs line{e - b, j.dbl() + j, -h};
  t.x = (t.x * t.y).dbl() * (b - f);
  t.y = (b + f).square() - (e2_4.dbl() + e2_4);  // - 12 E^2
  t.z = (b * h).dbl().dbl();
  return line;
}

// T <- T + Q (Q affine) and the line through T and Q. 9 m2 + 2 s2.
//   theta = Y - yQ Z, lambda = X - xQ Z (slope theta/lambda); the line scaled
//   by lambda:  c0 = theta xQ - lambda yQ,  cx = -theta,  cy = lambda.
//   C = theta^2, D = lambda^2, E = lambda D, F = Z C, G = X D, H = E + F - 2G:
//   X3 = lambda H,  Y3 = theta (G - H) - E Y,  Z3 = Z E.
LineCoeffs add_step(G2Homogeneous& t, const ec::G2Affine& q) {
  Fp2 theta = t.y - q.y * t.z;
  Fp2 lambda = t.x - q.x * t.z;
  Fp2 c = theta.square();
  Fp2 d = lambda.square();
  Fp2 e = lambda * d;
  Fp2 f = t.z * c;
  Fp2 g = t.x * d;
  Fp2 h = e + f - g.dbl();
  LineCoeffs line{theta * q.x - lambda * q.y, -theta, lambda};
  t.x = lambda * h;
  t.y = theta * (g - h) - e * t.y;
  t.z = t.z * e;
  return line;
}

// f * l(P) for a prepared line and an affine G1 point.
Fp12 mul_by_line(const Fp12& f, const LineCoeffs& l, const ec::G1Affine& p) {
  return f.mul_by_014(l.c0, l.cx.mul_by_fp(p.x), l.cy.mul_by_fp(p.y));
}

// a^x in the cyclotomic subgroup (x < 0, so the conjugate of a^|x|).
Fp12 cyclotomic_exp_by_x(const Fp12& a) {
  Fp12 r = a.cyclotomic_pow(kBlsXAbs);
  return kBlsXIsNegative ? r.conjugate() : r;
}

}  // namespace

G2Prepared prepare(const ec::G2Affine& q) {
  G2Prepared out;
  if (q.infinity) return out;
  out.identity_ = false;
  G2Homogeneous t{q.x, q.y, Fp2::one()};
  std::size_t n = 0;
  for (int i = kTopBit - 1; i >= 0; --i) {
    out.lines_[n++] = double_step(t);
    if ((kBlsXAbs >> i) & 1) out.lines_[n++] = add_step(t, q);
  }
  return out;
}

Fp12 miller_loop(std::span<const PreparedTerm> terms) {
  // Identity pairs contribute 1; drop them up front.
  std::vector<const PreparedTerm*> live;
  live.reserve(terms.size());
  for (const PreparedTerm& t : terms) {
    if (!t.p.infinity && !t.q.is_identity()) live.push_back(&t);
  }
  Fp12 f = Fp12::one();
  if (live.empty()) return f;
  std::size_t n = 0;
  for (int i = kTopBit - 1; i >= 0; --i) {
    if (i != kTopBit - 1) f = f.square();  // f = 1 on the first step
    for (const PreparedTerm* t : live) f = mul_by_line(f, t->q.lines()[n], t->p);
    ++n;
    if ((kBlsXAbs >> i) & 1) {
      for (const PreparedTerm* t : live) f = mul_by_line(f, t->q.lines()[n], t->p);
      ++n;
    }
  }
  // f_{-|x|} = 1 / (f_{|x|} v_{|x|Q}); the vertical line lies in a subfield
  // and 1/f equals conj(f) after the easy part, so conjugation suffices.
  return kBlsXIsNegative ? f.conjugate() : f;
}

Fp12 miller_loop(std::span<const std::pair<ec::G1Affine, ec::G2Affine>> pairs) {
  // Preparing first and then running the prepared loop costs the same G2
  // arithmetic as interleaving it, and keeps one loop to test.
  std::vector<G2Prepared> prepared;
  prepared.reserve(pairs.size());
  std::vector<PreparedTerm> terms;
  terms.reserve(pairs.size());
  for (const auto& [p, q] : pairs) {
    if (p.infinity || q.infinity) continue;
    prepared.push_back(prepare(q));
    terms.push_back(PreparedTerm{p, prepared.back()});  // no reallocation: reserved
  }
  return miller_loop(std::span<const PreparedTerm>(terms));
}

Fp12 final_exponentiation(const Fp12& f) {
  // Easy part: f^((p^6 - 1)(p^2 + 1)) lands in the cyclotomic subgroup, where
  // inversion is conjugation and Granger-Scott squaring applies.
  Fp12 t0 = f.conjugate() * f.inverse();
  Fp12 t1 = t0.frobenius(2) * t0;

  // Hard part: t1^(3 (p^4 - p^2 + 1)/r) with
  //   3 (p^4 - p^2 + 1)/r = (x-1)^2 (x+p) (x^2+p^2-1) + 3,
  // spelled out as  lambda_0 + lambda_1 p + lambda_2 p^2 + lambda_3 p^3 with
  //   lambda_3 = (x-1)^2,  lambda_2 = lambda_3 x,  lambda_1 = lambda_2 x - lambda_3,
  //   lambda_0 = lambda_1 x + 3.
  Fp12 t2 = cyclotomic_exp_by_x(t1);                           // t1^x
  Fp12 t3 = t1.cyclotomic_square().conjugate() * t2;           // t1^(x-2)
  Fp12 t4 = cyclotomic_exp_by_x(t3);                           // t1^(x^2-2x)
  Fp12 t5 = cyclotomic_exp_by_x(t4);                           // t1^(x^3-2x^2)
  Fp12 t6 = cyclotomic_exp_by_x(t5) * t2.cyclotomic_square();  // t1^(x^4-2x^3+2x)
  Fp12 t7 = cyclotomic_exp_by_x(t6);                           // t1^(x^5-2x^4+2x^2)
  // t1^lambda_3 = t4 t1,  t1^lambda_2 = t5 t2,  t1^lambda_1 = t6 / t1,
  // t1^lambda_0 = t7 / t3 * t1  (= t1^(x^5-2x^4+2x^2-x+3)).
  Fp12 r = (t2 * t5).frobenius(2);
  r *= (t4 * t1).frobenius(3);
  r *= (t6 * t1.conjugate()).frobenius(1);
  r *= t7 * t3.conjugate() * t1;
  return r;
}

Fp12 pairing(const ec::G1Affine& p, const ec::G2Affine& q) {
  const std::pair<ec::G1Affine, ec::G2Affine> one_pair[1] = {{p, q}};
  return final_exponentiation(miller_loop(std::span(one_pair)));
}

bool pairing_product_is_one(std::span<const std::pair<ec::G1Affine, ec::G2Affine>> pairs) {
  return final_exponentiation(miller_loop(pairs)).is_one();
}

bool pairing_product_is_one(std::span<const PreparedTerm> terms) {
  return final_exponentiation(miller_loop(terms)).is_one();
}

}  // namespace cuzk::pairing
