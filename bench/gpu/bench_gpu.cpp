// bench_gpu: device-resident Fr NTT and G1/G2 MSM timings on one GPU, with
// CUDA events (median of repeats after warm-up). Prints one table at the end.
//
// Usage: bench_gpu [--quick] [--max-msm-log K] [--max-ntt-log K]
//        bench_gpu partition [--log-domain N] [--full-width-percent P] [--reps R]
//                  [--srs resident|streamed] [--srs-device-mib M]
//                  (one PoRep C2 partition's device stages: bench/gpu/partition_bench.cpp)
//        bench_gpu spmv [--log-rows N] [--reps R] [--caps 32,8] [--host-threads T]
//                  (a, b, c from a device-resident R1CS vs the host: bench/gpu/spmv_bench.cpp)
//        bench_gpu setup [--setup-log K]   (fixed-base G1/G2 of the GPU setup, default 2^24 scalars)
//        bench_gpu field [--ops-per-thread K] [--waves W] [--reps R]
//                  (Fp/Fr mul and sqr, CIOS vs even/odd forms: bench/gpu/field_bench.cu)
//        options [--no-ntt] [--no-g1] [--msm-window-bits C] (C = 0: the plan's choice)
//                [--msm-scratch-mib M] (the MSM scratch limit; default the device's,
//                 default_msm_scratch_bytes: 58.2 GiB on an H200)
//   MSM: 2048 random bases (s_j * G) replicated to N, uniformly random scalars
//        (sppark's bench method, so sppark's H200 numbers compare directly),
//        timed at 2^20, 2^24, 2^26 (and 2^27 with --max-msm-log 27), G2 at
//        2^20 and 2^23 (and 2^25 with --max-msm-log 27).
//   NTT: random Fr, natural order in and out; the coset forward and inverse
//        must return the input.
// Anchors (sppark on the same H200, docs/GPU.md section 7): G1 MSM 2^20 23.5 ms,
// 2^24 178.3 ms, 2^26 624.4 ms; NTT 2^24 4.43 ms, 2^27 42.4 ms (bit-reversed
// output there; ours is natural order). Integer-pipe floors (GPU.md section 4):
// NTT 2^24 3.3 ms, 2^27 29.5 ms; G1 MSM 2^24 81 ms, 2^26 300 ms (XYZZ).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ec/curve.hpp"
#include "gpu/gpu.hpp"
#include "field_bench.hpp"
#include "partition_bench.hpp"
#include "spmv_bench.hpp"
#include "gpu/setup/gpu_setup.hpp"
#include "util/thread_pool.hpp"

namespace {

using cuzk::ff::Fr;
using namespace cuzk;

struct Row {
  std::string op;
  std::size_t n_log2;
  float median_ms;
  float min_ms;
  std::string anchor;
  std::string check;
};

// Random Montgomery limbs below r (top limb masked below r's top limb 0x73ed...).
std::vector<Fr> random_fr(std::size_t n, std::uint64_t seed) {
  std::vector<Fr> v(n);
  std::uint64_t s = seed | 1;
  for (auto& x : v) {
    ff::BigInt<4> l;
    for (auto& w : l.limb) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      w = s;
    }
    l.limb[3] &= 0x3fffffffffffffffull;
    x = Fr::from_raw_mont(l);
  }
  return v;
}

template <class F>
float median(std::vector<F> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Fn>
std::pair<float, float> time_it(gpu::Device& dev, int warmup, int reps, Fn&& fn) {
  gpu::StreamTimer timer(dev);
  for (int i = 0; i < warmup; ++i) fn();
  dev.synchronize();
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    timer.start();
    fn();
    timer.stop();
    ms.push_back(timer.elapsed_ms());
  }
  return {median(ms), *std::min_element(ms.begin(), ms.end())};
}

// Host-side affine points s_j * G for j < count, s_j = s_0 + j * q, by repeated
// Jacobian additions (dbl/add as in tests/gpu/host_ref.hpp, condensed).
template <class F>
ec::Jacobian<F> jdbl(const ec::Jacobian<F>& p) {
  if (p.is_identity()) return p;
  const F a = p.x.square(), b = p.y.square(), c = b.square();
  const F d = ((p.x + b).square() - a - c).dbl();
  const F e = a.dbl() + a;
  const F x3 = e.square() - d.dbl();
  return {x3, e * (d - x3) - c.dbl().dbl().dbl(), (p.y * p.z).dbl()};
}
template <class F>
ec::Jacobian<F> jadd(const ec::Jacobian<F>& p, const ec::Jacobian<F>& q) {
  if (p.is_identity()) return q;
  if (q.is_identity()) return p;
  const F z1z1 = p.z.square(), z2z2 = q.z.square();
  const F u1 = p.x * z2z2, u2 = q.x * z1z1;
  const F s1 = p.y * q.z * z2z2, s2 = q.y * p.z * z1z1;
  if (u1 == u2) return s1 == s2 ? jdbl(p) : ec::Jacobian<F>::identity();
  const F h = u2 - u1, i = h.dbl().square(), j = h * i, r = (s2 - s1).dbl(), v = u1 * i;
  const F x3 = r.square() - j - v.dbl();
  return {x3, r * (v - x3) - (s1 * j).dbl(), ((p.z + q.z).square() - z1z1 - z2z2) * h};
}
template <class F>
ec::Jacobian<F> jmul(const ec::Jacobian<F>& p, const ff::BigInt<4>& k) {
  ec::Jacobian<F> r = ec::Jacobian<F>::identity();
  for (std::size_t i = k.bit_length(); i-- > 0;) {
    r = jdbl(r);
    if (k.bit(i)) r = jadd(r, p);
  }
  return r;
}
template <class F>
std::vector<ec::Affine<F>> random_points(const ec::Affine<F>& gen, std::size_t count, std::mt19937_64& rng) {
  const ec::Jacobian<F> g{gen.x, gen.y, F::one()};
  const ec::Jacobian<F> q = jmul(g, Fr::random(rng).to_int());
  ec::Jacobian<F> p = jmul(g, Fr::random(rng).to_int());
  std::vector<ec::Affine<F>> out;
  for (std::size_t j = 0; j < count; ++j, p = jadd(p, q)) {
    const F zi = p.z.inverse(), zi2 = zi.square();
    out.push_back({p.x * zi2, p.y * zi2 * zi, false});
  }
  return out;
}

// `setup` mode: end-to-end throughput of gpu::fixed_base_g1 / _g2 (upload of
// the scalars, kernel, download, unpacking into host points; default 2^22
// chunks), wall clock, best of 3 after a warm-up, plus a spot check of 64
// points against the host's scalar multiplication.
//
// The 32 GiB PoRep partition needs 2^27 - 1 (h) + 130.2M (l) + 129.8M (a)
// + 33.1M (b_g1) + ~0 (ic) = 427M G1 points and 33.1M G2 points; the line
// "32 GiB PoRep estimate" is 427M / G1 rate + 33.1M / G2 rate, the device
// part of the setup (the host's scalar work, about a minute on 16 cores, and
// writing the 45 GB .params come on top).
int bench_setup(gpu::Device& dev, int log_n) {
  const std::size_t n = std::size_t{1} << log_n;
  ThreadPool pool;
  const std::vector<Fr> scalars = random_fr(n, 31);
  auto wall = [](auto&& fn) {
    double best = 1e30;
    fn();  // warm-up (tables, pinned allocations)
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      fn();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  std::vector<ec::G1Affine> g1;
  std::vector<ec::G2Affine> g2;
  const double g1_s = wall([&] { g1 = gpu::fixed_base_g1(dev, ec::kG1Generator, scalars, pool); });
  const double g2_s = wall([&] { g2 = gpu::fixed_base_g2(dev, ec::kG2Generator, scalars, pool); });
  int bad = 0;
  for (std::size_t k = 0; k < 64; ++k) {
    const std::size_t i = (k * 2654435761u) % n;
    if (!(g1[i] == ec::to_affine(ec::mul(ec::kG1Generator, scalars[i])))) ++bad;
    if (!(g2[i] == ec::to_affine(ec::mul(ec::kG2Generator, scalars[i])))) ++bad;
  }
  const double g1_rate = double(n) / g1_s, g2_rate = double(n) / g2_s;
  std::printf("fixed-base G1 2^%d: %.3f s, %.2f M points/s\n", log_n, g1_s, g1_rate / 1e6);
  std::printf("fixed-base G2 2^%d: %.3f s, %.2f M points/s\n", log_n, g2_s, g2_rate / 1e6);
  std::printf("32 GiB PoRep estimate (427M G1 + 33.1M G2): %.1f s of fixed-base work\n",
              427e6 / g1_rate + 33.1e6 / g2_rate);
  std::printf("spot check against the host (128 points): %s\n", bad == 0 ? "ok" : "MISMATCH");
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Line-buffered so that a run killed by a time limit still shows how far it got.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool quick = false, setup_mode = false, g1 = true;
  int max_msm_log = 26, max_ntt_log = 27, setup_log = 24, msm_window_bits = 0;
  std::size_t msm_scratch_mib = 0;  // 0: the device's default
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    if (a == "--no-ntt") max_ntt_log = 0;
    if (a == "--no-g1") g1 = false;
    if (a == "setup") setup_mode = true;
    if (a == "--setup-log" && i + 1 < argc) setup_log = std::atoi(argv[++i]);
    if (a == "--max-msm-log" && i + 1 < argc) max_msm_log = std::atoi(argv[++i]);
    if (a == "--max-ntt-log" && i + 1 < argc) max_ntt_log = std::atoi(argv[++i]);
    if (a == "--msm-window-bits" && i + 1 < argc) msm_window_bits = std::atoi(argv[++i]);
    if (a == "--msm-scratch-mib" && i + 1 < argc) msm_scratch_mib = std::strtoull(argv[++i], nullptr, 10);
  }
  if (gpu::device_count() == 0) {
    std::printf("bench_gpu: no CUDA device, nothing to measure\n");
    return 0;
  }
  gpu::Device dev(0);
  std::printf("device: %s, %d SMs, cc %d.%d, %.1f GiB\n", dev.info().name.c_str(), dev.info().sm_count,
              dev.info().cc_major, dev.info().cc_minor, double(dev.info().global_memory_bytes) / (1 << 30));
  {
    // The MSM tuning of every mode (partition and spmv included).
    gpu::Device::MsmTuning t = dev.msm_tuning();
    t.window_bits = msm_window_bits;
    if (msm_scratch_mib != 0) t.scratch_limit_bytes = msm_scratch_mib << 20;
    dev.set_msm_tuning(t);
    std::printf("MSM scratch limit %.1f GiB\n", double(t.scratch_limit_bytes) / double(std::size_t{1} << 30));
  }
  if (setup_mode) return bench_setup(dev, setup_log);
  if (argc > 1 && std::string(argv[1]) == "partition") return bench::bench_partition(dev, argc, argv);
  if (argc > 1 && std::string(argv[1]) == "field") return bench::bench_field(dev, argc, argv);
  if (argc > 1 && std::string(argv[1]) == "spmv") return bench::bench_spmv(dev, argc, argv);
  std::vector<Row> rows;
  const int reps = quick ? 3 : 7;
  std::mt19937_64 rng(20261130);

  // ---- NTT ----
  for (int log_n : {24, 27}) {
    if (log_n > max_ntt_log) continue;
    const std::size_t n = std::size_t{1} << log_n;
    const std::vector<Fr> x = random_fr(n, 1000 + log_n);
    const char* anchor = log_n == 24 ? "sppark 4.43 / floor 3.3" : "sppark 42.4 / floor 29.5";
    struct Variant {
      const char* name;
      gpu::NttDirection dir;
      gpu::NttDomain dom;
    };
    const Variant variants[] = {{"NTT fwd", gpu::NttDirection::kForward, gpu::NttDomain::kStandard},
                                {"NTT inv", gpu::NttDirection::kInverse, gpu::NttDomain::kStandard},
                                {"NTT coset fwd", gpu::NttDirection::kForward, gpu::NttDomain::kCoset},
                                {"NTT coset inv", gpu::NttDirection::kInverse, gpu::NttDomain::kCoset}};
    {
      gpu::DeviceFrVector v = dev.upload(x);
      for (const Variant& var : variants) {
        auto [med, mn] = time_it(dev, 2, reps, [&] { dev.ntt(v, var.dir, var.dom); });
        rows.push_back({var.name, std::size_t(log_n), med, mn, anchor, ""});
      }
    }
    // Self-check: coset forward then coset inverse returns the input.
    gpu::DeviceFrVector w = dev.upload(x);
    dev.ntt(w, gpu::NttDirection::kForward, gpu::NttDomain::kCoset);
    dev.ntt(w, gpu::NttDirection::kInverse, gpu::NttDomain::kCoset);
    std::vector<Fr> back(n);
    dev.download(w, back);
    rows.back().check = std::memcmp(back.data(), x.data(), n * sizeof(Fr)) == 0 ? "round trip ok" : "ROUND TRIP FAIL";
    dev.release_ntt_scratch();
  }

  // ---- G1 MSM ----
  if (g1 && max_msm_log >= 20) {
    const std::size_t max_n = std::size_t{1} << max_msm_log;
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<ec::G1Affine> distinct = random_points(ec::kG1Generator, 2048, rng);
    std::vector<ec::G1Affine> bases(max_n);
    for (std::size_t i = 0; i < max_n; ++i) bases[i] = distinct[i % distinct.size()];
    const gpu::G1Bases dbases = dev.upload_g1_bases(bases);
    bases.clear();
    bases.shrink_to_fit();
    const std::vector<Fr> scalars = random_fr(max_n, 7);
    const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("G1 setup (points, upload) %.1f s\n", setup_s);
    for (int log_n : {20, 24, 26, 27}) {
      if (log_n > max_msm_log) continue;
      const std::size_t n = std::size_t{1} << log_n;
      const gpu::DeviceFrVector ds = dev.upload(std::span<const Fr>(scalars).first(n));
      const char* anchor = log_n == 20   ? "sppark 23.5"
                           : log_n == 24 ? "sppark 178.3 / floor 81"
                           : log_n == 26 ? "sppark 624.4 / floor 300"
                                         : "sppark 1188 / target 600";
      ec::G1Jacobian r;
      // Fewer repeats at 2^26 and up: each case stays within ~10 s.
      const int case_reps = log_n >= 26 ? std::min(reps, 3) : reps;
      auto [med, mn] = time_it(dev, 1, case_reps, [&] { r = dev.msm(dbases, ds); });
      gpu::Device::MsmPhaseTimes ph;
      (void)dev.msm(dbases, ds, &ph);
      std::printf(
          "G1 MSM 2^%d c=%d chunks=%zu: %.2f ms; phases: digits %.2f, sort %.2f, accumulate %.2f, "
          "reduce %.2f ms%s\n",
          log_n, ph.window_bits, ph.chunks, med, ph.digits_ms, ph.sort_ms, ph.accumulate_ms, ph.reduce_ms,
          ph.reduced_by_trees ? " (by trees)" : "");
      rows.push_back({"G1 MSM c=" + std::to_string(ph.window_bits), std::size_t(log_n), med, mn, anchor,
                      r.is_identity() ? "IDENTITY?" : ""});
    }
  }

  // ---- G2 MSM (2^20, 2^23; 2^25, the B_G2 size, with --max-msm-log 27) ----
  if (!quick && max_msm_log >= 20) {
    const int g2_max_log = max_msm_log >= 27 ? 25 : std::min(23, max_msm_log);
    const std::size_t max_n = std::size_t{1} << g2_max_log;
    const std::vector<ec::G2Affine> distinct = random_points(ec::kG2Generator, 2048, rng);
    std::vector<ec::G2Affine> bases(max_n);
    for (std::size_t i = 0; i < max_n; ++i) bases[i] = distinct[i % distinct.size()];
    const gpu::G2Bases dbases = dev.upload_g2_bases(bases);
    bases.clear();
    bases.shrink_to_fit();
    const std::vector<Fr> scalars = random_fr(max_n, 9);
    for (int log_n : {20, 23, 25}) {
      if (log_n > g2_max_log) continue;
      const std::size_t n = std::size_t{1} << log_n;
      const gpu::DeviceFrVector ds = dev.upload(std::span<const Fr>(scalars).first(n));
      ec::G2Jacobian r;
      auto [med, mn] = time_it(dev, 1, 3, [&] { r = dev.msm(dbases, ds); });
      gpu::Device::MsmPhaseTimes ph;
      (void)dev.msm(dbases, ds, &ph);
      std::printf(
          "G2 MSM 2^%d c=%d chunks=%zu: %.2f ms; phases: digits %.2f, sort %.2f, accumulate %.2f, "
          "reduce %.2f ms%s\n",
          log_n, ph.window_bits, ph.chunks, med, ph.digits_ms, ph.sort_ms, ph.accumulate_ms, ph.reduce_ms,
          ph.reduced_by_trees ? " (by trees)" : "");
      rows.push_back({"G2 MSM c=" + std::to_string(ph.window_bits), std::size_t(log_n), med, mn,
                      log_n == 20   ? "sppark 50.6"
                      : log_n == 23 ? "sppark 260.0"
                                    : "sppark 879 / target 450",
                      r.is_identity() ? "IDENTITY?" : ""});
    }
  }

  std::printf("\n%-22s %6s %12s %10s  %-26s %s\n", "op", "log2 n", "median ms", "min ms", "anchor ms", "check");
  for (const Row& r : rows) {
    std::printf("%-22s %6zu %12.2f %10.2f  %-26s %s\n", r.op.c_str(), r.n_log2, r.median_ms, r.min_ms, r.anchor.c_str(),
                r.check.c_str());
  }
  return 0;
}
