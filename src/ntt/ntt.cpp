#include "ntt/ntt.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cuzk::ntt {

namespace {

// A gathered block of columns holds at most 2^14 Fr (512 KiB).
constexpr std::size_t kColumnBufferElems = std::size_t{1} << 14;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "cuzk::ntt: %s\n", what);
  std::abort();
}

// Reverses the low `bits` bits of i.
inline std::size_t bitrev(std::size_t i, unsigned bits) {
  if (bits == 0) return 0;
  std::uint64_t x = i;
  x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
  x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
  x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
  x = __builtin_bswap64(x);
  return std::size_t(x >> (64 - bits));
}

enum class Direction { kForward, kInverse };

// Everything a transform needs from the domain, for one direction.
struct Plan {
  const Domain& domain;
  Direction dir;

  const Fr& root(unsigned l) const { return dir == Direction::kForward ? domain.root(l) : domain.root_inv(l); }
  std::span<const Fr> leaf_table() const {
    return dir == Direction::kForward ? domain.leaf_twiddles() : domain.leaf_twiddles_inv();
  }
};

// ---- leaves: radix-2 in cache ------------------------------------------------

// Decimation in frequency (Gentleman-Sande): natural in, bit-reversed out.
// Stage with half-width h: (u, v) -> (u + v, (u - v) * omega_2h^i).
void leaf_dif(const Plan& plan, Fr* x, unsigned log_len) {
  std::span<const Fr> tw = plan.leaf_table();  // omega_Lmax^t, t < Lmax/2
  const unsigned lmax = plan.domain.leaf_log_size();
  const std::size_t len = std::size_t{1} << log_len;
  for (unsigned s = log_len; s-- > 0;) {
    const std::size_t h = std::size_t{1} << s;
    const std::size_t stride = std::size_t{1} << (lmax - s - 1);  // omega_2h = omega_Lmax^(Lmax/2h)
    for (std::size_t b = 0; b < len; b += 2 * h) {
      Fr* lo = x + b;
      Fr* hi = lo + h;
      {
        Fr u = lo[0], v = hi[0];
        lo[0] = u + v;
        hi[0] = u - v;
      }
      for (std::size_t i = 1; i < h; ++i) {
        Fr u = lo[i], v = hi[i];
        lo[i] = u + v;
        hi[i] = (u - v) * tw[i * stride];
      }
    }
  }
}

// Decimation in time (Cooley-Tukey): bit-reversed in, natural out.
// Stage with half-width h: (u, v) -> (u + v*omega_2h^i, u - v*omega_2h^i).
void leaf_dit(const Plan& plan, Fr* x, unsigned log_len) {
  std::span<const Fr> tw = plan.leaf_table();
  const unsigned lmax = plan.domain.leaf_log_size();
  const std::size_t len = std::size_t{1} << log_len;
  for (unsigned s = 0; s < log_len; ++s) {
    const std::size_t h = std::size_t{1} << s;
    const std::size_t stride = std::size_t{1} << (lmax - s - 1);
    for (std::size_t b = 0; b < len; b += 2 * h) {
      Fr* lo = x + b;
      Fr* hi = lo + h;
      {
        Fr u = lo[0], v = hi[0];
        lo[0] = u + v;
        hi[0] = u - v;
      }
      for (std::size_t i = 1; i < h; ++i) {
        Fr u = lo[i], v = hi[i] * tw[i * stride];
        lo[i] = u + v;
        hi[i] = u - v;
      }
    }
  }
}

// ---- four-step split -----------------------------------------------------------
//
// n = n1 * n2, input index j + n2*m (column j < n2, row m < n1), output index
// k1 + n1*k2:
//   X[k1 + n1 k2] = sum_j omega_n2^(j k2) * omega_n^(j k1) * sum_m x[j + n2 m] omega_n1^(m k1)
// DIF: transform each column (length n1, stride n2), multiply by the twiddle
// omega_n^(j k1), then transform each row (length n2). With bit-reversed
// sub-transforms, X[k1 + n1 k2] lands at bitrev_n1(k1)*n2 + bitrev_n2(k2),
// which is exactly bitrev_n(k1 + n1 k2): the whole result is bit-reversed, in
// place. DIT (the inverse) runs the same steps mirrored: rows, twiddle, columns.

struct Split {
  unsigned log_n1, log_n2;    // columns have length n1, rows length n2
  std::size_t n1, n2, group;  // `group` columns are gathered at a time
};

Split split_of(unsigned log_len) {
  Split s{};
  s.log_n1 = log_len / 2;
  s.log_n2 = log_len - s.log_n1;
  s.n1 = std::size_t{1} << s.log_n1;
  s.n2 = std::size_t{1} << s.log_n2;
  s.group = std::clamp<std::size_t>(kColumnBufferElems / s.n1, 2, 16);
  s.group = std::min(s.group, s.n2);
  return s;
}

// col[bitrev(k1)] *= scale * step^k1 for k1 < n1; the column holds index k1 at
// slot bitrev(k1). step = omega_n^j for column j.
void twiddle_column(Fr* col, unsigned log_n1, const Fr& step, const Fr* scale) {
  const std::size_t n1 = std::size_t{1} << log_n1;
  Fr p = scale != nullptr ? *scale : Fr::one();
  std::size_t k1 = 0;
  if (scale == nullptr) {  // k1 = 0 has twiddle 1
    p = step;
    k1 = 1;
  }
  for (; k1 < n1; ++k1) {
    Fr& e = col[bitrev(k1, log_n1)];
    e *= p;
    p *= step;
  }
}

void transform_serial(const Plan& plan, Fr* x, unsigned log_len, bool dif);

// Columns [j_begin, j_end) of the split: gather `group` columns, transform
// (DIF: transform then twiddle; DIT: twiddle then transform), scatter.
void process_columns(const Plan& plan, Fr* x, unsigned log_len, const Split& s, std::size_t j_begin, std::size_t j_end,
                     bool dif, const Fr* scale, std::vector<Fr>& buf) {
  buf.resize(s.group * s.n1);
  const Fr& w = plan.root(log_len);  // omega_n of this level
  Fr step = w.pow(std::uint64_t(j_begin));
  for (std::size_t j0 = j_begin; j0 < j_end; j0 += s.group) {
    const std::size_t g_count = std::min(s.group, j_end - j0);
    for (std::size_t m = 0; m < s.n1; ++m) {
      const Fr* row = x + j0 + s.n2 * m;
      for (std::size_t g = 0; g < g_count; ++g) buf[g * s.n1 + m] = row[g];
    }
    for (std::size_t g = 0; g < g_count; ++g) {
      Fr* col = buf.data() + g * s.n1;
      const bool trivial = (j0 + g == 0) && scale == nullptr;
      if (dif) {
        transform_serial(plan, col, s.log_n1, true);
        if (!trivial) twiddle_column(col, s.log_n1, step, scale);
      } else {
        if (!trivial) twiddle_column(col, s.log_n1, step, scale);
        transform_serial(plan, col, s.log_n1, false);
      }
      step *= w;
    }
    for (std::size_t m = 0; m < s.n1; ++m) {
      Fr* row = x + j0 + s.n2 * m;
      for (std::size_t g = 0; g < g_count; ++g) row[g] = buf[g * s.n1 + m];
    }
  }
}

// One thread; each four-step level owns its column buffer.
void transform_serial(const Plan& plan, Fr* x, unsigned log_len, bool dif) {
  if (log_len <= plan.domain.leaf_log_size()) {
    if (dif)
      leaf_dif(plan, x, log_len);
    else
      leaf_dit(plan, x, log_len);
    return;
  }
  const Split s = split_of(log_len);
  std::vector<Fr> buf;
  if (!dif) {
    for (std::size_t r = 0; r < s.n1; ++r) transform_serial(plan, x + r * s.n2, s.log_n2, false);
  }
  process_columns(plan, x, log_len, s, 0, s.n2, dif, nullptr, buf);
  if (dif) {
    for (std::size_t r = 0; r < s.n1; ++r) transform_serial(plan, x + r * s.n2, s.log_n2, true);
  }
}

// data[i] *= scale * base^i, in parallel chunks.
void scale_by_powers(std::span<Fr> data, const Fr& base, const Fr& scale, ThreadPool& pool) {
  pool.parallel_for(data.size(), [&](std::size_t begin, std::size_t end) {
    Fr p = scale * base.pow(std::uint64_t(begin));
    for (std::size_t i = begin; i < end; ++i) {
      data[i] *= p;
      p *= base;
    }
  });
}

void scale_all(std::span<Fr> data, const Fr& scale, ThreadPool& pool) {
  pool.parallel_for(data.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) data[i] *= scale;
  });
}

// Whole-domain transform; DIF natural->bitrev or DIT bitrev->natural. `scale`
// (or nullptr) multiplies every output, folded into the twiddle pass.
void transform(const Plan& plan, std::span<Fr> data, bool dif, const Fr* scale, ThreadPool& pool) {
  const Domain& d = plan.domain;
  if (data.size() != d.size()) fail("data size does not match the domain");
  const unsigned log_n = d.log_size();
  if (log_n <= d.leaf_log_size() || pool.size() == 1) {
    transform_serial(plan, data.data(), log_n, dif);
    if (scale != nullptr) scale_all(data, *scale, pool);
    return;
  }
  const Split s = split_of(log_n);
  Fr* x = data.data();
  // Several tasks per thread even out rows/columns that take longer (cache misses,
  // other processes on the host); each column task is a multiple of `group`.
  const std::size_t tasks = std::min<std::size_t>(4 * pool.size(), s.n1);
  auto rows = [&] {
    pool.parallel_for(
        s.n1,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t r = begin; r < end; ++r) transform_serial(plan, x + r * s.n2, s.log_n2, dif);
        },
        tasks);
  };
  auto columns = [&] {
    const std::size_t groups = s.n2 / s.group;
    pool.parallel_for(
        groups,
        [&](std::size_t begin, std::size_t end) {
          std::vector<Fr> buf;
          process_columns(plan, x, log_n, s, begin * s.group, end * s.group, dif, scale, buf);
        },
        std::min(tasks, groups));
  };
  if (dif) {
    columns();
    rows();
  } else {
    rows();
    columns();
  }
}

}  // namespace

Fr root_of_unity(unsigned log_n) {
  if (log_n > kMaxLogSize) fail("no root of unity of that order in Fr");
  // 7 generates Fr^*, so 7^((r-1)/2^32) has order exactly 2^32.
  static_assert(Fr::kTwoAdicity == kMaxLogSize);
  Fr w = Fr::from_u64(ff::kFrGenerator).pow(Fr::kTrace);
  for (unsigned i = log_n; i < kMaxLogSize; ++i) w = w.square();
  return w;
}

Domain::Domain(unsigned log_n, unsigned leaf_log) : log_n_(log_n), leaf_log_(std::min(log_n, leaf_log)) {
  if (log_n > kMaxLogSize) fail("domain larger than 2^32");
  if (leaf_log == 0) fail("leaf size must be at least 2");
  omega_ = root_of_unity(log_n);
  omega_inv_ = omega_.inverse();
  n_inv_ = Fr::from_u64(std::uint64_t{1} << log_n).inverse();
  g_ = Fr::from_u64(ff::kFrGenerator);
  g_inv_ = g_.inverse();
  roots_.resize(log_n + 1);
  roots_inv_.resize(log_n + 1);
  roots_[log_n] = omega_;
  roots_inv_[log_n] = omega_inv_;
  for (unsigned l = log_n; l-- > 0;) {
    roots_[l] = roots_[l + 1].square();
    roots_inv_[l] = roots_inv_[l + 1].square();
  }
  const std::size_t half = (std::size_t{1} << leaf_log_) / 2;
  leaf_fwd_.resize(half);
  leaf_inv_.resize(half);
  Fr p = Fr::one(), q = Fr::one();
  for (std::size_t i = 0; i < half; ++i) {
    leaf_fwd_[i] = p;
    leaf_inv_[i] = q;
    p *= roots_[leaf_log_];
    q *= roots_inv_[leaf_log_];
  }
}

void bit_reverse_permute(std::span<Fr> data, ThreadPool& pool) {
  const std::size_t n = data.size();
  if (n <= 1) return;
  if ((n & (n - 1)) != 0) fail("bit reversal of a size that is not a power of two");
  const unsigned log_n = unsigned(__builtin_ctzll(n));
  Fr* x = data.data();
  // Index = (hi | mid | lo) with hi and lo of `b` bits; its reverse is
  // (rev lo | rev mid | rev hi). Tiles of fixed mid are 2^b rows of 2^b
  // contiguous elements, so swapping tile(mid) with tile(rev mid) touches
  // 2 * 2^(2b) elements that stay in L1 for b = 4 (16 KiB).
  constexpr unsigned b = 4;
  if (log_n < 2 * b + 2) {
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t j = bitrev(i, log_n);
      if (i < j) std::swap(x[i], x[j]);
    }
    return;
  }
  const unsigned log_mid = log_n - 2 * b;
  const std::size_t mids = std::size_t{1} << log_mid, side = std::size_t{1} << b;
  pool.parallel_for(mids, [&](std::size_t begin, std::size_t end) {
    for (std::size_t mid = begin; mid < end; ++mid) {
      const std::size_t rmid = bitrev(mid, log_mid);
      if (rmid < mid) continue;  // the pair is handled from its smaller side
      for (std::size_t hi = 0; hi < side; ++hi) {
        const std::size_t rhi = bitrev(hi, b);
        for (std::size_t lo = 0; lo < side; ++lo) {
          const std::size_t i = (hi << (log_mid + b)) | (mid << b) | lo;
          const std::size_t j = (bitrev(lo, b) << (log_mid + b)) | (rmid << b) | rhi;
          if (rmid != mid || i < j) std::swap(x[i], x[j]);
        }
      }
    }
  });
}

void ntt_to_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  transform(Plan{domain, Direction::kForward}, data, true, nullptr, pool);
}

void intt_from_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  transform(Plan{domain, Direction::kInverse}, data, false, &domain.size_inv(), pool);
}

void ntt(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  ntt_to_bitrev(domain, data, pool);
  bit_reverse_permute(data, pool);
}

void intt(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  if (data.size() != domain.size()) fail("data size does not match the domain");
  bit_reverse_permute(data, pool);
  intt_from_bitrev(domain, data, pool);
}

void coset_ntt_to_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  if (data.size() != domain.size()) fail("data size does not match the domain");
  scale_by_powers(data, domain.coset_gen(), Fr::one(), pool);
  ntt_to_bitrev(domain, data, pool);
}

void coset_ntt(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  coset_ntt_to_bitrev(domain, data, pool);
  bit_reverse_permute(data, pool);
}

void coset_intt_from_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  // The 1/n of the inverse joins the g^-i pass instead of costing its own.
  transform(Plan{domain, Direction::kInverse}, data, false, nullptr, pool);
  scale_by_powers(data, domain.coset_gen_inv(), domain.size_inv(), pool);
}

void coset_intt(const Domain& domain, std::span<Fr> data, ThreadPool& pool) {
  if (data.size() != domain.size()) fail("data size does not match the domain");
  bit_reverse_permute(data, pool);
  coset_intt_from_bitrev(domain, data, pool);
}

Fr vanishing_on_coset_inv(const Domain& domain) {
  Fr gn = domain.coset_gen();
  for (unsigned i = 0; i < domain.log_size(); ++i) gn = gn.square();  // g^(2^k)
  return (gn - Fr::one()).inverse();
}

}  // namespace cuzk::ntt
