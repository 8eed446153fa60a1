#include "msm/msm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "ec/curve.hpp"
#include "msm/xyzz.hpp"

namespace cuzk::msm {
namespace {

// Costs in field multiplications (a squaring counts as one), from the
// formulas' operation counts; only their ratios matter to the planner.
constexpr double kMaddCost = 10;   // madd-2008-s, 8M + 2S
constexpr double kAddCost = 14;    // add-2008-s, 12M + 2S
constexpr double kDblCost = 9;     // dbl-2008-s-1 / Jacobian dbl
constexpr double kMergeCost = 16;  // Jacobian add of two partial sums, 11M + 5S
// Batch-affine: 6M per addition (3M of Montgomery's trick, lambda, lambda^2,
// y3) plus the shared inversion and the share of points that hit a bucket
// already busy in the batch and go to its XYZZ overflow bucket.
constexpr double kBatchAffineAddCost = 7.5;
constexpr std::size_t kScalarBits = 256;  // recoded width: W c >= 256 covers s < 2^255
// Each concurrent task owns its buckets (affine + XYZZ overflow: 296 bytes per
// bucket for G1), so this caps c at 18 for G1 and bounds memory at threads x 64 MiB.
constexpr std::size_t kMaxTaskBucketBytes = std::size_t{64} << 20;
// Below 2^11 buckets a batch large enough to amortise the inversion (~600M
// for Fp) collides with busy buckets too often. Measured on the 2-core EPYC
// build host, G1 2^16, one thread: c = 11 batch-affine 494 ms vs XYZZ 476 ms;
// c = 12: 431 vs 449; c = 13: 392 vs 428.
constexpr unsigned kMinBatchAffineBits = 12;
constexpr std::size_t kMaxAffineBatch = 2048;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "cuzk::msm: %s\n", what);
  std::abort();
}

std::size_t windows_for(unsigned c) { return (kScalarBits + c - 1) / c; }

Buckets default_buckets(unsigned c) { return c >= kMinBatchAffineBits ? Buckets::kBatchAffine : Buckets::kXyzz; }

// A quarter of the bucket count keeps collisions within a batch near 1/8.
std::size_t default_affine_batch(unsigned c) {
  return std::min(kMaxAffineBatch, std::max<std::size_t>(1, (std::size_t{1} << (c - 1)) / 4));
}

double pippenger_cost(std::size_t n, std::size_t threads, unsigned c, std::size_t chunks, Buckets buckets) {
  const std::size_t windows = windows_for(c);
  const std::size_t tasks = windows * chunks;
  const double rounds = double((tasks + threads - 1) / threads);
  const double points_per_task = double((n + chunks - 1) / chunks);
  const double buckets_per_task = double(std::size_t{1} << (c - 1));
  // Accumulation, then the running-sum reduction: two additions per bucket,
  // one of them mixed when the buckets are affine.
  const double task = buckets == Buckets::kBatchAffine
                          ? points_per_task * kBatchAffineAddCost + buckets_per_task * (kAddCost + kMaddCost)
                          : points_per_task * kMaddCost + buckets_per_task * 2 * kAddCost;
  // The serial tail: merging partial sums and c doublings per window.
  return rounds * task + double(tasks) * kMergeCost + double(windows * c) * kDblCost;
}

double double_and_add_cost(std::size_t n) {
  // 255 shared doublings, and a mixed addition for about half the bits of each scalar.
  return 255 * kDblCost + double(n) * 128 * kMaddCost;
}

// t = s + K with K = sum_i (2^(c-1) - 1) 2^(ic): window i of t, minus
// 2^(c-1) - 1, is the signed digit d_i in [-(2^(c-1) - 1), 2^(c-1)], and
// sum_i d_i 2^(ic) = s. One addition per scalar instead of a carry chain
// across windows, so any window can be recoded independently of the others.
using Wide = ff::BigInt<5>;  // W c < 256 + c <= 276 bits

Wide digit_offset(unsigned c, std::size_t windows) {
  Wide k{};
  for (std::size_t i = 0; i < windows; ++i) {
    for (unsigned b = 0; b + 1 < c; ++b) {
      const std::size_t bit = i * c + b;
      k.limb[bit / 64] |= ff::u64{1} << (bit % 64);
    }
  }
  return k;
}

struct Recoder {
  Wide offset;
  std::size_t lo_bit;  // w c
  unsigned c;
  std::int64_t half_minus;  // 2^(c-1) - 1

  std::int64_t digit(const Scalar& s) const {
    Wide t{};
    ff::u64 carry = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      ff::u128 v = ff::u128(s.limb[i]) + offset.limb[i] + carry;
      t.limb[i] = ff::u64(v);
      carry = ff::u64(v >> 64);
    }
    t.limb[4] = offset.limb[4] + carry;
    return std::int64_t(t.bits(lo_bit, c)) - half_minus;
  }
};

std::size_t bucket_of(std::int64_t d) { return std::size_t(d > 0 ? d : -d) - 1; }

// Calls visit(i, d_i) for the non-zero digits of points [begin, end), in
// order. Digits are recoded a block ahead and their buckets prefetched: from
// c = 14 on the buckets outgrow L2, and a batch-affine bucket update does too
// little work between misses for a one-point lookahead to hide them.
template <class Prefetch, class Visit>
void for_each_digit(std::span<const Scalar> scalars, std::size_t begin, std::size_t end, const Recoder& rec,
                    Prefetch&& prefetch, Visit&& visit) {
  constexpr std::size_t kBlock = 32;
  std::int64_t digits[kBlock];
  for (std::size_t block = begin; block < end; block += kBlock) {
    const std::size_t len = std::min(kBlock, end - block);
    for (std::size_t k = 0; k < len; ++k) {
      digits[k] = rec.digit(scalars[block + k]);
      if (digits[k] != 0) prefetch(bucket_of(digits[k]));
    }
    for (std::size_t k = 0; k < len; ++k) {
      if (digits[k] != 0) visit(block + k, digits[k]);
    }
  }
}

// Sum over points [begin, end) of d_w(s_i) P_i, the window's weight 2^(wc)
// left out: the bucket sum sum_j j B_j. XYZZ buckets.
template <class F>
Xyzz<F> xyzz_window_sum(std::span<const ec::Affine<F>> bases, std::span<const Scalar> scalars, std::size_t begin,
                        std::size_t end, const Recoder& rec) {
  std::vector<Xyzz<F>> buckets(std::size_t{1} << (rec.c - 1), Xyzz<F>::identity());
  for_each_digit(
      scalars, begin, end, rec, [&](std::size_t bucket) { __builtin_prefetch(&buckets[bucket], 1); },
      [&](std::size_t i, std::int64_t d) {
        const ec::Affine<F>& p = bases[i];
        if (!p.infinity) add_affine(buckets[bucket_of(d)], p.x, d > 0 ? p.y : -p.y);
      });
  // sum_j j B_j = sum_j (B_m + .. + B_j): a running suffix sum added up.
  Xyzz<F> running = Xyzz<F>::identity(), total = Xyzz<F>::identity();
  for (std::size_t j = buckets.size(); j-- > 0;) {
    add(running, buckets[j]);
    add(total, running);
  }
  return total;
}

// Batch-affine accumulation. Buckets are affine points; the addition
// A += P costs lambda = (y_P - y_A) / (x_P - x_A), x = lambda^2 - x_A - x_P,
// y = lambda (x_A - x) - y_A, and the divisions of up to `batch` additions
// share one inversion (Montgomery's trick: 3M each). Additions within a batch
// must hit distinct buckets, since each reads its bucket before the batch is
// resolved; a point whose bucket is already busy goes to that bucket's XYZZ
// overflow instead, so adversarial inputs (every scalar equal) degrade to the
// XYZZ cost rather than to a queue of stalled points.
template <class F>
class BatchAffineBuckets {
 public:
  BatchAffineBuckets(std::span<const ec::Affine<F>> bases, unsigned c, std::size_t batch)
      : bases_(bases),
        affine_(std::size_t{1} << (c - 1)),
        overflow_(affine_.size(), Xyzz<F>::identity()),
        ops_(batch),
        den_(batch),
        prefix_(batch) {}

  void prefetch(std::size_t bucket) const { __builtin_prefetch(&affine_[bucket], 1); }

  // Bucket `bucket` += (negate ? -1 : 1) * bases[point], for a finite base.
  void add(std::size_t bucket, std::size_t point, bool negate) {
    const ec::Affine<F>& p = bases_[point];
    AffineBucket& a = affine_[bucket];
    if (a.empty) {
      a.x = p.x;
      a.y = negate ? -p.y : p.y;
      a.empty = false;
      return;
    }
    if (a.busy_stamp == stamp_) {
      add_affine(overflow_[bucket], p.x, negate ? -p.y : p.y);
      return;
    }
    bool doubling = false;
    F den = p.x - a.x;
    if (den.is_zero()) {
      const F py = negate ? -p.y : p.y;
      // A == -P (or a 2-torsion doubling, impossible in the prime-order
      // groups but kept out of the batch product, which it would zero).
      if (a.y != py || py.is_zero()) {
        a.empty = true;
        return;
      }
      doubling = true;  // lambda = 3 x^2 / (2 y)
      den = py.dbl();
    }
    a.busy_stamp = stamp_;
    ops_[pending_] = Op{std::uint32_t(bucket), negate, doubling, point};
    den_[pending_] = den;
    if (++pending_ == ops_.size()) flush();
  }

  // Resolves the pending additions with one inversion.
  void flush() {
    if (pending_ == 0) return;
    F acc = F::one();
    for (std::size_t k = 0; k < pending_; ++k) {
      prefix_[k] = acc;  // den_0 .. den_{k-1}
      acc *= den_[k];
    }
    F inv = acc.inverse();  // 1 / (den_0 .. den_{pending-1})
    for (std::size_t k = pending_; k-- > 0;) {
      if (k >= kFlushPrefetch) prefetch(ops_[k - kFlushPrefetch].bucket);
      const F den_inv = inv * prefix_[k];
      inv *= den_[k];
      const Op& op = ops_[k];
      const ec::Affine<F>& p = bases_[op.point];
      AffineBucket& a = affine_[op.bucket];
      F lambda;
      if (op.doubling) {
        const F xx = a.x.square();
        lambda = (xx.dbl() + xx) * den_inv;
      } else {
        lambda = (op.negate ? -(p.y + a.y) : p.y - a.y) * den_inv;
      }
      const F x3 = lambda.square() - a.x - p.x;
      a.y = lambda * (a.x - x3) - a.y;
      a.x = x3;
    }
    pending_ = 0;
    ++stamp_;
  }

  // sum_j (j + 1) bucket_j by running sums; flush() first.
  Xyzz<F> reduce() const {
    Xyzz<F> running = Xyzz<F>::identity(), total = Xyzz<F>::identity();
    for (std::size_t j = affine_.size(); j-- > 0;) {
      msm::add(running, overflow_[j]);
      if (!affine_[j].empty) add_affine(running, affine_[j].x, affine_[j].y);
      msm::add(total, running);
    }
    return total;
  }

 private:
  static constexpr std::size_t kFlushPrefetch = 4;

  // The busy stamp shares the bucket's cache lines: one miss per point.
  struct AffineBucket {
    F x, y;
    std::uint32_t busy_stamp = 0;  // == stamp_: an addition is pending in this batch
    bool empty = true;
  };
  struct Op {
    std::uint32_t bucket;
    bool negate;
    bool doubling;
    std::size_t point;
  };

  std::span<const ec::Affine<F>> bases_;
  std::vector<AffineBucket> affine_;
  std::vector<Xyzz<F>> overflow_;
  std::uint32_t stamp_ = 1;
  std::vector<Op> ops_;
  std::vector<F> den_, prefix_;
  std::size_t pending_ = 0;
};

template <class F>
Xyzz<F> batch_affine_window_sum(std::span<const ec::Affine<F>> bases, std::span<const Scalar> scalars,
                                std::size_t begin, std::size_t end, const Recoder& rec, std::size_t batch) {
  BatchAffineBuckets<F> buckets(bases, rec.c, batch);
  for_each_digit(
      scalars, begin, end, rec, [&](std::size_t bucket) { buckets.prefetch(bucket); },
      [&](std::size_t i, std::int64_t d) {
        if (!bases[i].infinity) buckets.add(bucket_of(d), i, d < 0);
      });
  buckets.flush();
  return buckets.reduce();
}

template <class F>
ec::Jacobian<F> pippenger(std::span<const ec::Affine<F>> bases, std::span<const Scalar> scalars, ThreadPool& pool,
                          const Plan& plan) {
  const std::size_t n = scalars.size();
  const unsigned c = plan.window_bits;
  const std::size_t windows = plan.windows, chunks = plan.point_chunks;
  const Wide offset = digit_offset(c, windows);
  const std::size_t buckets_per_window = std::size_t{1} << (c - 1);

  std::vector<ec::Jacobian<F>> partial(windows * chunks, ec::Jacobian<F>::identity());
  pool.run_tasks(windows * chunks, [&](std::size_t task) {
    const std::size_t w = task / chunks, k = task % chunks;
    const std::size_t begin = n * k / chunks, end = n * (k + 1) / chunks;
    const Recoder rec{offset, w * c, c, std::int64_t(buckets_per_window) - 1};
    const Xyzz<F> sum = plan.buckets == Buckets::kBatchAffine
                            ? batch_affine_window_sum(bases, scalars, begin, end, rec, plan.affine_batch)
                            : xyzz_window_sum(bases, scalars, begin, end, rec);
    partial[task] = to_jacobian(sum);
  });

  // Horner over windows: acc = sum_w 2^(wc) S_w.
  ec::Jacobian<F> acc = ec::Jacobian<F>::identity();
  for (std::size_t w = windows; w-- > 0;) {
    for (unsigned b = 0; b < c && !acc.is_identity(); ++b) acc = ec::dbl(acc);
    for (std::size_t k = 0; k < chunks; ++k) acc = ec::add(acc, partial[w * chunks + k]);
  }
  return acc;
}

// One doubling chain shared by all points: acc = 2 acc + sum_{i: bit b of s_i} P_i.
template <class F>
ec::Jacobian<F> double_and_add(std::span<const ec::Affine<F>> bases, std::span<const Scalar> scalars) {
  std::size_t bits = 0;
  for (const Scalar& s : scalars) bits = std::max(bits, s.bit_length());
  Xyzz<F> acc = Xyzz<F>::identity();
  for (std::size_t b = bits; b-- > 0;) {
    acc = dbl(acc);
    for (std::size_t i = 0; i < scalars.size(); ++i) {
      if (scalars[i].bit(b) && !bases[i].infinity) add_affine(acc, bases[i].x, bases[i].y);
    }
  }
  return to_jacobian(acc);
}

template <class F>
ec::Jacobian<F> run(std::span<const ec::Affine<F>> bases, std::span<const Scalar> scalars, ThreadPool& pool,
                    const Config& config) {
  if (bases.size() < scalars.size()) fail("fewer bases than scalars");
  bases = bases.first(scalars.size());
  for (const Scalar& s : scalars) {
    if (s.limb[3] >> 63) fail("scalar >= 2^255 (not reduced modulo r)");
  }
  if (scalars.empty()) return ec::Jacobian<F>::identity();
  // Batch-affine buckets need an affine and an XYZZ bucket each.
  const Plan plan = make_plan(scalars.size(), pool.size(), sizeof(Xyzz<F>) + sizeof(ec::Affine<F>), config);
  if (plan.method == Method::kDoubleAndAdd) return double_and_add(bases, scalars);
  return pippenger(bases, scalars, pool, plan);
}

template <class F>
ec::Jacobian<F> run(std::span<const ec::Affine<F>> bases, std::span<const ff::Fr> scalars, ThreadPool& pool,
                    const Config& config) {
  std::vector<Scalar> plain(scalars.size());
  pool.parallel_for(scalars.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) plain[i] = scalars[i].to_int();
  });
  return run(bases, std::span<const Scalar>(plain), pool, config);
}

}  // namespace

Plan make_plan(std::size_t n, std::size_t threads, std::size_t bucket_bytes, const Config& config) {
  threads = std::max<std::size_t>(threads, 1);
  unsigned max_c = 1;
  while (max_c < kMaxWindowBits && (std::size_t{1} << max_c) * bucket_bytes <= kMaxTaskBucketBytes) ++max_c;

  Plan best;
  double best_cost = std::numeric_limits<double>::infinity();
  const unsigned c_lo = config.window_bits ? config.window_bits : 1;
  const unsigned c_hi = config.window_bits ? config.window_bits : max_c;
  if (c_lo < 1 || c_hi > kMaxWindowBits) fail("window_bits out of range");
  // More than 4 chunks per thread only multiplies the reductions.
  const std::size_t k_lo = config.point_chunks ? config.point_chunks : 1;
  const std::size_t k_hi =
      config.point_chunks ? config.point_chunks : std::max<std::size_t>(1, std::min(n, 4 * threads));
  for (unsigned c = c_lo; c <= c_hi; ++c) {
    const Buckets buckets = config.buckets != Buckets::kAuto ? config.buckets : default_buckets(c);
    const std::size_t batch = config.affine_batch ? config.affine_batch : default_affine_batch(c);
    for (std::size_t k = k_lo; k <= k_hi; ++k) {
      const double cost = pippenger_cost(n, threads, c, k, buckets);
      if (cost < best_cost) {
        best_cost = cost;
        best = Plan{Method::kPippenger, c, windows_for(c), k, buckets, buckets == Buckets::kBatchAffine ? batch : 0};
      }
    }
  }
  const bool forced_pippenger = config.method == Method::kPippenger || config.window_bits || config.point_chunks ||
                                config.buckets != Buckets::kAuto;
  if (config.method == Method::kDoubleAndAdd || (!forced_pippenger && double_and_add_cost(n) <= best_cost)) {
    return Plan{Method::kDoubleAndAdd, 0, 0, 0};
  }
  return best;
}

ec::G1Jacobian msm(std::span<const ec::G1Affine> bases, std::span<const Scalar> scalars, ThreadPool& pool,
                   const Config& config) {
  return run(bases, scalars, pool, config);
}
ec::G2Jacobian msm(std::span<const ec::G2Affine> bases, std::span<const Scalar> scalars, ThreadPool& pool,
                   const Config& config) {
  return run(bases, scalars, pool, config);
}
ec::G1Jacobian msm(std::span<const ec::G1Affine> bases, std::span<const ff::Fr> scalars, ThreadPool& pool,
                   const Config& config) {
  return run(bases, scalars, pool, config);
}
ec::G2Jacobian msm(std::span<const ec::G2Affine> bases, std::span<const ff::Fr> scalars, ThreadPool& pool,
                   const Config& config) {
  return run(bases, scalars, pool, config);
}

}  // namespace cuzk::msm
