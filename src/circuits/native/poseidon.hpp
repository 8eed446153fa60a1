// Poseidon over BLS12-381 Fr exactly as Filecoin uses it: neptune's
// Strength::Standard parameters and HashType::MerkleTree domain tag.
//
//   width t = arity + 1, S-box x^5, RF = 8 full rounds (4 + 4), RP partial rounds:
//     arity  2   4   8  11  16  24  36
//     RP    55  56  57  57  59  59  60
//   state = [tag, m_0, ..., m_{arity-1}], tag = 2^arity - 1; output = state[1].
//   Round r: add the t round constants of r, S-box (all lanes in full rounds,
//   lane 0 in partial rounds), multiply by the Cauchy MDS M_ij = 1/(i + (t + j)).
//   Round constants come from the Hades Grain LFSR (field=1, sbox=1, n=255).
//
// Besides the textbook ("correct") permutation, the constants object also holds
// neptune's "optimized static" form: round constants pushed back through the
// linear layers (`compressed_round_constants`, RF*t + RP values), and the partial
// rounds' MDS factored into one dense `pre_sparse_matrix` followed by RP sparse
// matrices M'' (dense first row and column, identity elsewhere). The circuit in
// gadgets/poseidon.hpp is built on that form, so its R1CS (constraint count and
// coefficients) matches neptune::circuit::poseidon_hash used by rust-fil-proofs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ff/fp.hpp"

namespace cuzk::circuits::native {

using Fr = ff::Fr;

// A t x t matrix over Fr, row-major: at(i, j) is row i, column j.
struct FrMatrix {
  std::size_t n = 0;
  std::vector<Fr> v;

  FrMatrix() = default;
  explicit FrMatrix(std::size_t size) : n(size), v(size * size, Fr::zero()) {}
  static FrMatrix identity(std::size_t size);

  Fr& at(std::size_t i, std::size_t j) { return v[i * n + j]; }
  const Fr& at(std::size_t i, std::size_t j) const { return v[i * n + j]; }
  bool operator==(const FrMatrix&) const = default;
};

FrMatrix mat_mul(const FrMatrix& a, const FrMatrix& b);
FrMatrix transpose(const FrMatrix& m);
// Gauss-Jordan inverse; aborts on a singular matrix (every matrix inverted here
// is a Cauchy matrix or one of its principal minors, hence invertible).
FrMatrix invert(const FrMatrix& m);
// The matrix without row i and column j.
FrMatrix minor(const FrMatrix& m, std::size_t i, std::size_t j);
// m * x (rows of m dotted with x).
std::vector<Fr> apply_left(const FrMatrix& m, std::span<const Fr> x);

// M'' = [[m00, v], [w_hat, I]]: first column `w_hat` (length t, w_hat[0] = m00)
// and first row tail `v_rest` (length t-1).
struct SparseMatrix {
  std::vector<Fr> w_hat;
  std::vector<Fr> v_rest;
};

// The Hades Grain LFSR constant stream: (rf + rp) * t field elements.
// field = 1 (prime field), sbox = 1 (x^alpha with alpha > 0), n = field bits.
std::vector<Fr> grain_round_constants(unsigned field, unsigned sbox, unsigned field_bits, unsigned t, unsigned rf,
                                      unsigned rp);

// neptune's Standard-strength partial-round count for an arity (2..36), from
// its round_numbers table; 0 for arities Filecoin never instantiates.
unsigned standard_partial_rounds(std::size_t arity);

struct PoseidonConstants {
  std::size_t arity = 0;
  std::size_t width = 0;           // t = arity + 1
  std::size_t full_rounds = 0;     // RF (both halves)
  std::size_t partial_rounds = 0;  // RP
  Fr domain_tag;

  std::vector<Fr> round_constants;  // (RF + RP) * t, round-major
  FrMatrix mds;                     // symmetric Cauchy matrix
  FrMatrix mds_inv;
  std::vector<Fr> compressed_round_constants;  // RF * t + RP
  FrMatrix pre_sparse_matrix;
  std::vector<SparseMatrix> sparse_matrices;  // RP, in application order

  std::size_t half_full_rounds() const { return full_rounds / 2; }

  // Filecoin's constants: Standard strength, MerkleTree tag 2^arity - 1.
  // Supported arities: 2, 4, 8, 11, 16, 24, 36 (aborts otherwise).
  static PoseidonConstants merkle_tree(std::size_t arity);
  // Same permutation with another domain tag (SnapDeals uses 1 * 2^40 on arity 2).
  static PoseidonConstants with_domain_tag(std::size_t arity, const Fr& tag);
};

// Process-lifetime immutable tables for the arities Filecoin uses; built once
// on first use (thread-safe function-local statics), never mutated.
const PoseidonConstants& filecoin_poseidon(std::size_t arity);

// Hash of exactly `arity` elements (neptune Poseidon::hash, optimized static).
Fr poseidon_hash(const PoseidonConstants& c, std::span<const Fr> preimage);
// The textbook permutation, used to cross-check the optimized path.
Fr poseidon_hash_reference(const PoseidonConstants& c, std::span<const Fr> preimage);

// rfp PoseidonFunction::hash_md: Merkle-Damgard over arity 36, acc = x_0,
// then acc = H(acc, next 35 elements, zero padded). Needs >= 2 elements.
Fr poseidon_hash_md(std::span<const Fr> input);

// Convenience: Poseidon with Filecoin's arity-2 constants (comm_r = H(comm_c, comm_r_last)).
Fr poseidon2(const Fr& a, const Fr& b);

}  // namespace cuzk::circuits::native
