#include "groth16/zkey.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "ec/curve.hpp"
#include "ec/subgroup.hpp"
#include "msm/msm.hpp"

namespace cuzk::groth16 {

using ec::G1Affine;
using ec::G2Affine;
using ff::Fp;
using ff::Fr;

std::string_view to_string(ZkeyErrorKind kind) {
  switch (kind) {
    case ZkeyErrorKind::kIo:
      return "io";
    case ZkeyErrorKind::kBadMagic:
      return "bad-magic";
    case ZkeyErrorKind::kUnsupported:
      return "unsupported";
    case ZkeyErrorKind::kTruncated:
      return "truncated";
    case ZkeyErrorKind::kMissingSection:
      return "missing-section";
    case ZkeyErrorKind::kMalformed:
      return "malformed";
    case ZkeyErrorKind::kWrongWitness:
      return "wrong-witness";
  }
  return "unknown";
}

VerifyingKey Zkey::verifying_key() const {
  return VerifyingKey{alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic};
}

namespace {

constexpr std::size_t kG1Bytes = 96, kG2Bytes = 192;

// A bounds-checked little-endian cursor over one section.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> b, std::string what) : b_(b), what_(std::move(what)) {}
  std::span<const std::uint8_t> take(std::size_t n) {
    if (n > b_.size() - pos_) {
      throw ZkeyError(ZkeyErrorKind::kTruncated, what_ + ": needs " + std::to_string(n) + " more bytes");
    }
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::uint32_t u32() {
    auto s = take(4);
    return std::uint32_t(s[0]) | std::uint32_t(s[1]) << 8 | std::uint32_t(s[2]) << 16 | std::uint32_t(s[3]) << 24;
  }
  std::uint64_t u64() {
    std::uint64_t lo = u32();
    return lo | std::uint64_t(u32()) << 32;
  }
  std::size_t remaining() const { return b_.size() - pos_; }

 private:
  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
  std::string what_;
};

template <std::size_t N>
ff::BigInt<N> le_int(std::span<const std::uint8_t> s) {
  ff::BigInt<N> x{};
  for (std::size_t i = 0; i < N * 8; ++i) x.limb[i / 8] |= std::uint64_t(s[i]) << (8 * (i % 8));
  return x;
}

// A coordinate stored as Montgomery limbs (x * 2^384 mod q): exactly our Fp's raw form.
Fp mont_fp(std::span<const std::uint8_t> s, const std::string& what) {
  auto x = le_int<6>(s);
  if (!ff::less_than(x, Fp::kModulus)) throw ZkeyError(ZkeyErrorKind::kMalformed, what + ": coordinate >= q");
  return Fp::from_raw_mont(x);
}

bool all_zero(std::span<const std::uint8_t> s) {
  for (auto b : s) {
    if (b) return false;
  }
  return true;
}

G1Affine g1_at(std::span<const std::uint8_t> s, const std::string& what) {
  if (all_zero(s)) return G1Affine::identity();
  G1Affine p{mont_fp(s.subspan(0, 48), what), mont_fp(s.subspan(48, 48), what), false};
  if (!ec::is_on_curve(p)) throw ZkeyError(ZkeyErrorKind::kMalformed, what + ": G1 point not on the curve");
  return p;
}

G2Affine g2_at(std::span<const std::uint8_t> s, const std::string& what) {
  if (all_zero(s)) return G2Affine::identity();
  G2Affine p{{mont_fp(s.subspan(0, 48), what), mont_fp(s.subspan(48, 48), what)},
             {mont_fp(s.subspan(96, 48), what), mont_fp(s.subspan(144, 48), what)},
             false};
  if (!ec::is_on_curve(p)) throw ZkeyError(ZkeyErrorKind::kMalformed, what + ": G2 point not on the curve");
  return p;
}

template <class Point>
std::vector<Point> points(std::span<const std::uint8_t> sec, std::size_t n, const char* name, ThreadPool& pool) {
  constexpr std::size_t kSize = std::is_same_v<Point, G1Affine> ? kG1Bytes : kG2Bytes;
  if (sec.size() != n * kSize) {
    throw ZkeyError(ZkeyErrorKind::kMalformed, std::string(name) + " section holds " + std::to_string(sec.size()) +
                                                   " bytes, expected " + std::to_string(n * kSize));
  }
  std::vector<Point> out(n);
  pool.parallel_for(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::string what = std::string(name) + "[" + std::to_string(i) + "]";
      if constexpr (kSize == kG1Bytes)
        out[i] = g1_at(sec.subspan(i * kSize, kSize), what);
      else
        out[i] = g2_at(sec.subspan(i * kSize, kSize), what);
    }
  });
  return out;
}

std::vector<std::uint8_t> slurp(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw ZkeyError(ZkeyErrorKind::kIo, "cannot open " + path.string());
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw ZkeyError(ZkeyErrorKind::kIo, "cannot stat " + path.string());
  std::vector<std::uint8_t> bytes(size);
  if (std::fread(bytes.data(), 1, size, f.get()) != size) throw ZkeyError(ZkeyErrorKind::kIo, "short read");
  return bytes;
}

// ffjavascript's roots: w[32] = 5^((r-1)/2^32), w[i] = w[i+1]^2.
Fr snarkjs_root(unsigned log_n) {
  Fr w = Fr::from_u64(5).pow(Fr::kTrace);
  for (unsigned i = log_n; i < 32; ++i) w = w.square();
  return w;
}

// In-place radix-2 DIT NTT over a given root (natural order in and out).
void ntt_with_root(std::span<Fr> a, const Fr& root, ThreadPool& pool) {
  const std::size_t n = a.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (std::size_t len = 2; len <= n; len <<= 1) {
    Fr wlen = root;
    for (std::size_t k = len; k < n; k <<= 1) wlen = wlen.square();  // order len
    std::vector<Fr> tw(len / 2);
    Fr w = Fr::one();
    for (auto& t : tw) {
      t = w;
      w *= wlen;
    }
    pool.parallel_for(n / len, [&](std::size_t b, std::size_t e) {
      for (std::size_t blk = b; blk < e; ++blk) {
        Fr* p = a.data() + blk * len;
        for (std::size_t k = 0; k < len / 2; ++k) {
          Fr u = p[k], v = p[k + len / 2] * tw[k];
          p[k] = u + v;
          p[k + len / 2] = u - v;
        }
      }
    });
  }
}

// Values at omega_n^i -> values at omega_2n^(2j+1) (snarkjs' odd coset).
void to_odd_coset(std::vector<Fr>& v, unsigned log_n, ThreadPool& pool) {
  const std::size_t n = v.size();
  const Fr w = snarkjs_root(log_n);
  ntt_with_root(v, w.inverse(), pool);
  const Fr n_inv = Fr::from_u64(n).inverse();
  const Fr shift = snarkjs_root(log_n + 1);
  pool.parallel_for(n, [&](std::size_t b, std::size_t e) {
    Fr s = shift.pow(std::uint64_t(b)) * n_inv;
    for (std::size_t i = b; i < e; ++i) {
      v[i] *= s;
      s *= shift;
    }
  });
  ntt_with_root(v, w, pool);
}

std::vector<ff::BigInt<4>> to_scalars(std::span<const Fr> xs) {
  std::vector<ff::BigInt<4>> out(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) out[i] = xs[i].to_int();
  return out;
}

}  // namespace

Zkey read_zkey(const std::filesystem::path& path, ThreadPool& pool) {
  const std::vector<std::uint8_t> bytes = slurp(path);
  Cursor top(bytes, "zkey header");
  auto magic = top.take(4);
  if (std::memcmp(magic.data(), "zkey", 4) != 0) throw ZkeyError(ZkeyErrorKind::kBadMagic, path.string());
  top.u32();  // version
  const std::uint32_t n_sections = top.u32();
  std::map<std::uint32_t, std::span<const std::uint8_t>> sec;
  for (std::uint32_t i = 0; i < n_sections; ++i) {
    std::uint32_t type = top.u32();
    std::uint64_t size = top.u64();
    if (size > top.remaining()) throw ZkeyError(ZkeyErrorKind::kTruncated, "section " + std::to_string(type));
    if (!sec.emplace(type, top.take(std::size_t(size))).second) {
      throw ZkeyError(ZkeyErrorKind::kMalformed, "duplicate section " + std::to_string(type));
    }
  }
  if (top.remaining() != 0) {
    throw ZkeyError(ZkeyErrorKind::kMalformed, std::to_string(top.remaining()) + " bytes after the last section");
  }
  auto need = [&](std::uint32_t t) {
    auto it = sec.find(t);
    if (it == sec.end()) throw ZkeyError(ZkeyErrorKind::kMissingSection, "section " + std::to_string(t));
    return it->second;
  };
  Cursor proto(need(1), "protocol");
  if (proto.u32() != 1) throw ZkeyError(ZkeyErrorKind::kUnsupported, "not a Groth16 zkey");
  if (proto.remaining() != 0) throw ZkeyError(ZkeyErrorKind::kMalformed, "protocol section has trailing bytes");

  Zkey z;
  Cursor h(need(2), "groth16 header");
  if (h.u32() != 48) throw ZkeyError(ZkeyErrorKind::kUnsupported, "base field is not 48 bytes");
  if (le_int<6>(h.take(48)) != Fp::kModulus) throw ZkeyError(ZkeyErrorKind::kUnsupported, "q is not BLS12-381's");
  if (h.u32() != 32) throw ZkeyError(ZkeyErrorKind::kUnsupported, "scalar field is not 32 bytes");
  if (le_int<4>(h.take(32)) != Fr::kModulus) throw ZkeyError(ZkeyErrorKind::kUnsupported, "r is not BLS12-381's");
  z.n_vars = h.u32();
  z.n_public = h.u32();
  z.domain_size = h.u32();
  if (z.domain_size == 0 || (z.domain_size & (z.domain_size - 1)) != 0 || z.domain_size > (1u << 28) ||
      z.n_public >= z.n_vars) {
    throw ZkeyError(ZkeyErrorKind::kMalformed, "bad sizes in the header");
  }
  z.alpha_g1 = g1_at(h.take(kG1Bytes), "alpha_1");
  z.beta_g1 = g1_at(h.take(kG1Bytes), "beta_1");
  z.beta_g2 = g2_at(h.take(kG2Bytes), "beta_2");
  z.gamma_g2 = g2_at(h.take(kG2Bytes), "gamma_2");
  z.delta_g1 = g1_at(h.take(kG1Bytes), "delta_1");
  z.delta_g2 = g2_at(h.take(kG2Bytes), "delta_2");
  if (h.remaining() != 0) throw ZkeyError(ZkeyErrorKind::kMalformed, "groth16 header has trailing bytes");

  z.ic = points<G1Affine>(need(3), z.n_public + 1, "IC", pool);
  // The verifying key's points are few: check their subgroup here (a proof
  // is checked under them). The proving key's are not checked (cost); a bad
  // one yields a proof that fails that check.
  auto vk_subgroup = [](const auto& p, const std::string& what) {
    if (!p.infinity && !ec::in_subgroup(p)) {
      throw ZkeyError(ZkeyErrorKind::kMalformed, what + ": point not in the prime-order subgroup");
    }
  };
  vk_subgroup(z.alpha_g1, "alpha_1");
  vk_subgroup(z.beta_g1, "beta_1");
  vk_subgroup(z.beta_g2, "beta_2");
  vk_subgroup(z.gamma_g2, "gamma_2");
  vk_subgroup(z.delta_g1, "delta_1");
  vk_subgroup(z.delta_g2, "delta_2");
  for (std::size_t i = 0; i < z.ic.size(); ++i) vk_subgroup(z.ic[i], "IC[" + std::to_string(i) + "]");
  z.a = points<G1Affine>(need(5), z.n_vars, "A", pool);
  z.b_g1 = points<G1Affine>(need(6), z.n_vars, "B1", pool);
  z.b_g2 = points<G2Affine>(need(7), z.n_vars, "B2", pool);
  z.c = points<G1Affine>(need(8), z.n_vars - z.n_public - 1, "C", pool);
  z.h = points<G1Affine>(need(9), z.domain_size, "H", pool);

  Cursor cs(need(4), "coefficients");
  const std::uint32_t n_coef = cs.u32();
  if (std::uint64_t(n_coef) * 44 != cs.remaining()) throw ZkeyError(ZkeyErrorKind::kMalformed, "coefficient count");
  z.coefs.resize(n_coef);
  const Fr r_inv_raw = Fr::from_raw_mont(ff::from_u64<4>(1));  // multiplying by it divides by R
  for (auto& c : z.coefs) {
    c.matrix = cs.u32();
    c.row = cs.u32();
    c.wire = cs.u32();
    auto stored = le_int<4>(cs.take(32));  // v * R^2 mod r
    if (c.matrix > 1 || c.row >= z.domain_size || c.wire >= z.n_vars || !ff::less_than(stored, Fr::kModulus)) {
      throw ZkeyError(ZkeyErrorKind::kMalformed, "coefficient out of range");
    }
    c.value = Fr::from_raw_mont(stored) * r_inv_raw;
  }
  return z;
}

Proof prove_zkey(const Zkey& z, std::span<const Fr> w, const Blinding& rs, ThreadPool& pool) {
  if (w.size() != z.n_vars) {
    throw ZkeyError(ZkeyErrorKind::kWrongWitness,
                    "witness has " + std::to_string(w.size()) + " values, the zkey has " + std::to_string(z.n_vars));
  }
  const std::size_t n = z.domain_size;
  unsigned log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;
  std::vector<Fr> a(n, Fr::zero()), b(n, Fr::zero()), c(n);
  for (const auto& co : z.coefs) (co.matrix == 0 ? a : b)[co.row] += co.value * w[co.wire];
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i] * b[i];
  to_odd_coset(a, log_n, pool);
  to_odd_coset(b, log_n, pool);
  to_odd_coset(c, log_n, pool);
  for (std::size_t i = 0; i < n; ++i) a[i] = a[i] * b[i] - c[i];

  const auto ws = to_scalars(w);
  const auto ps = to_scalars(a);
  std::span<const ff::BigInt<4>> priv(ws.data() + z.n_public + 1, ws.size() - z.n_public - 1);
  ec::G1Jacobian pi_a = msm::msm(std::span<const G1Affine>(z.a), ws, pool);
  ec::G1Jacobian b1 = msm::msm(std::span<const G1Affine>(z.b_g1), ws, pool);
  ec::G2Jacobian pi_b = msm::msm(std::span<const G2Affine>(z.b_g2), ws, pool);
  ec::G1Jacobian pi_c =
      ec::add(msm::msm(std::span<const G1Affine>(z.c), priv, pool), msm::msm(std::span<const G1Affine>(z.h), ps, pool));

  pi_a = ec::add(ec::add_mixed(pi_a, z.alpha_g1), ec::mul_ct(z.delta_g1, rs.r));
  pi_b = ec::add(ec::add_mixed(pi_b, z.beta_g2), ec::mul_ct(z.delta_g2, rs.s));
  b1 = ec::add(ec::add_mixed(b1, z.beta_g1), ec::mul_ct(z.delta_g1, rs.s));
  pi_c = ec::add(pi_c, ec::mul_ct(pi_a, rs.s));
  pi_c = ec::add(pi_c, ec::mul_ct(b1, rs.r));
  pi_c = ec::add(pi_c, ec::neg(ec::mul_ct(z.delta_g1, rs.r * rs.s)));
  return Proof{ec::to_affine(pi_a), ec::to_affine(pi_b), ec::to_affine(pi_c)};
}

}  // namespace cuzk::groth16
