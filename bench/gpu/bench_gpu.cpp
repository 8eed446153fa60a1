// bench_gpu: device-resident Fr NTT and G1/G2 MSM timings on one GPU, with
// CUDA events (median of repeats after warm-up). Prints one table at the end.
//
// Usage: bench_gpu [--quick] [--max-msm-log K] [--max-ntt-log K]
//   MSM: 2048 random bases (s_j * G) replicated to N, uniformly random scalars
//        (sppark's bench method, so sppark's H200 numbers compare directly).
//   NTT: random Fr, natural order in and out.
// Anchors (sppark on the same H200, docs/GPU.md section 7): G1 MSM 2^20 23.5 ms,
// 2^24 178.3 ms, 2^26 624.4 ms; NTT 2^24 4.43 ms, 2^27 42.4 ms (bit-reversed
// output there; ours is natural order). Integer-pipe floors (GPU.md section 4):
// NTT 2^24 3.3 ms, 2^27 29.5 ms; G1 MSM 2^24 81 ms, 2^26 300 ms (XYZZ).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu.hpp"

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

}  // namespace

int main(int argc, char** argv) {
  // Line-buffered so that a run killed by a time limit still shows how far it got.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool quick = false;
  int max_msm_log = 26, max_ntt_log = 27;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    if (a == "--max-msm-log" && i + 1 < argc) max_msm_log = std::atoi(argv[++i]);
    if (a == "--max-ntt-log" && i + 1 < argc) max_ntt_log = std::atoi(argv[++i]);
  }
  if (gpu::device_count() == 0) {
    std::printf("bench_gpu: no CUDA device, nothing to measure\n");
    return 0;
  }
  gpu::Device dev(0);
  std::printf("device: %s, %d SMs, cc %d.%d, %.1f GiB\n", dev.info().name.c_str(), dev.info().sm_count,
              dev.info().cc_major, dev.info().cc_minor, double(dev.info().global_memory_bytes) / (1 << 30));
  std::vector<Row> rows;
  const int reps = quick ? 3 : 7;
  std::mt19937_64 rng(20261130);

  // ---- NTT ----
  for (int log_n : {24, 27}) {
    if (log_n > max_ntt_log) continue;
    const std::size_t n = std::size_t{1} << log_n;
    const std::vector<Fr> x = random_fr(n, 1000 + log_n);
    gpu::DeviceFrVector v = dev.upload(x);
    const char* anchor = log_n == 24 ? "sppark 4.43 / floor 3.3" : "sppark 42.4 / floor 29.5";
    struct Variant {
      const char* name;
      gpu::NttDirection dir;
      gpu::NttDomain dom;
    };
    const Variant variants[] = {{"Fr NTT fwd", gpu::NttDirection::kForward, gpu::NttDomain::kStandard},
                                {"Fr NTT inv", gpu::NttDirection::kInverse, gpu::NttDomain::kStandard},
                                {"Fr NTT coset fwd", gpu::NttDirection::kForward, gpu::NttDomain::kCoset},
                                {"Fr NTT coset inv", gpu::NttDirection::kInverse, gpu::NttDomain::kCoset}};
    for (const Variant& var : variants) {
      auto [med, mn] = time_it(dev, 2, reps, [&] { dev.ntt(v, var.dir, var.dom); });
      rows.push_back({var.name, std::size_t(log_n), med, mn, anchor, ""});
    }
    // Self-check: forward then inverse (both coset) returns the input.
    gpu::DeviceFrVector w = dev.upload(x);
    dev.ntt(w, gpu::NttDirection::kForward, gpu::NttDomain::kCoset);
    dev.ntt(w, gpu::NttDirection::kInverse, gpu::NttDomain::kCoset);
    std::vector<Fr> back(n);
    dev.download(w, back);
    rows.back().check = std::memcmp(back.data(), x.data(), n * sizeof(Fr)) == 0 ? "round trip ok" : "ROUND TRIP FAIL";
  }

  // ---- G1 MSM ----
  if (max_msm_log >= 20) {
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
    for (int log_n : {20, 24, 26}) {
      if (log_n > max_msm_log) continue;
      const std::size_t n = std::size_t{1} << log_n;
      const gpu::DeviceFrVector ds = dev.upload(std::span<const Fr>(scalars).first(n));
      ec::G1Jacobian r;
      auto [med, mn] = time_it(dev, 1, log_n >= 26 ? std::min(reps, 3) : reps, [&] { r = dev.msm(dbases, ds); });
      const char* anchor = log_n == 20 ? "sppark 23.5" : log_n == 24 ? "sppark 178.3 / floor 81" : "sppark 624.4 / floor 300";
      gpu::Device::MsmPhaseTimes ph;
      (void)dev.msm(dbases, ds, &ph);
      std::printf("G1 MSM 2^%d phases: digits %.2f ms, sort %.2f ms, accumulate %.2f ms, reduce %.2f ms\n", log_n,
                  ph.digits_ms, ph.sort_ms, ph.accumulate_ms, ph.reduce_ms);
      rows.push_back({"G1 MSM c=" + std::to_string(gpu::Device::msm_window_bits(n)), std::size_t(log_n), med, mn,
                      anchor, r.is_identity() ? "IDENTITY?" : ""});
    }
  }

  // ---- G2 MSM (2^20) ----
  if (!quick && max_msm_log >= 20) {
    const std::size_t n = std::size_t{1} << 20;
    const std::vector<ec::G2Affine> distinct = random_points(ec::kG2Generator, 2048, rng);
    std::vector<ec::G2Affine> bases(n);
    for (std::size_t i = 0; i < n; ++i) bases[i] = distinct[i % distinct.size()];
    const gpu::G2Bases dbases = dev.upload_g2_bases(bases);
    const gpu::DeviceFrVector ds = dev.upload(random_fr(n, 9));
    auto [med, mn] = time_it(dev, 1, 3, [&] { (void)dev.msm(dbases, ds); });
    gpu::Device::MsmPhaseTimes ph;
    (void)dev.msm(dbases, ds, &ph);
    std::printf("G2 MSM 2^20 phases: digits %.2f ms, sort %.2f ms, accumulate %.2f ms, reduce %.2f ms\n",
                ph.digits_ms, ph.sort_ms, ph.accumulate_ms, ph.reduce_ms);
    rows.push_back({"G2 MSM c=" + std::to_string(gpu::Device::msm_window_bits(n)), 20, med, mn, "sppark 50.6", ""});
  }

  std::printf("\n%-22s %6s %12s %10s  %-26s %s\n", "op", "log2 n", "median ms", "min ms", "anchor ms", "check");
  for (const Row& r : rows) {
    std::printf("%-22s %6zu %12.2f %10.2f  %-26s %s\n", r.op.c_str(), r.n_log2, r.median_ms, r.min_ms,
                r.anchor.c_str(), r.check.c_str());
  }
  return 0;
}
