// The compiled, immutable shape of a circuit (R1CS) and what the prover does
// with it: evaluate the three matrices on a witness.
//
// Layout. Variables share one column space, inputs then aux: column j is
// input j for j < num_inputs, aux (j - num_inputs) otherwise; input 0 is ONE.
// A, B and C are CSR matrices with one row per constraint. Coefficients are
// interned: each entry holds a 32-bit coefficient id, 0 meaning +1 and 1
// meaning -1 (the fast paths of evaluation; most SHA-256/boolean entries are
// ±1), any other id indexing the coefficient table. An entry costs 8 bytes
// instead of 36, which is what makes the 32 GiB PoRep shape (309M + 130M +
// 283M non-zeros) fit in about 6 GB.
//
// Rows are canonical: columns strictly increasing, coefficients non-zero
// (duplicates merged when recorded). The last num_inputs rows are the
// per-input constraints input_i * 0 = 0 (A = input_i, B = C = 0), which
// bellperson appends after synthesis so that the A query binds every input.
//
// Densities (bellperson's DensityTracker, bit i set when variable i occurs in
// the matrix with a non-zero coefficient): a_aux over A, b_input and b_aux
// over B. They select the bases of the A / B MSMs. Bits are packed LSB-first
// in u64 words, as supraseal's bitvec consumes them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

// Packed bit vector, LSB-first within each u64 word.
class BitVec {
 public:
  BitVec() = default;
  explicit BitVec(std::size_t bits) : words_((bits + 63) / 64, 0), bits_(bits) {}
  std::size_t size() const { return bits_; }
  bool get(std::size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void set(std::size_t i) { words_[i / 64] |= std::uint64_t{1} << (i % 64); }
  std::size_t popcount() const;
  std::span<const std::uint64_t> words() const { return words_; }
  bool operator==(const BitVec&) const = default;

 private:
  std::vector<std::uint64_t> words_;
  std::size_t bits_ = 0;
};

struct CsrMatrix {
  std::vector<std::uint64_t> row_start;  // rows + 1 offsets into col / coeff_id
  std::vector<std::uint32_t> col;        // unified column index
  std::vector<std::uint32_t> coeff_id;   // kCoeffOne, kCoeffMinusOne or a table index

  std::size_t rows() const { return row_start.empty() ? 0 : row_start.size() - 1; }
  std::size_t nnz() const { return col.size(); }
  bool operator==(const CsrMatrix&) const = default;
};

enum class R1csErrorKind : std::uint8_t {
  kIo,          // open/read/write failed
  kBadMagic,    // not a file of this kind
  kBadVersion,  // a version this build does not read
  kTruncated,   // the file ends before its declared content
  kChecksum,    // content does not match its checksum
  kMalformed,   // structurally invalid content (index out of range, value >= r, ...)
  kWrongPrime,  // circom: the file is for another field
  kWrongSize,   // circom: witness length does not match the constraint system
};

std::string_view to_string(R1csErrorKind kind);

class R1csError : public std::runtime_error {
 public:
  R1csError(R1csErrorKind kind, const std::string& what)
      : std::runtime_error(std::string(to_string(kind)) + ": " + what), kind_(kind) {}
  R1csErrorKind kind() const { return kind_; }

 private:
  R1csErrorKind kind_;
};

class R1cs {
 public:
  static constexpr std::uint32_t kCoeffOne = 0;
  static constexpr std::uint32_t kCoeffMinusOne = 1;

  // Validates every invariant (shapes, canonical rows, ids and columns in
  // range, input constraints present) and derives the densities; throws
  // R1csError kMalformed on a violation. `coeffs` must start with +1, -1.
  R1cs(std::size_t num_inputs, std::size_t num_aux, std::vector<Fr> coeffs, CsrMatrix a, CsrMatrix b, CsrMatrix c);

  std::size_t num_inputs() const { return num_inputs_; }  // including ONE
  std::size_t num_aux() const { return num_aux_; }
  std::size_t num_variables() const { return num_inputs_ + num_aux_; }
  // All rows, including the num_inputs input constraints at the end.
  std::size_t num_constraints() const { return a_.rows(); }
  // Rows written by the circuit (TestCs::num_constraints()).
  std::size_t num_circuit_constraints() const { return a_.rows() - num_inputs_; }

  const CsrMatrix& a() const { return a_; }
  const CsrMatrix& b() const { return b_; }
  const CsrMatrix& c() const { return c_; }
  std::span<const Fr> coeffs() const { return coeffs_; }
  const Fr& coeff(std::uint32_t id) const { return coeffs_[id]; }

  const BitVec& a_aux_density() const { return a_aux_density_; }
  const BitVec& b_input_density() const { return b_input_density_; }
  const BitVec& b_aux_density() const { return b_aux_density_; }

  // TestCs::hash() of the same circuit (input constraints excluded).
  std::string fingerprint() const;

  // Heap bytes held (matrices, coefficient table, densities), for memory
  // budgets: about 8 per non-zero + 24 per row + 32 per distinct coefficient.
  std::size_t memory_bytes() const;

  bool operator==(const R1cs&) const = default;

 private:
  std::size_t num_inputs_;
  std::size_t num_aux_;
  std::vector<Fr> coeffs_;
  CsrMatrix a_, b_, c_;
  BitVec a_aux_density_, b_input_density_, b_aux_density_;
};

// Evaluation domain size m: the smallest power of two >= the number of rows
// including the input constraints (bellperson's EvaluationDomain).
std::uint64_t domain_size(std::uint64_t num_constraints_incl_inputs);
inline std::uint64_t domain_size(const R1cs& r1cs) { return domain_size(r1cs.num_constraints()); }

// Per-row values a_i = <A_i, w>, b_i = <B_i, w>, c_i = <C_i, w>, one entry per
// constraint (num_constraints(), input constraints included; the prover pads
// to the domain size).
struct AbcEvaluations {
  std::vector<Fr> a, b, c;
};

// Whether evaluation also checks the witness against every constraint.
enum class SatisfactionCheck : std::uint8_t {
  kSkip,   // the witness is trusted (generated here, or checked before)
  kCheck,  // a_i * b_i == c_i on every row, fused into the evaluation
};

// A witness that does not satisfy the constraint system: the input's fault
// (bad vanilla proofs, a wrong witness file), never the prover's, so it is
// not worth proving again elsewhere. row() is the first row (the smallest
// index) with a * b != c.
class UnsatisfiedError : public std::runtime_error {
 public:
  explicit UnsatisfiedError(std::size_t row)
      : std::runtime_error("constraint " + std::to_string(row) + " does not hold"), row_(row) {}
  std::size_t row() const { return row_; }

 private:
  std::size_t row_;
};

// Sparse mat-vec over all rows, split across the pool. With kCheck, also the
// satisfaction check of evaluate_checked_into, throwing UnsatisfiedError.
AbcEvaluations evaluate(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux, ThreadPool& pool,
                        SatisfactionCheck check = SatisfactionCheck::kSkip);
// Same into caller buffers of equal size >= num_constraints() (typically the
// domain size m); entries past the last row are set to zero, which is the
// padding the NTT expects. With kCheck, throws UnsatisfiedError (the
// buffers are then written all the same).
void evaluate_into(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux, std::span<Fr> a,
                   std::span<Fr> b, std::span<Fr> c, ThreadPool& pool,
                   SatisfactionCheck check = SatisfactionCheck::kSkip);
// evaluate_into that also checks a_i * b_i == c_i on each row while the
// row's three values are still in registers: one Fr multiplication per row
// instead of first_unsatisfied's second pass over the matrices. Returns the
// first row that does not hold (the smallest index, whatever the thread
// split, as first_unsatisfied), or nullopt when every row holds. Rows with
// a or b equal to 0 or 1 (bits) are checked with compares only. Measured on
// a loaded 2-core x86-64 VM (bench_groth16 BM_Evaluate, medians of two
// runs): 12 chained SHA-256 blocks (311k rows, 1.7M non-zeros, bit-valued
// like PoRep's bulk) +10-12% over evaluate_into, where evaluate_into +
// first_unsatisfied took +110-127%; the demo circuit at 2^20 (field-valued
// rows of ~4 non-zeros, the worst case: the product costs more than the
// row's dots) +39% against +124%.
[[nodiscard]] std::optional<std::size_t> evaluate_checked_into(const R1cs& r1cs, std::span<const Fr> inputs,
                                                               std::span<const Fr> aux, std::span<Fr> a,
                                                               std::span<Fr> b, std::span<Fr> c, ThreadPool& pool);

// Index of the first row with a*b != c, or nullopt when the witness satisfies
// every constraint. Aborts when the witness sizes do not match. Stores
// nothing and stops at the first bad row; a caller that evaluates a, b, c
// anyway (a prover) should use evaluate_checked_into instead.
std::optional<std::size_t> first_unsatisfied(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux,
                                             ThreadPool& pool);
inline bool is_satisfied(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux, ThreadPool& pool) {
  return !first_unsatisfied(r1cs, inputs, aux, pool).has_value();
}

// Binary file (all integers little-endian):
//   "CUZKR1CS" | u32 version | u32 flags (0) | u64 payload_bytes | SHA-256(payload) (32 B)
//   payload: u64 num_inputs | u64 num_aux | u64 num_rows | u64 num_coeffs
//            | num_coeffs x 32-byte LE standard-form coefficients
//            | for A, B, C: u64 nnz | (num_rows + 1) x u64 row_start | nnz x u32 col
//                           | nnz x u32 coeff_id
// Densities are derived on load. Errors throw R1csError.
inline constexpr std::uint32_t kR1csFileVersion = 1;
void save_r1cs(const R1cs& r1cs, const std::filesystem::path& path);
R1cs load_r1cs(const std::filesystem::path& path);

// The file's bytes in order, for load_r1cs from another reader than stdio
// (the daemon's: io::SequentialReader, io_uring reads on its event loop).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::uint64_t size_bytes() const = 0;
  // Fills dst with the next n bytes; fewer only at the end of the file. A
  // failed read throws (load_r1cs reports it as R1csError kIo).
  virtual std::size_t read(void* dst, std::size_t n) = 0;
};
// `name` (the path) is used in messages.
R1cs load_r1cs(ByteSource& src, const std::string& name);

// Records the shape of a circuit into an R1cs, and optionally its witness.
class RecordingCs final : public ConstraintSystem {
 public:
  enum class Values : std::uint8_t {
    kShapeOnly,  // value functions are never called
    kCollect,    // also collect the witness (take_witness())
  };
  explicit RecordingCs(Values values = Values::kShapeOnly);

  bool has_witness() const override { return values_ == Values::kCollect; }
  bool keeps_constraints() const override { return true; }
  void push_namespace(const Name&) override { ++depth_; }
  void pop_namespace() override;
  std::size_t num_inputs() const override { return num_inputs_; }
  std::size_t num_aux() const override { return num_aux_; }
  std::size_t num_constraints() const override { return a_.rows(); }

  // What has been recorded so far: rows, inputs (ONE included), aux.
  struct Mark {
    std::size_t rows = 0, inputs = 0, aux = 0;
    bool operator==(const Mark&) const = default;
  };
  Mark mark() const { return Mark{a_.rows(), num_inputs_, num_aux_}; }
  // Repetition of identical parts (a circuit's slots that share only ONE,
  // such as FallbackPoSt's sectors): a compile records a few parts and
  // copies the last one instead of synthesizing the rest.
  // Whether the part recorded in [second, end) equals the part in
  // [first, second) with each variable of the first part replaced by the
  // corresponding one of the second (same rows, coefficients, counts), and
  // references only ONE and its own variables.
  bool repeats(const Mark& first, const Mark& second, const Mark& end) const;
  // Appends `times` copies of the part recorded in [from, mark()), each with
  // its own fresh inputs and aux, exactly as `times` more syntheses of a
  // part equal to it would record them. Shape-only (Values::kShapeOnly).
  // False, recording nothing, when the part references a variable other
  // than ONE from before `from` or the index space would overflow.
  bool repeat_last(const Mark& from, std::size_t times);

  // Appends the input constraints and returns the immutable R1cs. Call once;
  // afterwards only take_witness() may be used.
  R1cs finish();
  // The collected witness (kCollect only).
  Witness take_witness();

 protected:
  Variable alloc_aux(const Name& name, ValueFn value) override;
  Variable alloc_public(const Name& name, ValueFn value) override;
  void add_constraint(const Name& name, LinearCombination a, LinearCombination b, LinearCombination c) override;
  void count_constraint() override;

 private:
  std::uint32_t intern(const Fr& coeff);
  void grow_coeff_index();
  void append_row(CsrMatrix& m, const LinearCombination& lc);

  Values values_;
  std::size_t num_inputs_ = 1;  // ONE
  std::size_t num_aux_ = 0;
  std::size_t depth_ = 0;
  bool finished_ = false;
  Witness witness_;
  std::vector<Fr> coeffs_;
  // Open-addressing index over coeffs_: each slot is 0 (empty) or
  // (hash high 32 bits << 32 | id + 1); capacity a power of two, load <= 1/2.
  // A node-based map spent 40% of compile time in cache misses on the demo
  // circuit, whose every round adds a new constant.
  std::vector<std::uint64_t> coeff_slots_;
  CsrMatrix a_, b_, c_;
  std::vector<Term> scratch_;
};

// Shape-only compilation of a circuit (works for Circuit& too).
template <CircuitLike C>
R1cs compile(const C& circuit) {
  RecordingCs cs;
  circuit.synthesize(cs);
  return cs.finish();
}

// Witness generation (the fast path: no constraints are built). With the
// circuit's shape known (its R1cs), the vectors are allocated once at their
// final size: growing a 4.2 GB witness by doubling touches ~2x its size in
// fresh pages and copies, and the kernel's page clearing then dominated a
// 32 GiB PoRep partition's synthesis (see fc::synthesize_partition).
// `storage`: a previous witness whose vectors are reused (its pages already
// faulted in: clearing 4.2 GB of fresh pages costs 2-8 s of kernel time on
// the dev VM).
template <CircuitLike C>
Witness generate_witness(const C& circuit, WitnessShape shape = {}, Witness storage = {}) {
  WitnessCs cs(std::move(storage));
  cs.reserve(shape.inputs, shape.aux);
  circuit.synthesize(cs);
  return cs.take_witness();
}

}  // namespace cuzk::groth16
