#include "circuits/native/poseidon.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits::native {

namespace {

[[noreturn]] void poseidon_abort(const char* what) {
  std::fprintf(stderr, "poseidon: %s\n", what);
  std::abort();
}

// x^5: the Poseidon S-box for BLS12-381 Fr (gcd(5, r - 1) = 1).
inline Fr pow5(const Fr& x) {
  Fr x2 = x.square();
  return x2.square() * x;
}

// Grain LFSR in self-shrinking mode (Poseidon paper, appendix F):
// b_{i+80} = b_{i+62} ^ b_{i+51} ^ b_{i+38} ^ b_{i+23} ^ b_{i+13} ^ b_i.
class Grain {
 public:
  explicit Grain(const std::array<bool, 80>& init) : bits_(init) {
    for (int i = 0; i < 160; ++i) step();  // warm-up bits are discarded
  }

  // Self-shrinking: draw pairs (a, b); output b when a = 1, else drop both.
  bool next_bit() {
    while (!step()) step();
    return step();
  }

 private:
  bool at(std::size_t k) const { return bits_[(head_ + k) % 80]; }
  bool step() {
    bool nb = at(62) ^ at(51) ^ at(38) ^ at(23) ^ at(13) ^ at(0);
    bits_[head_] = nb;  // b_i leaves the window, b_{i+80} takes its slot
    head_ = (head_ + 1) % 80;
    return nb;
  }

  std::array<bool, 80> bits_;
  std::size_t head_ = 0;
};

// Writes the `width` low bits of `value` MSB first.
void push_bits(std::array<bool, 80>& out, std::size_t& pos, unsigned width, unsigned value) {
  for (unsigned i = width; i-- > 0;) out[pos++] = (value >> i) & 1u;
}

}  // namespace

FrMatrix FrMatrix::identity(std::size_t size) {
  FrMatrix m(size);
  for (std::size_t i = 0; i < size; ++i) m.at(i, i) = Fr::one();
  return m;
}

FrMatrix mat_mul(const FrMatrix& a, const FrMatrix& b) {
  FrMatrix r(a.n);
  for (std::size_t i = 0; i < a.n; ++i)
    for (std::size_t j = 0; j < a.n; ++j) {
      Fr acc = Fr::zero();
      for (std::size_t k = 0; k < a.n; ++k) acc += a.at(i, k) * b.at(k, j);
      r.at(i, j) = acc;
    }
  return r;
}

FrMatrix transpose(const FrMatrix& m) {
  FrMatrix r(m.n);
  for (std::size_t i = 0; i < m.n; ++i)
    for (std::size_t j = 0; j < m.n; ++j) r.at(j, i) = m.at(i, j);
  return r;
}

FrMatrix invert(const FrMatrix& m) {
  const std::size_t n = m.n;
  FrMatrix a = m;
  FrMatrix inv = FrMatrix::identity(n);
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t piv = col;
    while (piv < n && a.at(piv, col).is_zero()) ++piv;
    if (piv == n) poseidon_abort("singular matrix");
    if (piv != col) {
      for (std::size_t j = 0; j < n; ++j) {
        std::swap(a.at(piv, j), a.at(col, j));
        std::swap(inv.at(piv, j), inv.at(col, j));
      }
    }
    Fr s = a.at(col, col).inverse();
    for (std::size_t j = 0; j < n; ++j) {
      a.at(col, j) *= s;
      inv.at(col, j) *= s;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (i == col || a.at(i, col).is_zero()) continue;
      Fr f = a.at(i, col);
      for (std::size_t j = 0; j < n; ++j) {
        a.at(i, j) -= f * a.at(col, j);
        inv.at(i, j) -= f * inv.at(col, j);
      }
    }
  }
  return inv;
}

FrMatrix minor(const FrMatrix& m, std::size_t i, std::size_t j) {
  FrMatrix r(m.n - 1);
  for (std::size_t a = 0, ra = 0; a < m.n; ++a) {
    if (a == i) continue;
    for (std::size_t b = 0, rb = 0; b < m.n; ++b) {
      if (b == j) continue;
      r.at(ra, rb++) = m.at(a, b);
    }
    ++ra;
  }
  return r;
}

std::vector<Fr> apply_left(const FrMatrix& m, std::span<const Fr> x) {
  std::vector<Fr> r(m.n, Fr::zero());
  for (std::size_t i = 0; i < m.n; ++i)
    for (std::size_t j = 0; j < m.n; ++j) r[i] += m.at(i, j) * x[j];
  return r;
}

std::vector<Fr> grain_round_constants(unsigned field, unsigned sbox, unsigned field_bits, unsigned t, unsigned rf,
                                      unsigned rp) {
  // 80-bit seed: field (2) | sbox (4) | n (12) | t (12) | RF (10) | RP (10) | 30 ones.
  std::array<bool, 80> init{};
  std::size_t pos = 0;
  push_bits(init, pos, 2, field);
  push_bits(init, pos, 4, sbox);
  push_bits(init, pos, 12, field_bits);
  push_bits(init, pos, 12, t);
  push_bits(init, pos, 10, rf);
  push_bits(init, pos, 10, rp);
  while (pos < 80) init[pos++] = true;
  Grain grain(init);

  const std::size_t count = std::size_t(rf + rp) * t;
  std::vector<Fr> out;
  out.reserve(count);
  while (out.size() < count) {
    // A candidate is the next `field_bits` stream bits read as a big-endian
    // integer; values >= r are rejected and the next candidate is drawn.
    ff::BigInt<4> x{};
    for (unsigned i = field_bits; i-- > 0;) {
      if (grain.next_bit()) x.limb[i / 64] |= ff::u64{1} << (i % 64);
    }
    if (ff::less_than(x, Fr::kModulus)) out.push_back(Fr::from_int(x));
  }
  return out;
}

unsigned standard_partial_rounds(std::size_t arity) {
  switch (arity) {
    case 2:
      return 55;
    case 4:
      return 56;
    case 8:
      return 57;
    case 11:
      return 57;
    case 16:
      return 59;
    case 24:
      return 59;
    case 36:
      return 60;
    default:
      return 0;
  }
}

PoseidonConstants PoseidonConstants::merkle_tree(std::size_t arity) {
  if (arity >= 64) poseidon_abort("arity too large for a MerkleTree tag");
  return with_domain_tag(arity, Fr::from_u64((ff::u64{1} << arity) - 1));
}

PoseidonConstants PoseidonConstants::with_domain_tag(std::size_t arity, const Fr& tag) {
  const unsigned rp = standard_partial_rounds(arity);
  if (rp == 0) poseidon_abort("unsupported arity");
  PoseidonConstants c;
  c.arity = arity;
  c.width = arity + 1;
  c.full_rounds = 8;
  c.partial_rounds = rp;
  c.domain_tag = tag;
  const std::size_t t = c.width;
  c.round_constants = grain_round_constants(1, 1, 255, unsigned(t), 8, rp);

  // Cauchy matrix with x_i = i, y_j = t + j: every square submatrix is
  // non-singular because the x's and y's are distinct and x_i + y_j != 0.
  c.mds = FrMatrix(t);
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < t; ++j) c.mds.at(i, j) = Fr::from_u64(i + t + j).inverse();
  c.mds_inv = invert(c.mds);

  // Round constants pushed through the linear layers (neptune preprocessing
  // with every partial round preprocessed). With k_r the constants of round r
  // and H = RF/2:
  //   [k_0] [M^-1 k_1 .. M^-1 k_{H-1}] [M^-1 acc] [p_0 .. p_{RP-1}] [M^-1 k_{H+RP+1} ..]
  // where acc folds the partial-round constants backwards from k_{H+RP}: at
  // each step u = M^-1 acc, p = u[0] is the one scalar the partial round keeps
  // (added after its single S-box), and acc = k_prev + (u with u[0] = 0).
  const std::size_t h = c.half_full_rounds();
  auto rk = [&](std::size_t r) { return std::span<const Fr>(c.round_constants).subspan(r * t, t); };
  auto& crc = c.compressed_round_constants;
  crc.assign(rk(0).begin(), rk(0).end());
  for (std::size_t i = 0; i + 1 < h; ++i) {
    auto inv = apply_left(c.mds_inv, rk(i + 1));
    crc.insert(crc.end(), inv.begin(), inv.end());
  }
  const std::size_t final_round = h + rp;
  std::vector<Fr> acc(rk(final_round).begin(), rk(final_round).end());
  std::vector<Fr> partial_keys;  // produced last-round first
  for (std::size_t i = 0; i < rp; ++i) {
    auto prev = rk(final_round - i - 1);
    auto u = apply_left(c.mds_inv, acc);
    partial_keys.push_back(u[0]);
    u[0] = Fr::zero();
    for (std::size_t k = 0; k < t; ++k) acc[k] = prev[k] + u[k];
  }
  auto head = apply_left(c.mds_inv, acc);
  crc.insert(crc.end(), head.begin(), head.end());
  crc.insert(crc.end(), partial_keys.rbegin(), partial_keys.rend());
  for (std::size_t i = 1; i < h; ++i) {
    auto inv = apply_left(c.mds_inv, rk(i + h + rp));
    crc.insert(crc.end(), inv.begin(), inv.end());
  }
  if (crc.size() != c.full_rounds * t + rp) poseidon_abort("compressed constant count");

  // Sparse factorisation of the partial rounds (neptune factor_to_sparse_matrices
  // on M^T = M): repeatedly split cur = M' M'' with
  //   M'  = [[1, 0], [0, cur_hat]],  M'' = [[cur00, v], [cur_hat^-1 w, I]],
  // where v = cur[0][1..], w = cur[1..][0]; then cur <- M * M'. After RP steps
  // cur is the dense matrix applied at the last first-half full round, and the
  // M'' list (reversed) is applied one per partial round.
  const FrMatrix base = transpose(c.mds);
  FrMatrix cur = base;
  std::vector<SparseMatrix> sparse;
  for (std::size_t k = 0; k < rp; ++k) {
    FrMatrix hat_inv = invert(minor(cur, 0, 0));
    std::vector<Fr> w(t - 1);
    for (std::size_t i = 1; i < t; ++i) w[i - 1] = cur.at(i, 0);
    auto w_hat = apply_left(hat_inv, w);
    SparseMatrix s;
    s.w_hat.push_back(cur.at(0, 0));
    s.w_hat.insert(s.w_hat.end(), w_hat.begin(), w_hat.end());
    for (std::size_t j = 1; j < t; ++j) s.v_rest.push_back(cur.at(0, j));
    sparse.push_back(std::move(s));

    FrMatrix prime(t);
    prime.at(0, 0) = Fr::one();
    for (std::size_t i = 1; i < t; ++i)
      for (std::size_t j = 1; j < t; ++j) prime.at(i, j) = cur.at(i, j);
    cur = mat_mul(base, prime);
  }
  c.pre_sparse_matrix = cur;
  c.sparse_matrices.assign(sparse.rbegin(), sparse.rend());
  return c;
}

const PoseidonConstants& filecoin_poseidon(std::size_t arity) {
  // One immutable table per arity, built on first use.
  switch (arity) {
    case 2: {
      static const auto c = PoseidonConstants::merkle_tree(2);
      return c;
    }
    case 4: {
      static const auto c = PoseidonConstants::merkle_tree(4);
      return c;
    }
    case 8: {
      static const auto c = PoseidonConstants::merkle_tree(8);
      return c;
    }
    case 11: {
      static const auto c = PoseidonConstants::merkle_tree(11);
      return c;
    }
    case 16: {
      static const auto c = PoseidonConstants::merkle_tree(16);
      return c;
    }
    case 24: {
      static const auto c = PoseidonConstants::merkle_tree(24);
      return c;
    }
    case 36: {
      static const auto c = PoseidonConstants::merkle_tree(36);
      return c;
    }
    default:
      poseidon_abort("unsupported arity");
  }
}

Fr poseidon_hash_reference(const PoseidonConstants& c, std::span<const Fr> preimage) {
  if (preimage.size() != c.arity) poseidon_abort("preimage length != arity");
  const std::size_t t = c.width;
  std::vector<Fr> s(t);
  s[0] = c.domain_tag;
  for (std::size_t i = 0; i < c.arity; ++i) s[i + 1] = preimage[i];
  const std::size_t h = c.half_full_rounds();
  const std::size_t rounds = c.full_rounds + c.partial_rounds;
  for (std::size_t r = 0; r < rounds; ++r) {
    const bool full = r < h || r >= h + c.partial_rounds;
    for (std::size_t i = 0; i < t; ++i) s[i] += c.round_constants[r * t + i];
    if (full) {
      for (auto& x : s) x = pow5(x);
    } else {
      s[0] = pow5(s[0]);
    }
    s = apply_left(c.mds, s);
  }
  return s[1];
}

Fr poseidon_hash(const PoseidonConstants& c, std::span<const Fr> preimage) {
  if (preimage.size() != c.arity) poseidon_abort("preimage length != arity");
  const std::size_t t = c.width;
  const std::size_t h = c.half_full_rounds();
  std::array<Fr, 40> s{};
  std::array<Fr, 40> tmp{};
  s[0] = c.domain_tag;
  for (std::size_t i = 0; i < c.arity; ++i) s[i + 1] = preimage[i];
  const Fr* key = c.compressed_round_constants.data();
  for (std::size_t i = 0; i < t; ++i) s[i] += key[i];
  key += t;

  // Vector-matrix product s <- s * m (neptune product_mds_with_matrix); equal
  // to m * s for the symmetric MDS, not for the pre-sparse matrix.
  auto vec_mat = [&](const FrMatrix& m) {
    for (std::size_t j = 0; j < t; ++j) {
      Fr acc = Fr::zero();
      for (std::size_t i = 0; i < t; ++i) acc += s[i] * m.at(i, j);
      tmp[j] = acc;
    }
    for (std::size_t j = 0; j < t; ++j) s[j] = tmp[j];
  };
  auto full_round = [&](bool add_keys) {
    for (std::size_t i = 0; i < t; ++i) {
      s[i] = pow5(s[i]);
      if (add_keys) s[i] += key[i];
    }
    if (add_keys) key += t;
  };
  for (std::size_t r = 0; r < h; ++r) {
    full_round(true);
    vec_mat(r + 1 == h ? c.pre_sparse_matrix : c.mds);
  }
  for (std::size_t r = 0; r < c.partial_rounds; ++r) {
    s[0] = pow5(s[0]) + *key++;
    const SparseMatrix& m = c.sparse_matrices[r];
    Fr s0 = s[0];
    Fr acc = Fr::zero();
    for (std::size_t i = 0; i < t; ++i) acc += m.w_hat[i] * s[i];
    for (std::size_t j = 1; j < t; ++j) s[j] += m.v_rest[j - 1] * s0;
    s[0] = acc;
  }
  for (std::size_t r = 0; r < h; ++r) {
    full_round(r + 1 < h);
    vec_mat(c.mds);
  }
  if (key != c.compressed_round_constants.data() + c.compressed_round_constants.size())
    poseidon_abort("compressed constants not fully consumed");
  return s[1];
}

Fr poseidon_hash_md(std::span<const Fr> input) {
  constexpr std::size_t kArity = 36;
  if (input.size() < 2) poseidon_abort("hash_md needs more than one element");
  const PoseidonConstants& c = filecoin_poseidon(kArity);
  Fr acc = input[0];
  std::array<Fr, kArity> pre{};
  for (std::size_t start = 1; start < input.size(); start += kArity - 1) {
    pre.fill(Fr::zero());
    pre[0] = acc;
    const std::size_t n = std::min(kArity - 1, input.size() - start);
    for (std::size_t i = 0; i < n; ++i) pre[i + 1] = input[start + i];
    acc = poseidon_hash(c, pre);
  }
  return acc;
}

Fr poseidon2(const Fr& a, const Fr& b) {
  const std::array<Fr, 2> in{a, b};
  return poseidon_hash(filecoin_poseidon(2), in);
}

}  // namespace cuzk::circuits::native
