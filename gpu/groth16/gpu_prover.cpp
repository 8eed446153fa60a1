// GpuProver and ResidentSrs: host orchestration of the device stages.
//
// The device work goes through cuzk_gpu's kernel launchers (gpu/kernels.hpp)
// on raw device buffers rather than through gpu::Device's DeviceFrVector, so
// that the fused quotient kernel can run in place between the NTTs and the H
// MSM can read its scalars where the coset iNTT left them (no host round trip).
#include "gpu/groth16/gpu_prover.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/groth16/quotient_kernel.hpp"
#include "gpu/kernels.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::PinnedBuffer;
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
// Points packed per staging copy of the SRS upload (two stages alternate).
constexpr std::size_t kStagePoints = std::size_t{1} << 16;

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void require_fits(Device& device, std::size_t bytes, const char* what) {
  const std::size_t free_bytes = device.free_memory_bytes();
  if (bytes + detail::kDeviceMemoryReserveBytes > free_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory, std::string(what) + " needs " + mib(bytes) + " of device memory, " +
                                                   mib(free_bytes) + " free (" +
                                                   mib(detail::kDeviceMemoryReserveBytes) + " kept in reserve)");
  }
}

// Packs affine points into the device layout (coordinates; the identity as
// zeros, which is on neither curve) and copies them to `dst`. Two pinned
// stages alternate so that packing one chunk overlaps the copy of the last.
template <class HostPoint>
void upload_points(cudaStream_t s, std::span<const HostPoint> points, u32* dst) {
  constexpr std::size_t kCoordBytes = sizeof(points[0].x);
  constexpr std::size_t kPointLimbs = 2 * kCoordBytes / 4;
  if (points.empty()) return;
  const std::size_t stage_points = std::min(points.size(), kStagePoints);
  PinnedBuffer<u32> stages[2] = {PinnedBuffer<u32>(stage_points * kPointLimbs),
                                 PinnedBuffer<u32>(stage_points * kPointLimbs)};
  detail::Event copied[2];
  for (std::size_t off = 0, k = 0; off < points.size(); off += stage_points, ++k) {
    const std::size_t count = std::min(stage_points, points.size() - off);
    PinnedBuffer<u32>& stage = stages[k % 2];
    if (k >= 2) copied[k % 2].sync();  // the copy two chunks ago read this stage
    for (std::size_t i = 0; i < count; ++i) {
      const HostPoint& p = points[off + i];
      u32* out = stage.get() + i * kPointLimbs;
      if (p.infinity) {
        std::memset(out, 0, 2 * kCoordBytes);
      } else {
        std::memcpy(out, &p.x, kCoordBytes);
        std::memcpy(out + kPointLimbs / 2, &p.y, kCoordBytes);
      }
    }
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst + off * kPointLimbs, stage.get(), count * kPointLimbs * 4,
                                    cudaMemcpyHostToDevice, s));
    copied[k % 2].record(s);
  }
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // the stages die here
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

ec::G1Jacobian device_msm_g1(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
  if (n == 0) return ec::G1Jacobian::identity();
  const int c = Device::msm_window_bits(n);
  return combine_windows<ff::Fp>(kernels::msm_g1(s, bases, scalars, n, c, nullptr), c);
}

ec::G2Jacobian device_msm_g2(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
  if (n == 0) return ec::G2Jacobian::identity();
  const int c = Device::msm_window_bits(n);
  return combine_windows<ff::Fp2>(kernels::msm_g2(s, bases, scalars, n, c, nullptr), c);
}

// out[offset ..] = the xs[i] whose density bit is set, in index order; split
// over the pool (count per chunk, prefix sums, then fill).
void select_into(std::span<const Fr> xs, const groth16::BitVec& density, std::span<Fr> out, ThreadPool& pool) {
  const std::size_t chunks = std::max<std::size_t>(1, std::min(xs.size() / 4096, 4 * pool.size()));
  const std::size_t per = (xs.size() + chunks - 1) / chunks;
  std::vector<std::size_t> start(chunks + 1, 0);
  pool.parallel_for(chunks, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      std::size_t count = 0;
      for (std::size_t i = k * per; i < std::min(xs.size(), (k + 1) * per); ++i) count += density.get(i);
      start[k + 1] = count;
    }
  });
  for (std::size_t k = 0; k < chunks; ++k) start[k + 1] += start[k];
  if (start[chunks] != out.size()) std::abort();  // check_inputs guarantees the lengths
  pool.parallel_for(chunks, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      std::size_t o = start[k];
      for (std::size_t i = k * per; i < std::min(xs.size(), (k + 1) * per); ++i) {
        if (density.get(i)) out[o++] = xs[i];
      }
    }
  });
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
// rest (the tail) needs a Pippenger MSM.
struct ScalarSplit {
  std::vector<u32> ones;      // indices of the scalars equal to 1
  std::vector<u32> tail_idx;  // indices of the other non-zero scalars
  std::vector<Fr> tail;       // and their values
  std::size_t zeros = 0;
};

// Order-preserving split over the pool: count per chunk, prefix sums, fill.
ScalarSplit split_scalars(std::span<const Fr> xs, ThreadPool& pool) {
  if (xs.size() >= (std::size_t{1} << 32)) {
    throw Error(ErrorKind::kInvalidArgument, "witness MSM of 2^32 or more points");
  }
  const std::size_t chunks = std::max<std::size_t>(1, std::min(xs.size() / 4096, 4 * pool.size()));
  const std::size_t per = (xs.size() + chunks - 1) / chunks;
  std::vector<std::size_t> ones_at(chunks + 1, 0), tail_at(chunks + 1, 0);
  pool.parallel_for(chunks, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      std::size_t ones = 0, tail = 0;
      for (std::size_t i = k * per; i < std::min(xs.size(), (k + 1) * per); ++i) {
        if (xs[i].is_zero()) continue;
        if (xs[i].is_one()) {
          ++ones;
        } else {
          ++tail;
        }
      }
      ones_at[k + 1] = ones;
      tail_at[k + 1] = tail;
    }
  });
  for (std::size_t k = 0; k < chunks; ++k) {
    ones_at[k + 1] += ones_at[k];
    tail_at[k + 1] += tail_at[k];
  }
  ScalarSplit out;
  out.ones.resize(ones_at[chunks]);
  out.tail_idx.resize(tail_at[chunks]);
  out.tail.resize(tail_at[chunks]);
  out.zeros = xs.size() - out.ones.size() - out.tail.size();
  pool.parallel_for(chunks, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      std::size_t o = ones_at[k], t = tail_at[k];
      for (std::size_t i = k * per; i < std::min(xs.size(), (k + 1) * per); ++i) {
        if (xs[i].is_zero()) continue;
        if (xs[i].is_one()) {
          out.ones[o++] = u32(i);
        } else {
          out.tail_idx[t] = u32(i);
          out.tail[t++] = xs[i];
        }
      }
    }
  });
  return out;
}

// The split's arrays on the device.
struct DeviceSplit {
  DeviceBuffer<u32> ones, tail_idx, tail;
  std::size_t n_ones = 0, n_tail = 0;
};

DeviceSplit upload_split(cudaStream_t s, const ScalarSplit& split) {
  DeviceSplit d;
  d.n_ones = split.ones.size();
  d.n_tail = split.tail.size();
  d.ones = DeviceBuffer<u32>(d.n_ones, "split: indices of ones");
  d.tail_idx = DeviceBuffer<u32>(d.n_tail, "split: tail indices");
  if (d.n_ones > 0) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(d.ones.get(), split.ones.data(), d.n_ones * 4, cudaMemcpyHostToDevice, s));
  }
  if (d.n_tail > 0) {
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(d.tail_idx.get(), split.tail_idx.data(), d.n_tail * 4, cudaMemcpyHostToDevice, s));
  }
  d.tail = upload_fr(s, split.tail, "split: tail scalars");
  return d;
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
  static ec::G1Jacobian msm(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
    return device_msm_g1(s, bases, scalars, n);
  }
};
template <>
struct Group<ff::Fp2> {
  static constexpr std::size_t kPointLimbs = kG2PointLimbs;
  static std::vector<u32> sum(cudaStream_t s, const u32* bases, const u32* idx, std::size_t n) {
    return groth16_kernels::sum_points_g2(s, bases, idx, n);
  }
  static ec::G2Jacobian msm(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n) {
    return device_msm_g2(s, bases, scalars, n);
  }
};

// sum_i s_i P_i = sum_{s_i = 1} P_i + MSM over the tail (its bases gathered
// into a contiguous scratch buffer, as the MSM kernel reads them in order).
template <class F>
ec::Jacobian<F> split_msm(cudaStream_t s, const u32* bases, const DeviceSplit& d) {
  ec::Jacobian<F> r = xyzz_to_jacobian<F>(Group<F>::sum(s, bases, d.ones.get(), d.n_ones).data());
  if (d.n_tail > 0) {
    DeviceBuffer<u32> gathered(d.n_tail * Group<F>::kPointLimbs, "split: tail bases");
    groth16_kernels::gather_points(s, bases, d.tail_idx.get(), d.n_tail, Group<F>::kPointLimbs, gathered.get());
    r = ec::add(r, Group<F>::msm(s, gathered.get(), d.tail.get(), d.n_tail));
  }
  return r;
}

// base^i for i < count as two tables, hi[i >> lo_bits] * lo[i & mask] (with
// hi[0] = factor), so the device builds or applies the powers with one product.
void power_tables(const Fr& base, const Fr& factor, std::size_t count, int lo_bits, std::vector<Fr>& hi,
                  std::vector<Fr>& lo) {
  const std::size_t lo_count = std::size_t{1} << lo_bits;
  lo.assign(lo_count, Fr::one());
  for (std::size_t i = 1; i < lo_count; ++i) lo[i] = lo[i - 1] * base;
  const Fr step = lo[lo_count - 1] * base;  // base^(2^lo_bits)
  const std::size_t hi_count = std::max<std::size_t>(1, (count + lo_count - 1) / lo_count);
  hi.assign(hi_count, factor);
  for (std::size_t i = 1; i < hi_count; ++i) hi[i] = hi[i - 1] * step;
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

// ---- GpuProver -------------------------------------------------------------

namespace {

// Device tables of one domain size m = 2^log_m.
struct DomainTables {
  DeviceBuffer<u32> twiddles;  // w^j, j < m/2 (the DIF kernel's table)
  // m^-1 g^i: ends the iNTT and starts the coset NTT in one scaling pass.
  DeviceBuffer<u32> to_coset_hi, to_coset_lo;
  // m^-1 g^-i: ends the coset iNTT.
  DeviceBuffer<u32> from_coset_hi, from_coset_lo;
  int lo_bits = 0;
  Fr z_inv;  // (g^m - 1)^-1, 1/Z on the coset

  static std::size_t twiddle_bytes(int log_m) { return (std::size_t{1} << log_m) / 2 * 32; }
};

}  // namespace

struct GpuProver::Impl {
  int ordinal = 0;
  detail::Stream compute;
  detail::Stream copy;  // uploads of a, b, c overlap the NTTs of the previous vector
  std::map<int, DomainTables> tables;
  PinnedBuffer<Fr> host_abc;  // 3 m evaluations, reused across proofs of one size

  const DomainTables& tables_for(int log_m) {
    if (auto it = tables.find(log_m); it != tables.end()) return it->second;
    const cudaStream_t s = compute.get();
    const std::size_t m = std::size_t{1} << log_m;
    DomainTables t;
    std::vector<Fr> hi, lo;
    // w_m = 7^((r-1)/2^32) squared 32 - log_m times, as the CPU's ntt::Domain.
    Fr w = Fr::from_u64(ff::kFrGenerator).pow(Fr::kTrace);
    for (int i = log_m; i < 32; ++i) w = w.square();
    const int tw_lo_bits = log_m / 2;
    power_tables(w, Fr::one(), m / 2, tw_lo_bits, hi, lo);
    {
      DeviceBuffer<u32> dhi = upload_fr(s, hi, "NTT twiddle seeds"), dlo = upload_fr(s, lo, "NTT twiddle seeds");
      t.twiddles = DeviceBuffer<u32>(m / 2 * kFrLimbs, "NTT twiddles");
      kernels::ntt_power_table(s, t.twiddles.get(), dhi.get(), dlo.get(), tw_lo_bits, m / 2);
      compute.sync();  // the seeds die here
    }
    const Fr g = Fr::from_u64(ff::kFrGenerator);
    const Fr m_inv = Fr::from_u64(m).inverse();
    t.lo_bits = (log_m + 1) / 2;
    power_tables(g, m_inv, m, t.lo_bits, hi, lo);
    t.to_coset_hi = upload_fr(s, hi, "coset table");
    t.to_coset_lo = upload_fr(s, lo, "coset table");
    compute.sync();
    power_tables(g.inverse(), m_inv, m, t.lo_bits, hi, lo);
    t.from_coset_hi = upload_fr(s, hi, "coset table");
    t.from_coset_lo = upload_fr(s, lo, "coset table");
    compute.sync();
    t.z_inv = (g.pow(std::uint64_t(m)) - Fr::one()).inverse();
    return tables.emplace(log_m, std::move(t)).first->second;
  }

  // Stage 2: returns the device buffer of m elements whose first m - 1 are the
  // coefficients of H. `abc` holds a, b, c (m each, zero-padded) on the host.
  DeviceBuffer<u32> quotient(Device& device, const Fr* abc, int log_m) {
    const std::size_t m = std::size_t{1} << log_m;
    const bool have_tables = tables.count(log_m) != 0;
    require_fits(device, 3 * m * 32 + (have_tables ? 0 : 2 * DomainTables::twiddle_bytes(log_m)),
                 "H polynomial (a, b, c and NTT tables)");
    const DomainTables& t = tables_for(log_m);
    const cudaStream_t s = compute.get();
    DeviceBuffer<u32> v[3] = {DeviceBuffer<u32>(m * kFrLimbs, "a"), DeviceBuffer<u32>(m * kFrLimbs, "b"),
                              DeviceBuffer<u32>(m * kFrLimbs, "c")};
    detail::Event uploaded[3];
    for (int k = 0; k < 3; ++k) {
      CUZK_CUDA_CHECK(cudaMemcpyAsync(v[k].get(), abc + k * m, m * 32, cudaMemcpyHostToDevice, copy.get()));
      uploaded[k].record(copy.get());
    }
    for (int k = 0; k < 3; ++k) {
      u32* x = v[k].get();
      CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, uploaded[k].get(), 0));
      // iNTT (DIF: bit-reversed out), then the bit reversal scaled by m^-1 g^i
      // (coefficients of the coset), then the forward NTT: evaluations on g<w>.
      kernels::ntt_dif(s, x, t.twiddles.get(), log_m, /*inverse=*/true);
      kernels::ntt_bitrev_scale(s, x, log_m, t.to_coset_hi.get(), t.to_coset_lo.get(), t.lo_bits);
      kernels::ntt_dif(s, x, t.twiddles.get(), log_m, /*inverse=*/false);
      kernels::ntt_bitrev_scale(s, x, log_m, nullptr, nullptr, 0);
    }
    u32 z_inv[8];
    std::memcpy(z_inv, &t.z_inv, sizeof(z_inv));
    groth16_kernels::quotient_on_coset(s, v[0].get(), v[1].get(), v[2].get(), z_inv, m);
    // Coset iNTT: back to coefficients, scaled by m^-1 g^-i.
    kernels::ntt_dif(s, v[0].get(), t.twiddles.get(), log_m, /*inverse=*/true);
    kernels::ntt_bitrev_scale(s, v[0].get(), log_m, t.from_coset_hi.get(), t.from_coset_lo.get(), t.lo_bits);
    compute.sync();  // b and c are freed on return; the host may reuse abc
    return std::move(v[0]);
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
  DeviceBuffer<u32> dh = impl_->quotient(device_, abc, log_m);
  CUZK_CUDA_CHECK(cudaMemcpy(h.data(), dh.get(), (m - 1) * 32, cudaMemcpyDeviceToHost));
  return h;
}

groth16::Proof GpuProver::prove_one(const ResidentSrs& srs, const groth16::R1cs& r1cs, const groth16::Witness& w,
                                    const groth16::Blinding& blinding) {
  using Clock = std::chrono::steady_clock;
  const ResidentSrs::Impl& bases = srs.impl();
  const cudaStream_t s = impl_->compute.get();
  const int log_m = log_domain(r1cs);
  const std::size_t m = std::size_t{1} << log_m;
  GpuProveStats stats;

  auto t0 = Clock::now();
  if (impl_->host_abc.size() != 3 * m) impl_->host_abc = PinnedBuffer<Fr>(3 * m);
  Fr* abc = impl_->host_abc.get();
  groth16::evaluate_into(r1cs, w.inputs, w.aux, {abc, m}, {abc + m, m}, {abc + 2 * m, m}, pool_);
  stats.evaluate_ms = ms_since(t0);

  t0 = Clock::now();
  groth16::MsmResults r;
  {
    // H over h: m - 1 scalars straight from the coset iNTT's output.
    DeviceBuffer<u32> h = m > 1 ? impl_->quotient(device_, abc, log_m) : DeviceBuffer<u32>();
    stats.h_ms = ms_since(t0);
    t0 = Clock::now();
    r.h = device_msm_g1(s, bases.h.get(), h.get(), m - 1);
    stats.h_msm_ms = ms_since(t0);
  }

  // One witness MSM over G1 (and G2 when g2_bases is given) with the same scalars.
  auto witness_msm = [&](std::span<const Fr> scalars, const u32* g1_bases, const u32* g2_bases, ec::G1Jacobian& g1,
                         ec::G2Jacobian* g2, GpuSplitCounts& counts) {
    counts = {0, 0, scalars.size(), false};
    if (options_.witness_split == WitnessScalarSplit::kAuto) {
      const ScalarSplit split = split_scalars(scalars, pool_);
      counts = {split.zeros, split.ones.size(), split.tail.size(), 2 * split.tail.size() <= scalars.size()};
      if (counts.split) {
        const DeviceSplit d = upload_split(s, split);
        g1 = split_msm<ff::Fp>(s, g1_bases, d);
        if (g2 != nullptr) *g2 = split_msm<ff::Fp2>(s, g2_bases, d);
        return;
      }
    }
    const DeviceBuffer<u32> d = upload_fr(s, scalars, "witness MSM scalars");
    g1 = device_msm_g1(s, g1_bases, d.get(), scalars.size());
    if (g2 != nullptr) *g2 = device_msm_g2(s, g2_bases, d.get(), scalars.size());
  };

  // L over l: the aux assignment as is.
  t0 = Clock::now();
  witness_msm(w.aux, bases.l.get(), nullptr, r.l, nullptr, stats.l);
  stats.l_msm_ms = ms_since(t0);

  // A over a: every input, then the aux selected by a_aux density (one MSM over
  // the concatenation; the CPU sums two MSMs, the same group element).
  t0 = Clock::now();
  {
    const std::size_t n_in = w.inputs.size();
    std::vector<Fr> scalars(srs.params().a.size());
    std::copy(w.inputs.begin(), w.inputs.end(), scalars.begin());
    select_into(w.aux, r1cs.a_aux_density(), std::span<Fr>(scalars).subspan(n_in), pool_);
    witness_msm(scalars, bases.a.get(), nullptr, r.a, nullptr, stats.a);
  }
  stats.a_msm_ms = ms_since(t0);

  // B in G1 and G2 over b_g1 / b_g2: inputs by b_input density, then aux by
  // b_aux density; one selection (and split) serves both groups.
  t0 = Clock::now();
  {
    const std::size_t n_b_in = r1cs.b_input_density().popcount();
    std::vector<Fr> scalars(srs.params().b_g1.size());
    select_into(w.inputs, r1cs.b_input_density(), std::span<Fr>(scalars).subspan(0, n_b_in), pool_);
    select_into(w.aux, r1cs.b_aux_density(), std::span<Fr>(scalars).subspan(n_b_in), pool_);
    witness_msm(scalars, bases.b_g1.get(), bases.b_g2.get(), r.b_g1, &r.b_g2, stats.b);
  }
  stats.b_msm_ms = ms_since(t0);

  t0 = Clock::now();
  groth16::Proof proof = groth16::assemble_proof(srs.params().vk, r, blinding);
  stats.assemble_ms = ms_since(t0);
  last_stats_ = stats;
  return proof;
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
