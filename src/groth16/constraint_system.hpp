// Rank-1 constraint systems: the interface circuits and gadgets are written
// against, in the spirit of bellpepper's ConstraintSystem.
//
// A circuit is code, not data: `synthesize(ConstraintSystem&)` allocates
// variables and enforces constraints <A,w> * <B,w> = <C,w>. The same code runs
// against several back ends, which differ in what they keep:
//
//   back end      | constraints      | witness values | used for
//   --------------+------------------+----------------+------------------------------
//   RecordingCs   | recorded (R1cs)  | optional       | compiling the shape once (r1cs.hpp)
//   WitnessCs     | ignored          | collected      | the proving fast path
//   CountingCs    | counted (nnz)    | never          | sizing a shape without storing it
//   TestCs        | kept as LCs      | collected      | tests: satisfaction, counts, hash
//
// Values may be absent: shape-only synthesis (RecordingCs without witness)
// never calls a value function, so compiling a 130M-constraint circuit does
// not compute SHA-256 or Poseidon natively. Gadgets carry `std::optional<Fr>`
// values and pass lambdas to alloc(); a lambda returning nullopt while the back
// end needs a value is an operating error (SynthesisError kAssignmentMissing).
//
// Variables live in two index spaces, inputs and aux (bellperson's Index). The
// constant ONE is input 0 and every back end allocates it in its constructor.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ff/fp.hpp"

namespace cuzk::groth16 {

using Fr = ff::Fr;

// ---------------------------------------------------------------------------
// Errors

enum class SynthesisErrorKind : std::uint8_t {
  kAssignmentMissing,  // a value function had no value while the back end needs one
  kDivisionByZero,     // a gadget asked for the inverse of zero
  kUnsatisfiable,      // a gadget found its inputs inconsistent (e.g. a non-boolean bit)
  kTooManyVariables,   // the unified index space would exceed 32 bits
};

std::string_view to_string(SynthesisErrorKind kind);

class SynthesisError : public std::runtime_error {
 public:
  SynthesisError(SynthesisErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  SynthesisErrorKind kind() const { return kind_; }

 private:
  SynthesisErrorKind kind_;
};

// ---------------------------------------------------------------------------
// Variables and linear combinations

enum class VarKind : std::uint8_t { kInput = 0, kAux = 1 };

// A variable is an index into the input or the aux assignment. 32-bit indices
// cover the largest Filecoin circuit (130M aux for a 32 GiB PoRep partition).
class Variable {
 public:
  // Default: ONE (so containers of variables can be sized before filling).
  constexpr Variable() : Variable(VarKind::kInput, 0) {}
  constexpr Variable(VarKind kind, std::uint32_t index) : index_(index), kind_(kind) {}
  static constexpr Variable input(std::uint32_t index) { return {VarKind::kInput, index}; }
  static constexpr Variable aux(std::uint32_t index) { return {VarKind::kAux, index}; }
  // The constant 1: input 0.
  static constexpr Variable one() { return input(0); }

  constexpr VarKind kind() const { return kind_; }
  constexpr bool is_input() const { return kind_ == VarKind::kInput; }
  constexpr std::uint32_t index() const { return index_; }
  constexpr bool operator==(const Variable&) const = default;
  // Inputs before aux, then by index: the order of bellpepper's hash and of
  // the unified column space of R1cs.
  constexpr bool operator<(const Variable& o) const { return kind_ != o.kind_ ? kind_ < o.kind_ : index_ < o.index_; }

 private:
  std::uint32_t index_;
  VarKind kind_;
};

struct Term {
  Variable var;
  Fr coeff;
};

// Term storage with room for kInline terms in place: most LCs of boolean and
// SHA-256 gadgets hold one to three terms, and a heap allocation per LC was
// ~10% of compiling the demo circuit.
class TermVec {
 public:
  static constexpr std::size_t kInline = 2;
  static_assert(std::is_trivially_copyable_v<Term>);

  TermVec() = default;
  TermVec(const TermVec& o) { append(o.data(), o.size_); }
  TermVec(TermVec&& o) noexcept { steal(o); }
  TermVec& operator=(const TermVec& o) {
    if (this != &o) {
      size_ = 0;
      append(o.data(), o.size_);
    }
    return *this;
  }
  TermVec& operator=(TermVec&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~TermVec() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Term* data() const { return heap_ ? heap_ : inline_; }
  Term* data() { return heap_ ? heap_ : inline_; }
  const Term* begin() const { return data(); }
  const Term* end() const { return data() + size_; }
  Term* begin() { return data(); }
  Term* end() { return data() + size_; }

  void reserve(std::size_t n) {
    if (n <= capacity()) return;
    Term* p = new Term[n];
    std::copy(begin(), end(), p);
    delete[] heap_;
    heap_ = p;
    heap_cap_ = n;
  }
  void push_back(const Term& t) {
    if (size_ == capacity()) reserve(2 * capacity());
    data()[size_++] = t;
  }
  void append(const Term* p, std::size_t n) {
    if (size_ + n > capacity()) reserve(std::max(size_ + n, 2 * capacity()));
    std::copy(p, p + n, data() + size_);
    size_ += n;
  }

 private:
  std::size_t capacity() const { return heap_ ? heap_cap_ : kInline; }
  void release() {
    delete[] heap_;
    heap_ = nullptr;
    heap_cap_ = 0;
    size_ = 0;
  }
  void steal(TermVec& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      heap_cap_ = o.heap_cap_;
      o.heap_ = nullptr;
      o.heap_cap_ = 0;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }

  Term* heap_ = nullptr;  // owned when non-null; inline_ is unused then
  std::size_t heap_cap_ = 0;
  std::size_t size_ = 0;
  Term inline_[kInline];
};

// A list of (variable, coefficient) terms. Duplicates and zero coefficients
// are allowed here (appending is the hot path of synthesis); back ends that
// need a canonical form call normalized().
class LinearCombination {
 public:
  LinearCombination() = default;
  // Implicit so that a Variable can be passed wherever an LC is expected.
  LinearCombination(Variable v) { terms_.push_back({v, Fr::one()}); }  // NOLINT
  LinearCombination(Term t) { terms_.push_back(t); }                   // NOLINT

  static LinearCombination zero() { return {}; }
  // c * ONE.
  static LinearCombination constant(const Fr& c) { return Term{Variable::one(), c}; }

  std::span<const Term> terms() const { return {terms_.data(), terms_.size()}; }
  std::size_t size() const { return terms_.size(); }
  bool empty() const { return terms_.empty(); }
  void reserve(std::size_t n) { terms_.reserve(n); }

  LinearCombination& add(const Fr& coeff, Variable v) {
    terms_.push_back({v, coeff});
    return *this;
  }
  LinearCombination& operator+=(Variable v) { return add(Fr::one(), v); }
  LinearCombination& operator-=(Variable v) { return add(-Fr::one(), v); }
  LinearCombination& operator+=(const Term& t) { return add(t.coeff, t.var); }
  LinearCombination& operator-=(const Term& t) { return add(-t.coeff, t.var); }
  LinearCombination& operator+=(const LinearCombination& o) {
    terms_.append(o.terms_.data(), o.terms_.size());
    return *this;
  }
  LinearCombination& operator-=(const LinearCombination& o) {
    terms_.reserve(terms_.size() + o.terms_.size());
    for (const Term& t : o.terms_) terms_.push_back({t.var, -t.coeff});
    return *this;
  }
  // Scales every coefficient.
  LinearCombination& operator*=(const Fr& s) {
    for (Term& t : terms_) t.coeff *= s;
    return *this;
  }

  // Evaluates sum coeff_i * value(var_i) given the two assignments.
  Fr evaluate(std::span<const Fr> inputs, std::span<const Fr> aux) const;

  // Sorted by variable (inputs first), duplicates merged, zero coefficients
  // dropped: the canonical form bellpepper hashes and R1cs stores.
  std::vector<Term> normalized() const;

 private:
  TermVec terms_;
};

// coeff * var, to be added to an LC: `lc + Fr::from_u64(2) * v`.
inline Term operator*(const Fr& coeff, Variable v) { return {v, coeff}; }

inline LinearCombination operator+(LinearCombination lc, Variable v) { return lc += v; }
inline LinearCombination operator-(LinearCombination lc, Variable v) { return lc -= v; }
inline LinearCombination operator+(LinearCombination lc, const Term& t) { return lc += t; }
inline LinearCombination operator-(LinearCombination lc, const Term& t) { return lc -= t; }
inline LinearCombination operator+(LinearCombination lc, const LinearCombination& o) { return lc += o; }
inline LinearCombination operator-(LinearCombination lc, const LinearCombination& o) { return lc -= o; }
inline LinearCombination operator*(LinearCombination lc, const Fr& s) { return lc *= s; }
inline LinearCombination operator*(const Fr& s, LinearCombination lc) { return lc *= s; }

// ---------------------------------------------------------------------------
// Names

// An annotation for a variable, constraint or namespace. Only TestCs renders
// names; the other back ends ignore them, so a name is a borrowed string plus
// an optional index and formatting happens only when needed
// (`Name("bit", i)` renders as "bit 5"). The viewed string must outlive the call.
class Name {
 public:
  Name(const char* s) : base_(s) {}         // NOLINT
  Name(std::string_view s) : base_(s) {}    // NOLINT
  Name(const std::string& s) : base_(s) {}  // NOLINT
  Name(std::string_view base, std::uint64_t index) : base_(base), index_(index), indexed_(true) {}
  std::string str() const;

 private:
  std::string_view base_;
  std::uint64_t index_ = 0;
  bool indexed_ = false;
};

// ---------------------------------------------------------------------------
// Value sources

// A non-owning reference to a callable returning std::optional<Fr>, valid for
// the duration of one alloc() call (no allocation, unlike std::function).
class ValueFn {
 public:
  template <class F>
  requires std::invocable<F&> &&(!std::same_as<std::remove_cvref_t<F>, ValueFn>)ValueFn(F&& f)  // NOLINT
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_(&invoke<std::remove_reference_t<F>>) {}
  std::optional<Fr> operator()() const { return call_(obj_); }

 private:
  template <class F>
  static std::optional<Fr> invoke(void* obj) {
    return std::optional<Fr>((*static_cast<F*>(obj))());
  }
  void* obj_;
  std::optional<Fr> (*call_)(void*);
};

// What alloc() accepts as a value: Fr, std::optional<Fr>, or a callable
// returning either (called only when the back end wants values).
template <class V>
concept ValueLike = std::convertible_to<V, std::optional<Fr>> || requires(V& v) {
  { v() } -> std::convertible_to<std::optional<Fr>>;
};

// What enforce() accepts for A, B and C: an LC (or anything convertible, such
// as a Variable), or a callable building one. Callables are invoked only by
// back ends that keep constraints, so WitnessCs skips building the LCs.
template <class L>
concept LcLike = std::convertible_to<L, LinearCombination> || requires(L& l) {
  { l() } -> std::convertible_to<LinearCombination>;
};

// ---------------------------------------------------------------------------
// The interface

class ConstraintSystem;

// Pops the namespace it pushed when destroyed.
class [[nodiscard]] NamespaceGuard {
 public:
  NamespaceGuard(ConstraintSystem& cs, const Name& name);
  ~NamespaceGuard();
  NamespaceGuard(const NamespaceGuard&) = delete;
  NamespaceGuard& operator=(const NamespaceGuard&) = delete;

 private:
  ConstraintSystem& cs_;
};

class ConstraintSystem {
 public:
  virtual ~ConstraintSystem() = default;
  ConstraintSystem(const ConstraintSystem&) = delete;
  ConstraintSystem& operator=(const ConstraintSystem&) = delete;

  // True when alloc() evaluates value functions. Gadgets may test it to skip
  // native computation in shape-only synthesis.
  virtual bool has_witness() const = 0;
  // True when enforce() keeps constraints (callable LCs are then invoked).
  virtual bool keeps_constraints() const = 0;

  static constexpr Variable one() { return Variable::one(); }

  // Allocates an aux (private) variable.
  template <ValueLike V>
  Variable alloc(const Name& name, V&& value) {
    if constexpr (std::convertible_to<V, std::optional<Fr>>) {
      std::optional<Fr> v(std::forward<V>(value));
      return alloc_aux(name, ValueFn([&v] { return v; }));
    } else {
      return alloc_aux(name, ValueFn(value));
    }
  }
  // Allocates a public input.
  template <ValueLike V>
  Variable alloc_input(const Name& name, V&& value) {
    if constexpr (std::convertible_to<V, std::optional<Fr>>) {
      std::optional<Fr> v(std::forward<V>(value));
      return alloc_public(name, ValueFn([&v] { return v; }));
    } else {
      return alloc_public(name, ValueFn(value));
    }
  }

  // Enforces <a,w> * <b,w> = <c,w>.
  template <LcLike LA, LcLike LB, LcLike LC>
  void enforce(const Name& name, LA&& a, LB&& b, LC&& c) {
    if (!keeps_constraints()) {
      count_constraint();
      return;
    }
    add_constraint(name, to_lc(std::forward<LA>(a)), to_lc(std::forward<LB>(b)), to_lc(std::forward<LC>(c)));
  }

  virtual void push_namespace(const Name& name) = 0;
  virtual void pop_namespace() = 0;
  // RAII namespace: `auto ns = cs.ns("round", i);`
  NamespaceGuard ns(const Name& name) { return NamespaceGuard(*this, name); }
  NamespaceGuard ns(std::string_view base, std::uint64_t index) { return NamespaceGuard(*this, Name(base, index)); }

  // Counts as bellpepper's TestConstraintSystem reports them: inputs include
  // ONE, constraints exclude the per-input constraints added at compile time.
  virtual std::size_t num_inputs() const = 0;
  virtual std::size_t num_aux() const = 0;
  virtual std::size_t num_constraints() const = 0;

 protected:
  ConstraintSystem() = default;

  virtual Variable alloc_aux(const Name& name, ValueFn value) = 0;
  virtual Variable alloc_public(const Name& name, ValueFn value) = 0;
  virtual void add_constraint(const Name& name, LinearCombination a, LinearCombination b, LinearCombination c) = 0;
  // Called instead of add_constraint when keeps_constraints() is false.
  virtual void count_constraint() = 0;

 private:
  template <class L>
  static LinearCombination to_lc(L&& l) {
    if constexpr (std::convertible_to<L, LinearCombination>) {
      return LinearCombination(std::forward<L>(l));
    } else {
      return LinearCombination(l());
    }
  }
};

inline NamespaceGuard::NamespaceGuard(ConstraintSystem& cs, const Name& name) : cs_(cs) { cs_.push_namespace(name); }
inline NamespaceGuard::~NamespaceGuard() { cs_.pop_namespace(); }

// A circuit: the same synthesize() runs in every back end.
class Circuit {
 public:
  virtual ~Circuit() = default;
  virtual void synthesize(ConstraintSystem& cs) const = 0;
};

template <class C>
concept CircuitLike = requires(const C& c, ConstraintSystem& cs) {
  c.synthesize(cs);
};

// ---------------------------------------------------------------------------
// Back ends

// The assignment of a circuit: inputs (inputs[0] = 1) and aux.
struct Witness {
  std::vector<Fr> inputs;
  std::vector<Fr> aux;
};

// Variable counts of a circuit (ONE included in inputs), e.g. from its R1cs:
// lets witness generation allocate once. Zero: unknown.
struct WitnessShape {
  std::size_t inputs = 0;
  std::size_t aux = 0;
};

// Collects the assignment only; constraints are counted, never built.
class WitnessCs final : public ConstraintSystem {
 public:
  // The unified column space of R1cs (inputs, then aux) is 32 bits wide.
  static constexpr std::uint64_t kMaxVariables = 0xffffffffull;

  WitnessCs();
  // Fills `storage`'s vectors from empty, keeping their capacity: a recycled
  // witness's pages are already faulted in, so they are not cleared again.
  explicit WitnessCs(Witness storage);
  // Writes into memory the caller owns: the public inputs it allocates after
  // ONE go to `inputs`, its aux values to `aux`, in order (one part of a
  // larger witness synthesized in place: synthesize_uniform_parts). Writing
  // past either span is a bug (abort); filled() says both were used exactly.
  WitnessCs(std::span<Fr> inputs, std::span<Fr> aux);
  bool has_witness() const override { return true; }
  bool keeps_constraints() const override { return false; }
  void push_namespace(const Name&) override { ++depth_; }
  void pop_namespace() override;
  std::size_t num_inputs() const override { return owning_ ? w_.inputs.size() : in_.used + 1; }
  std::size_t num_aux() const override { return owning_ ? w_.aux.size() : aux_.used; }
  std::size_t num_constraints() const override { return n_constraints_; }

  // Owning mode only (the constructors without spans).
  const Witness& witness() const { return w_; }
  Witness take_witness();
  // Pre-sizes the vectors when the shape is known (avoids regrowth).
  void reserve(std::size_t n_inputs, std::size_t n_aux);
  // Span mode: both spans written to their end.
  bool filled() const { return in_.used == in_.cap && aux_.used == aux_.cap; }

  // For gadgets' values-only fast paths, which allocate exactly the
  // variables and count exactly the constraints their gadget code would
  // (sha256_witness.hpp): one aux value appended, n constraints counted.
  Variable push_aux(const Fr& value) {
    if (owning_) {
      if (w_.inputs.size() + w_.aux.size() >= kMaxVariables) too_many_variables();
      w_.aux.push_back(value);
      return Variable::aux(std::uint32_t(w_.aux.size() - 1));
    }
    if (aux_.used == aux_.cap) span_overflow();
    aux_.data[aux_.used] = value;
    return Variable::aux(std::uint32_t(aux_.used++));
  }
  void count_constraints(std::size_t n) { n_constraints_ += n; }
  // n aux values appended for the caller to write (aux_data() + the
  // returned index onwards); the index of the first.
  std::uint32_t extend_aux(std::size_t n) {
    if (owning_) {
      if (w_.inputs.size() + w_.aux.size() + n > kMaxVariables) too_many_variables();
      const std::size_t first = w_.aux.size();
      w_.aux.resize(first + n);
      return static_cast<std::uint32_t>(first);
    }
    if (aux_.cap - aux_.used < n) span_overflow();
    const std::size_t first = aux_.used;
    aux_.used += n;
    return static_cast<std::uint32_t>(first);
  }
  Fr* aux_data() { return owning_ ? w_.aux.data() : aux_.data; }

 protected:
  Variable alloc_aux(const Name& name, ValueFn value) override;
  Variable alloc_public(const Name& name, ValueFn value) override;
  void add_constraint(const Name&, LinearCombination, LinearCombination, LinearCombination) override;
  void count_constraint() override { ++n_constraints_; }

 private:
  // Span mode: [data, data + cap) with `used` written.
  struct Cursor {
    Fr* data = nullptr;
    std::size_t used = 0;
    std::size_t cap = 0;
  };
  [[noreturn]] static void too_many_variables();
  // A part allocated more than the span it was given (a bug of its caller).
  [[noreturn]] static void span_overflow();

  bool owning_ = true;
  Witness w_;   // owning mode; inputs[0] = ONE
  Cursor in_;   // span mode: the public inputs after ONE
  Cursor aux_;  // span mode
  std::size_t n_constraints_ = 0;
  std::size_t depth_ = 0;
};

// Counts the shape without storing it or computing values: inputs, aux,
// constraints, and the non-zeros each matrix would hold after normalization
// (an R1cs of the 32 GiB PoRep shape takes ~9 GB; this takes nothing).
class CountingCs final : public ConstraintSystem {
 public:
  CountingCs() = default;
  bool has_witness() const override { return false; }
  bool keeps_constraints() const override { return true; }
  void push_namespace(const Name&) override { ++depth_; }
  void pop_namespace() override;
  std::size_t num_inputs() const override { return n_inputs_; }
  std::size_t num_aux() const override { return n_aux_; }
  std::size_t num_constraints() const override { return n_constraints_; }
  // Non-zeros of A, B, C over the circuit's constraints (input constraints,
  // one entry of A each, not included).
  std::uint64_t nnz_a() const { return nnz_[0]; }
  std::uint64_t nnz_b() const { return nnz_[1]; }
  std::uint64_t nnz_c() const { return nnz_[2]; }

 protected:
  Variable alloc_aux(const Name& name, ValueFn value) override;
  Variable alloc_public(const Name& name, ValueFn value) override;
  void add_constraint(const Name& name, LinearCombination a, LinearCombination b, LinearCombination c) override;
  void count_constraint() override;

 private:
  std::size_t count_nonzero(const LinearCombination& lc);

  std::size_t n_inputs_ = 1;  // ONE
  std::size_t n_aux_ = 0;
  std::size_t n_constraints_ = 0;
  std::uint64_t nnz_[3] = {0, 0, 0};
  std::size_t depth_ = 0;
  std::vector<Term> scratch_;
};

// Keeps everything, checks satisfaction constraint by constraint and reports
// the first failing one by its namespace path (bellpepper's
// TestConstraintSystem). Meant for tests: it stores names and full LCs.
class TestCs final : public ConstraintSystem {
 public:
  TestCs();
  bool has_witness() const override { return true; }
  bool keeps_constraints() const override { return true; }
  void push_namespace(const Name& name) override;
  void pop_namespace() override;
  std::size_t num_inputs() const override { return inputs_.size(); }
  std::size_t num_aux() const override { return aux_.size(); }
  std::size_t num_constraints() const override { return constraints_.size(); }

  bool is_satisfied() const { return !which_is_unsatisfied().has_value(); }
  // Path ("ns1/ns2/name") of the first unsatisfied constraint, if any.
  std::optional<std::string> which_is_unsatisfied() const;

  // R1CS fingerprint as bellpepper's TestConstraintSystem::hash: blake2s-256
  // over BE u64 (num_inputs, num_aux, num_constraints), then for each
  // constraint A, B, C in normalized form: BE u64 term count, then per term
  // 'I' or 'A', BE u64 index, 32-byte BE coefficient. Lower-case hex.
  std::string hash() const;

  std::span<const Fr> inputs() const { return inputs_; }
  std::span<const Fr> aux() const { return aux_; }
  Witness witness() const { return {inputs_, aux_}; }
  // Overwrites a value (to test that corrupted witnesses are caught).
  void set_value(Variable v, const Fr& value);
  Fr value(Variable v) const;
  // Path of variable v ("ONE" for input 0).
  const std::string& path_of(Variable v) const;

  struct Constraint {
    LinearCombination a, b, c;
    std::string path;
  };
  std::span<const Constraint> constraints() const { return constraints_; }

 protected:
  Variable alloc_aux(const Name& name, ValueFn value) override;
  Variable alloc_public(const Name& name, ValueFn value) override;
  void add_constraint(const Name& name, LinearCombination a, LinearCombination b, LinearCombination c) override;
  void count_constraint() override;

 private:
  std::string path(const Name& name) const;

  std::vector<std::string> ns_;
  std::vector<Fr> inputs_, aux_;
  std::vector<std::string> input_paths_, aux_paths_;
  std::vector<Constraint> constraints_;
};

// Fingerprint of a normalized constraint list in TestCs::hash's layout; a
// shared helper so an R1cs and a TestCs of the same circuit can be compared.
// `constraint(i, m)` returns the normalized terms of matrix m (0=A,1=B,2=C).
class R1csHasher {
 public:
  R1csHasher(std::uint64_t n_inputs, std::uint64_t n_aux, std::uint64_t n_constraints);
  ~R1csHasher();
  R1csHasher(const R1csHasher&) = delete;
  R1csHasher& operator=(const R1csHasher&) = delete;
  // Hashes one LC given in normalized form (sorted, merged, no zeros).
  void add_lc(std::span<const Term> normalized_terms);
  // Same, over the unified column space (inputs 0..n_inputs-1, then aux).
  void add_lc_columns(std::span<const std::uint32_t> cols, std::span<const Fr> coeffs);
  std::string finish_hex();

 private:
  void update(const void* data, std::size_t n);
  void* ctx_;  // EVP_MD_CTX*
  std::uint64_t n_inputs_;
};

}  // namespace cuzk::groth16
