#include "circuits/shape_stats.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace cuzk::circuits {

using groth16::LinearCombination;
using groth16::Name;
using groth16::Term;
using groth16::ValueFn;
using groth16::Variable;

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "ShapeStatsCs: %s\n", what);
  std::abort();
}

std::uint64_t popcount(const std::vector<bool>& bits) {
  return std::uint64_t(std::count(bits.begin(), bits.end(), true));
}

void check_room(std::size_t n_inputs, std::size_t n_aux) {
  if (n_inputs + n_aux >= std::numeric_limits<std::uint32_t>::max()) {
    throw groth16::SynthesisError(groth16::SynthesisErrorKind::kTooManyVariables, "more than 2^32 variables");
  }
}

}  // namespace

ShapeStats operator-(const ShapeStats& a, const ShapeStats& b) {
  ShapeStats d;
  d.constraints = a.constraints - b.constraints;
  d.inputs = a.inputs - b.inputs;
  d.aux = a.aux - b.aux;
  d.nnz_a = a.nnz_a - b.nnz_a;
  d.nnz_b = a.nnz_b - b.nnz_b;
  d.nnz_c = a.nnz_c - b.nnz_c;
  d.density_a_aux = a.density_a_aux - b.density_a_aux;
  d.density_b_input = a.density_b_input - b.density_b_input;
  d.density_b_aux = a.density_b_aux - b.density_b_aux;
  d.zero_terms = a.zero_terms - b.zero_terms;
  return d;
}

ShapeStats add_scaled(const ShapeStats& a, const ShapeStats& d, std::uint64_t k) {
  ShapeStats r = a;
  r.constraints += k * d.constraints;
  r.inputs += k * d.inputs;
  r.aux += k * d.aux;
  r.nnz_a += k * d.nnz_a;
  r.nnz_b += k * d.nnz_b;
  r.nnz_c += k * d.nnz_c;
  r.density_a_aux += k * d.density_a_aux;
  r.density_b_input += k * d.density_b_input;
  r.density_b_aux += k * d.density_b_aux;
  r.zero_terms += k * d.zero_terms;
  return r;
}

void ShapeStatsCs::pop_namespace() {
  if (depth_ == 0) die("pop_namespace without push_namespace");
  --depth_;
}

Variable ShapeStatsCs::alloc_aux(const Name&, ValueFn) {
  check_room(n_inputs_, n_aux_);
  return Variable::aux(std::uint32_t(n_aux_++));
}

Variable ShapeStatsCs::alloc_public(const Name&, ValueFn) {
  check_room(n_inputs_, n_aux_);
  return Variable::input(std::uint32_t(n_inputs_++));
}

std::size_t ShapeStatsCs::visit(const LinearCombination& lc, std::vector<bool>* input_density,
                                std::vector<bool>* aux_density) {
  scratch_.assign(lc.terms().begin(), lc.terms().end());
  if (scratch_.size() > 1) {
    std::sort(scratch_.begin(), scratch_.end(), [](const Term& x, const Term& y) { return x.var < y.var; });
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < scratch_.size();) {
    const Variable v = scratch_[i].var;
    groth16::Fr sum = scratch_[i].coeff;
    for (++i; i < scratch_.size() && scratch_[i].var == v; ++i) sum += scratch_[i].coeff;
    if (sum.is_zero()) {
      ++zero_terms_;
      continue;
    }
    ++n;
    std::vector<bool>* density = v.is_input() ? input_density : aux_density;
    if (density != nullptr) {
      if (density->size() <= v.index()) density->resize(std::size_t(v.index()) + 1, false);
      (*density)[v.index()] = true;
    }
  }
  return n;
}

void ShapeStatsCs::add_constraint(const Name&, LinearCombination a, LinearCombination b, LinearCombination c) {
  nnz_[0] += visit(a, nullptr, &a_aux_);
  nnz_[1] += visit(b, &b_input_, &b_aux_);
  nnz_[2] += visit(c, nullptr, nullptr);
  ++n_constraints_;
}

void ShapeStatsCs::count_constraint() { die("count_constraint called on a constraint-keeping CS"); }

ShapeStats ShapeStatsCs::stats() const {
  ShapeStats s;
  s.constraints = n_constraints_;
  s.inputs = n_inputs_;
  s.aux = n_aux_;
  s.nnz_a = nnz_[0];
  s.nnz_b = nnz_[1];
  s.nnz_c = nnz_[2];
  s.density_a_aux = popcount(a_aux_);
  s.density_b_input = popcount(b_input_);
  s.density_b_aux = popcount(b_aux_);
  s.zero_terms = zero_terms_;
  return s;
}

namespace {

// Feeds each constraint to an R1csHasher as it is enforced.
class FingerprintCs final : public groth16::ConstraintSystem {
 public:
  explicit FingerprintCs(const ShapeStats& counts) : hasher_(counts.inputs, counts.aux, counts.constraints) {}
  bool has_witness() const override { return false; }
  bool keeps_constraints() const override { return true; }
  void push_namespace(const Name&) override {}
  void pop_namespace() override {}
  std::size_t num_inputs() const override { return n_inputs_; }
  std::size_t num_aux() const override { return n_aux_; }
  std::size_t num_constraints() const override { return n_constraints_; }
  std::string finish() { return hasher_.finish_hex(); }

 protected:
  Variable alloc_aux(const Name&, ValueFn) override {
    check_room(n_inputs_, n_aux_);
    return Variable::aux(std::uint32_t(n_aux_++));
  }
  Variable alloc_public(const Name&, ValueFn) override {
    check_room(n_inputs_, n_aux_);
    return Variable::input(std::uint32_t(n_inputs_++));
  }
  void add_constraint(const Name&, LinearCombination a, LinearCombination b, LinearCombination c) override {
    hasher_.add_lc(a.normalized());
    hasher_.add_lc(b.normalized());
    hasher_.add_lc(c.normalized());
    ++n_constraints_;
  }
  void count_constraint() override { die("count_constraint called on a constraint-keeping CS"); }

 private:
  groth16::R1csHasher hasher_;
  std::size_t n_inputs_ = 1;
  std::size_t n_aux_ = 0;
  std::size_t n_constraints_ = 0;
};

}  // namespace

std::string stream_fingerprint(const groth16::Circuit& circuit, const ShapeStats& counts) {
  FingerprintCs cs(counts);
  circuit.synthesize(cs);
  if (cs.num_inputs() != counts.inputs || cs.num_aux() != counts.aux || cs.num_constraints() != counts.constraints) {
    die("stream_fingerprint: counts differ from the first pass");
  }
  return cs.finish();
}

ShapeStats shape_stats(const groth16::Circuit& circuit) {
  ShapeStatsCs cs;
  circuit.synthesize(cs);
  return cs.stats();
}

}  // namespace cuzk::circuits
