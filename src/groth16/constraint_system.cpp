#include "groth16/constraint_system.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include "util/huge_pages.hpp"

namespace cuzk::groth16 {

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "cuzk::groth16: %s\n", what);
  std::abort();
}

// The unified column space of R1cs (inputs, then aux) is 32 bits wide.
constexpr std::uint64_t kMaxVariables = 0xffffffffull;

void check_room(std::size_t n_inputs, std::size_t n_aux) {
  if (n_inputs + n_aux >= kMaxVariables) {
    throw SynthesisError(SynthesisErrorKind::kTooManyVariables, "more than 2^32-1 variables in one circuit");
  }
}

Fr require_value(const ValueFn& f, const Name& name) {
  std::optional<Fr> v = f();
  if (!v) {
    throw SynthesisError(SynthesisErrorKind::kAssignmentMissing, "no value for variable '" + name.str() + "'");
  }
  return *v;
}

void put_be64(std::uint8_t* out, std::uint64_t x) {
  for (int i = 0; i < 8; ++i) out[i] = std::uint8_t(x >> (56 - 8 * i));
}

}  // namespace

std::string_view to_string(SynthesisErrorKind kind) {
  switch (kind) {
    case SynthesisErrorKind::kAssignmentMissing:
      return "assignment missing";
    case SynthesisErrorKind::kDivisionByZero:
      return "division by zero";
    case SynthesisErrorKind::kUnsatisfiable:
      return "unsatisfiable";
    case SynthesisErrorKind::kTooManyVariables:
      return "too many variables";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------

Fr LinearCombination::evaluate(std::span<const Fr> inputs, std::span<const Fr> aux) const {
  Fr acc = Fr::zero();
  for (const Term& t : terms_) {
    const Fr& x = t.var.is_input() ? inputs[t.var.index()] : aux[t.var.index()];
    acc += t.coeff * x;
  }
  return acc;
}

std::vector<Term> LinearCombination::normalized() const {
  std::vector<Term> out(terms_.begin(), terms_.end());
  // Stable, so merging duplicates adds coefficients in insertion order (the
  // sum is the same in any order; stability only keeps this deterministic).
  std::stable_sort(out.begin(), out.end(), [](const Term& x, const Term& y) { return x.var < y.var; });
  std::size_t w = 0;
  for (std::size_t r = 0; r < out.size();) {
    Term t = out[r++];
    while (r < out.size() && out[r].var == t.var) t.coeff += out[r++].coeff;
    if (!t.coeff.is_zero()) out[w++] = t;
  }
  out.resize(w);
  return out;
}

std::string Name::str() const {
  std::string s(base_);
  if (indexed_) {
    s += ' ';
    s += std::to_string(index_);
  }
  return s;
}

// ---------------------------------------------------------------------------
// WitnessCs

WitnessCs::WitnessCs() { w_.inputs.push_back(Fr::one()); }

WitnessCs::WitnessCs(Witness storage) : w_(std::move(storage)) {
  w_.inputs.clear();
  w_.aux.clear();
  w_.inputs.push_back(Fr::one());
}

WitnessCs::WitnessCs(std::span<Fr> inputs, std::span<Fr> aux)
    : owning_(false), in_{inputs.data(), 0, inputs.size()}, aux_{aux.data(), 0, aux.size()} {
  if (inputs.size() + aux.size() >= kMaxVariables) too_many_variables();
}

void WitnessCs::pop_namespace() {
  if (depth_ == 0) die("pop_namespace without push_namespace");
  --depth_;
}

void WitnessCs::reserve(std::size_t n_inputs, std::size_t n_aux) {
  if (!owning_) return;
  w_.inputs.reserve(n_inputs);
  const std::size_t had = w_.aux.capacity();
  w_.aux.reserve(n_aux);
  if (w_.aux.capacity() > had) prefault_huge_pages_for(w_.aux);  // fresh memory (util/huge_pages.hpp)
}

void WitnessCs::too_many_variables() {
  check_room(kMaxVariables, 0);
  std::abort();
}

void WitnessCs::span_overflow() { die("WitnessCs: a part allocated more variables than its span holds"); }

Witness WitnessCs::take_witness() {
  if (!owning_) die("WitnessCs::take_witness on a span-mode WitnessCs");
  return std::move(w_);
}

Variable WitnessCs::alloc_aux(const Name& name, ValueFn value) {
  if (!owning_) return push_aux(require_value(value, name));
  check_room(w_.inputs.size(), w_.aux.size());
  w_.aux.push_back(require_value(value, name));
  return Variable::aux(std::uint32_t(w_.aux.size() - 1));
}

Variable WitnessCs::alloc_public(const Name& name, ValueFn value) {
  if (!owning_) {
    if (in_.used == in_.cap) span_overflow();
    in_.data[in_.used++] = require_value(value, name);
    return Variable::input(std::uint32_t(in_.used));  // index 0 is ONE
  }
  check_room(w_.inputs.size(), w_.aux.size());
  w_.inputs.push_back(require_value(value, name));
  return Variable::input(std::uint32_t(w_.inputs.size() - 1));
}

void WitnessCs::add_constraint(const Name&, LinearCombination, LinearCombination, LinearCombination) {
  // keeps_constraints() is false, so enforce() never gets here.
  die("WitnessCs::add_constraint called");
}

// ---------------------------------------------------------------------------
// CountingCs

void CountingCs::pop_namespace() {
  if (depth_ == 0) die("pop_namespace without push_namespace");
  --depth_;
}

Variable CountingCs::alloc_aux(const Name&, ValueFn) {
  check_room(n_inputs_, n_aux_);
  return Variable::aux(std::uint32_t(n_aux_++));
}

Variable CountingCs::alloc_public(const Name&, ValueFn) {
  check_room(n_inputs_, n_aux_);
  return Variable::input(std::uint32_t(n_inputs_++));
}

std::size_t CountingCs::count_nonzero(const LinearCombination& lc) {
  if (lc.size() <= 1) return lc.size() == 1 && !lc.terms()[0].coeff.is_zero() ? 1 : 0;
  scratch_.assign(lc.terms().begin(), lc.terms().end());
  std::sort(scratch_.begin(), scratch_.end(), [](const Term& x, const Term& y) { return x.var < y.var; });
  std::size_t n = 0;
  for (std::size_t i = 0; i < scratch_.size();) {
    Variable v = scratch_[i].var;
    Fr sum = scratch_[i++].coeff;
    while (i < scratch_.size() && scratch_[i].var == v) sum += scratch_[i++].coeff;
    n += sum.is_zero() ? 0 : 1;
  }
  return n;
}

void CountingCs::add_constraint(const Name&, LinearCombination a, LinearCombination b, LinearCombination c) {
  nnz_[0] += count_nonzero(a);
  nnz_[1] += count_nonzero(b);
  nnz_[2] += count_nonzero(c);
  ++n_constraints_;
}

void CountingCs::count_constraint() { die("CountingCs::count_constraint called"); }

// ---------------------------------------------------------------------------
// TestCs

TestCs::TestCs() {
  inputs_.push_back(Fr::one());
  input_paths_.push_back("ONE");
}

std::string TestCs::path(const Name& name) const {
  std::string leaf = name.str();
  if (leaf.find('/') != std::string::npos) die("'/' is not allowed in names");
  std::string p;
  for (const std::string& n : ns_) {
    p += n;
    p += '/';
  }
  p += leaf;
  return p;
}

void TestCs::push_namespace(const Name& name) {
  std::string n = name.str();
  if (n.find('/') != std::string::npos) die("'/' is not allowed in names");
  ns_.push_back(std::move(n));
}

void TestCs::pop_namespace() {
  if (ns_.empty()) die("pop_namespace without push_namespace");
  ns_.pop_back();
}

Variable TestCs::alloc_aux(const Name& name, ValueFn value) {
  check_room(inputs_.size(), aux_.size());
  aux_.push_back(require_value(value, name));
  aux_paths_.push_back(path(name));
  return Variable::aux(std::uint32_t(aux_.size() - 1));
}

Variable TestCs::alloc_public(const Name& name, ValueFn value) {
  check_room(inputs_.size(), aux_.size());
  inputs_.push_back(require_value(value, name));
  input_paths_.push_back(path(name));
  return Variable::input(std::uint32_t(inputs_.size() - 1));
}

void TestCs::add_constraint(const Name& name, LinearCombination a, LinearCombination b, LinearCombination c) {
  auto check = [this](const LinearCombination& lc) {
    for (const Term& t : lc.terms()) {
      std::size_t n = t.var.is_input() ? inputs_.size() : aux_.size();
      if (t.var.index() >= n) die("constraint uses an unallocated variable");
    }
  };
  check(a);
  check(b);
  check(c);
  constraints_.push_back({std::move(a), std::move(b), std::move(c), path(name)});
}

void TestCs::count_constraint() { die("TestCs::count_constraint called"); }

std::optional<std::string> TestCs::which_is_unsatisfied() const {
  for (const Constraint& k : constraints_) {
    Fr a = k.a.evaluate(inputs_, aux_);
    Fr b = k.b.evaluate(inputs_, aux_);
    Fr c = k.c.evaluate(inputs_, aux_);
    if (a * b != c) return k.path;
  }
  return std::nullopt;
}

void TestCs::set_value(Variable v, const Fr& value) {
  if (v.is_input()) {
    if (v.index() == 0) die("ONE cannot be changed");
    inputs_.at(v.index()) = value;
  } else {
    aux_.at(v.index()) = value;
  }
}

Fr TestCs::value(Variable v) const { return v.is_input() ? inputs_.at(v.index()) : aux_.at(v.index()); }

const std::string& TestCs::path_of(Variable v) const {
  return v.is_input() ? input_paths_.at(v.index()) : aux_paths_.at(v.index());
}

std::string TestCs::hash() const {
  R1csHasher h(inputs_.size(), aux_.size(), constraints_.size());
  for (const Constraint& k : constraints_) {
    h.add_lc(k.a.normalized());
    h.add_lc(k.b.normalized());
    h.add_lc(k.c.normalized());
  }
  return h.finish_hex();
}

// ---------------------------------------------------------------------------
// R1csHasher

R1csHasher::R1csHasher(std::uint64_t n_inputs, std::uint64_t n_aux, std::uint64_t n_constraints)
    : ctx_(EVP_MD_CTX_new()), n_inputs_(n_inputs) {
  EVP_MD_CTX* ctx = static_cast<EVP_MD_CTX*>(ctx_);
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_blake2s256(), nullptr) != 1) {
    die("OpenSSL BLAKE2s256 unavailable");
  }
  std::array<std::uint8_t, 24> buf{};
  put_be64(buf.data(), n_inputs);
  put_be64(buf.data() + 8, n_aux);
  put_be64(buf.data() + 16, n_constraints);
  update(buf.data(), buf.size());
}

R1csHasher::~R1csHasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void R1csHasher::update(const void* data, std::size_t n) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, n) != 1) die("EVP_DigestUpdate");
}

void R1csHasher::add_lc(std::span<const Term> terms) {
  std::array<std::uint8_t, 8 + 1 + 32> buf{};
  put_be64(buf.data(), terms.size());
  update(buf.data(), 8);
  for (const Term& t : terms) {
    buf[0] = t.var.is_input() ? 'I' : 'A';
    put_be64(buf.data() + 1, t.var.index());
    t.coeff.to_bytes_be(std::span<std::uint8_t>(buf.data() + 9, 32));
    update(buf.data(), 9 + 32);
  }
}

void R1csHasher::add_lc_columns(std::span<const std::uint32_t> cols, std::span<const Fr> coeffs) {
  std::array<std::uint8_t, 8 + 1 + 32> buf{};
  put_be64(buf.data(), cols.size());
  update(buf.data(), 8);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    bool input = cols[i] < n_inputs_;
    buf[0] = input ? 'I' : 'A';
    put_be64(buf.data() + 1, input ? cols[i] : cols[i] - n_inputs_);
    coeffs[i].to_bytes_be(std::span<std::uint8_t>(buf.data() + 9, 32));
    update(buf.data(), 9 + 32);
  }
}

std::string R1csHasher::finish_hex() {
  std::array<std::uint8_t, EVP_MAX_MD_SIZE> md{};
  unsigned len = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md.data(), &len) != 1) {
    die("EVP_DigestFinal_ex");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < len; ++i) {
    s += kHex[md[i] >> 4];
    s += kHex[md[i] & 15];
  }
  return s;
}

}  // namespace cuzk::groth16
