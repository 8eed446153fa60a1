// Number-theoretic transforms over the BLS12-381 scalar field Fr on the CPU.
//
// A Domain of size n = 2^k (k <= 32) evaluates polynomials at the powers of
// omega_n, where omega_n = w^(2^32 / n) and w = 7^((r-1)/2^32) is bellperson's
// ROOT_OF_UNITY (primitive 2^32-th root from the generator 7). Cosets use the
// same generator g = 7 (bellperson's MULTIPLICATIVE_GENERATOR).
//
//   forward  y_i = sum_j x_j * omega^(i j)              (coefficients -> evaluations)
//   inverse  x_j = (1/n) sum_i y_i * omega^(-i j)
//   coset    forward of x_j * g^j; its inverse removes g^-j after the inverse.
//
// Orders: the natural-order entry points (ntt, intt, coset_*) take and return
// natural order. The decimation-in-frequency forward (ntt_to_bitrev) leaves its
// output in bit-reversed order and the decimation-in-time inverse
// (intt_from_bitrev) takes bit-reversed input; used as a pair they skip both
// bit-reversal permutations, which is what the Groth16 H computation wants
// (its pointwise step does not care about order).
//
// Large sizes use an in-place four-step split n = n1 * n2 (columns of stride n2,
// then rows of length n2), recursively, so every sub-transform runs in cache and
// no n-sized scratch buffer is needed; the work is spread over a ThreadPool.
//
// Cost (AMD EPYC Zen 5, one thread): a leaf butterfly takes 12.4 ns against
// 10.2 ns for one independent Fr multiplication, so leaves are bound by the
// multiplier; the four-step twiddles (two multiplications per element and
// level) bring 2^20 to 15.3 ns per butterfly, 160 ms. 16 Intel Xeon threads:
// 2^20 in 32.5 ms (14.6x one thread), 2^24 in 0.69 s. The next step would be
// AVX-512 IFMA (52-bit limbs, 8 lanes), which the build host has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ff/fp.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::ntt {

using ff::Fr;

// Largest supported log2 size: Fr has 2^32-th roots of unity.
inline constexpr unsigned kMaxLogSize = 32;

// Primitive 2^k-th root of unity (k <= 32), derived from generator 7.
Fr root_of_unity(unsigned log_n);

// Leaf transforms of at most 2^12 elements (128 KiB of Fr) run as plain
// radix-2 passes in the per-core L2; larger ones are split four-step.
inline constexpr unsigned kDefaultLeafLog = 12;

class Domain {
 public:
  // n = 2^log_n; aborts when log_n > kMaxLogSize. `leaf_log` (>= 1) caps the
  // in-cache leaf size; tests lower it to exercise the recursive split.
  explicit Domain(unsigned log_n, unsigned leaf_log = kDefaultLeafLog);

  unsigned log_size() const { return log_n_; }
  std::size_t size() const { return std::size_t{1} << log_n_; }
  const Fr& omega() const { return omega_; }
  const Fr& omega_inv() const { return omega_inv_; }
  const Fr& size_inv() const { return n_inv_; }
  // Coset generator g = 7 and its inverse.
  const Fr& coset_gen() const { return g_; }
  const Fr& coset_gen_inv() const { return g_inv_; }

  // Primitive 2^l-th root of unity for l <= log_size(), forward or inverse.
  const Fr& root(unsigned l) const { return roots_[l]; }
  const Fr& root_inv(unsigned l) const { return roots_inv_[l]; }
  // Twiddles of the in-cache leaf transforms: leaf_twiddles()[i] = omega_L^i for
  // i < L/2, L = 2^leaf_log_size() (the largest leaf, <= n).
  std::span<const Fr> leaf_twiddles() const { return leaf_fwd_; }
  std::span<const Fr> leaf_twiddles_inv() const { return leaf_inv_; }
  unsigned leaf_log_size() const { return leaf_log_; }

 private:
  unsigned log_n_;
  unsigned leaf_log_;
  Fr omega_, omega_inv_, n_inv_, g_, g_inv_;
  std::vector<Fr> roots_, roots_inv_;  // index l: primitive 2^l-th root
  std::vector<Fr> leaf_fwd_, leaf_inv_;
};

// All transforms run on `pool` (ThreadPool::parallel_for) and return when done;
// they must not be called from inside a task of the same pool (its batches do
// not nest). A size mismatch between data and domain is a bug and aborts.

// Natural order in and out. data.size() must equal domain.size().
void ntt(const Domain& domain, std::span<Fr> data, ThreadPool& pool);
// Inverse including the 1/n scale.
void intt(const Domain& domain, std::span<Fr> data, ThreadPool& pool);
// Evaluations on the coset g*<omega>: coefficient i is multiplied by g^i first.
void coset_ntt(const Domain& domain, std::span<Fr> data, ThreadPool& pool);
// Inverse of coset_ntt: inverse transform, then coefficient i times g^-i.
void coset_intt(const Domain& domain, std::span<Fr> data, ThreadPool& pool);

// Forward transform without the final permutation: natural-order input,
// output y_i stored at index bitrev(i).
void ntt_to_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool);
// Inverse transform (with 1/n) of bit-reversed input y (y_i at bitrev(i)),
// natural-order output.
void intt_from_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool);
// coset_ntt with bit-reversed output; coset_intt with bit-reversed input.
void coset_ntt_to_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool);
void coset_intt_from_bitrev(const Domain& domain, std::span<Fr> data, ThreadPool& pool);

// In-place bit-reversal permutation of a power-of-two sized vector.
void bit_reverse_permute(std::span<Fr> data, ThreadPool& pool);

// (g^n - 1)^-1: the inverse of the vanishing polynomial Z(x) = x^n - 1, which
// is constant on the coset g*<omega> (Z(g omega^i) = g^n - 1). The Groth16
// prover divides a*b - c by it on the coset.
Fr vanishing_on_coset_inv(const Domain& domain);

}  // namespace cuzk::ntt
