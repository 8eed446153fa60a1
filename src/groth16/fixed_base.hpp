// Fixed-base scalar multiplication for parameter generation (bellperson
// setups and snarkjs zkeys): many multiples of one generator.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "ec/curve.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

using ec::Affine;
using ec::Jacobian;
using ff::Fr;

// Fixed-base multiplication by precomputed multiples of one base: with
// 8-bit windows, k*G is 32 mixed additions of table entries
// table[w][d-1] = d * 2^(8w) * G. Not constant time: the toxic waste of a
// development setup lives only in this process.
template <class F>
class FixedBaseTable {
 public:
  static constexpr unsigned kWindowBits = 8;
  static constexpr unsigned kWindows = (255 + kWindowBits - 1) / kWindowBits;
  static constexpr unsigned kDigits = (1u << kWindowBits) - 1;

  explicit FixedBaseTable(const Affine<F>& base) : table_(kWindows * kDigits) {
    std::vector<Jacobian<F>> jac(table_.size());
    Jacobian<F> window_base = ec::from_affine(base);
    for (unsigned w = 0; w < kWindows; ++w) {
      Jacobian<F> acc = window_base;
      for (unsigned d = 0; d < kDigits; ++d) {
        jac[w * kDigits + d] = acc;
        acc = ec::add(acc, window_base);
      }
      window_base = acc;  // 2^8 * previous window base
    }
    ec::batch_to_affine<F>(jac, table_);
  }

  // Entry w * kDigits + (d - 1) is d * 2^(8w) * base (the GPU setup uploads it).
  std::span<const Affine<F>> entries() const { return table_; }

  Jacobian<F> mul(const Fr& k) const {
    ff::BigInt<4> e = k.to_int();
    Jacobian<F> acc = Jacobian<F>::identity();
    for (unsigned w = 0; w < kWindows; ++w) {
      unsigned d = unsigned(e.bits(w * kWindowBits, kWindowBits));
      if (d != 0) acc = ec::add_mixed(acc, table_[w * kDigits + d - 1]);
    }
    return acc;
  }

 private:
  std::vector<Affine<F>> table_;
};

// Multiplies the base by every scalar, in parallel, into affine points
// (out.size() == scalars.size()); tick(n) after every chunk of n.
template <class F>
void batch_fixed_base_into(const FixedBaseTable<F>& table, std::span<const Fr> scalars, std::span<Affine<F>> out,
                           ThreadPool& pool, const std::function<void(std::uint64_t)>& tick) {
  constexpr std::size_t kChunk = std::size_t{1} << 14;
  for (std::size_t start = 0; start < scalars.size(); start += kChunk) {
    std::size_t n = std::min(kChunk, scalars.size() - start);
    pool.parallel_for(n, [&](std::size_t b, std::size_t e) {
      std::vector<Jacobian<F>> jac(e - b);
      for (std::size_t i = b; i < e; ++i) jac[i - b] = table.mul(scalars[start + i]);
      ec::batch_to_affine<F>(jac, out.subspan(start + b, e - b));
    });
    if (tick) tick(n);
  }
}

template <class F>
std::vector<Affine<F>> batch_fixed_base(const FixedBaseTable<F>& table, std::span<const Fr> scalars, ThreadPool& pool,
                                        const std::function<void(std::uint64_t)>& tick) {
  std::vector<Affine<F>> out(scalars.size());
  batch_fixed_base_into<F>(table, scalars, out, pool, tick);
  return out;
}

}  // namespace cuzk::groth16
