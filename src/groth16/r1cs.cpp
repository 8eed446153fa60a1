#include "groth16/r1cs.hpp"

#include "groth16/sha256_behind.hpp"
#include "util/huge_pages.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

namespace cuzk::groth16 {

static_assert(std::endian::native == std::endian::little,
              "the r1cs file format is read and written as host-order little-endian arrays");

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "cuzk::groth16: %s\n", what);
  std::abort();
}

[[noreturn]] void malformed(const std::string& what) { throw R1csError(R1csErrorKind::kMalformed, what); }

// Matrices with at least this many entries in all are checked on three threads.
constexpr std::size_t kParallelCheckEntries = std::size_t{1} << 22;

// During recording, the number of inputs is not yet known, so columns are
// provisional: input j is j, aux k is kAuxTag | k. The order is the final
// order (inputs first, each kind by index), so rows sorted on provisional
// columns stay sorted after the remap in finish().
constexpr std::uint32_t kAuxTag = 0x80000000u;

std::uint32_t provisional_column(Variable v) { return v.is_input() ? v.index() : (kAuxTag | v.index()); }

// Sum over one CSR row of coeff * w[col], with the +1 / -1 fast paths.
struct RowDot {
  const R1cs& r1cs;
  std::span<const Fr> inputs;
  std::span<const Fr> aux;

  const Fr& value(std::uint32_t col) const {
    std::size_t n_in = inputs.size();
    return col < n_in ? inputs[col] : aux[col - n_in];
  }

  Fr operator()(const CsrMatrix& m, std::size_t row) const {
    Fr acc = Fr::zero();
    for (std::uint64_t k = m.row_start[row]; k < m.row_start[row + 1]; ++k) {
      const Fr& x = value(m.col[k]);
      switch (m.coeff_id[k]) {
        case R1cs::kCoeffOne:
          acc += x;
          break;
        case R1cs::kCoeffMinusOne:
          acc -= x;
          break;
        default:
          acc += r1cs.coeff(m.coeff_id[k]) * x;
          break;
      }
    }
    return acc;
  }
};

void check_witness_shape(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux) {
  if (inputs.size() != r1cs.num_inputs() || aux.size() != r1cs.num_aux()) {
    die("witness size does not match the constraint system");
  }
}

// Rows are cheap and uneven (a SHA-256 packing row has 256 terms, a boolean
// row 1), so oversplit for balance.
std::size_t eval_chunks(const ThreadPool& pool, std::size_t rows) {
  return std::max<std::size_t>(1, std::min<std::size_t>(rows / 1024 + 1, pool.size() * 16));
}

}  // namespace

std::string_view to_string(R1csErrorKind kind) {
  switch (kind) {
    case R1csErrorKind::kIo:
      return "i/o error";
    case R1csErrorKind::kBadMagic:
      return "bad magic";
    case R1csErrorKind::kBadVersion:
      return "unsupported version";
    case R1csErrorKind::kTruncated:
      return "truncated file";
    case R1csErrorKind::kChecksum:
      return "checksum mismatch";
    case R1csErrorKind::kMalformed:
      return "malformed content";
    case R1csErrorKind::kWrongPrime:
      return "wrong prime";
    case R1csErrorKind::kWrongSize:
      return "wrong size";
  }
  return "unknown";
}

std::size_t BitVec::popcount() const {
  std::size_t n = 0;
  for (std::uint64_t w : words_) n += static_cast<std::size_t>(std::popcount(w));
  return n;
}

// ---------------------------------------------------------------------------
// R1cs

R1cs::R1cs(std::size_t num_inputs, std::size_t num_aux, std::vector<Fr> coeffs, CsrMatrix a, CsrMatrix b, CsrMatrix c)
    : num_inputs_(num_inputs),
      num_aux_(num_aux),
      coeffs_(std::move(coeffs)),
      a_(std::move(a)),
      b_(std::move(b)),
      c_(std::move(c)),
      a_aux_density_(num_aux),
      b_input_density_(num_inputs),
      b_aux_density_(num_aux) {
  if (num_inputs_ == 0) malformed("no inputs (ONE is input 0)");
  if (num_inputs_ + num_aux_ > 0xffffffffull) malformed("more than 2^32-1 variables");
  if (coeffs_.size() < 2 || coeffs_[kCoeffOne] != Fr::one() || coeffs_[kCoeffMinusOne] != -Fr::one()) {
    malformed("coefficient table must start with +1, -1");
  }
  if (coeffs_.size() > 0xffffffffull) malformed("coefficient table too large");
  for (const Fr& x : coeffs_) {
    if (x.is_zero()) malformed("zero coefficient in the table");
  }
  const std::size_t rows = a_.rows();
  const std::uint64_t n_vars = num_inputs_ + num_aux_;
  auto check_matrix = [&](const CsrMatrix& m, const char* name, BitVec* input_density, BitVec* aux_density) {
    if (m.row_start.size() != rows + 1) malformed(std::string(name) + ": row count differs from A");
    if (m.col.size() != m.coeff_id.size()) malformed(std::string(name) + ": col/coeff size");
    if (m.row_start[0] != 0 || m.row_start[rows] != m.col.size()) {
      malformed(std::string(name) + ": row offsets do not cover the entries");
    }
    for (std::size_t r = 0; r < rows; ++r) {
      std::uint64_t lo = m.row_start[r], hi = m.row_start[r + 1];
      if (hi < lo || hi > m.col.size()) malformed(std::string(name) + ": row offsets decrease");
      for (std::uint64_t k = lo; k < hi; ++k) {
        std::uint32_t col = m.col[k];
        if (col >= n_vars) malformed(std::string(name) + ": column out of range");
        if (k > lo && col <= m.col[k - 1]) {
          malformed(std::string(name) + ": columns not strictly increasing in a row");
        }
        if (m.coeff_id[k] >= coeffs_.size()) malformed(std::string(name) + ": coefficient id");
        if (col < num_inputs_) {
          if (input_density) input_density->set(col);
        } else if (aux_density) {
          aux_density->set(col - num_inputs_);
        }
      }
    }
  };
  if (a_.row_start.empty()) malformed("A has no row offsets");
  // The three matrices write disjoint densities: large ones are checked at
  // once, B and C on threads of their own (a 32 GiB PoRep's 8.9 GB of
  // matrices: a tenth of its cache file's load on one thread). The first
  // failure in A, B, C order is the one reported.
  std::exception_ptr failed[3];
  auto check = [&](int i) {
    try {
      if (i == 0) check_matrix(a_, "A", nullptr, &a_aux_density_);
      if (i == 1) check_matrix(b_, "B", &b_input_density_, &b_aux_density_);
      if (i == 2) check_matrix(c_, "C", nullptr, nullptr);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  };
  if (a_.col.size() + b_.col.size() + c_.col.size() >= kParallelCheckEntries) {
    std::jthread b_check(check, 1), c_check(check, 2);
    check(0);
  } else {
    for (int i = 0; i < 3; ++i) check(i);
  }
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  if (rows < num_inputs_) malformed("fewer rows than input constraints");
  for (std::size_t i = 0; i < num_inputs_; ++i) {
    std::size_t r = rows - num_inputs_ + i;
    bool ok = a_.row_start[r + 1] - a_.row_start[r] == 1 && a_.col[a_.row_start[r]] == i &&
              a_.coeff_id[a_.row_start[r]] == kCoeffOne && b_.row_start[r + 1] == b_.row_start[r] &&
              c_.row_start[r + 1] == c_.row_start[r];
    if (!ok) malformed("input constraint " + std::to_string(i) + " is not input_i * 0 = 0");
  }
}

std::string R1cs::fingerprint() const {
  R1csHasher h(num_inputs_, num_aux_, num_circuit_constraints());
  std::vector<Fr> row_coeffs;
  for (std::size_t r = 0; r < num_circuit_constraints(); ++r) {
    for (const CsrMatrix* m : {&a_, &b_, &c_}) {
      std::uint64_t lo = m->row_start[r], hi = m->row_start[r + 1];
      row_coeffs.clear();
      for (std::uint64_t k = lo; k < hi; ++k) row_coeffs.push_back(coeffs_[m->coeff_id[k]]);
      h.add_lc_columns(std::span<const std::uint32_t>(m->col.data() + lo, hi - lo), row_coeffs);
    }
  }
  return h.finish_hex();
}

std::size_t R1cs::memory_bytes() const {
  std::size_t n = coeffs_.capacity() * sizeof(Fr);
  for (const CsrMatrix* m : {&a_, &b_, &c_}) {
    n += m->row_start.capacity() * sizeof(std::uint64_t) + m->col.capacity() * sizeof(std::uint32_t) +
         m->coeff_id.capacity() * sizeof(std::uint32_t);
  }
  for (const BitVec* d : {&a_aux_density_, &b_input_density_, &b_aux_density_}) {
    n += d->words().size() * sizeof(std::uint64_t);
  }
  return n;
}

std::uint64_t domain_size(std::uint64_t n) { return std::bit_ceil(std::max<std::uint64_t>(n, 1)); }

// ---------------------------------------------------------------------------
// Evaluation

namespace {

// Lowers `first` to `row` unless it already holds a smaller row.
void lower_to(std::atomic<std::size_t>& first, std::size_t row) {
  std::size_t cur = first.load();
  while (row < cur && !first.compare_exchange_weak(cur, row)) {
  }
}

// a * b == c, without the multiplication when a or b is 0 or 1: Filecoin
// witnesses are mostly bits (SHA-256 rows are boolean, XOR, AND), so most
// rows take a limb compare instead of a Montgomery product.
bool row_holds(const Fr& a, const Fr& b, const Fr& c) {
  if (a.is_zero() || b.is_zero()) return c.is_zero();
  if (a.is_one()) return b == c;
  if (b.is_one()) return a == c;
  return a * b == c;
}

// The mat-vec of evaluate_into; with kCheck, also a * b == c per row. Each
// chunk compares its rows up to its first bad one only, and the smallest of
// the chunks' first bad rows is the global first: the answer does not depend
// on the split.
template <bool kCheck>
std::optional<std::size_t> evaluate_rows(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux,
                                         std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, ThreadPool& pool) {
  check_witness_shape(r1cs, inputs, aux);
  const std::size_t rows = r1cs.num_constraints();
  if (a.size() != b.size() || a.size() != c.size() || a.size() < rows) {
    die("evaluate_into: output buffers must be equal and hold every row");
  }
  RowDot dot{r1cs, inputs, aux};
  const std::size_t n = a.size();
  std::atomic<std::size_t> first{rows};
  pool.parallel_for(
      n,
      [&](std::size_t lo, std::size_t hi) {
        bool chunk_bad = false;
        for (std::size_t r = lo; r < hi; ++r) {
          if (r < rows) {
            const Fr av = dot(r1cs.a(), r);
            const Fr bv = dot(r1cs.b(), r);
            const Fr cv = dot(r1cs.c(), r);
            a[r] = av;
            b[r] = bv;
            c[r] = cv;
            if constexpr (kCheck) {
              if (!chunk_bad && !row_holds(av, bv, cv)) {
                chunk_bad = true;
                lower_to(first, r);
              }
            }
          } else {
            a[r] = b[r] = c[r] = Fr::zero();
          }
        }
      },
      eval_chunks(pool, n));
  const std::size_t f = first.load();
  if (f == rows) return std::nullopt;
  return f;
}

}  // namespace

void evaluate_into(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux, std::span<Fr> a,
                   std::span<Fr> b, std::span<Fr> c, ThreadPool& pool, SatisfactionCheck check) {
  if (check == SatisfactionCheck::kSkip) {
    (void)evaluate_rows<false>(r1cs, inputs, aux, a, b, c, pool);
  } else if (std::optional<std::size_t> row = evaluate_rows<true>(r1cs, inputs, aux, a, b, c, pool)) {
    throw UnsatisfiedError(*row);
  }
}

std::optional<std::size_t> evaluate_checked_into(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux,
                                                 std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, ThreadPool& pool) {
  return evaluate_rows<true>(r1cs, inputs, aux, a, b, c, pool);
}

AbcEvaluations evaluate(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux, ThreadPool& pool,
                        SatisfactionCheck check) {
  const std::size_t rows = r1cs.num_constraints();
  AbcEvaluations out{std::vector<Fr>(rows), std::vector<Fr>(rows), std::vector<Fr>(rows)};
  evaluate_into(r1cs, inputs, aux, out.a, out.b, out.c, pool, check);
  return out;
}

std::optional<std::size_t> first_unsatisfied(const R1cs& r1cs, std::span<const Fr> inputs, std::span<const Fr> aux,
                                             ThreadPool& pool) {
  check_witness_shape(r1cs, inputs, aux);
  const std::size_t rows = r1cs.num_constraints();
  std::atomic<std::size_t> first{rows};
  RowDot dot{r1cs, inputs, aux};
  pool.parallel_for(
      rows,
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t r = lo; r < hi && r < first.load(std::memory_order_relaxed); ++r) {
          if (dot(r1cs.a(), r) * dot(r1cs.b(), r) != dot(r1cs.c(), r)) {
            lower_to(first, r);
            return;
          }
        }
      },
      eval_chunks(pool, rows));
  std::size_t f = first.load();
  if (f == rows) return std::nullopt;
  return f;
}

// ---------------------------------------------------------------------------
// File format

namespace {

constexpr std::array<char, 8> kMagic = {'C', 'U', 'Z', 'K', 'R', '1', 'C', 'S'};
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 32;
constexpr std::size_t kFrBytes = 32;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Writes payload bytes, hashing and counting them.
class PayloadWriter {
 public:
  PayloadWriter(std::FILE* f, const std::filesystem::path& path) : f_(f), path_(path) {}
  void bytes(const void* p, std::size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, f_) != n) {
      throw R1csError(R1csErrorKind::kIo, "write failed: " + path_.string());
    }
    sha_.update_copied(p, n);
    count_ += n;
  }
  void u64(std::uint64_t x) { bytes(&x, 8); }
  // Hashed in place, behind the write: `v` outlives digest().
  template <class T>
  void array(const std::vector<T>& v) {
    const std::size_t n = v.size() * sizeof(T);
    if (n != 0 && std::fwrite(v.data(), 1, n, f_) != n) {
      throw R1csError(R1csErrorKind::kIo, "write failed: " + path_.string());
    }
    sha_.update_borrowed(v.data(), n);
    count_ += n;
  }
  std::uint64_t count() const { return count_; }
  std::array<std::uint8_t, 32> digest() { return sha_.digest(); }

 private:
  std::FILE* f_;
  const std::filesystem::path& path_;
  Sha256Behind sha_;
  std::uint64_t count_ = 0;
};

// Reads payload bytes, hashing them behind the reads (Sha256Behind); refuses
// to read past the declared size so a corrupt count cannot trigger a huge
// allocation.
class PayloadReader {
 public:
  // Pieces an array is read and handed to the hasher in: the hash trails the
  // copy by at most this much.
  static constexpr std::size_t kPieceBytes = std::size_t{64} << 20;
  // Threads clearing an array's fresh pages before it is read into.
  static constexpr std::size_t kPrefaultThreads = 4;

  PayloadReader(ByteSource& src, std::uint64_t payload_bytes) : src_(src), left_(payload_bytes) {}
  void bytes(void* p, std::size_t n) {
    read(p, n);
    sha_.update_copied(p, n);
  }
  std::uint64_t u64() {
    std::uint64_t x = 0;
    bytes(&x, 8);
    return x;
  }
  // The array's buffer moves with the vector, so its pieces are hashed where
  // they were read; the caller keeps the vector alive until digest().
  template <class T>
  std::vector<T> array(std::uint64_t count) {
    if (count > left_ / sizeof(T)) malformed("array extends past the declared payload size");
    // Fresh memory in huge pages, faulted in at once (util/huge_pages.hpp):
    // 4 KiB faults were over half of a load's time (a 2.9 GB file on the dev
    // VM: 8.3 s, 3.9 s of it in the kernel).
    std::vector<T> v;
    v.reserve(count);
    prefault_huge_pages_for(v, kPrefaultThreads);
    v.resize(count);
    auto* dst = reinterpret_cast<std::uint8_t*>(v.data());
    const std::size_t total = count * sizeof(T);
    try {
      for (std::size_t at = 0; at < total; at += kPieceBytes) {
        const std::size_t n = std::min(kPieceBytes, total - at);
        read(dst + at, n);
        sha_.update_borrowed(dst + at, n);
      }
    } catch (...) {
      sha_.abandon();  // v goes with this exception
      throw;
    }
    return v;
  }
  void need(std::uint64_t n) const {
    if (n > left_) malformed("content extends past the declared payload size");
  }
  std::uint64_t left() const { return left_; }
  // Hashes the unread rest of the payload (to tell corruption from a writer bug).
  void drain() {
    std::vector<std::uint8_t> buf(1 << 16);
    while (left_ != 0) bytes(buf.data(), std::min<std::uint64_t>(left_, buf.size()));
  }
  std::array<std::uint8_t, 32> digest() { return sha_.digest(); }

 private:
  void read(void* p, std::size_t n) {
    need(n);
    if (n != 0 && src_.read(p, n) != n) {
      throw R1csError(R1csErrorKind::kTruncated, "file ends inside the payload");
    }
    left_ -= n;
  }

  ByteSource& src_;
  std::uint64_t left_;
  Sha256Behind sha_;
};

// stdio's reads (offline tools).
class StdioSource final : public ByteSource {
 public:
  StdioSource(std::FILE* f, std::uint64_t size_bytes) : f_(f), size_bytes_(size_bytes) {}
  std::uint64_t size_bytes() const override { return size_bytes_; }
  std::size_t read(void* dst, std::size_t n) override {
    std::size_t got = std::fread(dst, 1, n, f_);
    if (got < n && std::ferror(f_)) throw R1csError(R1csErrorKind::kIo, "read failed");
    return got;
  }

 private:
  std::FILE* f_;
  std::uint64_t size_bytes_;
};

}  // namespace

void save_r1cs(const R1cs& r1cs, const std::filesystem::path& path) {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) throw R1csError(R1csErrorKind::kIo, "cannot create " + path.string());
  // Header with a placeholder size and checksum, patched after the payload.
  std::array<std::uint8_t, kHeaderBytes> header{};
  std::memcpy(header.data(), kMagic.data(), 8);
  std::uint32_t version = kR1csFileVersion, flags = 0;
  std::memcpy(header.data() + 8, &version, 4);
  std::memcpy(header.data() + 12, &flags, 4);
  if (std::fwrite(header.data(), 1, header.size(), f.get()) != header.size()) {
    throw R1csError(R1csErrorKind::kIo, "write failed: " + path.string());
  }
  PayloadWriter w(f.get(), path);
  w.u64(r1cs.num_inputs());
  w.u64(r1cs.num_aux());
  w.u64(r1cs.num_constraints());
  w.u64(r1cs.coeffs().size());
  std::array<std::uint8_t, kFrBytes> buf{};
  for (const Fr& x : r1cs.coeffs()) {
    x.to_bytes_le(buf);
    w.bytes(buf.data(), buf.size());
  }
  for (const CsrMatrix* m : {&r1cs.a(), &r1cs.b(), &r1cs.c()}) {
    w.u64(m->nnz());
    w.array(m->row_start);
    w.array(m->col);
    w.array(m->coeff_id);
  }
  std::uint64_t payload_bytes = w.count();
  std::array<std::uint8_t, 32> digest = w.digest();
  std::memcpy(header.data() + 16, &payload_bytes, 8);
  std::memcpy(header.data() + 24, digest.data(), 32);
  if (std::fseek(f.get(), 0, SEEK_SET) != 0 || std::fwrite(header.data(), 1, header.size(), f.get()) != header.size() ||
      std::fflush(f.get()) != 0) {
    throw R1csError(R1csErrorKind::kIo, "write failed: " + path.string());
  }
  if (std::fclose(f.release()) != 0) throw R1csError(R1csErrorKind::kIo, "close failed: " + path.string());
}

R1cs load_r1cs(const std::filesystem::path& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw R1csError(R1csErrorKind::kIo, "cannot open " + path.string());
  std::error_code ec;
  std::uint64_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) throw R1csError(R1csErrorKind::kIo, "cannot stat " + path.string());
  StdioSource src(f.get(), file_bytes);
  return load_r1cs(src, path.string());
}

namespace {

R1cs load_r1cs_from(ByteSource& src, const std::string& path) {
  const std::uint64_t file_bytes = src.size_bytes();
  std::array<std::uint8_t, kHeaderBytes> header{};
  std::size_t got = src.read(header.data(), header.size());
  if (got < 8 || std::memcmp(header.data(), kMagic.data(), 8) != 0) {
    if (got < 8 && std::memcmp(header.data(), kMagic.data(), got) == 0) {
      throw R1csError(R1csErrorKind::kTruncated, "file shorter than its header");
    }
    throw R1csError(R1csErrorKind::kBadMagic, path + " is not a cuzk r1cs file");
  }
  if (got < header.size()) throw R1csError(R1csErrorKind::kTruncated, "file shorter than its header");
  std::uint32_t version = 0, flags = 0;
  std::uint64_t payload_bytes = 0;
  std::memcpy(&version, header.data() + 8, 4);
  std::memcpy(&flags, header.data() + 12, 4);
  std::memcpy(&payload_bytes, header.data() + 16, 8);
  if (version != kR1csFileVersion) {
    throw R1csError(R1csErrorKind::kBadVersion,
                    "version " + std::to_string(version) + ", this build reads " + std::to_string(kR1csFileVersion));
  }
  if (flags != 0) malformed("unknown flags");
  if (file_bytes - kHeaderBytes < payload_bytes) {
    throw R1csError(R1csErrorKind::kTruncated, "payload of " + std::to_string(payload_bytes) + " bytes declared, " +
                                                   std::to_string(file_bytes - kHeaderBytes) + " present");
  }
  if (file_bytes - kHeaderBytes > payload_bytes) malformed("trailing bytes after the payload");

  // Every byte is hashed as it is read; structure is only trusted once the
  // checksum matched, but the reader's bound keeps allocations within the
  // file size even before that.
  // The arrays before the reader: its hasher reads them until it is done or
  // destroyed (first, on an exception).
  std::vector<std::array<std::uint8_t, kFrBytes>> raw_coeffs;
  CsrMatrix mats[3];
  PayloadReader r(src, payload_bytes);
  std::uint64_t n_inputs = 0, n_aux = 0, n_rows = 0;
  try {
    n_inputs = r.u64();
    n_aux = r.u64();
    n_rows = r.u64();
    raw_coeffs = r.array<std::array<std::uint8_t, kFrBytes>>(r.u64());
    for (CsrMatrix& m : mats) {
      std::uint64_t nnz = r.u64();
      // Also keeps n_rows + 1 from overflowing.
      if (n_rows >= r.left() / 8) malformed("row count exceeds the payload");
      m.row_start = r.array<std::uint64_t>(n_rows + 1);
      m.col = r.array<std::uint32_t>(nnz);
      m.coeff_id = r.array<std::uint32_t>(nnz);
    }
    if (r.left() != 0) malformed("payload has unread bytes");
  } catch (const R1csError& e) {
    // A corrupt count shows up as a structural error before the checksum is
    // complete; report it as the checksum failure it most likely is.
    if (e.kind() != R1csErrorKind::kMalformed) throw;
    r.drain();
    std::array<std::uint8_t, 32> digest = r.digest();
    if (std::memcmp(digest.data(), header.data() + 24, 32) != 0) {
      throw R1csError(R1csErrorKind::kChecksum, path);
    }
    throw;
  }
  std::array<std::uint8_t, 32> digest = r.digest();
  if (std::memcmp(digest.data(), header.data() + 24, 32) != 0) {
    throw R1csError(R1csErrorKind::kChecksum, path);
  }
  // The variable counts size the density bit vectors, allocated before the
  // constructor checks them: bound them here (a checksum is no protection
  // against a crafted file; 2^60 aux variables threw bad_alloc).
  if (n_inputs == 0 || n_inputs > 0xffffffffull || n_aux > 0xffffffffull - n_inputs) {
    malformed("variable counts out of range (" + std::to_string(n_inputs) + " inputs, " + std::to_string(n_aux) +
              " aux)");
  }
  const std::size_t n_coeffs = raw_coeffs.size();
  std::vector<Fr> coeffs(n_coeffs);
  for (std::size_t i = 0; i < n_coeffs; ++i) {
    if (!Fr::from_bytes_le(raw_coeffs[i], coeffs[i])) malformed("coefficient >= r");
  }
  return R1cs(n_inputs, n_aux, std::move(coeffs), std::move(mats[0]), std::move(mats[1]), std::move(mats[2]));
}

}  // namespace

R1cs load_r1cs(ByteSource& src, const std::string& name) {
  try {
    return load_r1cs_from(src, name);
  } catch (const R1csError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw R1csError(R1csErrorKind::kIo, name + ": " + e.what());  // the source's read failed
  }
}

// ---------------------------------------------------------------------------
// RecordingCs

namespace {

std::uint64_t coeff_hash(const Fr& x) {
  const auto& l = x.mont().limb;
  std::uint64_t h = (l[0] ^ (l[1] << 17) ^ (l[2] >> 9) ^ l[3]) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

}  // namespace

RecordingCs::RecordingCs(Values values) : values_(values) {
  coeffs_ = {Fr::one(), -Fr::one()};
  coeff_slots_.assign(64, 0);
  // +1 and -1 are matched before the index is consulted; they need no slot.
  for (CsrMatrix* m : {&a_, &b_, &c_}) m->row_start.push_back(0);
  if (values_ == Values::kCollect) witness_.inputs.push_back(Fr::one());
}

void RecordingCs::pop_namespace() {
  if (depth_ == 0) die("pop_namespace without push_namespace");
  --depth_;
}

Variable RecordingCs::alloc_aux(const Name& name, ValueFn value) {
  if (finished_) die("RecordingCs used after finish()");
  if (num_aux_ >= kAuxTag || num_inputs_ + num_aux_ >= 0xffffffffull) {
    throw SynthesisError(SynthesisErrorKind::kTooManyVariables, "aux index space exhausted");
  }
  if (values_ == Values::kCollect) {
    std::optional<Fr> v = value();
    if (!v) {
      throw SynthesisError(SynthesisErrorKind::kAssignmentMissing, "no value for variable '" + name.str() + "'");
    }
    witness_.aux.push_back(*v);
  }
  return Variable::aux(std::uint32_t(num_aux_++));
}

Variable RecordingCs::alloc_public(const Name& name, ValueFn value) {
  if (finished_) die("RecordingCs used after finish()");
  if (num_inputs_ >= kAuxTag || num_inputs_ + num_aux_ >= 0xffffffffull) {
    throw SynthesisError(SynthesisErrorKind::kTooManyVariables, "input index space exhausted");
  }
  if (values_ == Values::kCollect) {
    std::optional<Fr> v = value();
    if (!v) {
      throw SynthesisError(SynthesisErrorKind::kAssignmentMissing, "no value for input '" + name.str() + "'");
    }
    witness_.inputs.push_back(*v);
  }
  return Variable::input(std::uint32_t(num_inputs_++));
}

std::uint32_t RecordingCs::intern(const Fr& coeff) {
  if (coeff.is_one()) return R1cs::kCoeffOne;
  if (coeff == coeffs_[R1cs::kCoeffMinusOne]) return R1cs::kCoeffMinusOne;
  const std::uint64_t h = coeff_hash(coeff);
  const std::uint64_t tag = h >> 32;
  const std::size_t mask = coeff_slots_.size() - 1;
  for (std::size_t i = std::size_t(h) & mask;; i = (i + 1) & mask) {
    std::uint64_t slot = coeff_slots_[i];
    if (slot == 0) break;
    if ((slot >> 32) == tag) {
      std::uint32_t id = std::uint32_t(slot) - 1;
      if (coeffs_[id] == coeff) return id;
    }
  }
  if (coeffs_.size() >= 0xfffffffeull) die("coefficient table overflow");
  const std::uint32_t id = std::uint32_t(coeffs_.size());
  coeffs_.push_back(coeff);
  if (2 * (coeffs_.size() - 2) > coeff_slots_.size()) {
    grow_coeff_index();  // re-inserts every id, the new one included
  } else {
    std::size_t i = std::size_t(h) & mask;
    while (coeff_slots_[i] != 0) i = (i + 1) & mask;
    coeff_slots_[i] = (tag << 32) | (std::uint64_t(id) + 1);
  }
  return id;
}

void RecordingCs::grow_coeff_index() {
  coeff_slots_.assign(coeff_slots_.size() * 2, 0);
  const std::size_t mask = coeff_slots_.size() - 1;
  for (std::uint32_t id = 2; id < coeffs_.size(); ++id) {
    const std::uint64_t h = coeff_hash(coeffs_[id]);
    std::size_t i = std::size_t(h) & mask;
    while (coeff_slots_[i] != 0) i = (i + 1) & mask;
    coeff_slots_[i] = ((h >> 32) << 32) | (std::uint64_t(id) + 1);
  }
}

void RecordingCs::append_row(CsrMatrix& m, const LinearCombination& lc) {
  if (finished_) die("RecordingCs used after finish()");
  // Canonical row: sorted by column, duplicates merged, zeros dropped. That is
  // LinearCombination::normalized(), done here in a reused buffer because it
  // runs once per LC of the whole circuit.
  for (const Term& t : lc.terms()) {
    std::size_t n = t.var.is_input() ? num_inputs_ : num_aux_;
    if (t.var.index() >= n) die("constraint uses an unallocated variable");
  }
  if (lc.size() == 1) {  // the common case: a bare variable
    const Term& t = lc.terms()[0];
    if (!t.coeff.is_zero()) {
      m.col.push_back(provisional_column(t.var));
      m.coeff_id.push_back(intern(t.coeff));
    }
    m.row_start.push_back(m.col.size());
    return;
  }
  scratch_.assign(lc.terms().begin(), lc.terms().end());
  if (scratch_.size() > 1) {
    std::sort(scratch_.begin(), scratch_.end(), [](const Term& x, const Term& y) { return x.var < y.var; });
  }
  for (std::size_t i = 0; i < scratch_.size();) {
    Variable v = scratch_[i].var;
    Fr sum = scratch_[i++].coeff;
    while (i < scratch_.size() && scratch_[i].var == v) sum += scratch_[i++].coeff;
    if (sum.is_zero()) continue;
    m.col.push_back(provisional_column(v));
    m.coeff_id.push_back(intern(sum));
  }
  m.row_start.push_back(m.col.size());
}

void RecordingCs::add_constraint(const Name&, LinearCombination a, LinearCombination b, LinearCombination c) {
  append_row(a_, a);
  append_row(b_, b);
  append_row(c_, c);
}

void RecordingCs::count_constraint() { die("RecordingCs::count_constraint called"); }

namespace {

// Column `col` of a part starting at (in0, aux0) moved by (din, daux);
// nullopt when it is not ONE and not the part's own (an earlier variable).
std::optional<std::uint32_t> moved_column(std::uint32_t col, std::size_t in0, std::size_t aux0, std::uint64_t din,
                                          std::uint64_t daux) {
  if (col & kAuxTag) {
    const std::uint32_t k = col & ~kAuxTag;
    if (k < aux0) return std::nullopt;
    return kAuxTag | std::uint32_t(k + daux);
  }
  if (col == 0) return 0;  // ONE
  if (col < in0) return std::nullopt;
  return std::uint32_t(col + din);
}

}  // namespace

bool RecordingCs::repeats(const Mark& first, const Mark& second, const Mark& end) const {
  if (!(first.rows <= second.rows && second.rows <= end.rows && end.rows <= a_.rows())) return false;
  const std::size_t rows = second.rows - first.rows, din = second.inputs - first.inputs, daux = second.aux - first.aux;
  if (end.rows - second.rows != rows || end.inputs - second.inputs != din || end.aux - second.aux != daux) return false;
  for (const CsrMatrix* m : {&a_, &b_, &c_}) {
    const std::uint64_t e0 = m->row_start[first.rows], e1 = m->row_start[second.rows];
    if (m->row_start[end.rows] - e1 != e1 - e0) return false;
    for (std::size_t r = 0; r <= rows; ++r) {
      if (m->row_start[second.rows + r] - e1 != m->row_start[first.rows + r] - e0) return false;
    }
    for (std::uint64_t e = 0; e < e1 - e0; ++e) {
      if (m->coeff_id[e1 + e] != m->coeff_id[e0 + e]) return false;
      const std::optional<std::uint32_t> want = moved_column(m->col[e0 + e], first.inputs, first.aux, din, daux);
      // The second part may use only ONE and its own variables too.
      if (!want || !moved_column(m->col[e1 + e], second.inputs, second.aux, 0, 0) || *want != m->col[e1 + e]) {
        return false;
      }
    }
  }
  return true;
}

bool RecordingCs::repeat_last(const Mark& from, std::size_t times) {
  if (finished_) die("RecordingCs used after finish()");
  if (values_ != Values::kShapeOnly) die("RecordingCs::repeat_last collects no witness");
  const Mark end = mark();
  if (!(from.rows <= end.rows && from.inputs <= end.inputs && from.aux <= end.aux)) return false;
  const std::uint64_t din = end.inputs - from.inputs, daux = end.aux - from.aux;
  const std::uint64_t inputs = num_inputs_ + din * times, aux = num_aux_ + daux * times;
  if (inputs >= kAuxTag || aux >= kAuxTag || inputs + aux >= 0xffffffffull) return false;
  // Checked first: nothing is recorded when the part is not self-contained.
  for (const CsrMatrix* m : {&a_, &b_, &c_}) {
    for (std::uint64_t e = m->row_start[from.rows]; e < m->col.size(); ++e) {
      if (!moved_column(m->col[e], from.inputs, from.aux, 0, 0)) return false;
    }
  }
  const std::size_t rows = end.rows - from.rows;
  for (CsrMatrix* m : {&a_, &b_, &c_}) {
    const std::uint64_t e0 = m->row_start[from.rows], part = m->col.size() - e0;
    // With room for finish()'s input constraints (one A entry and one row
    // per input): growing a vector of 10^8 entries later copies all of it.
    const std::uint64_t input_rows = inputs, input_entries = m == &a_ ? inputs : 0;
    m->col.reserve(m->col.size() + part * times + input_entries);
    m->coeff_id.reserve(m->coeff_id.size() + part * times + input_entries);
    m->row_start.reserve(m->row_start.size() + rows * times + input_rows);
    for (std::size_t t = 1; t <= times; ++t) {
      const std::uint64_t base = m->col.size();
      for (std::uint64_t e = 0; e < part; ++e) {
        m->col.push_back(*moved_column(m->col[e0 + e], from.inputs, from.aux, din * t, daux * t));
        m->coeff_id.push_back(m->coeff_id[e0 + e]);
      }
      for (std::size_t r = 1; r <= rows; ++r) m->row_start.push_back(base + (m->row_start[from.rows + r] - e0));
    }
  }
  num_inputs_ = inputs;
  num_aux_ = aux;
  return true;
}

R1cs RecordingCs::finish() {
  if (finished_) die("RecordingCs::finish called twice");
  if (depth_ != 0) die("RecordingCs::finish inside a namespace");
  const std::uint32_t n_in = std::uint32_t(num_inputs_);
  for (CsrMatrix* m : {&a_, &b_, &c_}) {
    for (std::uint32_t& col : m->col) {
      if (col & kAuxTag) col = n_in + (col & ~kAuxTag);
    }
  }
  // bellperson's rule: input_i * 0 = 0 for every input, A = input_i.
  for (std::uint32_t i = 0; i < n_in; ++i) {
    a_.col.push_back(i);
    a_.coeff_id.push_back(R1cs::kCoeffOne);
    a_.row_start.push_back(a_.col.size());
    b_.row_start.push_back(b_.col.size());
    c_.row_start.push_back(c_.col.size());
  }
  finished_ = true;
  return R1cs(num_inputs_, num_aux_, std::move(coeffs_), std::move(a_), std::move(b_), std::move(c_));
}

Witness RecordingCs::take_witness() {
  if (values_ != Values::kCollect) die("RecordingCs::take_witness without Values::kCollect");
  return std::move(witness_);
}

}  // namespace cuzk::groth16
