// Shape statistics of a circuit without values and without storing it: the
// counts CountingCs gives, plus the per-variable densities the Groth16
// prover's MSMs are sized by (bellperson's DensityTracker).
//
//   density_a_aux   = #aux variables with a non-zero in some row of A
//   density_b_input = #inputs (ONE included) with a non-zero in some row of B
//   density_b_aux   = #aux variables with a non-zero in some row of B
//
// bellperson builds its L / B query bases from exactly these sets, so two
// circuits with equal counts but different densities still need different
// parameters. Densities need one bit per variable (16 MiB for the 130M aux
// of a 32 GiB PoRep partition); everything else is a counter.
//
// Terms are normalized as R1cs stores them (sorted, duplicates merged, zero
// coefficients dropped); `zero_terms` reports how many merged terms
// cancelled to zero, to show where that choice could matter (bellpepper's
// LinearCombination keeps such entries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "groth16/constraint_system.hpp"

namespace cuzk::circuits {

struct ShapeStats {
  std::uint64_t constraints = 0;  // excluding the one-per-input constraints
  std::uint64_t inputs = 0;       // including ONE
  std::uint64_t aux = 0;
  std::uint64_t nnz_a = 0, nnz_b = 0, nnz_c = 0;  // excluding input constraints
  std::uint64_t density_a_aux = 0;
  std::uint64_t density_b_input = 0;
  std::uint64_t density_b_aux = 0;
  std::uint64_t zero_terms = 0;  // terms whose (merged) coefficient is 0, dropped

  // The rows a prover sees: one extra A entry per input (bellperson's
  // "input constraints" x_i * 0 = 0 added after synthesis).
  std::uint64_t constraints_with_input_constraints() const { return constraints + inputs; }
  bool operator==(const ShapeStats&) const = default;
};

// Component-wise a - b (a must dominate b); used to isolate one repeated part.
ShapeStats operator-(const ShapeStats& a, const ShapeStats& b);
// a + k * d: extrapolates a shape from a repeated part's increment.
ShapeStats add_scaled(const ShapeStats& a, const ShapeStats& d, std::uint64_t k);

class ShapeStatsCs final : public groth16::ConstraintSystem {
 public:
  ShapeStatsCs() = default;
  bool has_witness() const override { return false; }
  bool keeps_constraints() const override { return true; }
  void push_namespace(const groth16::Name&) override { ++depth_; }
  void pop_namespace() override;
  std::size_t num_inputs() const override { return n_inputs_; }
  std::size_t num_aux() const override { return n_aux_; }
  std::size_t num_constraints() const override { return n_constraints_; }

  ShapeStats stats() const;

 protected:
  groth16::Variable alloc_aux(const groth16::Name& name, groth16::ValueFn value) override;
  groth16::Variable alloc_public(const groth16::Name& name, groth16::ValueFn value) override;
  void add_constraint(const groth16::Name& name, groth16::LinearCombination a, groth16::LinearCombination b,
                      groth16::LinearCombination c) override;
  void count_constraint() override;

 private:
  // Normalizes lc into scratch_ and returns its non-zero count; marks the
  // variables in the given density bitsets (null = not tracked).
  std::size_t visit(const groth16::LinearCombination& lc, std::vector<bool>* input_density,
                    std::vector<bool>* aux_density);

  std::size_t n_inputs_ = 1;  // ONE
  std::size_t n_aux_ = 0;
  std::size_t n_constraints_ = 0;
  std::uint64_t nnz_[3] = {0, 0, 0};
  std::uint64_t zero_terms_ = 0;
  std::size_t depth_ = 0;
  std::vector<bool> a_aux_, b_input_, b_aux_;  // grown with the variable spaces
  std::vector<groth16::Term> scratch_;
};

// Synthesizes `circuit` into a ShapeStatsCs.
ShapeStats shape_stats(const groth16::Circuit& circuit);

// TestCs::hash (= R1cs::fingerprint) of `circuit`, hashed while it is
// synthesized, nothing stored. The hash starts with the counts, hence the
// `counts` of a previous pass (shape_stats); aborts if synthesis disagrees.
std::string stream_fingerprint(const groth16::Circuit& circuit, const ShapeStats& counts);

}  // namespace cuzk::circuits
