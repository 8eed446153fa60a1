// Random R1CS instances for setup tests (CPU and GPU): no witness, only a
// valid shape with canonical rows, interned coefficients, partial A and B
// densities, and every aux variable constrained (it occurs in C).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "groth16/r1cs.hpp"

namespace cuzk::groth16::test {

// `circuit_rows` rows written by the "circuit" plus the num_inputs input
// constraints R1cs requires at the end. Row r's C holds aux (r mod num_aux),
// so circuit_rows >= num_aux constrains every aux. A draws only from
// columns not divisible by 5 and B only from even columns, so both aux
// densities are partial. Up to `max_extra` further entries per row and matrix.
inline R1cs random_r1cs(std::mt19937_64& rng, std::size_t num_inputs, std::size_t num_aux, std::size_t circuit_rows,
                        std::size_t max_extra = 3, std::size_t num_coeffs = 16) {
  const std::size_t cols = num_inputs + num_aux;
  std::vector<Fr> coeffs{Fr::one(), -Fr::one()};
  while (coeffs.size() < num_coeffs) {
    Fr x = Fr::random(rng);
    if (!x.is_zero() && x != Fr::one() && x != -Fr::one()) coeffs.push_back(x);
  }
  std::uniform_int_distribution<std::size_t> col_dist(0, cols - 1), extra_dist(0, max_extra);
  std::uniform_int_distribution<std::uint32_t> id_dist(0, std::uint32_t(coeffs.size() - 1));
  CsrMatrix mats[3];
  for (CsrMatrix& m : mats) m.row_start.push_back(0);
  std::vector<std::uint32_t> row_cols;
  for (std::size_t r = 0; r < circuit_rows; ++r) {
    for (int which = 0; which < 3; ++which) {
      CsrMatrix& m = mats[which];
      row_cols.clear();
      if (which == 2) row_cols.push_back(std::uint32_t(num_inputs + r % num_aux));
      for (std::size_t e = extra_dist(rng); e > 0; --e) {
        const std::size_t c = col_dist(rng);
        if (which == 0 && c % 5 == 0) continue;
        if (which == 1 && c % 2 == 1) continue;
        row_cols.push_back(std::uint32_t(c));
      }
      std::sort(row_cols.begin(), row_cols.end());
      row_cols.erase(std::unique(row_cols.begin(), row_cols.end()), row_cols.end());
      for (std::uint32_t c : row_cols) {
        m.col.push_back(c);
        m.coeff_id.push_back(id_dist(rng));
      }
      m.row_start.push_back(m.col.size());
    }
  }
  // Input constraints: input_i * 0 = 0.
  for (std::size_t i = 0; i < num_inputs; ++i) {
    mats[0].col.push_back(std::uint32_t(i));
    mats[0].coeff_id.push_back(R1cs::kCoeffOne);
    for (CsrMatrix& m : mats) m.row_start.push_back(m.col.size());
  }
  return R1cs(num_inputs, num_aux, std::move(coeffs), std::move(mats[0]), std::move(mats[1]), std::move(mats[2]));
}

}  // namespace cuzk::groth16::test
