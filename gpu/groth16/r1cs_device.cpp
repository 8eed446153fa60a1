// DeviceR1cs (gpu/groth16/r1cs_device.hpp): upload of a compiled R1CS and the
// launch of the mat-vec kernels (gpu/groth16/r1cs_device.cu).
#include "gpu/groth16/r1cs_device.hpp"

#include <algorithm>
#include <string>

#include "groth16/r1cs.hpp"

namespace cuzk::gpu {
namespace {

using groth16::CsrMatrix;
using groth16::R1cs;

constexpr std::size_t kFrBytes = 32;
// Host offsets are narrowed to u32 in chunks of this many entries (16 MiB of
// staging), not in one copy of 0.5 GB per PoRep matrix.
constexpr std::size_t kNarrowChunk = std::size_t{1} << 22;

std::array<const CsrMatrix*, 3> matrices(const R1cs& r1cs) { return {&r1cs.a(), &r1cs.b(), &r1cs.c()}; }
// By DeviceR1cs::Density.
std::array<const groth16::BitVec*, 3> densities(const R1cs& r1cs) {
  return {&r1cs.a_aux_density(), &r1cs.b_input_density(), &r1cs.b_aux_density()};
}

bool needs_wide_offsets(const R1cs& r1cs) {
  for (const CsrMatrix* m : matrices(r1cs)) {
    if (m->nnz() > std::numeric_limits<std::uint32_t>::max()) return true;
  }
  return false;
}

// Terms of row r over A, B and C: the classification the short-row kernel
// repeats on the device (r1cs_device.cu), so both must use this sum.
std::uint64_t row_terms(const R1cs& r1cs, std::size_t r) {
  std::uint64_t terms = 0;
  for (const CsrMatrix* m : matrices(r1cs)) terms += m->row_start[r + 1] - m->row_start[r];
  return terms;
}

std::size_t count_long_rows(const R1cs& r1cs, std::uint32_t thread_row_max_terms) {
  std::size_t n = 0;
  for (std::size_t r = 0; r < r1cs.num_constraints(); ++r) n += row_terms(r1cs, r) > thread_row_max_terms;
  return n;
}

template <class T>
void upload(cudaStream_t stream, detail::DeviceBuffer<T>& dst, const T* src, std::size_t count) {
  if (count == 0) return;
  CUZK_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
}

template <class Offset>
r1cs_kernels::SpmvArgs<Offset> make_args(const std::array<const Offset*, 3>& row_start,
                                         const std::array<const std::uint32_t*, 3>& col,
                                         const std::array<const std::uint32_t*, 3>& coeff_id) {
  r1cs_kernels::SpmvArgs<Offset> args{};
  for (int k = 0; k < 3; ++k) args.m[k] = {row_start[k], col[k], coeff_id[k]};
  return args;
}

}  // namespace

std::size_t DeviceR1cs::bytes_for(const R1cs& r1cs, const DeviceR1csOptions& options) {
  const std::size_t offset_bytes = needs_wide_offsets(r1cs) ? sizeof(std::uint64_t) : sizeof(std::uint32_t);
  std::size_t bytes = r1cs.coeffs().size() * kFrBytes;
  for (const CsrMatrix* m : matrices(r1cs)) {
    bytes += (r1cs.num_constraints() + 1) * offset_bytes + m->nnz() * 2 * sizeof(std::uint32_t);
  }
  for (const groth16::BitVec* d : densities(r1cs)) bytes += d->words().size() * sizeof(std::uint64_t);
  return bytes + count_long_rows(r1cs, options.thread_row_max_terms) * sizeof(std::uint32_t);
}

DeviceR1cs::DeviceR1cs(const R1cs& r1cs, cudaStream_t stream, const DeviceR1csOptions& options)
    : rows_(r1cs.num_constraints()),
      num_inputs_(r1cs.num_inputs()),
      num_aux_(r1cs.num_aux()),
      thread_row_max_terms_(options.thread_row_max_terms),
      wide_offsets_(needs_wide_offsets(r1cs)) {
  CUZK_CUDA_CHECK(cudaGetDevice(&ordinal_));
  if (rows_ > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(ErrorKind::kInvalidArgument, "DeviceR1cs: " + std::to_string(rows_) + " rows (at most 2^32 - 1)");
  }
  // The whole footprint against the budget and the free memory before the
  // first allocation: a shortfall leaves nothing allocated.
  const std::size_t need_bytes = bytes_for(r1cs, options);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need_bytes > options.budget_bytes || need_bytes + detail::kDeviceMemoryReserveBytes > free_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory, "device R1CS needs " + std::to_string(need_bytes >> 20) +
                                                   " MiB; budget " +
                                                   (options.budget_bytes == std::numeric_limits<std::size_t>::max()
                                                        ? std::string("unlimited")
                                                        : std::to_string(options.budget_bytes >> 20) + " MiB") +
                                                   ", " + std::to_string(free_bytes >> 20) + " MiB free");
  }

  coeffs_ = detail::DeviceBuffer<std::uint32_t>(r1cs.coeffs().size() * 8, "R1CS coefficients");
  static_assert(sizeof(ff::Fr) == kFrBytes, "host Fr is the device's 8 limbs");
  upload(stream, coeffs_, reinterpret_cast<const std::uint32_t*>(r1cs.coeffs().data()), coeffs_.size());

  std::vector<std::uint32_t> narrowed;
  for (int k = 0; k < 3; ++k) {
    const CsrMatrix& host = *matrices(r1cs)[k];
    Matrix& dev = m_[k];
    nnz_[k] = host.nnz();
    if (wide_offsets_) {
      dev.row_start64 = detail::DeviceBuffer<std::uint64_t>(rows_ + 1, "R1CS row offsets");
      upload(stream, dev.row_start64, host.row_start.data(), rows_ + 1);
    } else {
      dev.row_start32 = detail::DeviceBuffer<std::uint32_t>(rows_ + 1, "R1CS row offsets");
      narrowed.resize(std::min(kNarrowChunk, rows_ + 1));
      for (std::size_t lo = 0; lo < rows_ + 1; lo += kNarrowChunk) {
        const std::size_t n = std::min(kNarrowChunk, rows_ + 1 - lo);
        std::transform(host.row_start.begin() + lo, host.row_start.begin() + lo + n, narrowed.begin(),
                       [](std::uint64_t x) { return static_cast<std::uint32_t>(x); });
        CUZK_CUDA_CHECK(cudaMemcpyAsync(dev.row_start32.get() + lo, narrowed.data(), n * sizeof(std::uint32_t),
                                        cudaMemcpyHostToDevice, stream));
        CUZK_CUDA_CHECK(cudaStreamSynchronize(stream));  // `narrowed` is refilled next
      }
    }
    dev.col = detail::DeviceBuffer<std::uint32_t>(host.nnz(), "R1CS columns");
    dev.coeff_id = detail::DeviceBuffer<std::uint32_t>(host.nnz(), "R1CS coefficient ids");
    upload(stream, dev.col, host.col.data(), host.nnz());
    upload(stream, dev.coeff_id, host.coeff_id.data(), host.nnz());
  }

  for (int k = 0; k < 3; ++k) {
    const std::span<const std::uint64_t> words = densities(r1cs)[k]->words();
    densities_[k] = detail::DeviceBuffer<std::uint64_t>(words.size(), "R1CS densities");
    upload(stream, densities_[k], words.data(), words.size());
  }

  std::vector<std::uint32_t> long_rows;
  for (std::size_t r = 0; r < rows_; ++r) {
    if (row_terms(r1cs, r) > thread_row_max_terms_) long_rows.push_back(static_cast<std::uint32_t>(r));
  }
  long_rows_ = detail::DeviceBuffer<std::uint32_t>(long_rows.size(), "R1CS long-row list");
  upload(stream, long_rows_, long_rows.data(), long_rows.size());
  CUZK_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vectors go out of scope
  bytes_ = need_bytes;
}

std::size_t DeviceR1cs::matrix_bytes() const {
  const std::size_t offset_bytes = wide_offsets_ ? sizeof(std::uint64_t) : sizeof(std::uint32_t);
  return 3 * (rows_ + 1) * offset_bytes + nnz() * 2 * sizeof(std::uint32_t) + long_rows_.bytes();
}

void DeviceR1cs::reset_first_unsatisfied(cudaStream_t stream, std::uint64_t* first_unsatisfied) {
  static_assert(kAllRowsSatisfied == ~std::uint64_t{0}, "all-ones bytes");
  CUZK_CUDA_CHECK(cudaMemsetAsync(first_unsatisfied, 0xff, sizeof(std::uint64_t), stream));
}

void DeviceR1cs::evaluate(cudaStream_t stream, const std::uint32_t* witness, std::uint32_t* a, std::uint32_t* b,
                          std::uint32_t* c, std::size_t m, std::uint64_t* first_unsatisfied) const {
  if (m < rows_) {
    throw Error(ErrorKind::kInvalidArgument,
                "DeviceR1cs::evaluate: domain " + std::to_string(m) + " < " + std::to_string(rows_) + " rows");
  }
  auto fill = [&](auto args) {
    args.coeffs = coeffs_.get();
    args.witness = witness;
    args.out[0] = a;
    args.out[1] = b;
    args.out[2] = c;
    args.rows = rows_;
    args.domain = m;
    args.thread_row_max_terms = thread_row_max_terms_;
    args.long_rows = long_rows_.get();
    args.long_row_count = long_rows_.size();
    args.first_unsatisfied = first_unsatisfied;
    r1cs_kernels::evaluate(stream, args);
  };
  if (wide_offsets_) {
    fill(make_args<std::uint64_t>({m_[0].row_start64.get(), m_[1].row_start64.get(), m_[2].row_start64.get()},
                                  {m_[0].col.get(), m_[1].col.get(), m_[2].col.get()},
                                  {m_[0].coeff_id.get(), m_[1].coeff_id.get(), m_[2].coeff_id.get()}));
  } else {
    fill(make_args<std::uint32_t>({m_[0].row_start32.get(), m_[1].row_start32.get(), m_[2].row_start32.get()},
                                  {m_[0].col.get(), m_[1].col.get(), m_[2].col.get()},
                                  {m_[0].coeff_id.get(), m_[1].coeff_id.get(), m_[2].coeff_id.get()}));
  }
}

}  // namespace cuzk::gpu
