// bench_gpu spmv [--log-rows N] [--reps R] [--caps 32,8,...] [--host-threads T]
//
// a, b, c = A.w, B.w, C.w over a synthetic R1CS shaped like one 32 GiB PoRep
// partition, scaled to 2^N rows (default 22; 16..26): on the host
// (groth16::evaluate_into on T threads, default all) and on the device
// (DeviceR1cs::evaluate, once without and once with the satisfaction check).
//
// The shape (docs/FILECOIN.md, 32 GiB partition: 130,278,869 rows, 130,169,893
// aux, non-zeros A / B / C 309.4M / 130.3M / 282.7M, i.e. 2.37 / 1.00 / 2.17
// per row; aux ~ rows): every circuit row allocates one aux variable out_r,
// which closes its C row with +-1 so that the witness satisfies every row
// (solved row by row while generating). Row kinds, drawn at random:
//   50.0 % boolean-like: A 1 term (+1), B 1, C out;
//   35.0 % XOR-like:     A 2 (coefficient 2 and +1), B 1, C 2 (+-1) + out;
//   14.7 % linear mix:   A 3 (general), B 1, C 3 (general) + out;
//    0.3 % packing:      A 256 consecutive bits with 2^i, B ONE, C out;
// => per row A 2.41, B 1.00, C 2.14 terms. Columns: 90 % among the 64 most
// recent variables (SHA-256 gadgets read what they just allocated), 10 %
// uniform over all earlier ones (DRG / expander parents, Poseidon inputs).
// Coefficients: +-1, 2^0..2^255, 1024 random constants.
//
// Reported per thread_row_max_terms cap (--caps, default 32): the R1CS upload
// (host pageable memory, wall clock), the witness upload (pinned, CUDA
// events), the mat-vec alone and with the check (CUDA events, median of R
// runs after a warm-up), the matrix bytes read per run and their rate, and
// the total traffic rate (matrix + 32 B per non-zero of witness gathers + the
// 96 B per row of a, b, c written). Every cap's a, b, c are compared with the
// host's bytes and the check must find every row satisfied. The last column
// scales the mat-vec time to the 32 GiB partition's 722.4M non-zeros.
#include "spmv_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/r1cs_device.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::bench {
namespace {

using ff::Fr;
using groth16::CsrMatrix;
using groth16::R1cs;

constexpr std::size_t kPorepNnz = 309'405'051 + 130'327'340 + 282'656'500;  // FILECOIN.md, 32 GiB partition
constexpr std::size_t kInputs = 328;                                        // PoRep's public inputs
constexpr std::size_t kFreeAux = 4096;      // unconstrained aux before the first row's out
constexpr std::uint32_t kPow2Id = 2;        // ids 2..257: 2^0 .. 2^255
constexpr std::uint32_t kRandomIds = 1024;  // then random constants
constexpr std::size_t kPackingTerms = 256;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Synthetic {
  R1cs r1cs;
  std::vector<Fr> inputs, aux;
};

Synthetic make_synthetic(std::size_t circuit_rows, std::mt19937_64& rng) {
  std::vector<Fr> coeffs = {Fr::one(), -Fr::one()};
  Fr pow2 = Fr::one();
  for (std::size_t i = 0; i < 256; ++i, pow2 = pow2 + pow2) coeffs.push_back(pow2);
  for (std::uint32_t i = 0; i < kRandomIds; ++i) coeffs.push_back(Fr::random(rng));
  const std::size_t first_out = kInputs + kFreeAux;
  std::vector<Fr> inputs(kInputs), aux(kFreeAux + circuit_rows);
  inputs[0] = Fr::one();
  for (std::size_t i = 1; i < kInputs; ++i) inputs[i] = Fr::random(rng);
  for (std::size_t i = 0; i < kFreeAux; ++i) aux[i] = rng() % 2 ? Fr::random(rng) : Fr::from_u64(rng() % 2);
  auto value = [&](std::uint32_t col) -> const Fr& { return col < kInputs ? inputs[col] : aux[col - kInputs]; };

  CsrMatrix m[3];
  for (CsrMatrix& x : m) {
    x.row_start.reserve(circuit_rows + kInputs + 1);
    x.row_start.push_back(0);
  }
  m[0].col.reserve(circuit_rows * 5 / 2);
  m[1].col.reserve(circuit_rows + kInputs);
  m[2].col.reserve(circuit_rows * 9 / 4);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> terms;  // (column, coefficient id) of one row
  auto general = [&] { return kPow2Id + static_cast<std::uint32_t>(rng() % (256 + kRandomIds)); };
  for (std::size_t r = 0; r < circuit_rows; ++r) {
    const std::uint32_t known = static_cast<std::uint32_t>(first_out + r);  // columns < known have values
    auto column = [&] {
      return rng() % 10 != 0 ? known - 1 - static_cast<std::uint32_t>(rng() % 64)
                             : static_cast<std::uint32_t>(rng() % known);
    };
    const unsigned kind = static_cast<unsigned>(rng() % 1000);  // 500 / 350 / 147 / 3 per mille
    Fr dot[3];
    for (int k = 0; k < 3; ++k) {
      terms.clear();
      if (k == 1) {
        terms.push_back({kind >= 997 ? 0u : column(), R1cs::kCoeffOne});  // packing: B = ONE
      } else if (kind < 500) {
        if (k == 0) terms.push_back({column(), R1cs::kCoeffOne});
      } else if (kind < 850) {
        if (k == 0) {
          terms.push_back({column(), kPow2Id + 1});
          terms.push_back({column(), R1cs::kCoeffOne});
        } else {
          terms.push_back({column(), R1cs::kCoeffOne});
          terms.push_back({column(), R1cs::kCoeffMinusOne});
        }
      } else if (kind < 997) {
        for (int t = 0; t < 3; ++t) terms.push_back({column(), general()});
      } else if (k == 0) {
        for (std::uint32_t i = 0; i < kPackingTerms; ++i) terms.push_back({known - kPackingTerms + i, kPow2Id + i});
      }
      // Canonical rows: columns strictly increasing (a repeated column keeps its first term).
      std::sort(terms.begin(), terms.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      terms.erase(
          std::unique(terms.begin(), terms.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
          terms.end());
      dot[k] = Fr::zero();
      for (const auto& [col, id] : terms) {
        m[k].col.push_back(col);
        m[k].coeff_id.push_back(id);
        dot[k] += id == R1cs::kCoeffOne        ? value(col)
                  : id == R1cs::kCoeffMinusOne ? -value(col)
                                               : coeffs[id] * value(col);
      }
    }
    // c + s * out = a * b with s = +-1: out = s * (a * b - c).
    const bool plus = rng() % 2 == 0;
    m[2].col.push_back(known);
    m[2].coeff_id.push_back(plus ? R1cs::kCoeffOne : R1cs::kCoeffMinusOne);
    const Fr diff = dot[0] * dot[1] - dot[2];
    aux[known - kInputs] = plus ? diff : -diff;
    for (CsrMatrix& x : m) x.row_start.push_back(x.col.size());
  }
  for (std::size_t i = 0; i < kInputs; ++i) {  // input_i * 0 = 0
    m[0].col.push_back(static_cast<std::uint32_t>(i));
    m[0].coeff_id.push_back(R1cs::kCoeffOne);
    for (CsrMatrix& x : m) x.row_start.push_back(x.col.size());
  }
  const std::size_t num_aux = aux.size();
  return {R1cs(kInputs, num_aux, std::move(coeffs), std::move(m[0]), std::move(m[1]), std::move(m[2])),
          std::move(inputs), std::move(aux)};
}

float elapsed_ms(const gpu::detail::Event& begin, const gpu::detail::Event& end) {
  float ms = 0;
  CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  return ms;
}

}  // namespace

int bench_spmv(gpu::Device& device, int argc, char** argv) {
  int log_rows = 22, reps = 5;
  std::size_t host_threads = 0;
  std::string caps_list = "32";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--log-rows" && i + 1 < argc) log_rows = std::atoi(argv[++i]);
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    if (a == "--caps" && i + 1 < argc) caps_list = argv[++i];
    if (a == "--host-threads" && i + 1 < argc) host_threads = std::strtoull(argv[++i], nullptr, 10);
  }
  std::vector<std::uint32_t> caps;
  for (std::size_t pos = 0; pos < caps_list.size();) {
    const std::size_t comma = std::min(caps_list.find(',', pos), caps_list.size());
    caps.push_back(static_cast<std::uint32_t>(std::strtoul(caps_list.substr(pos, comma - pos).c_str(), nullptr, 10)));
    pos = comma + 1;
  }
  if (log_rows < 16 || log_rows > 26 || caps.empty()) {
    std::printf("bench_gpu spmv: --log-rows 16..26, --caps N[,N...]\n");
    return 2;
  }
  gpu::detail::DeviceGuard guard(device.info().ordinal);
  std::mt19937_64 rng(20261130);

  // 2^N rows in all, the input rows included: the domain is exactly 2^N.
  const std::size_t m = std::size_t{1} << log_rows;
  auto t0 = std::chrono::steady_clock::now();
  const Synthetic syn = make_synthetic(m - kInputs, rng);
  const R1cs& r1cs = syn.r1cs;
  const std::size_t rows = r1cs.num_constraints();
  const std::size_t nnz = r1cs.a().nnz() + r1cs.b().nnz() + r1cs.c().nnz();
  std::printf(
      "synthetic R1CS 2^%d rows (%zu inputs, %zu aux): nnz A %.2f B %.2f C %.2f per row, %.1f M in all; "
      "generated in %.0f ms\n",
      log_rows, r1cs.num_inputs(), r1cs.num_aux(), double(r1cs.a().nnz()) / rows, double(r1cs.b().nnz()) / rows,
      double(r1cs.c().nnz()) / rows, nnz / 1e6, ms_since(t0));

  // ---- host ----
  ThreadPool pool(host_threads);
  std::vector<Fr> ha(m), hb(m), hc(m);
  std::vector<double> host_ms;
  for (int r = 0; r < std::min(reps, 3); ++r) {
    t0 = std::chrono::steady_clock::now();
    groth16::evaluate_into(r1cs, syn.inputs, syn.aux, ha, hb, hc, pool);
    host_ms.push_back(ms_since(t0));
  }
  const double host = median(host_ms);
  std::printf(
      "host evaluate_into: %.1f ms on %zu threads (%.2f thread-s; scaled to the 32 GiB partition: %.1f thread-s)\n",
      host, pool.size(), host * pool.size() / 1e3, host * pool.size() / 1e3 * double(kPorepNnz) / nnz);

  // ---- device: the witness once (pinned, as the prover would stage it) ----
  gpu::detail::Stream stream;
  gpu::detail::Event e0, e1;
  const std::size_t vars = r1cs.num_variables();
  gpu::detail::PinnedBuffer<Fr> witness_host(vars);
  std::memcpy(witness_host.get(), syn.inputs.data(), syn.inputs.size() * sizeof(Fr));
  std::memcpy(witness_host.get() + syn.inputs.size(), syn.aux.data(), syn.aux.size() * sizeof(Fr));
  gpu::detail::DeviceBuffer<std::uint32_t> witness(vars * 8, "bench witness");
  gpu::detail::DeviceBuffer<std::uint32_t> abc(3 * m * 8, "bench a, b, c");
  gpu::detail::DeviceBuffer<std::uint64_t> first(1, "bench first unsatisfied");
  std::vector<double> up_ms;
  for (int r = 0; r < reps; ++r) {
    e0.record(stream.get());
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(witness.get(), witness_host.get(), vars * sizeof(Fr), cudaMemcpyHostToDevice, stream.get()));
    e1.record(stream.get());
    stream.sync();
    up_ms.push_back(elapsed_ms(e0, e1));
  }
  const double witness_up = median(up_ms);
  std::printf("witness upload: %.2f ms for %.1f MB (%.1f GB/s; a, b, c would be %.1f MB)\n", witness_up,
              vars * 32 / 1e6, vars * 32 / witness_up / 1e6, 3.0 * m * 32 / 1e6);

  std::printf("\n%6s %9s %10s %10s %9s %9s %11s %11s %11s %12s  %s\n", "cap", "long rows", "matrix MB", "upload ms",
              "spmv ms", "+check", "matrix GB/s", "total GB/s", "vs host", "2^27 est ms", "check");
  std::vector<Fr> da(m);
  int status = 0;
  for (std::uint32_t cap : caps) {
    gpu::DeviceR1csOptions options;
    options.thread_row_max_terms = cap;
    t0 = std::chrono::steady_clock::now();
    const gpu::DeviceR1cs dr(r1cs, stream.get(), options);
    const double upload_ms = ms_since(t0);
    std::uint32_t* a = abc.get();
    auto run = [&](std::uint64_t* check) {
      if (check != nullptr) gpu::DeviceR1cs::reset_first_unsatisfied(stream.get(), check);
      e0.record(stream.get());
      dr.evaluate(stream.get(), witness.get(), a, a + m * 8, a + 2 * m * 8, m, check);
      e1.record(stream.get());
      stream.sync();
      return double(elapsed_ms(e0, e1));
    };
    run(first.get());  // warm-up
    std::vector<double> plain, checked;
    for (int r = 0; r < reps; ++r) plain.push_back(run(nullptr));
    for (int r = 0; r < reps; ++r) checked.push_back(run(first.get()));
    const double spmv = median(plain), spmv_check = median(checked);

    // Honesty: the last (checked) run's bytes and verdict.
    bool same = true;
    for (int k = 0; k < 3 && same; ++k) {
      CUZK_CUDA_CHECK(cudaMemcpy(da.data(), a + k * m * 8, m * sizeof(Fr), cudaMemcpyDeviceToHost));
      const std::vector<Fr>& want = k == 0 ? ha : k == 1 ? hb : hc;
      same = std::memcmp(da.data(), want.data(), m * sizeof(Fr)) == 0;
    }
    std::uint64_t verdict = 0;
    CUZK_CUDA_CHECK(cudaMemcpy(&verdict, first.get(), sizeof(verdict), cudaMemcpyDeviceToHost));
    const bool ok = same && verdict == gpu::kAllRowsSatisfied;
    if (!ok) status = 1;

    const double matrix_bytes = double(dr.matrix_bytes());
    const double total_bytes = matrix_bytes + 32.0 * nnz + 96.0 * m;
    std::printf("%6u %9zu %10.1f %10.1f %9.3f %9.3f %11.0f %11.0f %10.0fx %12.1f  %s\n", cap, dr.long_rows(),
                dr.bytes() / 1e6, upload_ms, spmv, spmv_check, matrix_bytes / spmv / 1e6, total_bytes / spmv / 1e6,
                host / spmv_check, spmv_check * double(kPorepNnz) / nnz,
                ok     ? "a, b, c = host bytes; all rows satisfied"
                : same ? "SATISFACTION CHECK WRONG"
                       : "MISMATCH");
  }
  std::printf(
      "\nmatrix GB/s: offsets + col + coeff_id bytes read per run; total adds 32 B of witness per non-zero "
      "and 96 B of a, b, c per row\n");
  return status;
}

}  // namespace cuzk::bench
