// Multi-scalar multiplication sum_i s_i P_i on the CPU, for G1 and G2.
//
// Pippenger's bucket method with signed windows: every scalar is recoded into
// W = ceil(256/c) digits in [-(2^(c-1) - 1), 2^(c-1)], so a window needs only
// 2^(c-1) buckets and a negative digit adds the negated base (free in affine).
// Buckets receive the affine bases either by XYZZ mixed addition
// (msm/xyzz.hpp, 10 multiplications per point) or, for windows of 12+ bits,
// as affine points whose additions are batched around one shared inversion
// (about 7.5 per point with collisions; on the 2-core EPYC build host, one
// thread: G1 10% faster at 2^16 and 15% at 2^20, G2 28% at 2^16).
// Each window's buckets are folded by running sums, and the window sums are
// combined with c doublings each.
//
// Parallelism: a task is one (window, point chunk) pair with its own buckets;
// the partial sums of a window's chunks are added at the end. The planner
// chooses c and the number of chunks from n and the thread count with a cost
// model counted in field multiplications, so small inputs on many threads are
// split across points instead of leaving threads idle.
//
// Tiny inputs, where 2^c buckets cost more than they save, use a joint
// double-and-add (one doubling chain shared by all points).
//
// Variable time: the scalars' bit patterns steer branches and memory
// accesses, which is fine for a prover's MSMs (their results are masked by
// the random r and s of Groth16), not for a single secret scalar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ec/point.hpp"
#include "ff/bigint.hpp"
#include "ff/fp.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::msm {

// A scalar in standard (not Montgomery) form, least-significant limb first.
// Must be < 2^255 (every reduced Fr element is); larger values abort.
using Scalar = ff::BigInt<4>;

enum class Method : std::uint8_t {
  kAuto,          // cost model picks
  kPippenger,     // buckets
  kDoubleAndAdd,  // joint double-and-add, for a handful of points
};

// How a task accumulates points into its buckets.
enum class Buckets : std::uint8_t {
  kAuto,
  kXyzz,         // XYZZ buckets, one mixed addition (8M + 2S) per point
  kBatchAffine,  // affine buckets, additions batched around one shared inversion
};

// Overrides for tests and benchmarks; zero/kAuto leaves the choice to the planner.
struct Config {
  Method method = Method::kAuto;
  unsigned window_bits = 0;      // c, 1..kMaxWindowBits
  std::size_t point_chunks = 0;  // point ranges per window (>= 1)
  Buckets buckets = Buckets::kAuto;
  std::size_t affine_batch = 0;  // additions per shared inversion (batch-affine only)
};

inline constexpr unsigned kMaxWindowBits = 20;

struct Plan {
  Method method = Method::kPippenger;  // never kAuto
  unsigned window_bits = 0;            // c (Pippenger only)
  std::size_t windows = 0;             // ceil(256 / c)
  std::size_t point_chunks = 0;        // tasks per window
  Buckets buckets = Buckets::kXyzz;    // never kAuto
  std::size_t affine_batch = 0;        // batch-affine only
};

// The planner on its own, exposed for tests and benchmarks. `bucket_bytes` is
// the memory one bucket needs (it caps c so one task's buckets stay within 32 MiB).
Plan make_plan(std::size_t n, std::size_t threads, std::size_t bucket_bytes, const Config& config = {});

// sum_i scalars[i] * bases[i] over i < scalars.size(). bases may be longer
// than scalars (the tail is ignored), never shorter. Bases at infinity and zero
// scalars contribute nothing. Bases must be on the curve (they are not checked).
// Runs on every thread of `pool`; do not call it from a task of that same pool
// (ThreadPool runs one batch at a time).
ec::G1Jacobian msm(std::span<const ec::G1Affine> bases, std::span<const Scalar> scalars, ThreadPool& pool,
                   const Config& config = {});
ec::G2Jacobian msm(std::span<const ec::G2Affine> bases, std::span<const Scalar> scalars, ThreadPool& pool,
                   const Config& config = {});

// Montgomery-form scalars: converted to standard form once (in parallel), then as above.
ec::G1Jacobian msm(std::span<const ec::G1Affine> bases, std::span<const ff::Fr> scalars, ThreadPool& pool,
                   const Config& config = {});
ec::G2Jacobian msm(std::span<const ec::G2Affine> bases, std::span<const ff::Fr> scalars, ThreadPool& pool,
                   const Config& config = {});

}  // namespace cuzk::msm
