// Device, resident vectors and bases, and the host side of NTT and MSM: tables
// computed with the host field code, uploads, and result conversion.
#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/gpu.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ntt/ntt_tables.hpp"
#include "gpu/upload_points.hpp"
#include "gpu/testing.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::NttTables;
using kernels::u32;

// The device reads host Montgomery limbs unchanged (see gpu/ff/field.cuh).
static_assert(sizeof(ff::Fr) == 32 && std::is_trivially_copyable_v<ff::Fr>);
static_assert(sizeof(ff::Fp) == 48 && std::is_trivially_copyable_v<ff::Fp>);
static_assert(sizeof(ff::Fp2) == 96 && std::is_trivially_copyable_v<ff::Fp2>);
static_assert(std::endian::native == std::endian::little);

namespace {

constexpr int kNttLogMax = 27;

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
std::uint32_t* DeviceFrVector::device_limbs() { return impl_ ? impl_->limbs.get() : nullptr; }
const std::uint32_t* DeviceFrVector::device_limbs() const { return impl_ ? impl_->limbs.get() : nullptr; }

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

DeviceBuffer<u32> upload_fr(cudaStream_t s, const std::vector<ff::Fr>& v, const char* what) {
  DeviceBuffer<u32> buf(v.size() * 8, what);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(buf.get(), v.data(), buf.bytes(), cudaMemcpyHostToDevice, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // v may die after return
  return buf;
}

// Powers base^i for i < count as hi/lo tables with lo_bits low bits.
void power_tables(const ff::Fr& base, const ff::Fr& hi_factor, std::size_t count, int lo_bits, std::vector<ff::Fr>& hi,
                  std::vector<ff::Fr>& lo) {
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
  DeviceBuffer<u32> ntt_scratch;        // the lean NTT's out-of-place output (swapped into the vector)
  Device::MsmTuning msm_tuning;
  kernels::MsmScratch msm_scratch;  // grown on demand up to msm_tuning.scratch_limit_bytes

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
      // w^j for j < n/2, then w^(n/2) = -1: the lean passes' inverse butterfly
      // with exponent 0 reads it (ntt_lean_index.hpp, dif_butterfly).
      t.twiddles = DeviceBuffer<u32>((half + 1) * 8, "ntt twiddles");
      kernels::ntt_power_table(s, t.twiddles.get(), dhi.get(), dlo.get(), tw_lo_bits, half);
      const ff::Fr minus_one = -ff::Fr::one();
      CUZK_CUDA_CHECK(
          cudaMemcpyAsync(t.twiddles.get() + half * 8, &minus_one, sizeof minus_one, cudaMemcpyHostToDevice, s));
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
    power_tables(g, n_inv, n, t.coset_lo_bits, hi, lo);
    t.coset_ninv_hi = upload_fr(s, hi, "ntt coset table");
    t.coset_ninv_lo = upload_fr(s, lo, "ntt coset table");
    t.vanishing_inv = (g.pow(std::uint64_t(n)) - ff::Fr::one()).inverse();
    // The H stage's two scalings with 1/Z folded in (hi tables only: the low
    // factors g^-i are coset_inv_lo's).
    t.n_inv_z = upload_fr(s, {n_inv * t.vanishing_inv}, "ntt 1/(n Z)");
    power_tables(g.inverse(), n_inv * t.vanishing_inv, n, t.coset_lo_bits, hi, lo);
    t.coset_inv_z_hi = upload_fr(s, hi, "ntt coset table");
    t.neg_n_inv_z = upload_fr(s, {-(n_inv * t.vanishing_inv)}, "ntt -1/(n Z)");
    power_tables(g.inverse(), -(n_inv * t.vanishing_inv), n, t.coset_lo_bits, hi, lo);
    t.neg_coset_inv_z_hi = upload_fr(s, hi, "ntt coset table");
    return ntt_tables.emplace(log_n, std::move(t)).first->second;
  }
};

Device::Device(int ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorKind::kNoDevice,
                "no CUDA device " + std::to_string(ordinal) + " (" + std::to_string(count) + " present)");
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
  impl_->msm_tuning.scratch_limit_bytes = default_msm_scratch_bytes(prop.totalGlobalMem);
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

DeviceFrVector Device::allocate(std::size_t n) {
  DeviceGuard guard(impl_->ordinal);
  DeviceFrVector v;
  v.impl_ = std::make_unique<DeviceFrVector::Impl>();
  v.impl_->limbs = DeviceBuffer<u32>(n * 8, "Fr vector");
  v.impl_->size = n;
  return v;
}

DeviceFrVector Device::upload(std::span<const ff::Fr> values) {
  DeviceGuard guard(impl_->ordinal);
  DeviceFrVector v;
  v.impl_ = std::make_unique<DeviceFrVector::Impl>();
  v.impl_->limbs = DeviceBuffer<u32>(values.size() * 8, "Fr vector");
  v.impl_->size = values.size();
  if (!values.empty()) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(v.impl_->limbs.get(), values.data(), values.size_bytes(), cudaMemcpyHostToDevice,
                                    impl_->stream.get()));
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
  if (log_n >= ntt_lean::kLogMin) {
    // Lean radix-4 DIF passes: the coset's g^i on the first pass's load; the
    // last writes natural order into the scratch buffer (bit reversal fused,
    // with 1/n or n^-1 g^-j), which then becomes the vector's storage.
    if (impl_->ntt_scratch.size() != n * 8) {
      impl_->ntt_scratch.reset();
      impl_->ntt_scratch = DeviceBuffer<u32>(n * 8, "ntt scratch");
    }
    kernels::LeanNttIo io;
    if (!inverse && coset) io.load_scale = t.coset();
    io.out = impl_->ntt_scratch.get();
    if (inverse) io.store_scale = coset ? t.coset_inv() : t.inv_size();
    kernels::ntt_lean_dif(s, data, t.twiddles.get(), log_n, inverse, io);
    std::swap(values.impl_->limbs, impl_->ntt_scratch);
    return;
  }
  // Below 2^6: radix-2 DIF passes in place, then the bit reversal with the scaling.
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

void Device::release_ntt_scratch() {
  DeviceGuard guard(impl_->ordinal);
  impl_->ntt_scratch.reset();
}

namespace detail {
const NttTables& ntt_tables(Device& device, int log_n) {
  DeviceGuard guard(device.impl().ordinal);
  return device.impl().tables(log_n);
}
}  // namespace detail

void Device::ntt(std::span<ff::Fr> values, NttDirection direction, NttDomain domain) {
  DeviceFrVector v = upload(values);
  ntt(v, direction, domain);
  download(v, values);
}

namespace {

// A device buffer holding `points` in the packed layout (gpu/upload_points.hpp).
template <class HostPoint, std::size_t kLimbsPerCoord>
DeviceBuffer<u32> upload_points(cudaStream_t s, std::span<const HostPoint> points, const char* what) {
  static_assert(sizeof(points[0].x) == kLimbsPerCoord * 4);
  DeviceBuffer<u32> buf(points.size() * 2 * kLimbsPerCoord, what);
  detail::upload_points(s, points, buf.get());
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
  constexpr int kH200Sms = 132;
  return msm::default_window_bits(n, msm::resident_threads(kH200Sms));
}

void Device::set_msm_tuning(const MsmTuning& tuning) { impl_->msm_tuning = tuning; }
const Device::MsmTuning& Device::msm_tuning() const { return impl_->msm_tuning; }
kernels::MsmScratch& Device::msm_scratch() { return impl_->msm_scratch; }
std::size_t Device::msm_scratch_bytes() const { return impl_->msm_scratch.capacity_bytes(); }
void Device::release_msm_scratch() {
  DeviceGuard guard(impl_->ordinal);
  impl_->msm_scratch.release();
}

namespace {
void copy_phases(const kernels::MsmPhaseMs& k, const kernels::MsmWindows& w, Device::MsmPhaseTimes* out) {
  if (out == nullptr) return;
  out->digits_ms = k.digits_ms;
  out->sort_ms = k.sort_ms;
  out->accumulate_ms = k.accumulate_ms;
  out->reduce_ms = k.reduce_ms;
  out->window_bits = w.window_bits;
  out->chunks = w.chunks;
  out->reduced_by_trees = w.reduced_by_trees;
}
}  // namespace

ec::G1Jacobian Device::msm(const G1Bases& bases, const DeviceFrVector& scalars, MsmPhaseTimes* phases) {
  if (scalars.size() > bases.size()) throw Error(ErrorKind::kInvalidArgument, "msm: more scalars than bases");
  DeviceGuard guard(impl_->ordinal);
  const std::size_t n = scalars.size();
  kernels::MsmPhaseMs k;
  const kernels::MsmWindows w = kernels::msm_g1(
      impl_->stream.get(), n ? bases.impl_->limbs.get() : nullptr, n ? scalars.impl_->limbs.get() : nullptr, n,
      kernels::msm_config(impl_->msm_tuning), impl_->msm_scratch, phases ? &k : nullptr);
  copy_phases(k, w, phases);
  return combine_windows<ff::Fp>(w.sums, w.window_bits);
}

ec::G1Jacobian Device::msm(const G1Bases& bases, std::span<const ff::Fr> scalars) {
  return msm(bases, upload(scalars));
}

ec::G2Jacobian Device::msm(const G2Bases& bases, const DeviceFrVector& scalars, MsmPhaseTimes* phases) {
  if (scalars.size() > bases.size()) throw Error(ErrorKind::kInvalidArgument, "msm: more scalars than bases");
  DeviceGuard guard(impl_->ordinal);
  const std::size_t n = scalars.size();
  kernels::MsmPhaseMs k;
  const kernels::MsmWindows w = kernels::msm_g2(
      impl_->stream.get(), n ? bases.impl_->limbs.get() : nullptr, n ? scalars.impl_->limbs.get() : nullptr, n,
      kernels::msm_config(impl_->msm_tuning), impl_->msm_scratch, phases ? &k : nullptr);
  copy_phases(k, w, phases);
  return combine_windows<ff::Fp2>(w.sums, w.window_bits);
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
  const bool named_form =
      op == FieldOp::kMulCios || op == FieldOp::kMulEvenOdd || op == FieldOp::kSqrCios || op == FieldOp::kSqrEvenOdd;
  if (named_form && kind == kernels::FieldKind::kFp2) {
    throw Error(ErrorKind::kInvalidArgument, "field_op: named multiplication forms exist for Fp and Fr only");
  }
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
    case FieldOp::kAdd:
      k = kernels::FieldOpKind::kAdd;
      break;
    case FieldOp::kSub:
      k = kernels::FieldOpKind::kSub;
      break;
    case FieldOp::kMul:
      k = kernels::FieldOpKind::kMul;
      break;
    case FieldOp::kSqr:
      k = kernels::FieldOpKind::kSqr;
      break;
    case FieldOp::kFromMont:
      k = kernels::FieldOpKind::kFromMont;
      break;
    case FieldOp::kMulCios:
      k = kernels::FieldOpKind::kMulCios;
      break;
    case FieldOp::kMulEvenOdd:
      k = kernels::FieldOpKind::kMulEvenOdd;
      break;
    case FieldOp::kSqrCios:
      k = kernels::FieldOpKind::kSqrCios;
      break;
    case FieldOp::kSqrEvenOdd:
      k = kernels::FieldOpKind::kSqrEvenOdd;
      break;
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
