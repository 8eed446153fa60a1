// Endomorphisms of BLS12-381's G1 and G2 curves as coordinate maps (no group
// law needed), shared by the GLV/GLS scalar multiplication in curve.hpp and
// the subgroup checks in subgroup.hpp.
//
//   phi(x, y) = (beta x, y) on E(Fp), beta a primitive cube root of unity:
//     acts on G1 as [-x^2] (the other cube root gives [x^2 - 1]).
//   psi = untwist-Frobenius-twist on E'(Fp2): acts on G2 as [p] = [x] (mod r).
// x = -0xd201000000010000 is the curve parameter; r = x^4 - x^2 + 1.
#pragma once

#include <cstdint>

#include "ec/point.hpp"

namespace cuzk::ec {

// |x| for BLS12-381; x itself is negative.
inline constexpr std::uint64_t kBlsXAbs = 0xd201000000010000ull;

// Primitive cube root of unity in Fp: phi(x, y) = (beta x, y) acts on G1 as [-x^2].
inline constexpr Fp kG1Beta =
    Fp::from_hex("5f19672fdf76ce51ba69c6076a0f77eaddb3a93be6f89688de17d813620a00022e01fffffffefffe");

// psi(x, y) = (conj(x) cx, conj(y) cy) with cx = 1/(1+u)^((p-1)/3),
// cy = 1/(1+u)^((p-1)/2) (derivation checked in tests). cx is purely imaginary.
inline constexpr Fp2 kPsiCx = {
    Fp::zero(),
    Fp::from_hex("1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaad")};
inline constexpr Fp2 kPsiCy = {
    Fp::from_hex("135203e60180a68ee2e9c448d77a2cd91c3dedd930b1cf60ef396489f61eb45e304466cf3e67fa0af1ee7b04121bdea2"),
    Fp::from_hex("06af0e0437ff400b6831e36d6bd17ffe48395dabc2d3435e77f76e17009241c5ee67992f72ec05f4c81084fbede3cc09")};
// psi^2(x, y) = (x w, -y) with w = cx conj(cx) = beta^2 in Fp.
inline constexpr Fp kPsi2W =
    Fp::from_hex("1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaac");

// G1 endomorphism phi(x, y) = (beta x, y); on Jacobian coordinates X scales alike.
constexpr G1Jacobian phi(const G1Jacobian& p) { return {p.x * kG1Beta, p.y, p.z}; }

// G2 endomorphism psi; on Jacobian coordinates Z is conjugated too.
constexpr G2Jacobian psi(const G2Jacobian& p) {
  return {p.x.conjugate() * kPsiCx, p.y.conjugate() * kPsiCy, p.z.conjugate()};
}
constexpr G2Jacobian psi2(const G2Jacobian& p) { return {p.x.mul_by_fp(kPsi2W), -p.y, p.z}; }

}  // namespace cuzk::ec
