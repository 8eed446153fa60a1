// bench_gpu partition [--log-domain N] [--full-width-percent P] [--reps R]
//                     [--srs resident|streamed] [--srs-device-mib M]
//
// The device stages of one 32 GiB PoRep C2 partition (GpuProver::device_stages:
// H = 6 NTTs on the lean path (7 + quotient on the others), then the H, L, A, B_G1 and B_G2 MSMs) at PoRep's shape
// (gpu/groth16/partition_shape.hpp; N = 27 is the real size: domain 2^27,
// 130.2M aux, a_aux 129.75M, b_aux 33.1M, 328 inputs), or the same shape
// scaled to 2^N. No R1CS is built: the witness, the densities and a, b, c are
// generated directly from the synthetic circuit's structure (the test
// tests/gpu/groth16_shape_test.cpp proves and verifies the circuit itself at
// 2^10). Witness values: (100 - P)/2 % zeros, the same share of ones, P %
// uniformly random full-width elements (default P = 10; an assumption).
// SRS: 2048 random G1 and G2 points replicated on the device to every
// vector's length (44.1 GiB at 2^27, resident, no host copy); --srs streamed
// keeps M MiB of it on the device (default 0), placed as ResidentSrs places it
// (gpu/groth16/srs_placement.hpp), and the rest replicated in pinned host
// memory that every run streams over PCIe. The report says which.
// Reported: per stage the median and minimum over R runs (default 3) after
// one warm-up. H's NTT pipeline is device time (CUDA events, started after
// a, b, c are on the device); each MSM stage is device time too (CUDA events
// on the compute stream), with the host's scalar
// selection / split (prepare(), before the device stages) shown separately;
// "GPU total" is the device stages' sum.
#include "partition_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/groth16/partition_shape.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::bench {
namespace {

using ff::Fr;

// count distinct points s G, (s + t) G, (s + 2t) G, ... for random s, t.
template <class F>
std::vector<ec::Affine<F>> distinct_points(const ec::Affine<F>& generator, std::size_t count, std::mt19937_64& rng) {
  const ec::Jacobian<F> step = ec::mul(generator, Fr::random(rng).to_int());
  ec::Jacobian<F> p = ec::mul(generator, Fr::random(rng).to_int());
  std::vector<ec::Affine<F>> out;
  for (std::size_t i = 0; i < count; ++i, p = ec::add(p, step)) out.push_back(ec::to_affine(p));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int bench_partition(gpu::Device& device, int argc, char** argv) {
  int log_domain = gpu::shape::kPorepLogDomain, reps = 3;
  double full_width_percent = 10;
  std::string srs_mode = "resident";
  std::size_t srs_device_mib = 0;
  bool compact_h = false;
  double free_gib = 0;  // > 0: hold the rest of the device's memory (a smaller card's room)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--srs" && i + 1 < argc) srs_mode = argv[++i];
    if (a == "--srs-device-mib" && i + 1 < argc) srs_device_mib = std::strtoull(argv[++i], nullptr, 10);
    if (a == "--log-domain" && i + 1 < argc) log_domain = std::atoi(argv[++i]);
    if (a == "--full-width-percent" && i + 1 < argc) full_width_percent = std::atof(argv[++i]);
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    if (a == "--compact-h") compact_h = true;
    if (a == "--free-gib" && i + 1 < argc) free_gib = std::atof(argv[++i]);
  }
  // --free-gib N: a ballast allocation leaves N GiB of the device free before
  // anything else (SRS placement, prover buffers), to run the shape as on a
  // smaller card (the prover's two-vector H stage and streamed SRS).
  std::optional<gpu::detail::DeviceBuffer<std::uint32_t>> ballast;
  if (free_gib > 0) {
    const std::size_t keep = std::size_t(free_gib * double(1ull << 30));
    const std::size_t free_now = device.free_memory_bytes();
    if (free_now > keep) ballast.emplace((free_now - keep) / 4, "bench ballast");
    std::printf("device memory: %.1f GiB free of the device's, %.1f GiB held by a ballast\n",
                double(device.free_memory_bytes()) / double(1ull << 30),
                double(free_now > keep ? free_now - keep : 0) / double(1ull << 30));
  }
  if (log_domain < 10 || log_domain > 27 || full_width_percent < 0 || full_width_percent > 100 ||
      (srs_mode != "resident" && srs_mode != "streamed")) {
    std::printf(
        "bench_gpu partition: --log-domain 10..27, --full-width-percent 0..100, --srs resident|streamed, "
        "--srs-device-mib N, --reps N, --compact-h, --free-gib N\n");
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  const auto t_setup = Clock::now();
  const gpu::shape::PartitionCounts counts = gpu::shape::partition_counts(log_domain);
  const std::size_t m = std::size_t{1} << log_domain;
  const std::size_t aux_n = counts.aux();
  gpu::shape::ValueMix mix;
  mix.zero = mix.one = (1.0 - full_width_percent / 100) / 2;
  std::printf(
      "partition shape 2^%d: %zu inputs, %zu aux (a_aux %zu, b_aux %zu), %zu constraints + %zu input rows; "
      "witness %.0f%% zeros, %.0f%% ones, %.0f%% full width\n",
      log_domain, counts.inputs, aux_n, counts.a_aux(), counts.b_aux(), counts.constraints(), counts.inputs,
      100 * mix.zero, 100 * mix.one, full_width_percent);

  // Witness in the circuit's allocation order: v_i, p_i interleaved, u_j, c_k.
  std::mt19937_64 rng(20261130);
  std::vector<Fr> inputs{Fr::one()};
  for (std::size_t i = 1; i < counts.inputs; ++i) inputs.push_back(Fr::random(rng));
  std::vector<Fr> aux(aux_n);
  groth16::BitVec a_aux(aux_n), b_aux(aux_n), b_input(counts.inputs);
  b_input.set(0);
  const std::size_t u0 = 2 * counts.nv, c0 = u0 + counts.nu;
  for (std::size_t i = 0; i < counts.nv; ++i) {
    const Fr v = gpu::shape::draw_value(rng, mix);
    aux[2 * i] = v;
    aux[2 * i + 1] = v * v;
    b_aux.set(2 * i);
  }
  for (std::size_t j = 0; j < counts.nu; ++j) aux[u0 + j] = gpu::shape::draw_value(rng, mix);
  for (std::size_t k = 0; k < counts.nc; ++k) aux[c0 + k] = aux[u0 + k] + aux[u0 + k];
  for (std::size_t i = 0; i < c0; ++i) a_aux.set(i);

  // a, b, c = A w, B w, C w row by row (the circuit's constraint order, then
  // one row per input: input * 0 = 0), zero-padded to m. In page-locked
  // memory, as the prover's own a, b, c (GpuProver::prove evaluates into a
  // pinned buffer): from pageable memory the 3 x 2^27 x 32 B uploads took
  // 1.6 s instead of running at the copy engine's speed.
  gpu::detail::PinnedBuffer<Fr> abc_pinned(3 * m);
  const std::span<Fr> abc(abc_pinned.get(), 3 * m);
  std::fill(abc.begin(), abc.end(), Fr::zero());
  Fr* a = abc.data();
  Fr* b = a + m;
  Fr* c = b + m;
  std::size_t row = 0;
  for (std::size_t i = 0; i < counts.nv; ++i) {
    const Fr v = aux[2 * i], p = aux[2 * i + 1];
    a[row] = v, b[row] = v, c[row] = p, ++row;
    a[row] = p, b[row] = Fr::one(), c[row] = p, ++row;
  }
  for (std::size_t j = 0; j < counts.nu; ++j, ++row) a[row] = c[row] = aux[u0 + j], b[row] = Fr::one();
  for (std::size_t k = 0; k < counts.nc; ++k, ++row) a[row] = c[row] = aux[c0 + k], b[row] = Fr::one();
  for (std::size_t i = 0; i < counts.inputs; ++i, ++row) a[row] = inputs[i];
  if (row > m) std::abort();  // partition_counts keeps the rows within the domain

  const std::size_t a_count = counts.inputs + counts.a_aux(), b_count = 1 + counts.b_aux();
  const std::vector<ec::G1Affine> g1 = distinct_points(ec::kG1Generator, 2048, rng);
  const std::vector<ec::G2Affine> g2 = distinct_points(ec::kG2Generator, 2048, rng);
  const std::size_t device_budget =
      srs_mode == "resident" ? std::numeric_limits<std::size_t>::max() : srs_device_mib << 20;
  const gpu::ReplicatedSrs srs(device, g1, g2, m - 1, aux_n, a_count, b_count, device_budget);
  const gpu::SrsPlacement& placed = srs.placement();
  std::printf(
      "SRS: 2048 random G1 / G2 points replicated, %.1f GiB: %s, %.1f GiB on the device, %.1f GiB streamed "
      "from pinned host memory per run; setup %.1f s\n",
      double(srs.bytes()) / double(1ull << 30),
      placed.all_on_device() ? "resident on the device" : "streamed from host",
      double(placed.device_bytes()) / double(1ull << 30), double(placed.host_bytes()) / double(1ull << 30),
      std::chrono::duration<double>(Clock::now() - t_setup).count());
  for (std::size_t v = 0; v < gpu::kSrsVectors; ++v) {
    const gpu::SrsVectorPlacement& e = placed.vectors[v];
    std::printf("  %-5s %11zu points: %11zu on the device, %11zu streamed\n", gpu::to_string(gpu::SrsVector(v)),
                e.points, e.device_points, e.points - e.device_points);
  }

  ThreadPool pool;
  gpu::GpuProverOptions options;
  options.h_uploads_first = true;  // h_gpu_ms = the NTT pipeline alone
  options.compact_h_stage = compact_h;
  gpu::GpuProver prover(device, pool, options);
  const gpu::DeviceStageInputs in{log_domain, abc, inputs, aux, &a_aux, &b_input, &b_aux};
  (void)prover.device_stages(srs.bases(), in);  // warm-up: NTT tables, MSM scratch, pinned buffers
  std::vector<gpu::GpuProveStats> runs;
  for (int r = 0; r < reps; ++r) {
    (void)prover.device_stages(srs.bases(), in);
    runs.push_back(prover.last_stats());
  }

  struct Line {
    const char* name;
    double (*get)(const gpu::GpuProveStats&);
  };
  const Line lines[] = {
      {"H: a, b, c uploads (copy engine)", [](const gpu::GpuProveStats& s) { return s.h_upload_ms; }},
      {"H: NTT pipeline (6 or 7 NTTs) (GPU)", [](const gpu::GpuProveStats& s) { return s.h_gpu_ms; }},
      {"H: wall (uploads, then NTTs)", [](const gpu::GpuProveStats& s) { return s.h_ms; }},
      {"H MSM (2^N - 1, full width)", [](const gpu::GpuProveStats& s) { return s.h_msm_ms; }},
      {"L MSM (device)", [](const gpu::GpuProveStats& s) { return s.l_msm_ms; }},
      {"  of which host split", [](const gpu::GpuProveStats& s) { return s.l_host_ms; }},
      {"A MSM (device)", [](const gpu::GpuProveStats& s) { return s.a_msm_ms; }},
      {"  of which host select + split", [](const gpu::GpuProveStats& s) { return s.a_host_ms; }},
      {"B_G1 + B_G2 MSM (device)", [](const gpu::GpuProveStats& s) { return s.b_msm_ms; }},
      {"  of which host select + split", [](const gpu::GpuProveStats& s) { return s.b_host_ms; }},
      // The stage times are CUDA-event intervals on the compute stream; the
      // host's selection + split runs in prepare(), off the device's timeline,
      // so it is not subtracted (subtracting it would under-report the device
      // time by the host split's ~450-520 ms).
      {"GPU total (NTTs + MSMs, device time)",
       [](const gpu::GpuProveStats& s) { return s.h_gpu_ms + s.h_msm_ms + s.l_msm_ms + s.a_msm_ms + s.b_msm_ms; }},
      {"wall total (all stages)",
       [](const gpu::GpuProveStats& s) { return s.h_ms + s.h_msm_ms + s.l_msm_ms + s.a_msm_ms + s.b_msm_ms; }},
  };
  std::printf("\n%-36s %12s %10s   (%d runs after a warm-up)\n", "stage", "median ms", "min ms", reps);
  for (const Line& l : lines) {
    std::vector<double> v;
    for (const gpu::GpuProveStats& s : runs) v.push_back(l.get(s));
    std::printf("%-36s %12.1f %10.1f\n", l.name, median(v), *std::min_element(v.begin(), v.end()));
  }
  const gpu::GpuProveStats& s = runs.back();
  auto split = [](const char* name, const gpu::GpuSplitCounts& k) {
    std::printf("%s: %zu zeros, %zu ones, %zu tail (%s)\n", name, k.zeros, k.ones, k.tail,
                k.split ? "split: sum of ones + tail MSM" : "one MSM over all scalars");
  };
  split("L scalars", s.l);
  split("A scalars", s.a);
  split("B scalars", s.b);
  std::printf("H stage: %s\n", s.compact_h ? "two device vectors (uploads of b and c after the transforms free room)"
                                           : "four device vectors");
  std::printf("SRS bases: %s (%.1f GiB streamed from pinned host memory per run)\n",
              placed.all_on_device() ? "resident on the device" : "streamed from host",
              double(placed.host_bytes()) / double(1ull << 30));
  std::printf("target: GPU total <= 1200 ms at 2^27 (supraseal-c2: 1824 ms per partition on an RTX 5070 Ti)\n");
  return 0;
}

}  // namespace cuzk::bench
