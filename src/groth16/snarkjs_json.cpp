#include "groth16/snarkjs_json.hpp"

#include <algorithm>

#include "ec/curve.hpp"
#include "ec/subgroup.hpp"
#include "pairing/pairing.hpp"

namespace cuzk::groth16 {

using ec::G1Affine;
using ec::G2Affine;
using ff::Fp;
using ff::Fp2;
using ff::Fr;
using nlohmann::json;
using Int6 = ff::BigInt<6>;

std::string to_decimal(const Int6& x) {
  Int6 v = x;
  std::string s;
  while (!v.is_zero()) {
    // Divide by 10, limb by limb from the top.
    ff::u128 rem = 0;
    for (std::size_t i = 6; i-- > 0;) {
      ff::u128 cur = (rem << 64) | v.limb[i];
      v.limb[i] = std::uint64_t(cur / 10);
      rem = cur % 10;
    }
    s.push_back(char('0' + int(rem)));
  }
  if (s.empty()) s = "0";
  std::reverse(s.begin(), s.end());
  return s;
}

bool parse_number(const std::string& s, Int6& out) {
  Int6 v{};
  if (s.empty()) return false;
  unsigned base = 10;
  std::size_t i = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  for (; i < s.size(); ++i) {
    char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = unsigned(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = unsigned(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F')
      d = unsigned(c - 'A' + 10);
    else
      return false;
    ff::u128 carry = d;
    for (auto& l : v.limb) {
      ff::u128 t = ff::u128(l) * base + carry;
      l = std::uint64_t(t);
      carry = t >> 64;
    }
    if (carry) return false;  // wider than 384 bits
  }
  out = v;
  return true;
}

namespace {

std::string dec(const Fp& x) { return to_decimal(x.to_int()); }

Fp fp_from(const json& j, const char* what) {
  if (!j.is_string()) throw JsonFormatError(std::string(what) + ": expected a decimal string");
  Int6 v;
  if (!parse_number(j.get<std::string>(), v)) throw JsonFormatError(std::string(what) + ": not a number");
  if (!ff::less_than(v, Fp::kModulus)) throw JsonFormatError(std::string(what) + ": value >= q");
  return Fp::from_int(v);
}

Fr fr_from(const json& j, const char* what) {
  if (!j.is_string()) throw JsonFormatError(std::string(what) + ": expected a decimal string");
  Int6 v;
  if (!parse_number(j.get<std::string>(), v)) throw JsonFormatError(std::string(what) + ": not a number");
  ff::BigInt<4> r{};
  for (int i = 0; i < 4; ++i) r.limb[i] = v.limb[i];
  if (v.limb[4] || v.limb[5] || !ff::less_than(r, Fr::kModulus)) {
    throw JsonFormatError(std::string(what) + ": value >= r");
  }
  return Fr::from_int(r);
}

Fp2 fp2_from(const json& j, const char* what) {
  if (!j.is_array() || j.size() != 2) throw JsonFormatError(std::string(what) + ": expected [c0, c1]");
  return {fp_from(j[0], what), fp_from(j[1], what)};
}

json g1_json(const G1Affine& p) {
  if (p.infinity) return json::array({"0", "1", "0"});
  return json::array({dec(p.x), dec(p.y), "1"});
}
json g2_json(const G2Affine& p) {
  if (p.infinity) return json::array({json::array({"0", "0"}), json::array({"1", "0"}), json::array({"0", "0"})});
  return json::array(
      {json::array({dec(p.x.c0), dec(p.x.c1)}), json::array({dec(p.y.c0), dec(p.y.c1)}), json::array({"1", "0"})});
}

// [x, y] or [x, y, z] with Jacobian z.
template <class F, class Parse>
ec::Affine<F> point_from(const json& j, const char* what, Parse parse) {
  if (!j.is_array() || (j.size() != 2 && j.size() != 3)) {
    throw JsonFormatError(std::string(what) + ": expected [x, y, z]");
  }
  ec::Jacobian<F> p{parse(j[0], what), parse(j[1], what), j.size() == 3 ? parse(j[2], what) : F::one()};
  ec::Affine<F> a = ec::to_affine(p);
  if (!a.infinity && !ec::is_on_curve(a)) throw JsonFormatError(std::string(what) + ": point not on the curve");
  if (!a.infinity && !ec::in_subgroup(a)) throw JsonFormatError(std::string(what) + ": point not in the subgroup");
  return a;
}

G1Affine g1_from(const json& j, const char* what) { return point_from<Fp>(j, what, fp_from); }
G2Affine g2_from(const json& j, const char* what) { return point_from<Fp2>(j, what, fp2_from); }

const json& field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw JsonFormatError(std::string("missing \"") + key + "\"");
  return j.at(key);
}

}  // namespace

json proof_to_json(const Proof& p) {
  return {{"pi_a", g1_json(p.a)},
          {"pi_b", g2_json(p.b)},
          {"pi_c", g1_json(p.c)},
          {"protocol", "groth16"},
          {"curve", "bls12381"}};
}

Proof proof_from_json(const json& j) {
  Proof p{g1_from(field(j, "pi_a"), "pi_a"), g2_from(field(j, "pi_b"), "pi_b"), g1_from(field(j, "pi_c"), "pi_c")};
  if (p.a.infinity || p.b.infinity || p.c.infinity) throw JsonFormatError("proof contains the point at infinity");
  return p;
}

json public_to_json(std::span<const Fr> inputs) {
  json out = json::array();
  for (const auto& x : inputs) {
    Int6 v{};
    auto r = x.to_int();
    for (int i = 0; i < 4; ++i) v.limb[i] = r.limb[i];
    out.push_back(to_decimal(v));
  }
  return out;
}

std::vector<Fr> public_from_json(const json& j) {
  if (!j.is_array()) throw JsonFormatError("public inputs: expected an array of decimal strings");
  std::vector<Fr> out;
  for (const auto& x : j) out.push_back(fr_from(x, "public input"));
  return out;
}

json vk_to_json(const VerifyingKey& vk) {
  ff::Fp12 ab = pairing::pairing(vk.alpha_g1, vk.beta_g2);
  // [2][3][2]: Fp12 = c0 + c1 w, Fp6 = c0 + c1 v + c2 v^2, Fp2 = c0 + c1 u.
  json ab_json = json::array();
  for (const ff::Fp6* f6 : {&ab.c0, &ab.c1}) {
    json six = json::array();
    for (const Fp2* f2 : {&f6->c0, &f6->c1, &f6->c2}) six.push_back(json::array({dec(f2->c0), dec(f2->c1)}));
    ab_json.push_back(six);
  }
  json ic = json::array();
  for (const auto& p : vk.ic) ic.push_back(g1_json(p));
  return {{"protocol", "groth16"},
          {"curve", "bls12381"},
          {"nPublic", vk.ic.empty() ? 0 : vk.ic.size() - 1},
          {"vk_alpha_1", g1_json(vk.alpha_g1)},
          {"vk_beta_2", g2_json(vk.beta_g2)},
          {"vk_gamma_2", g2_json(vk.gamma_g2)},
          {"vk_delta_2", g2_json(vk.delta_g2)},
          {"vk_alphabeta_12", ab_json},
          {"IC", ic}};
}

VerifyingKey vk_from_json(const json& j) {
  const json& curve = field(j, "curve");
  if (!curve.is_string() || curve.get<std::string>() != "bls12381") {
    throw JsonFormatError("verification key is not for bls12381");
  }
  VerifyingKey vk;
  vk.alpha_g1 = g1_from(field(j, "vk_alpha_1"), "vk_alpha_1");
  vk.beta_g2 = g2_from(field(j, "vk_beta_2"), "vk_beta_2");
  vk.gamma_g2 = g2_from(field(j, "vk_gamma_2"), "vk_gamma_2");
  vk.delta_g2 = g2_from(field(j, "vk_delta_2"), "vk_delta_2");
  const json& ic = field(j, "IC");
  if (!ic.is_array() || ic.empty()) throw JsonFormatError("IC: expected a non-empty array");
  for (const auto& p : ic) vk.ic.push_back(g1_from(p, "IC"));
  // snarkjs keys carry no beta_1 / delta_1; our verifier does not use them.
  vk.beta_g1 = G1Affine::identity();
  vk.delta_g1 = G1Affine::identity();
  return vk;
}

}  // namespace cuzk::groth16
