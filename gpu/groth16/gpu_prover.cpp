// GpuProver and ResidentSrs: host orchestration of the device stages.
//
// The device work goes through cuzk_gpu's kernel launchers (gpu/kernels.hpp)
// on the device addresses of DeviceFrVectors (and the Device's NTT tables), on
// this prover's own streams, so that the quotient step can run between the
// NTTs and the H MSM can read its scalars where the coset iNTT left them (no
// host round trip).
#include "gpu/groth16/gpu_prover.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/groth16/quotient_kernel.hpp"
#include "gpu/groth16/witness_split.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ntt/ntt_tables.hpp"
#include "gpu/upload_points.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::PinnedBuffer;
using detail::upload_points;
using ff::Fr;
using kernels::u32;

static_assert(sizeof(Fr) == 32 && std::is_trivially_copyable_v<Fr>);

namespace {

constexpr int kLogDomainMax = 27;  // the NTT kernels' limit
constexpr std::size_t kG1PointLimbs = 24;  // x, y: 12 limbs each
constexpr std::size_t kG2PointLimbs = 48;  // x.c0, x.c1, y.c0, y.c1
constexpr std::size_t kG1PointBytes = kG1PointLimbs * 4;
constexpr std::size_t kG2PointBytes = kG2PointLimbs * 4;
constexpr std::size_t kFrLimbs = 8;

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void require_fits(Device& device, std::size_t bytes, const char* what) {
  const std::size_t free_bytes = device.free_memory_bytes();
  if (bytes + detail::kDeviceMemoryReserveBytes > free_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory, std::string(what) + " needs " + mib(bytes) + " of device memory, " +
                                                   mib(free_bytes) + " free (" +
                                                   mib(detail::kDeviceMemoryReserveBytes) + " kept in reserve)");
  }
}

// XYZZ (x = X/ZZ, y = Y/ZZZ) to Jacobian (x = X'/Z'^2, y = Y'/Z'^3) without an
// inversion: Z' = ZZ ZZZ, X' = X ZZ ZZZ^2, Y' = Y ZZ^3 ZZZ^2.
template <class F>
ec::Jacobian<F> xyzz_to_jacobian(const u32* limbs) {
  F xyzz[4];
  std::memcpy(static_cast<void*>(xyzz), limbs, sizeof(xyzz));
  const F &x = xyzz[0], &y = xyzz[1], &zz = xyzz[2], &zzz = xyzz[3];
  if (zz.is_zero()) return ec::Jacobian<F>::identity();
  const F zzz2 = zzz.square();
  return {x * zz * zzz2, y * zz.square() * zz * zzz2, zz * zzz};
}

// The MSM is sum_w 2^(w c) S_w over the window sums S_w (window 0 first):
// Horner's rule from the top window.
template <class F>
ec::Jacobian<F> combine_windows(const std::vector<u32>& limbs, int window_bits) {
  constexpr std::size_t kXyzzLimbs = 4 * sizeof(F) / 4;
  ec::Jacobian<F> acc = ec::Jacobian<F>::identity();
  for (std::size_t w = limbs.size() / kXyzzLimbs; w-- > 0;) {
    for (int i = 0; i < window_bits; ++i) acc = ec::dbl(acc);
    acc = ec::add(acc, xyzz_to_jacobian<F>(limbs.data() + w * kXyzzLimbs));
  }
  return acc;
}

// The MSMs use the Device's tuning and its scratch arena (allocated once,
// chunked to stay within the tuning's scratch limit and the free memory).
kernels::MsmConfig msm_config(const Device& device) {
  kernels::MsmConfig c;
  c.window_bits = device.msm_tuning().window_bits;
  c.algorithm = device.msm_tuning().algorithm;
  c.scratch_limit_bytes = device.msm_tuning().scratch_limit_bytes;
  return c;
}

ec::G1Jacobian device_msm_g1(Device& device, cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
  if (n == 0) return ec::G1Jacobian::identity();
  const kernels::MsmWindows w =
      kernels::msm_g1(s, bases, scalars, n, msm_config(device), device.msm_scratch(), nullptr);
  return combine_windows<ff::Fp>(w.sums, w.window_bits);
}

ec::G2Jacobian device_msm_g2(Device& device, cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
  if (n == 0) return ec::G2Jacobian::identity();
  const kernels::MsmWindows w =
      kernels::msm_g2(s, bases, scalars, n, msm_config(device), device.msm_scratch(), nullptr);
  return combine_windows<ff::Fp2>(w.sums, w.window_bits);
}

DeviceBuffer<u32> upload_fr(cudaStream_t s, std::span<const Fr> xs, const char* what) {
  DeviceBuffer<u32> buf(xs.size() * kFrLimbs, what);
  if (!xs.empty()) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(buf.get(), xs.data(), xs.size_bytes(), cudaMemcpyHostToDevice, s));
  }
  return buf;
}

// ---- witness-scalar split ----
// Scalars 0 contribute nothing; scalars 1 contribute their base once; only the
// rest (the tail) needs a Pippenger MSM. The host side is
// gpu/groth16/witness_split.hpp (selection and split fused: a count and a fill
// pass over the sources, no vector of all selected scalars).

// The split's arrays on the device.
struct DeviceSplit {
  DeviceBuffer<u32> ones, tail_idx, tail;
  std::size_t n_ones = 0, n_tail = 0;
};

// From the host arrays of a fill_split (pinned: the copies run at full speed).
DeviceSplit upload_split(cudaStream_t s, const u32* ones, std::size_t n_ones, const u32* tail_idx, const Fr* tail,
                         std::size_t n_tail) {
  DeviceSplit d;
  d.n_ones = n_ones;
  d.n_tail = n_tail;
  d.ones = DeviceBuffer<u32>(n_ones, "split: indices of ones");
  d.tail_idx = DeviceBuffer<u32>(n_tail, "split: tail indices");
  if (n_ones > 0) CUZK_CUDA_CHECK(cudaMemcpyAsync(d.ones.get(), ones, n_ones * 4, cudaMemcpyHostToDevice, s));
  if (n_tail > 0) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(d.tail_idx.get(), tail_idx, n_tail * 4, cudaMemcpyHostToDevice, s));
  }
  d.tail = upload_fr(s, {tail, n_tail}, "split: tail scalars");
  return d;
}

// Grows a reused host buffer to at least `count` elements (contents dropped).
template <class T>
T* reserve_pinned(PinnedBuffer<T>& buf, std::size_t count) {
  if (buf.size() < count) {
    buf.reset();  // free first: these reach GiBs
    buf = PinnedBuffer<T>(count);
  }
  return buf.get();
}

// Per group: packed point size, the point sum and the MSM.
template <class F>
struct Group;
template <>
struct Group<ff::Fp> {
  static constexpr std::size_t kPointLimbs = kG1PointLimbs;
  static std::vector<u32> sum(cudaStream_t s, const u32* bases, const u32* idx, std::size_t n) {
    return groth16_kernels::sum_points_g1(s, bases, idx, n);
  }
  static ec::G1Jacobian msm(Device& device, cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
    return device_msm_g1(device, s, bases, scalars, n);
  }
};
template <>
struct Group<ff::Fp2> {
  static constexpr std::size_t kPointLimbs = kG2PointLimbs;
  static std::vector<u32> sum(cudaStream_t s, const u32* bases, const u32* idx, std::size_t n) {
    return groth16_kernels::sum_points_g2(s, bases, idx, n);
  }
  static ec::G2Jacobian msm(Device& device, cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
    return device_msm_g2(device, s, bases, scalars, n);
  }
};

// sum_i s_i P_i = sum_{s_i = 1} P_i + MSM over the tail (its bases gathered
// into a contiguous scratch buffer, as the MSM kernel reads them in order).
template <class F>
ec::Jacobian<F> split_msm(Device& device, cudaStream_t s, const u32* bases, const DeviceSplit& d) {
  ec::Jacobian<F> r = xyzz_to_jacobian<F>(Group<F>::sum(s, bases, d.ones.get(), d.n_ones).data());
  if (d.n_tail > 0) {
    DeviceBuffer<u32> gathered(d.n_tail * Group<F>::kPointLimbs, "split: tail bases");
    groth16_kernels::gather_points(s, bases, d.tail_idx.get(), d.n_tail, Group<F>::kPointLimbs, gathered.get());
    r = ec::add(r, Group<F>::msm(device, s, gathered.get(), d.tail.get(), d.n_tail));
  }
  return r;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// ---- ResidentSrs -----------------------------------------------------------

struct ResidentSrs::Impl {
  const groth16::Parameters* params = nullptr;
  int ordinal = 0;
  std::size_t bytes = 0;
  DeviceBuffer<u32> h, l, a, b_g1, b_g2;
};

std::size_t ResidentSrs::bytes_for(const groth16::Parameters& p) {
  return kG1PointBytes * (p.h.size() + p.l.size() + p.a.size() + p.b_g1.size()) + kG2PointBytes * p.b_g2.size();
}

ResidentSrs::ResidentSrs(Device& device, const groth16::Parameters& params, std::size_t budget_bytes) {
  const std::size_t need = bytes_for(params);
  if (need > budget_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory,
                "resident SRS needs " + mib(need) + ", over its budget of " + mib(budget_bytes));
  }
  const int ordinal = device.info().ordinal;
  DeviceGuard guard(ordinal);
  require_fits(device, need, "resident SRS");
  auto impl = std::make_unique<Impl>();
  impl->params = &params;
  impl->ordinal = ordinal;
  impl->bytes = need;
  impl->h = DeviceBuffer<u32>(params.h.size() * kG1PointLimbs, "SRS h");
  impl->l = DeviceBuffer<u32>(params.l.size() * kG1PointLimbs, "SRS l");
  impl->a = DeviceBuffer<u32>(params.a.size() * kG1PointLimbs, "SRS a");
  impl->b_g1 = DeviceBuffer<u32>(params.b_g1.size() * kG1PointLimbs, "SRS b_g1");
  impl->b_g2 = DeviceBuffer<u32>(params.b_g2.size() * kG2PointLimbs, "SRS b_g2");
  detail::Stream stream;
  upload_points<ec::G1Affine>(stream.get(), params.h, impl->h.get());
  upload_points<ec::G1Affine>(stream.get(), params.l, impl->l.get());
  upload_points<ec::G1Affine>(stream.get(), params.a, impl->a.get());
  upload_points<ec::G1Affine>(stream.get(), params.b_g1, impl->b_g1.get());
  upload_points<ec::G2Affine>(stream.get(), params.b_g2, impl->b_g2.get());
  impl_ = std::move(impl);
}

ResidentSrs::~ResidentSrs() {
  if (!impl_) return;
  DeviceGuard guard(impl_->ordinal);  // cudaFree on the owning device
  impl_.reset();
}
ResidentSrs::ResidentSrs(ResidentSrs&&) noexcept = default;
ResidentSrs& ResidentSrs::operator=(ResidentSrs&&) noexcept = default;

std::size_t ResidentSrs::bytes() const { return impl_->bytes; }
int ResidentSrs::device_ordinal() const { return impl_->ordinal; }
const groth16::Parameters& ResidentSrs::params() const { return *impl_->params; }

bool ResidentSrs::matches(const groth16::Parameters& p) const {
  const groth16::Parameters& q = *impl_->params;
  return &p == &q && p.h.size() == q.h.size() && p.l.size() == q.l.size() && p.a.size() == q.a.size() &&
         p.b_g1.size() == q.b_g1.size() && p.b_g2.size() == q.b_g2.size() && bytes_for(p) == impl_->bytes &&
         p.vk == q.vk;
}

// ---- ReplicatedSrs ---------------------------------------------------------

struct ReplicatedSrs::Impl {
  int ordinal = 0;
  std::size_t a_count = 0, b_count = 0, bytes = 0;
  DeviceBuffer<u32> h, l, a, b_g1, b_g2;
};

namespace {

// dst[0, count) = points[i mod points.size()]: the distinct points once over
// PCIe, then device-to-device copies doubling the filled prefix.
template <class HostPoint>
DeviceBuffer<u32> replicate_points(cudaStream_t s, std::span<const HostPoint> points, std::size_t count,
                                   const char* what) {
  constexpr std::size_t kPointLimbs = 2 * sizeof(points[0].x) / 4;
  DeviceBuffer<u32> buf(count * kPointLimbs, what);
  if (count == 0) return buf;
  if (points.empty()) throw Error(ErrorKind::kInvalidArgument, "ReplicatedSrs: no points to replicate");
  std::size_t have = std::min(points.size(), count);
  upload_points<HostPoint>(s, points.first(have), buf.get());
  while (have < count) {
    const std::size_t n = std::min(have, count - have);
    CUZK_CUDA_CHECK(cudaMemcpyAsync(buf.get() + have * kPointLimbs, buf.get(), n * kPointLimbs * 4,
                                    cudaMemcpyDeviceToDevice, s));
    have += n;
  }
  return buf;
}

}  // namespace

ReplicatedSrs::ReplicatedSrs(Device& device, std::span<const ec::G1Affine> g1, std::span<const ec::G2Affine> g2,
                             std::size_t h_count, std::size_t l_count, std::size_t a_count, std::size_t b_count) {
  DeviceGuard guard(device.info().ordinal);
  const std::size_t need = kG1PointBytes * (h_count + l_count + a_count + b_count) + kG2PointBytes * b_count;
  require_fits(device, need, "replicated SRS");
  auto impl = std::make_unique<Impl>();
  impl->ordinal = device.info().ordinal;
  impl->a_count = a_count;
  impl->b_count = b_count;
  impl->bytes = need;
  detail::Stream stream;
  impl->h = replicate_points<ec::G1Affine>(stream.get(), g1, h_count, "replicated SRS h");
  impl->l = replicate_points<ec::G1Affine>(stream.get(), g1, l_count, "replicated SRS l");
  impl->a = replicate_points<ec::G1Affine>(stream.get(), g1, a_count, "replicated SRS a");
  impl->b_g1 = replicate_points<ec::G1Affine>(stream.get(), g1, b_count, "replicated SRS b_g1");
  impl->b_g2 = replicate_points<ec::G2Affine>(stream.get(), g2, b_count, "replicated SRS b_g2");
  stream.sync();
  impl_ = std::move(impl);
}
ReplicatedSrs::~ReplicatedSrs() {
  if (!impl_) return;
  DeviceGuard guard(impl_->ordinal);  // cudaFree on the owning device
  impl_.reset();
}
ReplicatedSrs::ReplicatedSrs(ReplicatedSrs&&) noexcept = default;
ReplicatedSrs& ReplicatedSrs::operator=(ReplicatedSrs&&) noexcept = default;
std::size_t ReplicatedSrs::bytes() const { return impl_->bytes; }

DeviceSrsBases ReplicatedSrs::bases() const {
  DeviceSrsBases d;
  d.h = impl_->h.get();
  d.l = impl_->l.get();
  d.a = impl_->a.get();
  d.a_count = impl_->a_count;
  d.b_g1 = impl_->b_g1.get();
  d.b_g2 = impl_->b_g2.get();
  d.b_count = impl_->b_count;
  return d;
}

// ---- GpuProver -------------------------------------------------------------

struct GpuProver::Impl {
  int ordinal = 0;
  detail::Stream compute;
  detail::Stream copy;  // uploads of a, b, c overlap the NTTs of the previous vector
  PinnedBuffer<Fr> host_abc;  // 3 m evaluations, reused across proofs of one size
  // Host side of the witness MSMs (L, A, B one after the other), grown as
  // needed and reused across proofs: indices of the ones, the tail's indices,
  // and the tail's values (or all selected scalars when the split is not used).
  PinnedBuffer<u32> split_ones, split_tail_idx;
  PinnedBuffer<Fr> split_values;

  // Stage 2: returns m elements whose first m - 1 are the coefficients of H.
  // `abc` holds a, b, c (m each, zero-padded) on the host. The NTT tables are
  // the Device's (gpu/ntt/ntt_tables.hpp), its algorithm picks the kernels.
  // Device times of the uploads and of the NTT pipeline go to `stats` (may be null).
  DeviceFrVector quotient(Device& device, const Fr* abc, int log_m, bool uploads_first, GpuProveStats* stats) {
    const std::size_t m = std::size_t{1} << log_m;
    const detail::NttTables& t = detail::ntt_tables(device, log_m);
    require_fits(device, 3 * m * 32, "H polynomial (a, b, c)");
    const cudaStream_t s = compute.get();
    DeviceFrVector v[3] = {device.allocate(m), device.allocate(m), device.allocate(m)};
    detail::Event uploaded[3], upload_begin, begin, end;
    upload_begin.record(copy.get());
    for (int k = 0; k < 3; ++k) {
      CUZK_CUDA_CHECK(
          cudaMemcpyAsync(v[k].device_limbs(), abc + k * m, m * 32, cudaMemcpyHostToDevice, copy.get()));
      uploaded[k].record(copy.get());
    }
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, uploaded[uploads_first ? 2 : 0].get(), 0));
    begin.record(s);
    // Device times, read after the final synchronization.
    auto record_times = [&] {
      end.record(s);
      compute.sync();
      if (stats == nullptr) return;
      float ms = 0;
      CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, upload_begin.get(), uploaded[2].get()));
      stats->h_upload_ms = ms;
      CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
      stats->h_gpu_ms = ms;
    };
    const NttAlgorithm algorithm =
        log_m >= kernels::kNttFusedLogMin ? device.ntt_algorithm() : NttAlgorithm::kRadix2;
    u32 z_inv[8];
    std::memcpy(z_inv, &t.vanishing_inv, sizeof(z_inv));
    if (algorithm == NttAlgorithm::kRadix2) {
      for (int k = 0; k < 3; ++k) {
        u32* x = v[k].device_limbs();
        CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, uploaded[k].get(), 0));
        // iNTT (DIF: bit-reversed out), then the bit reversal scaled by m^-1 g^i
        // (coefficients of the coset), then the forward NTT: evaluations on g<w>.
        kernels::ntt_dif(s, x, t.twiddles.get(), log_m, /*inverse=*/true);
        kernels::ntt_bitrev_scale(s, x, log_m, t.coset_ninv_hi.get(), t.coset_ninv_lo.get(), t.coset_lo_bits);
        kernels::ntt_dif(s, x, t.twiddles.get(), log_m, /*inverse=*/false);
        kernels::ntt_bitrev_scale(s, x, log_m, nullptr, nullptr, 0);
      }
      groth16_kernels::quotient_on_coset(s, v[0].device_limbs(), v[1].device_limbs(), v[2].device_limbs(), z_inv, m);
      // Coset iNTT: back to coefficients, scaled by m^-1 g^-i.
      kernels::ntt_dif(s, v[0].device_limbs(), t.twiddles.get(), log_m, /*inverse=*/true);
      kernels::ntt_bitrev_scale(s, v[0].device_limbs(), log_m, t.coset_inv_hi.get(), t.coset_inv_lo.get(),
                                t.coset_lo_bits);
      record_times();  // synchronizes: b and c are freed on return; the host may reuse abc
      return std::move(v[0]);
    }
    // Fused kernels: 7 transforms of ntt_fused_passes(log_m) passes each and
    // nothing else (radix-2: 7 x (passes + a bit-reversal pass) + the quotient
    // kernel). Every element is read and written once per pass.
    kernels::NttFusedArgs base;
    detail::set_fused_radix(algorithm, base);
    base.log_n = log_m;
    base.twiddles = t.twiddles.get();
    for (int k = 0; k < 3; ++k) {
      CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, uploaded[k].get(), 0));
      // iNTT, DIF: natural evaluations in, m * coefficients out in bit-reversed
      // order (position p holds coefficient bitrev(p)).
      kernels::NttFusedArgs a = base;
      a.data = v[k].device_limbs();
      a.inverse = true;
      kernels::ntt_fused(s, a);
      // Coset NTT, DIT: its first pass scales position p by m^-1 g^bitrev(p)
      // (1/m and the coset shift of coefficient bitrev(p)); natural-order
      // evaluations on g<w> out, in place.
      a.inverse = false;
      a.dit = true;
      a.load_scale = t.coset_ninv();
      a.load_scale.bitrev_index = true;
      kernels::ntt_fused(s, a);
    }
    // Coset iNTT, DIF: the first pass loads (a b - c) / Z(g w^i); the last
    // writes coefficient j (bit reversal fused, out of place into b's storage,
    // which only the first pass reads) scaled by m^-1 g^-j.
    kernels::NttFusedArgs a = base;
    a.data = v[0].device_limbs();
    a.inverse = true;
    a.quotient_b = v[1].device_limbs();
    a.quotient_c = v[2].device_limbs();
    std::memcpy(a.quotient_z, z_inv, sizeof(z_inv));
    a.out = v[1].device_limbs();  // >= 2 passes (ntt_fused_passes), so the first pass is done reading b
    a.store_bitrev = true;
    a.store_scale = t.coset_inv();
    kernels::ntt_fused(s, a);
    record_times();  // synchronizes: a and c are freed on return; the host may reuse abc
    return std::move(v[1]);
  }
};

GpuProver::GpuProver(Device& device, ThreadPool& pool, GpuProverOptions options)
    : device_(device), pool_(pool), options_(options) {
  DeviceGuard guard(device.info().ordinal);
  impl_ = std::make_unique<Impl>();
  impl_->ordinal = device.info().ordinal;
}

GpuProver::~GpuProver() {
  DeviceGuard guard(impl_->ordinal);
  cached_srs_.reset();
  impl_.reset();
}

namespace {

int log_domain(const groth16::R1cs& r1cs) {
  const std::uint64_t m = groth16::domain_size(r1cs);
  const int log_m = std::bit_width(m) - 1;
  if (log_m > kLogDomainMax) {
    throw Error(ErrorKind::kInvalidArgument, "domain 2^" + std::to_string(log_m) + " exceeds the device NTT's 2^" +
                                                 std::to_string(kLogDomainMax));
  }
  return log_m;
}

}  // namespace

std::vector<Fr> GpuProver::compute_h(const groth16::R1cs& r1cs, const groth16::Witness& w) {
  const int log_m = log_domain(r1cs);
  const std::size_t m = std::size_t{1} << log_m;
  DeviceGuard guard(impl_->ordinal);
  if (impl_->host_abc.size() != 3 * m) impl_->host_abc = PinnedBuffer<Fr>(3 * m);
  Fr* abc = impl_->host_abc.get();
  groth16::evaluate_into(r1cs, w.inputs, w.aux, {abc, m}, {abc + m, m}, {abc + 2 * m, m}, pool_);
  std::vector<Fr> h(m - 1);
  if (m == 1) return h;
  const DeviceFrVector dh = impl_->quotient(device_, abc, log_m, options_.h_uploads_first, nullptr);
  CUZK_CUDA_CHECK(cudaMemcpy(h.data(), dh.device_limbs(), (m - 1) * 32, cudaMemcpyDeviceToHost));
  return h;
}

groth16::Proof GpuProver::prove_one(const ResidentSrs& srs, const groth16::R1cs& r1cs, const groth16::Witness& w,
                                    const groth16::Blinding& blinding) {
  using Clock = std::chrono::steady_clock;
  const ResidentSrs::Impl& bases = srs.impl();
  const int log_m = log_domain(r1cs);
  const std::size_t m = std::size_t{1} << log_m;

  stage("evaluate", 0);
  auto t0 = Clock::now();
  if (impl_->host_abc.size() != 3 * m) impl_->host_abc = PinnedBuffer<Fr>(3 * m);
  Fr* abc = impl_->host_abc.get();
  groth16::evaluate_into(r1cs, w.inputs, w.aux, {abc, m}, {abc + m, m}, {abc + 2 * m, m}, pool_);
  const double evaluate_ms = ms_since(t0);

  DeviceSrsBases d;
  d.h = bases.h.get();
  d.l = bases.l.get();
  d.a = bases.a.get();
  d.a_count = srs.params().a.size();
  d.b_g1 = bases.b_g1.get();
  d.b_g2 = bases.b_g2.get();
  d.b_count = srs.params().b_g1.size();
  const groth16::MsmResults r =
      device_stages(d, {log_m, {abc, 3 * m}, w.inputs, w.aux, &r1cs.a_aux_density(), &r1cs.b_input_density(),
                        &r1cs.b_aux_density()});
  last_stats_.evaluate_ms = evaluate_ms;

  stage("assemble", 0);
  t0 = Clock::now();
  groth16::Proof proof = groth16::assemble_proof(srs.params().vk, r, blinding);
  last_stats_.assemble_ms = ms_since(t0);
  return proof;
}

groth16::MsmResults GpuProver::device_stages(const DeviceSrsBases& bases, const DeviceStageInputs& in) {
  using Clock = std::chrono::steady_clock;
  const cudaStream_t s = impl_->compute.get();
  const int log_m = in.log_m;
  const std::size_t m = std::size_t{1} << log_m;
  if (log_m < 0 || log_m > kLogDomainMax || in.abc.size() != 3 * m || in.a_aux_density == nullptr ||
      in.b_input_density == nullptr || in.b_aux_density == nullptr ||
      bases.a_count != in.inputs.size() + in.a_aux_density->popcount() ||
      bases.b_count != in.b_input_density->popcount() + in.b_aux_density->popcount()) {
    throw Error(ErrorKind::kInvalidArgument, "device_stages: inconsistent shapes");
  }
  DeviceGuard guard(impl_->ordinal);
  GpuProveStats stats;
  const Fr* abc = in.abc.data();

  const auto stream_id = reinterpret_cast<std::uintptr_t>(s);
  stage("h_ntt", stream_id);
  auto t0 = Clock::now();
  groth16::MsmResults r;
  {
    // H over h: m - 1 scalars straight from the coset iNTT's output.
    const DeviceFrVector h =
        m > 1 ? impl_->quotient(device_, abc, log_m, options_.h_uploads_first, &stats) : DeviceFrVector();
    stats.h_ms = ms_since(t0);
    stage("h_msm", stream_id);
    t0 = Clock::now();
    r.h = device_msm_g1(device_, s, bases.h, h.device_limbs(), m - 1);
    stats.h_msm_ms = ms_since(t0);
  }
  // One witness MSM over G1 (and G2 when g2_bases is given) with the same
  // scalars: the concatenation of the segments' selections (n of them). The
  // host work (one fused select + split, into the prover's reused pinned
  // buffers) goes to host_ms.
  using detail::SelectSegment;
  auto witness_msm = [&](std::initializer_list<SelectSegment> segments, std::size_t n, const u32* g1_bases,
                         const u32* g2_bases, ec::G1Jacobian& g1, ec::G2Jacobian* g2, GpuSplitCounts& counts,
                         double& host_ms) {
    const auto host_t0 = Clock::now();
    impl_->compute.sync();  // no copy from the reused host buffers is still in flight
    const detail::SelectSplit sel(std::span<const SelectSegment>(segments.begin(), segments.size()), pool_);
    const detail::SelectSplitCounts& c = sel.totals();
    if (c.selected != n) std::abort();  // check_inputs and the shape check above guarantee the lengths
    counts = {0, 0, n, false};
    if (options_.witness_split == WitnessScalarSplit::kAuto) {
      // Split only when at most half the scalars are left for the Pippenger MSM.
      counts = {c.zeros, c.ones, c.tail, 2 * c.tail <= n};
    }
    if (counts.split) {
      u32* ones = reserve_pinned(impl_->split_ones, c.ones);
      u32* tail_idx = reserve_pinned(impl_->split_tail_idx, c.tail);
      Fr* tail = reserve_pinned(impl_->split_values, c.tail);
      sel.fill_split(ones, tail_idx, tail, pool_);
      host_ms += ms_since(host_t0);
      const DeviceSplit d = upload_split(s, ones, c.ones, tail_idx, tail, c.tail);
      g1 = split_msm<ff::Fp>(device_, s, g1_bases, d);
      if (g2 != nullptr) *g2 = split_msm<ff::Fp2>(device_, s, g2_bases, d);
      return;
    }
    // One MSM over every selected scalar: straight from the source when that
    // is a single unfiltered segment, else gathered into the pinned buffer.
    const Fr* scalars = nullptr;
    const SelectSegment& first = *segments.begin();
    if (segments.size() == 1 && first.density == nullptr) {
      scalars = first.xs.data();
    } else {
      Fr* out = reserve_pinned(impl_->split_values, n);
      sel.fill_selected(out, pool_);
      scalars = out;
    }
    host_ms += ms_since(host_t0);
    const DeviceBuffer<u32> d = upload_fr(s, {scalars, n}, "witness MSM scalars");
    g1 = device_msm_g1(device_, s, g1_bases, d.get(), n);
    if (g2 != nullptr) *g2 = device_msm_g2(device_, s, g2_bases, d.get(), n);
  };

  // L over l: the aux assignment as is.
  stage("l_msm", stream_id);
  t0 = Clock::now();
  witness_msm({{in.aux, nullptr}}, in.aux.size(), bases.l, nullptr, r.l, nullptr, stats.l, stats.l_host_ms);
  stats.l_msm_ms = ms_since(t0);

  // A over a: every input, then the aux selected by a_aux density (one MSM over
  // the concatenation; the CPU sums two MSMs, the same group element).
  stage("a_msm", stream_id);
  t0 = Clock::now();
  witness_msm({{in.inputs, nullptr}, {in.aux, in.a_aux_density}}, bases.a_count, bases.a, nullptr, r.a, nullptr,
              stats.a, stats.a_host_ms);
  stats.a_msm_ms = ms_since(t0);

  // B in G1 and G2 over b_g1 / b_g2: inputs by b_input density, then aux by
  // b_aux density; one selection (and split) serves both groups.
  stage("b_msm", stream_id);
  t0 = Clock::now();
  witness_msm({{in.inputs, in.b_input_density}, {in.aux, in.b_aux_density}}, bases.b_count, bases.b_g1, bases.b_g2,
              r.b_g1, &r.b_g2, stats.b, stats.b_host_ms);
  stats.b_msm_ms = ms_since(t0);

  last_stats_ = stats;
  return r;
}

std::vector<groth16::Proof> GpuProver::prove(const ResidentSrs& srs, const groth16::R1cs& r1cs,
                                             std::span<const groth16::Witness> witnesses,
                                             std::span<const groth16::Blinding> blinding) {
  if (blinding.size() != witnesses.size()) {
    throw groth16::ParamsError(groth16::ParamsErrorKind::kShapeMismatch, "one blinding pair per witness is required");
  }
  if (srs.device_ordinal() != impl_->ordinal) {
    throw Error(ErrorKind::kInvalidArgument, "the resident SRS lives on device " +
                                                 std::to_string(srs.device_ordinal()) + ", the prover on device " +
                                                 std::to_string(impl_->ordinal));
  }
  for (const groth16::Witness& w : witnesses) groth16::check_inputs(srs.params(), r1cs, w);
  DeviceGuard guard(impl_->ordinal);
  std::vector<groth16::Proof> out;
  out.reserve(witnesses.size());
  for (std::size_t i = 0; i < witnesses.size(); ++i) out.push_back(prove_one(srs, r1cs, witnesses[i], blinding[i]));
  return out;
}

std::vector<groth16::Proof> GpuProver::prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                             std::span<const groth16::Witness> witnesses,
                                             std::span<const groth16::Blinding> blinding) {
  // Shape errors first: a bad request must not evict or upload an SRS.
  for (const groth16::Witness& w : witnesses) groth16::check_inputs(params, r1cs, w);
  if (!cached_srs_ || !cached_srs_->matches(params)) {
    cached_srs_.reset();
    cached_srs_ = std::make_unique<ResidentSrs>(device_, params);
    ++srs_uploads_;
  }
  return prove(*cached_srs_, r1cs, witnesses, blinding);
}

}  // namespace cuzk::gpu
