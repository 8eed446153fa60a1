// Point representations of BLS12-381's G1 (over Fp) and G2 (over Fp2).
//
// Curves: G1: y^2 = x^3 + 4 over Fp; G2: y^2 = x^3 + 4(1+u) over Fp2 (the
// M-type sextic twist). Group order r is Fr's modulus.
//
// Affine points carry an explicit infinity flag (x = y = 0 when set), which is
// how the zcash encoding and bellperson think of them. Jacobian (X, Y, Z) means
// x = X/Z^2, y = Y/Z^3; Z = 0 is the identity.
#pragma once

#include "ff/fp2.hpp"

namespace cuzk::ec {

using ff::Fp;
using ff::Fp2;
using ff::Fr;

template <class F>
struct Affine {
  F x{}, y{};
  bool infinity = true;

  static constexpr Affine identity() { return {}; }
  constexpr bool operator==(const Affine& o) const {
    if (infinity || o.infinity) return infinity == o.infinity;
    return x == o.x && y == o.y;
  }
};

template <class F>
struct Jacobian {
  F x{}, y{}, z{};  // z == 0: identity
  static constexpr Jacobian identity() { return {F::one(), F::one(), F::zero()}; }
  constexpr bool is_identity() const { return z.is_zero(); }
};

using G1Affine = Affine<Fp>;
using G2Affine = Affine<Fp2>;
using G1Jacobian = Jacobian<Fp>;
using G2Jacobian = Jacobian<Fp2>;

// Curve coefficient b.
inline constexpr Fp kG1B = Fp::from_u64(4);
inline constexpr Fp2 kG2B = {Fp::from_u64(4), Fp::from_u64(4)};

// Standard generators (the zcash/IETF choice used by blst and bellperson).
inline constexpr G1Affine kG1Generator = {
    Fp::from_hex("17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"),
    Fp::from_hex("08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1"),
    false};
inline constexpr G2Affine kG2Generator = {
    {Fp::from_hex("024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8"),
     Fp::from_hex("13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e")},
    {Fp::from_hex("0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801"),
     Fp::from_hex("0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be")},
    false};

}  // namespace cuzk::ec
