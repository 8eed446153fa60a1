#include "circuits/filecoin/update_check.hpp"

namespace cuzk::circuits::filecoin {

using groth16::Fr;
using groth16::Variable;

namespace {
Fr value_or_throw(const groth16::ValueFn& f, const groth16::Name& name) {
  std::optional<Fr> v = f();
  if (!v) {
    throw groth16::SynthesisError(groth16::SynthesisErrorKind::kAssignmentMissing,
                                  "no value for variable '" + name.str() + "'");
  }
  return *v;
}
}  // namespace

StreamCheckCs::StreamCheckCs() { inputs_.push_back(Fr::one()); }

void StreamCheckCs::push_namespace(const groth16::Name& name) { ns_.push_back(name.str()); }
void StreamCheckCs::pop_namespace() { ns_.pop_back(); }

Variable StreamCheckCs::alloc_aux(const groth16::Name& name, groth16::ValueFn value) {
  aux_.push_back(value_or_throw(value, name));
  return Variable::aux(std::uint32_t(aux_.size() - 1));
}

Variable StreamCheckCs::alloc_public(const groth16::Name& name, groth16::ValueFn value) {
  inputs_.push_back(value_or_throw(value, name));
  return Variable::input(std::uint32_t(inputs_.size() - 1));
}

Fr StreamCheckCs::eval(const groth16::LinearCombination& lc) const {
  Fr acc = Fr::zero();
  for (const auto& t : lc.terms()) acc += t.coeff * (t.var.is_input() ? inputs_[t.var.index()] : aux_[t.var.index()]);
  return acc;
}

void StreamCheckCs::add_constraint(const groth16::Name& name, groth16::LinearCombination a,
                                   groth16::LinearCombination b, groth16::LinearCombination c) {
  const std::size_t row = n_constraints_++;
  if (first_bad_) return;
  if (eval(a) * eval(b) != eval(c)) {
    first_bad_ = row;
    for (const auto& n : ns_) first_bad_path_ += n + "/";
    first_bad_path_ += name.str();
  }
}

}  // namespace cuzk::circuits::filecoin
