// Circuit satisfaction of SnapDeals partitions without storing the R1CS:
// StreamCheckCs evaluates every constraint as it is enforced (a 32 GiB
// partition has 81M rows; TestCs or an R1cs would need tens of GB).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "groth16/constraint_system.hpp"

namespace cuzk::circuits::filecoin {

class StreamCheckCs final : public groth16::ConstraintSystem {
 public:
  StreamCheckCs();
  bool has_witness() const override { return true; }
  bool keeps_constraints() const override { return true; }
  void push_namespace(const groth16::Name& name) override;
  void pop_namespace() override;
  std::size_t num_inputs() const override { return inputs_.size(); }
  std::size_t num_aux() const override { return aux_.size(); }
  std::size_t num_constraints() const override { return n_constraints_; }

  // Index and namespace path of the first row with a * b != c.
  std::optional<std::size_t> first_unsatisfied() const { return first_bad_; }
  const std::string& first_unsatisfied_path() const { return first_bad_path_; }
  const std::vector<groth16::Fr>& inputs() const { return inputs_; }

 protected:
  groth16::Variable alloc_aux(const groth16::Name& name, groth16::ValueFn value) override;
  groth16::Variable alloc_public(const groth16::Name& name, groth16::ValueFn value) override;
  void add_constraint(const groth16::Name& name, groth16::LinearCombination a, groth16::LinearCombination b,
                      groth16::LinearCombination c) override;
  void count_constraint() override { ++n_constraints_; }

 private:
  groth16::Fr eval(const groth16::LinearCombination& lc) const;

  std::vector<groth16::Fr> inputs_, aux_;
  std::vector<std::string> ns_;
  std::size_t n_constraints_ = 0;
  std::optional<std::size_t> first_bad_;
  std::string first_bad_path_;
};

}  // namespace cuzk::circuits::filecoin
