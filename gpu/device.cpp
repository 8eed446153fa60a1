// Device, resident vectors and bases, and the host side of NTT and MSM: tables
// computed with the host field code, uploads, and result conversion.
#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <type_traits>
#include <vector>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/gpu.hpp"
#include "gpu/kernels.hpp"
#include "gpu/testing.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using kernels::u32;

// The device reads host Montgomery limbs unchanged (see gpu/ff/field.cuh).
static_assert(sizeof(ff::Fr) == 32 && std::is_trivially_copyable_v<ff::Fr>);
static_assert(sizeof(ff::Fp) == 48 && std::is_trivially_copyable_v<ff::Fp>);
static_assert(sizeof(ff::Fp2) == 96 && std::is_trivially_copyable_v<ff::Fp2>);
static_assert(std::endian::native == std::endian::little);

namespace {

constexpr int kNttLogMax = 27;
// Points packed per host-to-device staging copy.
constexpr std::size_t kUploadChunkPoints = std::size_t{1} << 18;

}  // namespace

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

// ---- resident containers ---------------------------------------------------

struct DeviceFrVector::Impl {
  DeviceBuffer<u32> limbs;  // 8 per element
  std::size_t size = 0;
};
DeviceFrVector::DeviceFrVector() = default;
DeviceFrVector::DeviceFrVector(DeviceFrVector&&) noexcept = default;
DeviceFrVector& DeviceFrVector::operator=(DeviceFrVector&&) noexcept = default;
DeviceFrVector::~DeviceFrVector() = default;
std::size_t DeviceFrVector::size() const { return impl_ ? impl_->size : 0; }

struct G1Bases::Impl {
  DeviceBuffer<u32> limbs;  // 24 per point: x, y
  std::size_t size = 0;
};
G1Bases::G1Bases() = default;
G1Bases::G1Bases(G1Bases&&) noexcept = default;
G1Bases& G1Bases::operator=(G1Bases&&) noexcept = default;
G1Bases::~G1Bases() = default;
std::size_t G1Bases::size() const { return impl_ ? impl_->size : 0; }

struct G2Bases::Impl {
  DeviceBuffer<u32> limbs;  // 48 per point: x.c0, x.c1, y.c0, y.c1
  std::size_t size = 0;
};
G2Bases::G2Bases() = default;
G2Bases::G2Bases(G2Bases&&) noexcept = default;
G2Bases& G2Bases::operator=(G2Bases&&) noexcept = default;
G2Bases::~G2Bases() = default;
std::size_t G2Bases::size() const { return impl_ ? impl_->size : 0; }

// ---- device ----------------------------------------------------------------

namespace {

// Per-size NTT tables. Twiddles w^j for j < n/2 (2 GiB at n = 2^27); coset
// factors g^i (and n^-1 g^-i) as two small tables hi[i >> lo_bits] * lo[i & mask].
struct NttTables {
  DeviceBuffer<u32> twiddles;
  DeviceBuffer<u32> n_inv;
  DeviceBuffer<u32> coset_hi, coset_lo, coset_inv_hi, coset_inv_lo;
  int coset_lo_bits = 0;
};

DeviceBuffer<u32> upload_fr(cudaStream_t s, const std::vector<ff::Fr>& v, const char* what) {
  DeviceBuffer<u32> buf(v.size() * 8, what);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(buf.get(), v.data(), buf.bytes(), cudaMemcpyHostToDevice, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // v may die after return
  return buf;
}

// Powers base^i for i < count as hi/lo tables with lo_bits low bits.
void power_tables(const ff::Fr& base, const ff::Fr& hi_factor, std::size_t count, int lo_bits,
                  std::vector<ff::Fr>& hi, std::vector<ff::Fr>& lo) {
  const std::size_t lo_count = std::size_t{1} << lo_bits;
  lo.assign(lo_count, ff::Fr::one());
  for (std::size_t i = 1; i < lo_count; ++i) lo[i] = lo[i - 1] * base;
  const ff::Fr step = lo[lo_count - 1] * base;  // base^(2^lo_bits)
  const std::size_t hi_count = std::max<std::size_t>(1, (count + lo_count - 1) / lo_count);
  hi.assign(hi_count, hi_factor);
  for (std::size_t i = 1; i < hi_count; ++i) hi[i] = hi[i - 1] * step;
}

}  // namespace

struct Device::Impl {
  explicit Impl(int ordinal_in) : ordinal(ordinal_in) {}
  int ordinal;
  DeviceInfo info;
  detail::Stream stream;
  std::map<int, NttTables> ntt_tables;  // by log2 size
  Device::MsmTuning msm_tuning;

  const NttTables& tables(int log_n) {
    auto it = ntt_tables.find(log_n);
    if (it != ntt_tables.end()) return it->second;
    NttTables t;
    const cudaStream_t s = stream.get();
    // w_n = 7^((r-1)/2^32) squared 32 - log_n times: a primitive 2^log_n-th root.
    ff::Fr w = ff::Fr::from_u64(ff::kFrGenerator).pow(ff::Fr::kTrace);
    for (int i = log_n; i < 32; ++i) w = w.square();
    const std::size_t n = std::size_t{1} << log_n;
    const std::size_t half = n / 2;
    std::vector<ff::Fr> hi, lo;
    const int tw_lo_bits = log_n / 2;
    power_tables(w, ff::Fr::one(), half, tw_lo_bits, hi, lo);
    {
      DeviceBuffer<u32> dhi = upload_fr(s, hi, "ntt twiddle seeds"), dlo = upload_fr(s, lo, "ntt twiddle seeds");
      t.twiddles = DeviceBuffer<u32>(half * 8, "ntt twiddles");
      kernels::ntt_power_table(s, t.twiddles.get(), dhi.get(), dlo.get(), tw_lo_bits, half);
      CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    const ff::Fr n_inv = ff::Fr::from_u64(n).inverse();
    t.n_inv = upload_fr(s, {n_inv}, "ntt 1/n");
    const ff::Fr g = ff::Fr::from_u64(ff::kFrGenerator);
    t.coset_lo_bits = (log_n + 1) / 2;
    power_tables(g, ff::Fr::one(), n, t.coset_lo_bits, hi, lo);
    t.coset_hi = upload_fr(s, hi, "ntt coset table");
    t.coset_lo = upload_fr(s, lo, "ntt coset table");
    power_tables(g.inverse(), n_inv, n, t.coset_lo_bits, hi, lo);
    t.coset_inv_hi = upload_fr(s, hi, "ntt coset table");
    t.coset_inv_lo = upload_fr(s, lo, "ntt coset table");
    return ntt_tables.emplace(log_n, std::move(t)).first->second;
  }
};

Device::Device(int ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorKind::kNoDevice, "no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) +
                                          " present)");
  }
  DeviceGuard guard(ordinal);
  impl_ = std::make_unique<Impl>(ordinal);
  cudaDeviceProp prop{};
  CUZK_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  impl_->info.name = prop.name;
  impl_->info.ordinal = ordinal;
  impl_->info.sm_count = prop.multiProcessorCount;
  impl_->info.cc_major = prop.major;
  impl_->info.cc_minor = prop.minor;
  impl_->info.global_memory_bytes = prop.totalGlobalMem;
}

Device::~Device() {
  if (!impl_) return;
  DeviceGuard guard(impl_->ordinal);
  impl_.reset();
}

const DeviceInfo& Device::info() const { return impl_->info; }

std::size_t Device::free_memory_bytes() const {
  DeviceGuard guard(impl_->ordinal);
  std::size_t free_bytes = 0, total_bytes = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

void Device::synchronize() {
  DeviceGuard guard(impl_->ordinal);
  impl_->stream.sync();
}

DeviceFrVector Device::upload(std::span<const ff::Fr> values) {
  DeviceGuard guard(impl_->ordinal);
  DeviceFrVector v;
  v.impl_ = std::make_unique<DeviceFrVector::Impl>();
  v.impl_->limbs = DeviceBuffer<u32>(values.size() * 8, "Fr vector");
  v.impl_->size = values.size();
  if (!values.empty()) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(v.impl_->limbs.get(), values.data(), values.size_bytes(),
                                    cudaMemcpyHostToDevice, impl_->stream.get()));
    impl_->stream.sync();
  }
  return v;
}

void Device::download(const DeviceFrVector& values, std::span<ff::Fr> out) {
  if (out.size() != values.size()) throw Error(ErrorKind::kInvalidArgument, "download: size mismatch");
  if (out.empty()) return;
  DeviceGuard guard(impl_->ordinal);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(out.data(), values.impl_->limbs.get(), out.size_bytes(), cudaMemcpyDeviceToHost,
                                  impl_->stream.get()));
  impl_->stream.sync();
}

void Device::ntt(DeviceFrVector& values, NttDirection direction, NttDomain domain) {
  const std::size_t n = values.size();
  if (n <= 1) return;  // size 1: the transform (and g^0) is the identity
  if (!std::has_single_bit(n) || std::bit_width(n) - 1 > kNttLogMax) {
    throw Error(ErrorKind::kInvalidArgument, "ntt: size must be a power of two <= 2^27");
  }
  DeviceGuard guard(impl_->ordinal);
  const int log_n = std::bit_width(n) - 1;
  const NttTables& t = impl_->tables(log_n);
  const cudaStream_t s = impl_->stream.get();
  u32* data = values.impl_->limbs.get();
  const bool inverse = direction == NttDirection::kInverse;
  const bool coset = domain == NttDomain::kCoset;
  if (!inverse && coset) kernels::ntt_scale(s, data, n, t.coset_hi.get(), t.coset_lo.get(), t.coset_lo_bits);
  kernels::ntt_dif(s, data, t.twiddles.get(), log_n, inverse);
  if (!inverse) {
    kernels::ntt_bitrev_scale(s, data, log_n, nullptr, nullptr, 0);
  } else if (!coset) {
    kernels::ntt_bitrev_scale(s, data, log_n, t.n_inv.get(), nullptr, 0);
  } else {
    kernels::ntt_bitrev_scale(s, data, log_n, t.coset_inv_hi.get(), t.coset_inv_lo.get(), t.coset_lo_bits);
  }
}

void Device::ntt(std::span<ff::Fr> values, NttDirection direction, NttDomain domain) {
  DeviceFrVector v = upload(values);
  ntt(v, direction, domain);
  download(v, values);
}

namespace {

// Packs affine points into the device layout (coordinates, identity = zeros)
// through a pinned staging buffer, chunk by chunk.
template <class HostPoint, std::size_t kLimbsPerCoord>
DeviceBuffer<u32> upload_points(cudaStream_t s, std::span<const HostPoint> points, const char* what) {
  constexpr std::size_t kLimbsPerPoint = 2 * kLimbsPerCoord;
  constexpr std::size_t kCoordBytes = kLimbsPerCoord * 4;
  static_assert(sizeof(points[0].x) == kCoordBytes);
  DeviceBuffer<u32> buf(points.size() * kLimbsPerPoint, what);
  detail::PinnedBuffer<u32> stage(std::min(points.size(), kUploadChunkPoints) * kLimbsPerPoint);
  for (std::size_t off = 0; off < points.size(); off += kUploadChunkPoints) {
    const std::size_t m = std::min(kUploadChunkPoints, points.size() - off);
    for (std::size_t i = 0; i < m; ++i) {
      const HostPoint& p = points[off + i];
      u32* dst = stage.get() + i * kLimbsPerPoint;
      if (p.infinity) {
        std::memset(dst, 0, 2 * kCoordBytes);
      } else {
        std::memcpy(dst, &p.x, kCoordBytes);
        std::memcpy(dst + kLimbsPerCoord, &p.y, kCoordBytes);
      }
    }
    CUZK_CUDA_CHECK(cudaMemcpyAsync(buf.get() + off * kLimbsPerPoint, stage.get(), m * kLimbsPerPoint * 4,
                                    cudaMemcpyHostToDevice, s));
    CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // the stage is reused
  }
  return buf;
}

// XYZZ (X, Y, ZZ, ZZZ), x = X/ZZ, y = Y/ZZZ, to Jacobian without inversion:
// Z' = ZZ ZZZ, X' = X ZZ ZZZ^2, Y' = Y ZZ^3 ZZZ^2 (then X'/Z'^2 = X/ZZ and
// Y'/Z'^3 = Y/ZZZ).
template <class F>
ec::Jacobian<F> xyzz_to_jacobian(const u32* limbs) {
  F c[4];
  std::memcpy(static_cast<void*>(c), limbs, sizeof(c));  // F is trivially copyable (asserted above)
  if (c[2].is_zero()) return ec::Jacobian<F>::identity();
  const F zzz2 = c[3].square();
  const F zz3 = c[2].square() * c[2];
  return {c[0] * c[2] * zzz2, c[1] * zz3 * zzz2, c[2] * c[3]};
}

// sum_w 2^(w c) W_w by Horner's rule on the host, normalized to z = 1.
template <class F>
ec::Jacobian<F> combine_windows(const std::vector<u32>& limbs, int c) {
  constexpr std::size_t kPointLimbs = 4 * sizeof(F) / 4;
  const std::size_t windows = limbs.size() / kPointLimbs;
  ec::Jacobian<F> r = ec::Jacobian<F>::identity();
  for (std::size_t w = windows; w-- > 0;) {
    for (int i = 0; i < c; ++i) r = ec::dbl(r);
    r = ec::add(r, xyzz_to_jacobian<F>(limbs.data() + w * kPointLimbs));
  }
  if (r.is_identity()) return r;
  return ec::from_affine(ec::to_affine(r));
}

}  // namespace

G1Bases Device::upload_g1_bases(std::span<const ec::G1Affine> points) {
  DeviceGuard guard(impl_->ordinal);
  G1Bases b;
  b.impl_ = std::make_unique<G1Bases::Impl>();
  b.impl_->limbs = upload_points<ec::G1Affine, 12>(impl_->stream.get(), points, "G1 bases");
  b.impl_->size = points.size();
  return b;
}

G2Bases Device::upload_g2_bases(std::span<const ec::G2Affine> points) {
  DeviceGuard guard(impl_->ordinal);
  G2Bases b;
  b.impl_ = std::make_unique<G2Bases::Impl>();
  b.impl_->limbs = upload_points<ec::G2Affine, 24>(impl_->stream.get(), points, "G2 bases");
  b.impl_->size = points.size();
  return b;
}

int Device::msm_window_bits(std::size_t n) {
  // Work model in mixed-add units: n*W bucket adds plus about 3 adds per
  // bucket in the reduction (two full adds of ~1.4 mixed adds each).
  int best_c = 2;
  double best = -1;
  for (int c = 2; c <= 22; ++c) {
    const double windows = (256 + c - 1) / c;
    const double cost = double(n) * windows + 3.0 * windows * double(std::size_t{1} << (c - 1));
    if (best < 0 || cost < best) {
      best = cost;
      best_c = c;
    }
  }
  return best_c;
}

void Device::set_msm_tuning(const MsmTuning& tuning) { impl_->msm_tuning = tuning; }

namespace {
int window_bits_for(const Device::MsmTuning& t, std::size_t n) {
  return t.window_bits > 0 ? t.window_bits : Device::msm_window_bits(n);
}
void copy_phases(const kernels::MsmPhaseMs& k, Device::MsmPhaseTimes* out) {
  if (out == nullptr) return;
  out->digits_ms = k.digits_ms;
  out->sort_ms = k.sort_ms;
  out->accumulate_ms = k.accumulate_ms;
  out->reduce_ms = k.reduce_ms;
}
}  // namespace

ec::G1Jacobian Device::msm(const G1Bases& bases, const DeviceFrVector& scalars, MsmPhaseTimes* phases) {
  if (scalars.size() > bases.size()) throw Error(ErrorKind::kInvalidArgument, "msm: more scalars than bases");
  DeviceGuard guard(impl_->ordinal);
  const std::size_t n = scalars.size();
  const int c = window_bits_for(impl_->msm_tuning, n);
  kernels::MsmPhaseMs k;
  const std::vector<u32> windows =
      kernels::msm_g1(impl_->stream.get(), n ? bases.impl_->limbs.get() : nullptr,
                      n ? scalars.impl_->limbs.get() : nullptr, n, c, phases ? &k : nullptr);
  copy_phases(k, phases);
  return combine_windows<ff::Fp>(windows, c);
}

ec::G1Jacobian Device::msm(const G1Bases& bases, std::span<const ff::Fr> scalars) {
  return msm(bases, upload(scalars));
}

ec::G2Jacobian Device::msm(const G2Bases& bases, const DeviceFrVector& scalars, MsmPhaseTimes* phases) {
  if (scalars.size() > bases.size()) throw Error(ErrorKind::kInvalidArgument, "msm: more scalars than bases");
  DeviceGuard guard(impl_->ordinal);
  const std::size_t n = scalars.size();
  const int c = window_bits_for(impl_->msm_tuning, n);
  kernels::MsmPhaseMs k;
  const std::vector<u32> windows =
      kernels::msm_g2(impl_->stream.get(), n ? bases.impl_->limbs.get() : nullptr,
                      n ? scalars.impl_->limbs.get() : nullptr, n, c, phases ? &k : nullptr);
  copy_phases(k, phases);
  return combine_windows<ff::Fp2>(windows, c);
}

ec::G2Jacobian Device::msm(const G2Bases& bases, std::span<const ff::Fr> scalars) {
  return msm(bases, upload(scalars));
}

// ---- timer -----------------------------------------------------------------

struct StreamTimer::Impl {
  Device& device;
  detail::Event begin, end;
};

StreamTimer::StreamTimer(Device& device) {
  DeviceGuard guard(device.impl().ordinal);
  impl_ = std::unique_ptr<Impl>(new Impl{device, {}, {}});
}
StreamTimer::~StreamTimer() = default;
void StreamTimer::start() { impl_->begin.record(impl_->device.impl().stream.get()); }
void StreamTimer::stop() { impl_->end.record(impl_->device.impl().stream.get()); }
float StreamTimer::elapsed_ms() {
  impl_->end.sync();
  float ms = 0;
  CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, impl_->begin.get(), impl_->end.get()));
  return ms;
}

// ---- testing hooks ---------------------------------------------------------

namespace testing {
namespace {

template <class T>
std::vector<T> run_field_op(Device& device, kernels::FieldKind kind, FieldOp op, std::span<const T> a,
                            std::span<const T> b) {
  if (a.size() != b.size()) throw Error(ErrorKind::kInvalidArgument, "field_op: size mismatch");
  Device::Impl& d = device.impl();
  DeviceGuard guard(d.ordinal);
  const std::size_t limbs = a.size() * sizeof(T) / 4;
  DeviceBuffer<u32> da(limbs, "test a"), db(limbs, "test b"), dout(limbs, "test out");
  const cudaStream_t s = d.stream.get();
  std::vector<T> out(a.size());
  if (a.empty()) return out;
  CUZK_CUDA_CHECK(cudaMemcpyAsync(da.get(), a.data(), a.size_bytes(), cudaMemcpyHostToDevice, s));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(db.get(), b.data(), b.size_bytes(), cudaMemcpyHostToDevice, s));
  kernels::FieldOpKind k = kernels::FieldOpKind::kAdd;
  switch (op) {
    case FieldOp::kAdd: k = kernels::FieldOpKind::kAdd; break;
    case FieldOp::kSub: k = kernels::FieldOpKind::kSub; break;
    case FieldOp::kMul: k = kernels::FieldOpKind::kMul; break;
    case FieldOp::kSqr: k = kernels::FieldOpKind::kSqr; break;
    case FieldOp::kFromMont: k = kernels::FieldOpKind::kFromMont; break;
  }
  kernels::field_op(s, kind, k, da.get(), db.get(), dout.get(), a.size());
  CUZK_CUDA_CHECK(cudaMemcpyAsync(out.data(), dout.get(), a.size_bytes(), cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

}  // namespace

std::vector<ff::Fp> field_op(Device& device, FieldOp op, std::span<const ff::Fp> a, std::span<const ff::Fp> b) {
  return run_field_op(device, kernels::FieldKind::kFp, op, a, b);
}
std::vector<ff::Fr> field_op(Device& device, FieldOp op, std::span<const ff::Fr> a, std::span<const ff::Fr> b) {
  return run_field_op(device, kernels::FieldKind::kFr, op, a, b);
}
std::vector<ff::Fp2> field_op(Device& device, FieldOp op, std::span<const ff::Fp2> a, std::span<const ff::Fp2> b) {
  return run_field_op(device, kernels::FieldKind::kFp2, op, a, b);
}

}  // namespace testing
}  // namespace cuzk::gpu
