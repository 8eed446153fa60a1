#include "circuits/gadgets/constraint.hpp"

namespace cuzk::circuits::gadgets {

namespace {

LinearCombination one_lc() { return LinearCombination(Variable::one()); }

}  // namespace

void enforce_equal(ConstraintSystem& cs, const Name& name, const AllocatedNum& a, const AllocatedNum& b) {
  cs.enforce(
      name, [&] { return LinearCombination(a.variable()); }, one_lc, [&] { return LinearCombination(b.variable()); });
}

void enforce_sum(ConstraintSystem& cs, const Name& name, const AllocatedNum& a, const AllocatedNum& b,
                 const AllocatedNum& sum) {
  cs.enforce(
      name, [&] { return LinearCombination(a.variable()) + b.variable(); }, one_lc,
      [&] { return LinearCombination(sum.variable()); });
}

void enforce_difference(ConstraintSystem& cs, const Name& name, const AllocatedNum& a, const AllocatedNum& b,
                        const AllocatedNum& difference) {
  cs.enforce(
      name, [&] { return LinearCombination(difference.variable()) + b.variable(); }, one_lc,
      [&] { return LinearCombination(a.variable()); });
}

AllocatedNum add(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b) {
  std::optional<Fr> v;
  if (a.value() && b.value()) v = *a.value() + *b.value();
  AllocatedNum res;
  {
    auto ns = cs.ns("add_num");
    res = AllocatedNum::alloc(cs, v);
  }
  enforce_sum(cs, "sum constraint", a, b, res);
  return res;
}

AllocatedNum sub(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b) {
  std::optional<Fr> v;
  if (a.value() && b.value()) v = *a.value() - *b.value();
  AllocatedNum res;
  {
    auto ns = cs.ns("sub_num");
    res = AllocatedNum::alloc(cs, v);
  }
  enforce_difference(cs, "subtraction constraint", a, b, res);
  return res;
}

AllocatedNum encode(ConstraintSystem& cs, const AllocatedNum& key, const AllocatedNum& value) {
  auto ns = cs.ns("encode_add");
  return add(cs, key, value);
}

AllocatedNum decode(ConstraintSystem& cs, const AllocatedNum& key, const AllocatedNum& value) {
  auto ns = cs.ns("decode_sub");
  return sub(cs, value, key);
}

}  // namespace cuzk::circuits::gadgets
