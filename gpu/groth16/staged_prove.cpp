// GpuProver's proof of one instance in three steps, and everything built on
// them (prove, device_stages, compute_h):
//
//   prepare  (host, any thread)   a, b, c into pinned memory, and the L, A, B
//                                 scalars selected and split into pinned
//                                 memory; AbcSource::kDevice: the witness only.
//   enqueue  (device thread)      copy stream: a, b, c, then the three splits
//                                 (kDevice: the witness; on the compute stream
//                                 the splits' count passes, a wait for their
//                                 totals, the fill passes, then the mat-vec and
//                                 its satisfaction check);
//                                 compute stream: H (6 NTTs; 7 + quotient
//                                 below 2^6), the H MSM,
//                                 L, A, B_G1, B_G2 (point sum of the ones,
//                                 gather + MSM of the tail), each MSM's window
//                                 sums and each point sum downloaded to pinned
//                                 memory; a stage report (host callback) at each
//                                 stage and a fence at the end. No host wait.
//   finish   (host, any thread)   the device check's verdict (UnsatisfiedError),
//                                 Horner over the window sums, the point sums
//                                 added, the proof assembled.
//
// The host waits on the device thread: allocations (the workspace, the MSM
// arena and the point-sum scratch grow on the first instance of a larger
// shape; cudaFree waits for the device) and, with kDevice, the witness upload
// plus the splits' count passes (~0.1 s for a 32 GiB PoRep partition, the
// time the mat-vec waited for the witness anyway): the MSMs' sizes are
// planned on the host.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "ec/curve.hpp"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/groth16/prover_impl.hpp"
#include "gpu/groth16/quotient_kernel.hpp"
#include "gpu/groth16/witness_split.hpp"
#include "gpu/groth16/witness_split_device.hpp"
#include "gpu/ntt/ntt_tables.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::PinnedBuffer;
using ff::Fr;
using kernels::u32;
using staging::Step;

namespace {

constexpr int kLogDomainMax = 27;  // the NTT kernels' limit
constexpr std::size_t kFrLimbs = 8;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int log_domain(const groth16::R1cs& r1cs) {
  const std::uint64_t m = groth16::domain_size(r1cs);
  const int log_m = std::bit_width(m) - 1;
  if (log_m > kLogDomainMax) {
    throw Error(ErrorKind::kInvalidArgument,
                "domain 2^" + std::to_string(log_m) + " exceeds the device NTT's 2^" + std::to_string(kLogDomainMax));
  }
  return log_m;
}

void check_witness(const groth16::R1cs& r1cs, const groth16::Witness& w) {
  if (w.inputs.size() != r1cs.num_inputs() || w.aux.size() != r1cs.num_aux()) {
    throw groth16::ParamsError(groth16::ParamsErrorKind::kShapeMismatch,
                               "witness has " + std::to_string(w.inputs.size()) + " inputs and " +
                                   std::to_string(w.aux.size()) + " aux, the circuit needs " +
                                   std::to_string(r1cs.num_inputs()) + " and " + std::to_string(r1cs.num_aux()));
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
ec::Jacobian<F> combine_windows(const u32* limbs, int windows, int window_bits) {
  constexpr std::size_t kXyzzLimbs = 4 * sizeof(F) / 4;
  ec::Jacobian<F> acc = ec::Jacobian<F>::identity();
  for (int w = windows; w-- > 0;) {
    for (int i = 0; i < window_bits; ++i) acc = ec::dbl(acc);
    acc = ec::add(acc, xyzz_to_jacobian<F>(limbs + std::size_t(w) * kXyzzLimbs));
  }
  return acc;
}

// A result slot: the split's sum of ones (when there was one) plus the MSM.
template <class F>
ec::Jacobian<F> slot_result(const u32* slot, const staging::MsmResultMeta& meta) {
  ec::Jacobian<F> r = meta.has_sum ? xyzz_to_jacobian<F>(slot + staging::kSumOffsetLimbs) : ec::Jacobian<F>::identity();
  if (meta.windows > 0) r = ec::add(r, combine_windows<F>(slot, meta.windows, meta.window_bits));
  return r;
}

// Grows a reused buffer to at least `count` elements (contents dropped).
template <class T>
T* grow_pinned(PinnedBuffer<T>& buf, std::size_t count) {
  if (buf.size() < count) {
    buf.reset();  // free first: these reach GiBs
    buf = PinnedBuffer<T>(count);
  }
  return buf.get();
}
template <class T>
T* grow_device(DeviceBuffer<T>& buf, std::size_t count, const char* what) {
  if (buf.size() < count) {
    buf.reset();  // cudaFree waits for the device: no queued work still uses it
    buf = DeviceBuffer<T>(count, what);
  }
  return buf.get();
}

void upload(cudaStream_t s, void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
}

// The ones' sums use the MSM arena for their tree (on the MSM's stream, before it).
groth16_kernels::PointSumOptions sum_options(Device& device) {
  groth16_kernels::PointSumOptions o;
  o.arena = &device.msm_scratch();
  o.arena_limit_bytes = device.msm_tuning().scratch_limit_bytes;
  return o;
}

// Per group: packed point size, the point sum and the MSM, both queued.
template <class F>
struct Group;
template <>
struct Group<ff::Fp> {
  static constexpr std::size_t kPointLimbs = 24;
  static void sum(Device& device, cudaStream_t s, const u32* bases, const u32* idx, std::size_t n,
                  DeviceBuffer<unsigned char>& scratch, u32* out) {
    groth16_kernels::sum_points_g1(s, bases, idx, n, scratch, sum_options(device), out);
  }
  static kernels::MsmWindows msm(Device& device, cudaStream_t s, const PointSource& bases, const u32* scalars,
                                 std::size_t n, u32* out) {
    return kernels::msm_g1_enqueue(s, bases, scalars, n, kernels::msm_config(device.msm_tuning()), device.msm_scratch(),
                                   out);
  }
};
template <>
struct Group<ff::Fp2> {
  static constexpr std::size_t kPointLimbs = 48;
  static void sum(Device& device, cudaStream_t s, const u32* bases, const u32* idx, std::size_t n,
                  DeviceBuffer<unsigned char>& scratch, u32* out) {
    groth16_kernels::sum_points_g2(s, bases, idx, n, scratch, sum_options(device), out);
  }
  static kernels::MsmWindows msm(Device& device, cudaStream_t s, const PointSource& bases, const u32* scalars,
                                 std::size_t n, u32* out) {
    return kernels::msm_g2_enqueue(s, bases, scalars, n, kernels::msm_config(device.msm_tuning()), device.msm_scratch(),
                                   out);
  }
};

// sum_i s_i P_i over one group: with a split, sum_{s_i = 1} P_i plus the MSM
// over the tail (its bases gathered into the workspace, as the MSM reads
// them in order); without, one MSM over every selected scalar.
template <class F>
void queue_witness_msm(Device& device, GpuProver::Impl& d, cudaStream_t s, const PointSource& bases,
                       const staging::WitnessMsmHost& host, const GpuProver::Impl::SplitDevice& dev, u32* slot,
                       staging::MsmResultMeta& meta) {
  kernels::MsmWindows w;
  if (host.counts.split) {
    if (bases.on_device(host.n)) {
      Group<F>::sum(device, s, bases.device, dev.ones.get(), host.counts.ones, d.sum_scratch,
                    slot + staging::kSumOffsetLimbs);
      if (host.counts.tail > 0) {
        groth16_kernels::gather_points(s, bases.device, dev.tail_idx.get(), host.counts.tail, Group<F>::kPointLimbs,
                                       d.gathered.get());
      }
    } else {
      // Bases partly in pinned host memory: one streamed pass does both.
      groth16_kernels::StreamedSplitPasses p;
      p.stream = s;
      p.bases = bases;
      p.n_points = host.n;
      p.ones = dev.ones.get();
      p.ones_host = host.ones.get();
      p.n_ones = host.counts.ones;
      p.tail_idx = dev.tail_idx.get();
      p.tail_idx_host = host.tail_idx.get();
      p.n_tail = host.counts.tail;
      p.gathered = d.gathered.get();
      p.arena = &device.msm_scratch();
      if constexpr (Group<F>::kPointLimbs == 24) {
        groth16_kernels::sum_and_gather_streamed_g1(p, d.sum_scratch, slot + staging::kSumOffsetLimbs);
      } else {
        groth16_kernels::sum_and_gather_streamed_g2(p, d.sum_scratch, slot + staging::kSumOffsetLimbs);
      }
    }
    meta.has_sum = true;
    if (host.counts.tail > 0) {
      w = Group<F>::msm(device, s, d.gathered.get(), dev.values.get(), host.counts.tail, slot);
    }
  } else {
    w = Group<F>::msm(device, s, bases, dev.values.get(), host.n, slot);
  }
  meta.window_bits = w.window_bits;
  meta.windows = w.windows;
}

// Device memory the matrices leave free beside the allocated workspace: the
// MSM arena's growth up to its limit (the MSM also shrinks its chunks to the
// free memory, but a full arena is its fast path) and the point sums'
// partials and streamed-split staging (grown lazily, mid-enqueue).
constexpr std::size_t kLazyScratchMarginBytes = std::size_t{256} << 20;

// The device copy of r1cs's matrices (AbcSource::kDevice), built on the device
// thread, replacing another R1cs's (after the device is done with it), with
// `keep_free_bytes` left beside it. Uploads on a stream of its own, so only
// the upload is waited for. Throws Error{kOutOfDeviceMemory} when they do not
// fit (an old copy is gone then).
const DeviceR1cs& device_r1cs(GpuProver::Impl& d, const groth16::R1cs& r1cs, std::size_t keep_free_bytes) {
  const std::size_t nnz = r1cs.a().nnz() + r1cs.b().nnz() + r1cs.c().nnz();
  if (d.device_r1cs && d.device_r1cs_for.load(std::memory_order_relaxed) == &r1cs &&
      d.device_r1cs->num_constraints() == r1cs.num_constraints() &&
      d.device_r1cs->num_variables() == r1cs.num_variables() && d.device_r1cs->nnz() == nnz) {
    return *d.device_r1cs;
  }
  d.device_r1cs_for.store(nullptr, std::memory_order_release);
  if (d.device_r1cs) {
    d.compute.sync();  // instances in flight may still read the old matrices
    d.device_r1cs.reset();
    d.device_r1cs_bytes.store(0, std::memory_order_relaxed);
    d.device_r1cs_rows.store(0, std::memory_order_relaxed);
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  DeviceR1csOptions options;
  options.budget_bytes = free_bytes > keep_free_bytes ? free_bytes - keep_free_bytes : 0;
  detail::Stream upload;
  d.device_r1cs = std::make_unique<DeviceR1cs>(r1cs, upload.get(), options);
  d.device_r1cs_bytes.store(d.device_r1cs->bytes(), std::memory_order_relaxed);
  d.device_r1cs_rows.store(d.device_r1cs->num_constraints(), std::memory_order_relaxed);
  d.device_r1cs_for.store(&r1cs, std::memory_order_release);
  return *d.device_r1cs;
}

// Whether queue_h runs the lean NTT passes out of place (a fourth m-vector in
// the workspace beside a, b, c): the domain is large enough for them
// (2^ntt_lean::kLogMin); smaller ones run radix-2 in place.
bool h_stage_out_of_place(int log_m) { return log_m >= ntt_lean::kLogMin; }

// v (natural-order evaluations on <w>) -> its evaluations on the coset g<w>,
// natural order, by lean passes out of place through `spare`: the iNTT stores
// coefficient j times m^-1 g^j into spare, the forward NTT stores back into v.
void coset_evaluations_via_spare(cudaStream_t s, u32* v, u32* spare, const detail::NttTables& t, int log_m) {
  kernels::LeanNttIo to_spare;
  to_spare.out = spare;
  to_spare.store_scale = t.coset_ninv();
  kernels::ntt_lean_dif(s, v, t.twiddles.get(), log_m, /*inverse=*/true, to_spare);
  kernels::LeanNttIo back;
  back.out = v;
  kernels::ntt_lean_dif(s, spare, t.twiddles.get(), log_m, /*inverse=*/false, back);
}

// The same in place: DIF passes (bit-reversed out; lean or, below 2^6,
// radix-2: detail::ntt_dif), then the bit reversal scaled by m^-1 g^i, the
// forward DIF passes and a plain bit reversal.
void coset_evaluations_in_place(cudaStream_t s, u32* v, const detail::NttTables& t, int log_m) {
  detail::ntt_dif(s, v, t.twiddles.get(), log_m, /*inverse=*/true);
  kernels::ntt_bitrev_scale(s, v, log_m, t.coset_ninv_hi.get(), t.coset_ninv_lo.get(), t.coset_lo_bits);
  detail::ntt_dif(s, v, t.twiddles.get(), log_m, /*inverse=*/false);
  kernels::ntt_bitrev_scale(s, v, log_m, nullptr, nullptr, 0);
}

// The witness MSMs' device buffers for the counts in st.msm (a split's index
// lists and tail, or all selected scalars) and the gathered tail bases.
void grow_split_buffers(GpuProver::Impl& d, const ProveStaging::Impl& st) {
  using namespace staging;
  std::size_t gather_limbs = 0;
  for (int k = 0; k < kWitnessMsms; ++k) {
    const WitnessMsmHost& h = st.msm[k];
    GpuProver::Impl::SplitDevice& dev = d.split[k];
    const std::size_t values = h.counts.split ? h.counts.tail : h.n;
    if (h.counts.split) {
      grow_device(dev.ones, h.counts.ones, "split: indices of ones");
      grow_device(dev.tail_idx, h.counts.tail, "split: tail indices");
      gather_limbs =
          std::max(gather_limbs, h.counts.tail * (k == kB ? Group<ff::Fp2>::kPointLimbs : Group<ff::Fp>::kPointLimbs));
    }
    grow_device(dev.values, values * kFrLimbs, "witness MSM scalars");
  }
  grow_device(d.gathered, gather_limbs, "split: tail bases");
}

// The witness MSMs' selection + split on `s`, from the witness the mat-vec
// reads (gpu/groth16/witness_split_device.hpp), in two steps because the
// MSMs' sizes and the split decision are the host's: count_split_on_device
// queues the count passes and the totals' download; once the device has
// passed them, fill_split_on_device grows the buffers to the totals and
// queues the fill passes. Where a witness MSM's bases are streamed from the
// host, its index lists are copied back too (the streamed passes take their
// ranges from host copies): fill returns true, and the MSMs are queued once
// those copies have landed. The rule and the outputs are
// prepare_witness_msms's.
std::array<groth16_kernels::SplitSource, staging::kWitnessMsms> split_sources(const u32* witness_dev,
                                                                              const DeviceR1cs& r1cs_dev) {
  using namespace staging;
  using Density = DeviceR1cs::Density;
  const std::uint64_t n_in = r1cs_dev.num_inputs(), n_var = r1cs_dev.num_variables();
  std::array<groth16_kernels::SplitSource, kWitnessMsms> src;
  // L: every aux. A: every input, the aux by a_aux. B: inputs by b_input, aux by b_aux.
  src[kL] = {witness_dev, n_in, n_var, n_in, true, true, nullptr, nullptr};
  src[kA] = {witness_dev, 0, n_var, n_in, true, false, nullptr, r1cs_dev.density(Density::kAAux)};
  src[kB] = {
      witness_dev, 0, n_var, n_in, false, false, r1cs_dev.density(Density::kBInput), r1cs_dev.density(Density::kBAux)};
  return src;
}

void count_split_on_device(GpuProver::Impl& d, cudaStream_t s, const u32* witness_dev, const DeviceR1cs& r1cs_dev) {
  using namespace staging;
  const auto src = split_sources(witness_dev, r1cs_dev);
  std::size_t temp_bytes = 0;
  for (int k = 0; k < kWitnessMsms; ++k) {
    grow_device(d.split_counts[k], groth16_kernels::split_counts_words(src[k]), "split: block counts");
    temp_bytes = std::max(temp_bytes, groth16_kernels::split_scan_temp_bytes(src[k]));
  }
  grow_device(d.split_temp, temp_bytes, "split: scan scratch");
  u32* totals = grow_pinned(d.split_totals, 3 * kWitnessMsms);
  for (int k = 0; k < kWitnessMsms; ++k) {
    groth16_kernels::count_witness_split(s, src[k], d.split_counts[k].get(), d.split_temp.get(), d.split_temp.size(),
                                         totals + 3 * k);
  }
}

bool fill_split_on_device(GpuProver::Impl& d, ProveStaging::Impl& st, cudaStream_t s, const u32* witness_dev,
                          const DeviceR1cs& r1cs_dev, const DeviceSrsBases& bases, bool auto_split) {
  using namespace staging;
  const auto src = split_sources(witness_dev, r1cs_dev);
  const u32* totals = d.split_totals.get();
  for (int k = 0; k < kWitnessMsms; ++k) {
    WitnessMsmHost& h = st.msm[k];
    const std::size_t selected = totals[3 * k], ones = totals[3 * k + 1], tail = totals[3 * k + 2];
    if (selected != h.n) {
      throw Error(ErrorKind::kInvalidArgument, "device split: " + std::to_string(selected) +
                                                   " scalars selected, the densities count " + std::to_string(h.n));
    }
    h.counts = {0, 0, selected, false};
    if (auto_split) h.counts = {selected - ones - tail, ones, tail, 2 * tail <= selected};
  }
  grow_split_buffers(d, st);
  const bool host_lists[kWitnessMsms] = {!bases.l.on_device(st.msm[kL].n), !bases.a.on_device(st.msm[kA].n),
                                         !bases.b_g1.on_device(st.msm[kB].n) || !bases.b_g2.on_device(st.msm[kB].n)};
  bool lists_copied = false;
  for (int k = 0; k < kWitnessMsms; ++k) {
    WitnessMsmHost& h = st.msm[k];
    GpuProver::Impl::SplitDevice& dev = d.split[k];
    groth16_kernels::fill_witness_split(s, src[k], d.split_counts[k].get(), h.counts.split, dev.ones.get(),
                                        dev.tail_idx.get(), dev.values.get());
    if (h.counts.split && host_lists[k]) {
      CUZK_CUDA_CHECK(cudaMemcpyAsync(grow_pinned(h.ones, h.counts.ones), dev.ones.get(), h.counts.ones * 4,
                                      cudaMemcpyDeviceToHost, s));
      CUZK_CUDA_CHECK(cudaMemcpyAsync(grow_pinned(h.tail_idx, h.counts.tail), dev.tail_idx.get(), h.counts.tail * 4,
                                      cudaMemcpyDeviceToHost, s));
      lists_copied = true;
    }
  }
  st.stats.l = st.msm[kL].counts;
  st.stats.a = st.msm[kA].counts;
  st.stats.b = st.msm[kB].counts;
  st.stats.split_on_device = true;
  return lists_copied;
}

// The page-locked buffer prepare() fills on `source`'s path, grown for
// r1cs: the witness (inputs ++ aux) for kDevice, else a, b, c (m each). The
// other path's buffer is freed: a staging holds one of the two
// (host_bytes_bound).
Fr* grow_prepare_buffer(ProveStaging::Impl& st, const groth16::R1cs& r1cs, AbcSource source) {
  if (source == AbcSource::kDevice) {
    st.abc_own.reset();
    return grow_pinned(st.witness_own, r1cs.num_variables());
  }
  st.witness_own.reset();
  return grow_pinned(st.abc_own, 3 * (std::size_t{1} << log_domain(r1cs)));
}

// An enqueue step that ends where the device's answer is needed: the
// staging's fence after what is queued on s; the next step resumes after it.
GpuProver::EnqueueStep step_at_fence(ProveStaging::Impl& st, cudaStream_t s,
                                     const std::shared_ptr<FenceCounter>& callbacks,
                                     std::chrono::steady_clock::time_point step_began) {
  st.fence = detail::enqueue_fence(s, callbacks);
  st.stats.enqueue_ms += ms_since(step_began);
  return {st.fence, true};
}

// Reports stage `name` to the observer (if any) when stream s reaches it,
// from CUDA's callback thread.
void queue_stage_report(const StageObserver& observer, const std::shared_ptr<FenceCounter>& callbacks, cudaStream_t s,
                        const char* name) {
  if (!observer) return;
  callbacks->armed();
  const auto stream_id = reinterpret_cast<std::uintptr_t>(s);
  detail::launch_host_callback(s, [observer, name, stream_id, counter = callbacks] {
    counter->passed();
    observer(name, stream_id);
  });
}

// The blocking enqueue: each step's fence waited for on this thread (tests,
// prove(), device_stages()); a step that threw is waited for too, so that the
// caller may prepare the staging again at once.
Fence finish_enqueue(GpuProver& prover, ProveStaging& staging, GpuProver::EnqueueStep step) {
  try {
    while (step.more) {
      step.fence.wait();
      step = prover.enqueue_continue(staging);
    }
  } catch (...) {
    staging.fence().wait();
    throw;
  }
  return step.fence;
}

}  // namespace

// ---- ProveStaging ----------------------------------------------------------

ProveStaging::ProveStaging() : impl_(std::make_unique<Impl>()) {}
ProveStaging::~ProveStaging() = default;  // Impl waits for the fence
ProveStaging::ProveStaging(ProveStaging&&) noexcept = default;
ProveStaging& ProveStaging::operator=(ProveStaging&&) noexcept = default;

std::size_t ProveStaging::pinned_bytes() const {
  std::size_t bytes = (impl_->abc_own.size() + impl_->witness_own.size()) * sizeof(Fr) + impl_->results.size() * 4 +
                      impl_->first_unsatisfied.size() * sizeof(std::uint64_t);
  for (const auto& m : impl_->msm) bytes += m.bytes();
  return bytes;
}

std::size_t ProveStaging::host_bytes_bound(const groth16::R1cs& r1cs, AbcSource source) {
  // The buffers keep their largest size: a split (ones 4 B, tail 4 + 32 B,
  // tail at most half) and an unsplit MSM (32 B per scalar) may both have
  // happened, so 4 + 4 + 32 B per selected scalar. kDevice splits on the
  // device (prepare frees the scalars' buffers); only streamed bases bring
  // the index lists back (4 + 4 B).
  const std::size_t selected = r1cs.num_aux() + (r1cs.num_inputs() + r1cs.a_aux_density().popcount()) +
                               (r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount());
  const std::size_t abc_or_witness = source == AbcSource::kDevice
                                         ? r1cs.num_variables() * sizeof(Fr)
                                         : 3 * std::size_t(groth16::domain_size(r1cs)) * sizeof(Fr);
  const std::size_t per_selected = source == AbcSource::kDevice ? 4 + 4 : 4 + 4 + sizeof(Fr);
  return abc_or_witness + selected * per_selected + staging::kMsmSlots * staging::kSlotLimbs * 4 +
         sizeof(std::uint64_t);
}

void ProveStaging::release() {
  impl_->fence.wait();
  impl_->begin_prepare();
  impl_->abc_own.reset();
  impl_->witness_own.reset();
  for (auto& m : impl_->msm) m = staging::WitnessMsmHost{};
  impl_->results.reset();
  impl_->first_unsatisfied.reset();
}

const Fence& ProveStaging::fence() const { return impl_->fence; }
const GpuProveStats& ProveStaging::stats() const { return impl_->stats; }

// ---- GpuProver -------------------------------------------------------------

GpuProver::GpuProver(Device& device, ThreadPool& pool, GpuProverOptions options)
    : device_(device), pool_(pool), options_(options) {
  DeviceGuard guard(device.info().ordinal);
  impl_ = std::make_unique<Impl>(options.high_priority_streams);
  impl_->ordinal = device.info().ordinal;
}

GpuProver::~GpuProver() {
  DeviceGuard guard(impl_->ordinal);
  own_staging_.reset();  // waits for its fence
  // Stagings owned elsewhere wait for their own fences; the workspace they
  // use is freed only after the device is done with it.
  impl_->compute.sync();
  impl_->copy.sync();
  side_srs_.reset();
  cached_srs_.reset();
  impl_.reset();
}

ProveStaging& GpuProver::own_staging() {
  if (!own_staging_) own_staging_ = std::make_unique<ProveStaging>();
  return *own_staging_;
}

void GpuProver::release_workspace() {
  if (impl_->pending) staging::misuse("workspace released under an enqueue in steps");
  DeviceGuard guard(impl_->ordinal);
  impl_->compute.sync();
  impl_->copy.sync();
  impl_->abc.reset();
  impl_->witness.reset();
  impl_->device_r1cs_for.store(nullptr, std::memory_order_release);  // rebuilt by a later enqueue
  impl_->device_r1cs.reset();
  impl_->device_r1cs_bytes.store(0, std::memory_order_relaxed);
  impl_->device_r1cs_rows.store(0, std::memory_order_relaxed);
  impl_->device_r1cs_unfit.store(nullptr, std::memory_order_relaxed);  // the device may have room now
  impl_->h_compact_m = 0;
  impl_->first_unsatisfied.reset();
  for (auto& s : impl_->split) s = Impl::SplitDevice{};
  impl_->gathered.reset();
  impl_->sum_scratch.reset();
  // The Device's MSM arena too: a new SRS's device budget (srs_device_budget_for)
  // counts the arena's limit as working memory, so an arena still held would
  // count twice: on an H200 ~54 GiB held against a 58.2 GiB limit left a 44 GiB
  // PoRep SRS ~8 GiB of device budget. The next MSM grows it again.
  device_.release_msm_scratch();
}

void GpuProver::reserve_staging(const groth16::R1cs& r1cs, ProveStaging& staging) const {
  ProveStaging::Impl& st = staging.impl();
  if (st.step == staging::Step::kEnqueued && !st.fence.ready()) staging::misuse("reserve while in flight");
  grow_prepare_buffer(st, r1cs, abc_source_for(r1cs));
}

void GpuProver::prepare(const groth16::R1cs& r1cs, const groth16::Witness& w, ProveStaging& staging,
                        groth16::SatisfactionCheck check) const {
  const auto t_begin = std::chrono::steady_clock::now();
  ProveStaging::Impl& st = staging.impl();
  st.begin_prepare();
  check_witness(r1cs, w);
  const int log_m = log_domain(r1cs);
  const std::size_t m = std::size_t{1} << log_m;
  stage("evaluate", 0);
  auto t0 = std::chrono::steady_clock::now();
  const Fr* abc = nullptr;
  st.check = check;
  const AbcSource source = abc_source_for(r1cs);
  Fr* const own = grow_prepare_buffer(st, r1cs, source);
  if (source == AbcSource::kDevice) {
    // a, b, c come from the device's copy of the matrices (enqueue uploads
    // them the first time), and so does the check: stage the witness only.
    Fr* const wit = own;
    std::memcpy(static_cast<void*>(wit), w.inputs.data(), w.inputs.size() * sizeof(Fr));
    pool_.parallel_for(w.aux.size(), [&](std::size_t lo, std::size_t hi) {
      std::memcpy(static_cast<void*>(wit + w.inputs.size() + lo), w.aux.data() + lo, (hi - lo) * sizeof(Fr));
    });
    st.r1cs = &r1cs;
    st.stats.abc_on_device = true;
  } else {
    // Throws UnsatisfiedError (kCheck) with the staging left idle.
    groth16::evaluate_into(r1cs, w.inputs, w.aux, {own, m}, {own + m, m}, {own + 2 * m, m}, pool_, check);
    abc = own;
  }
  st.stats.evaluate_ms = ms_since(t0);
  if (abc == nullptr && r1cs.num_variables() < (std::size_t{1} << 32)) {
    // The witness goes to the device for the mat-vec: enqueue selects and
    // splits the witness MSMs' scalars there (count_split_on_device, fill_split_on_device).
    st.msm[staging::kL].n = r1cs.num_aux();
    st.msm[staging::kA].n = r1cs.num_inputs() + r1cs.a_aux_density().popcount();
    st.msm[staging::kB].n = r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount();
    st.split_on_device = true;
    for (staging::WitnessMsmHost& h : st.msm) h.values.reset();  // host_bytes_bound: not held on this path
    st.step = Step::kPrepared;
  } else {
    prepare_witness_msms(w.inputs, w.aux, r1cs.a_aux_density(), r1cs.b_input_density(), r1cs.b_aux_density(), staging);
  }
  st.abc = abc;
  st.log_m = log_m;
  st.stats.prepare_ms = ms_since(t_begin);
}

void GpuProver::prepare_witness_msms(std::span<const Fr> inputs, std::span<const Fr> aux,
                                     const groth16::BitVec& a_aux_density, const groth16::BitVec& b_input_density,
                                     const groth16::BitVec& b_aux_density, ProveStaging& staging) const {
  ProveStaging::Impl& st = staging.impl();
  using detail::SelectSegment;
  // One fused select + split pass (gpu/groth16/witness_split.hpp) per MSM,
  // into the staging's pinned buffers. Every scalar is copied, even when the
  // MSM reads one unfiltered segment unsplit: the device reads pinned memory
  // after this returns, and the witness need not outlive prepare().
  auto select = [&](std::initializer_list<SelectSegment> segments, staging::WitnessMsmHost& out, GpuSplitCounts& counts,
                    double& host_ms) {
    const auto t0 = std::chrono::steady_clock::now();
    const detail::SelectSplit sel(std::span<const SelectSegment>(segments.begin(), segments.size()), pool_);
    const detail::SelectSplitCounts& c = sel.totals();
    out.n = c.selected;
    out.counts = {0, 0, c.selected, false};
    if (options_.witness_split == WitnessScalarSplit::kAuto) {
      // Split only when at most half the scalars are left for the Pippenger MSM.
      out.counts = {c.zeros, c.ones, c.tail, 2 * c.tail <= c.selected};
    }
    if (out.counts.split) {
      sel.fill_split(grow_pinned(out.ones, c.ones), grow_pinned(out.tail_idx, c.tail), grow_pinned(out.values, c.tail),
                     pool_);
    } else {
      sel.fill_selected(grow_pinned(out.values, c.selected), pool_);
    }
    counts = out.counts;
    host_ms = ms_since(t0);
  };
  // L: the aux assignment as is. A: every input, then the aux by a_aux
  // density (one MSM over the concatenation; the CPU sums two MSMs, the same
  // group element). B (G1 and G2 share it): inputs by b_input density, then
  // aux by b_aux density.
  select({{aux, nullptr}}, st.msm[staging::kL], st.stats.l, st.stats.l_host_ms);
  select({{inputs, nullptr}, {aux, &a_aux_density}}, st.msm[staging::kA], st.stats.a, st.stats.a_host_ms);
  select({{inputs, &b_input_density}, {aux, &b_aux_density}}, st.msm[staging::kB], st.stats.b, st.stats.b_host_ms);
  st.step = Step::kPrepared;
}

Fence GpuProver::enqueue(const ResidentSrs& srs, ProveStaging& staging) {
  EnqueueStep step = enqueue_start(srs, staging);
  return finish_enqueue(*this, staging, std::move(step));
}

Fence GpuProver::enqueue(const DeviceSrsBases& bases, ProveStaging& staging) {
  EnqueueStep step = enqueue_start(bases, staging);
  return finish_enqueue(*this, staging, std::move(step));
}

GpuProver::EnqueueStep GpuProver::enqueue_start(const ResidentSrs& srs, ProveStaging& staging) {
  const ProveStaging::Impl& st = staging.impl();
  if (st.step != Step::kPrepared) staging::misuse("enqueue of an instance not prepared");
  const groth16::Parameters& p = srs.params();
  const std::size_t m = std::size_t{1} << st.log_m;
  if (srs.device_ordinal() != impl_->ordinal) {
    throw Error(ErrorKind::kInvalidArgument, "the resident SRS lives on device " +
                                                 std::to_string(srs.device_ordinal()) + ", the prover on device " +
                                                 std::to_string(impl_->ordinal));
  }
  if (p.h.size() + 1 < m || p.l.size() != st.msm[staging::kL].n || p.a.size() != st.msm[staging::kA].n ||
      p.b_g1.size() != st.msm[staging::kB].n || p.b_g2.size() != st.msm[staging::kB].n) {
    throw groth16::ParamsError(
        groth16::ParamsErrorKind::kShapeMismatch,
        "the parameters do not fit the prepared instance (h " + std::to_string(p.h.size()) + ", l " +
            std::to_string(p.l.size()) + ", a " + std::to_string(p.a.size()) + ", b " + std::to_string(p.b_g1.size()) +
            " for domain " + std::to_string(m) + ", " + std::to_string(st.msm[staging::kL].n) + " aux, " +
            std::to_string(st.msm[staging::kA].n) + " / " + std::to_string(st.msm[staging::kB].n) + " A / B scalars)");
  }
  return enqueue_start(srs.device_bases(), staging);
}

GpuProver::EnqueueStep GpuProver::enqueue_start(const DeviceSrsBases& bases, ProveStaging& staging) {
  using namespace staging;
  const auto t_begin = std::chrono::steady_clock::now();
  ProveStaging::Impl& st = staging.impl();
  if (st.step != Step::kPrepared) misuse("enqueue of an instance not prepared");
  if (impl_->pending) misuse("enqueue while another waits for enqueue_continue");
  if (bases.a_count != st.msm[kA].n || bases.b_count != st.msm[kB].n) {
    throw Error(ErrorKind::kInvalidArgument, "enqueue: the SRS bases do not fit the prepared instance");
  }
  const int log_m = st.log_m;
  const std::size_t m = std::size_t{1} << log_m;
  DeviceGuard guard(impl_->ordinal);
  Impl& d = *impl_;
  st.stats.enqueue_ms = 0;

  // Every device buffer first: running out of memory leaves nothing queued.
  // AbcSource::kDevice: the witness buffer and the matrices after the workspace.
  const bool witness_staged = st.abc == nullptr && st.r1cs != nullptr;
  // The H stage in three or four vectors of m Fr, or in two (queue_h_compact)
  // when asked to or when those do not fit (grow_device frees the old buffer
  // before it tries, so the fallback finds that room too).
  const bool compact_possible = m > 1 && log_m >= ntt_lean::kLogMin;
  bool compact = compact_possible && (options_.compact_h_stage || d.h_compact_m == m);
  u32* abc_dev = nullptr;
  if (!compact) {
    const std::size_t abc_vectors = h_stage_out_of_place(log_m) ? 4 : 3;
    try {
      abc_dev = grow_device(d.abc, abc_vectors * m * kFrLimbs, "a, b, c");
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kOutOfDeviceMemory || !compact_possible) throw;
      compact = true;
      d.h_compact_m = m;
    }
  }
  if (compact) abc_dev = grow_device(d.abc, 2 * m * kFrLimbs, "a, b, c (two-vector H stage)");
  st.stats.compact_h = compact;
  // A split on the device sizes its buffers once counted (mid-enqueue).
  if (!st.split_on_device) grow_split_buffers(d, st);
  // The witness buffer and the matrices (normally resident already), after
  // the workspace so that they never take its room, leaving the lazily
  // grown scratch theirs. When they do not fit: this instance's a, b, c on
  // the host, from the staged witness (a fallback: seconds of this thread,
  // and 3 m Fr of pageable memory until the uploads are done), and this
  // R1cs's later prepares on this prover evaluate on the host. A staging
  // prepared by another prover (the service prepares on any GPU's) lands
  // here too.
  const DeviceR1cs* r1cs_dev = nullptr;
  u32* witness_dev = nullptr;
  std::unique_ptr<Fr[]> fallback_abc;
  if (witness_staged) {
    // The device evaluation writes a, b, c at once: not in two vectors. Later
    // prepares of this R1cs evaluate on the host then (in prepare, off the
    // device thread), until release_workspace.
    if (compact) d.device_r1cs_unfit.store(st.r1cs, std::memory_order_relaxed);
    if (!compact && d.device_r1cs_unfit.load(std::memory_order_relaxed) != st.r1cs) {
      try {
        witness_dev = grow_device(d.witness, st.r1cs->num_variables() * kFrLimbs, "witness");
        const std::size_t arena_bytes = device_.msm_scratch().capacity_bytes();
        const std::size_t arena_limit_bytes = device_.msm_tuning().scratch_limit_bytes;
        const std::size_t keep_free_bytes =
            (arena_limit_bytes > arena_bytes ? arena_limit_bytes - arena_bytes : 0) + kLazyScratchMarginBytes;
        r1cs_dev = &device_r1cs(d, *st.r1cs, keep_free_bytes);
      } catch (const Error&) {  // kOutOfDeviceMemory, or a shape DeviceR1cs refuses
        d.device_r1cs_unfit.store(st.r1cs, std::memory_order_relaxed);
        d.witness.reset();  // its room back to the MSMs (cudaFree waits for the device)
        witness_dev = nullptr;
      }
    }
    if (r1cs_dev == nullptr) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::size_t n_inputs = st.r1cs->num_inputs();
      const std::span<const Fr> wit(st.witness_own.get(), st.r1cs->num_variables());
      if (st.split_on_device) {
        // No device matrices, so no witness there: the host split after all.
        prepare_witness_msms(wit.first(n_inputs), wit.subspan(n_inputs), st.r1cs->a_aux_density(),
                             st.r1cs->b_input_density(), st.r1cs->b_aux_density(), staging);
        st.split_on_device = false;
        grow_split_buffers(d, st);
      }
      fallback_abc = std::make_unique_for_overwrite<Fr[]>(3 * m);
      Fr* abc = fallback_abc.get();
      // Throws UnsatisfiedError (kCheck) with nothing queued.
      groth16::evaluate_into(*st.r1cs, wit.first(n_inputs), wit.subspan(n_inputs), {abc, m}, {abc + m, m},
                             {abc + 2 * m, m}, pool_, st.check);
      st.stats.abc_on_device = false;
      st.stats.abc_fallback = true;
      st.stats.evaluate_ms += ms_since(t0);
    }
  }
  st.device_check = r1cs_dev != nullptr && st.check == groth16::SatisfactionCheck::kCheck;
  if (st.device_check) {
    grow_device(d.first_unsatisfied, 1, "R1CS check word");
    grow_pinned(st.first_unsatisfied, 1);
  }
  grow_pinned(st.results, kMsmSlots * kSlotLimbs);
  if (!st.events || st.events_ordinal != d.ordinal) {
    st.events.reset();
    st.events = std::make_unique<std::array<detail::Event, kStageEvents>>();
    st.events_ordinal = d.ordinal;
  }
  st.meta = {};
  auto& ev = *st.events;

  // Copy stream: a, b, c, then the three splits (those overlap the NTTs),
  // after the previous instance's last use of the workspace.
  const cudaStream_t s = d.compute.get();
  const cudaStream_t cp = d.copy.get();
  if (d.idle_recorded) CUZK_CUDA_CHECK(cudaStreamWaitEvent(cp, d.idle.get(), 0));
  ev[kUploadBegin].record(cp);
  Impl::PendingEnqueue& p = d.pending.emplace();
  p.staging = &staging;
  p.bases = bases;
  p.abc_dev = abc_dev;
  p.witness_dev = witness_dev;
  p.r1cs_dev = r1cs_dev;
  p.compact = compact;
  p.fallback_abc = std::move(fallback_abc);
  p.abc_host = p.fallback_abc ? p.fallback_abc.get() : st.abc;
  try {
    if (r1cs_dev != nullptr) {
      // The witness only (32 GiB PoRep: 4.2 GB instead of 12.9); a, b, c are
      // evaluated from it on the compute stream, which then holds their
      // "uploaded" events (h_upload_ms: witness upload + mat-vec).
      upload(cp, witness_dev, st.witness_own.get(), st.r1cs->num_variables() * sizeof(Fr));
      ev[kUploadedC].record(cp);
      CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[kUploadedC].get(), 0));
      if (st.split_on_device) {
        // The counts' totals come back to the host: the next step, once the
        // device has passed this fence, sizes and fills the split.
        count_split_on_device(d, s, witness_dev, *r1cs_dev);
        p.counted_at = std::chrono::steady_clock::now();
        p.at = Impl::PendingEnqueue::At::kSplitFill;
        return step_at_fence(st, s, callbacks_, t_begin);
      }
    }
    st.stats.enqueue_ms += ms_since(t_begin);
    return enqueue_rest(staging);
  } catch (...) {
    abandon_enqueue(staging);
    throw;
  }
}

GpuProver::EnqueueStep GpuProver::enqueue_continue(ProveStaging& staging) {
  ProveStaging::Impl& st = staging.impl();
  Impl& d = *impl_;
  if (!d.pending || d.pending->staging != &staging) staging::misuse("enqueue_continue without its enqueue_start");
  if (!st.fence.ready()) staging::misuse("enqueue_continue before its step's fence passed");
  DeviceGuard guard(d.ordinal);
  try {
    return d.pending->at == Impl::PendingEnqueue::At::kSplitFill ? enqueue_split_fill(staging) : enqueue_rest(staging);
  } catch (...) {
    abandon_enqueue(staging);
    throw;
  }
}

bool GpuProver::enqueue_pending() const { return impl_->pending.has_value(); }

void GpuProver::abandon_enqueue(ProveStaging& staging) {
  Impl& d = *impl_;
  d.pending.reset();  // pageable a, b, c of a fallback: their copies were waited for, or never queued
  // The staging's pinned buffers may still be read or written by what was
  // queued on either stream: its fence follows both.
  detail::Event copy_done;
  copy_done.record(d.copy.get());
  CUZK_CUDA_CHECK(cudaStreamWaitEvent(d.compute.get(), copy_done.get(), 0));
  staging.impl().fence = detail::enqueue_fence(d.compute.get(), callbacks_);
}

// The split's counts are in split_totals (the device passed the step's fence).
GpuProver::EnqueueStep GpuProver::enqueue_split_fill(ProveStaging& staging) {
  const auto t0 = std::chrono::steady_clock::now();
  ProveStaging::Impl& st = staging.impl();
  Impl& d = *impl_;
  Impl::PendingEnqueue& p = *d.pending;
  st.stats.split_wait_ms = std::chrono::duration<double, std::milli>(t0 - p.counted_at).count();
  const cudaStream_t s = d.compute.get();
  const bool lists_copied = fill_split_on_device(d, st, s, p.witness_dev, *p.r1cs_dev, p.bases,
                                                 options_.witness_split == WitnessScalarSplit::kAuto);
  if (lists_copied) {
    // The streamed passes read the index lists on the host: the MSMs are
    // queued once their copies have landed.
    p.at = Impl::PendingEnqueue::At::kWitnessMsms;
    return step_at_fence(st, s, callbacks_, t0);
  }
  st.stats.enqueue_ms += ms_since(t0);
  return enqueue_rest(staging);
}

// Everything after the split: a, b, c, the H stage, every MSM, the fence.
GpuProver::EnqueueStep GpuProver::enqueue_rest(ProveStaging& staging) {
  using namespace staging;
  const auto t0 = std::chrono::steady_clock::now();
  ProveStaging::Impl& st = staging.impl();
  Impl& d = *impl_;
  Impl::PendingEnqueue p = std::move(*d.pending);
  d.pending.reset();
  const int log_m = st.log_m;
  const std::size_t m = std::size_t{1} << log_m;
  const DeviceSrsBases& bases = p.bases;
  u32* const abc_dev = p.abc_dev;
  const bool compact = p.compact;
  auto& ev = *st.events;
  const cudaStream_t s = d.compute.get();
  const cudaStream_t cp = d.copy.get();
  // Reported by CUDA's callback thread when the device reaches the stage.
  auto device_stage = [&](const char* name) { queue_stage_report(stage_observer_, callbacks_, s, name); };

  if (p.r1cs_dev != nullptr) {
    // The check word: one per prover, as instances run in order on `s`
    // (reset, mat-vec, download into this staging's pinned word, which
    // finish reads after the fence).
    std::uint64_t* check_word = st.device_check ? d.first_unsatisfied.get() : nullptr;
    if (check_word != nullptr) DeviceR1cs::reset_first_unsatisfied(s, check_word);
    p.r1cs_dev->evaluate(s, p.witness_dev, abc_dev, abc_dev + m * kFrLimbs, abc_dev + 2 * m * kFrLimbs, m, check_word);
    if (check_word != nullptr) {
      CUZK_CUDA_CHECK(
          cudaMemcpyAsync(st.first_unsatisfied.get(), check_word, sizeof(std::uint64_t), cudaMemcpyDeviceToHost, s));
    }
    for (int k = 0; k < 3; ++k) ev[kUploadedA + k].record(s);
  } else {
    // Two vectors: only a now; queue_h_compact uploads b and c as room frees.
    for (int k = 0; k < (compact ? 1 : 3); ++k) {
      upload(cp, abc_dev + k * m * kFrLimbs, p.abc_host + k * m, m * sizeof(Fr));
      ev[kUploadedA + k].record(cp);
    }
    // Pageable memory is freed when this returns: wait for its copies.
    if (p.fallback_abc && !compact) d.copy.sync();
  }
  for (int k = 0; k < kWitnessMsms && st.split_on_device; ++k) ev[kSplitUploaded + k].record(s);
  for (int k = 0; k < kWitnessMsms && !st.split_on_device; ++k) {
    const WitnessMsmHost& h = st.msm[k];
    Impl::SplitDevice& dev = d.split[k];
    if (h.counts.split) {
      upload(cp, dev.ones.get(), h.ones.get(), h.counts.ones * 4);
      upload(cp, dev.tail_idx.get(), h.tail_idx.get(), h.counts.tail * 4);
      upload(cp, dev.values.get(), h.values.get(), h.counts.tail * sizeof(Fr));
    } else {
      upload(cp, dev.values.get(), h.values.get(), h.n * sizeof(Fr));
    }
    ev[kSplitUploaded + k].record(cp);
  }

  // Compute stream: H = (a b - c) / Z over the coset, back to coefficients.
  device_stage("h_ntt");
  // (kUploadedC is recorded inside queue_h_compact, after this wait.)
  CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[options_.h_uploads_first && !compact ? kUploadedC : kUploadedA].get(), 0));
  ev[kHBegin].record(s);
  const u32* h_scalars = m <= 1    ? nullptr
                         : compact ? queue_h_compact(abc_dev, log_m, p.abc_host, staging)
                                   : queue_h(abc_dev, log_m, staging);
  ev[kHEnd].record(s);
  // Pageable a, b, c (the fallback) must outlive b's and c's copies, which
  // wait for the transforms: this waits most of the H stage (first proof only).
  if (p.fallback_abc && compact) d.copy.sync();

  // H over h: m - 1 scalars straight from the coset iNTT's output.
  device_stage("h_msm");
  const kernels::MsmWindows hw = Group<ff::Fp>::msm(device_, s, bases.h, h_scalars, m - 1, st.slot(kSlotH));
  st.meta[kSlotH].window_bits = hw.window_bits;
  st.meta[kSlotH].windows = hw.windows;
  ev[kHMsmEnd].record(s);

  device_stage("l_msm");
  CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[kSplitUploaded + int{kL}].get(), 0));
  queue_witness_msm<ff::Fp>(device_, d, s, bases.l, st.msm[kL], d.split[kL], st.slot(kSlotL), st.meta[kSlotL]);
  ev[kLEnd].record(s);

  device_stage("a_msm");
  CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[kSplitUploaded + int{kA}].get(), 0));
  queue_witness_msm<ff::Fp>(device_, d, s, bases.a, st.msm[kA], d.split[kA], st.slot(kSlotA), st.meta[kSlotA]);
  ev[kAEnd].record(s);

  device_stage("b_msm");
  CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[kSplitUploaded + int{kB}].get(), 0));
  queue_witness_msm<ff::Fp>(device_, d, s, bases.b_g1, st.msm[kB], d.split[kB], st.slot(kSlotBG1), st.meta[kSlotBG1]);
  queue_witness_msm<ff::Fp2>(device_, d, s, bases.b_g2, st.msm[kB], d.split[kB], st.slot(kSlotBG2), st.meta[kSlotBG2]);
  ev[kBEnd].record(s);

  d.idle.record(s);
  d.idle_recorded = true;
  st.fence = detail::enqueue_fence(s, callbacks_);
  st.step = Step::kEnqueued;
  st.stats.enqueue_ms += ms_since(t0);
  return {st.fence, false};
}

// The H stage's NTT pipeline on the compute stream over the workspace's a, b,
// c (each waits for its upload). Returns the device address of the m - 1
// coefficients of H (followed by one more element). The NTT tables are the
// Device's (gpu/ntt/ntt_tables.hpp).
const u32* GpuProver::queue_h(u32* abc_dev, int log_m, ProveStaging& staging) {
  using namespace staging;
  const ProveStaging::Impl& st = staging.impl();
  const std::size_t m = std::size_t{1} << log_m;
  const detail::NttTables& t = detail::ntt_tables(device_, log_m);
  const cudaStream_t s = impl_->compute.get();
  u32* v[3] = {abc_dev, abc_dev + m * kFrLimbs, abc_dev + 2 * m * kFrLimbs};
  u32 z_inv[8];
  std::memcpy(z_inv, &t.vanishing_inv, sizeof(z_inv));
  if (h_stage_out_of_place(log_m)) {
    // Lean radix-4 passes out of place between v[k] and the workspace's fourth
    // vector, each transform's bit reversal and scaling fused into its last
    // pass (no bit-reversal pass: the in-place path runs 7, ~8 ms each at
    // 2^27 on the H200).
    // Six transforms, not seven: Z is the constant g^m - 1 on the coset and
    // the coset iNTT is linear, so H = iNTT_g(A B) / Z - iNTT_g(C) / Z, and
    // iNTT_g of c's coset evaluations is c's coefficients, iNTT(c). c needs
    // no coset evaluations then (one transform of 3 passes less at 2^27, and
    // no quotient pass); the product rides on the coset iNTT's first load,
    // the subtraction on its last store.
    u32* spare = abc_dev + 3 * m * kFrLimbs;
    const u32* tw = t.twiddles.get();
    for (int k = 0; k < 2; ++k) {
      CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, st.event(StageEvent(kUploadedA + k)), 0));
      coset_evaluations_via_spare(s, v[k], spare, t, log_m);
    }
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, st.event(kUploadedC), 0));
    // c's coefficients over Z into spare.
    kernels::LeanNttIo c_io;
    c_io.out = spare;
    c_io.store_scale = t.inv_size_z();
    kernels::ntt_lean_dif(s, v[2], tw, log_m, /*inverse=*/true, c_io);
    // H: A B loaded, the coset iNTT scaled by (m Z)^-1 g^-j, minus c / Z,
    // into v[1] (its first pass has read B before the last one writes).
    kernels::LeanNttIo h_io;
    h_io.load_mul = v[1];
    h_io.out = v[1];
    h_io.store_scale = t.coset_inv_z();
    h_io.store_sub = spare;
    kernels::ntt_lean_dif(s, v[0], tw, log_m, /*inverse=*/true, h_io);
    return v[1];
  }
  // Below 2^6: radix-2 in place, 7 transforms and the quotient kernel.
  for (int k = 0; k < 3; ++k) {
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, st.event(StageEvent(kUploadedA + k)), 0));
    coset_evaluations_in_place(s, v[k], t, log_m);
  }
  groth16_kernels::quotient_on_coset(s, v[0], v[1], v[2], z_inv, m);
  // Coset iNTT: back to coefficients, scaled by m^-1 g^-i.
  detail::ntt_dif(s, v[0], t.twiddles.get(), log_m, /*inverse=*/true);
  kernels::ntt_bitrev_scale(s, v[0], log_m, t.coset_inv_hi.get(), t.coset_inv_lo.get(), t.coset_lo_bits);
  return v[0];
}

// The H stage in two device vectors v0, v1 (GpuProverOptions::compact_h_stage),
// a, b, c uploaded from abc_host one after another as the transforms free
// room: A = coset evaluations of a in v0 (lean passes out of place through
// v1 as the spare); b into v1, B in place (DIF, then the bit reversals);
// -iNTT_g(A B) / Z into v1 (the product on the first load, read before the
// last pass writes v1); c into v0, and its iNTT's last pass stores
// -c / Z - v1 = iNTT_g(A B) / Z - c / Z = H into v1 (the identity in queue_h).
// Six transforms as in queue_h plus two bit-reversal passes; the uploads of
// b and c do not overlap the transforms.
const u32* GpuProver::queue_h_compact(u32* abc_dev, int log_m, const Fr* abc_host, ProveStaging& staging) {
  using namespace staging;
  ProveStaging::Impl& st = staging.impl();
  auto& ev = *st.events;
  const std::size_t m = std::size_t{1} << log_m;
  const detail::NttTables& t = detail::ntt_tables(device_, log_m);
  const cudaStream_t s = impl_->compute.get();
  const cudaStream_t cp = impl_->copy.get();
  u32* v0 = abc_dev;
  u32* v1 = abc_dev + m * kFrLimbs;
  const u32* tw = t.twiddles.get();
  // The copy stream's upload of src into dst once the compute stream is done with dst.
  const auto upload_after = [&](u32* dst, const Fr* src, StageEvent uploaded) {
    detail::Event free_now;  // released by CUDA once passed (cudaEventDestroy semantics)
    free_now.record(s);
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(cp, free_now.get(), 0));
    upload(cp, dst, src, m * sizeof(Fr));
    ev[uploaded].record(cp);
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[uploaded].get(), 0));
  };

  CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, ev[kUploadedA].get(), 0));
  coset_evaluations_via_spare(s, v0, v1, t, log_m);
  upload_after(v1, abc_host + m, kUploadedB);
  coset_evaluations_in_place(s, v1, t, log_m);

  kernels::LeanNttIo ab_io;
  ab_io.load_mul = v1;
  ab_io.out = v1;
  ab_io.store_scale = t.neg_coset_inv_z();
  kernels::ntt_lean_dif(s, v0, tw, log_m, /*inverse=*/true, ab_io);

  upload_after(v0, abc_host + 2 * m, kUploadedC);
  kernels::LeanNttIo c_io;
  c_io.out = v1;
  c_io.store_scale = t.neg_inv_size_z();
  c_io.store_sub = v1;  // each element read, then written, by one thread of the last pass
  kernels::ntt_lean_dif(s, v0, tw, log_m, /*inverse=*/true, c_io);
  return v1;
}

groth16::MsmResults GpuProver::finish_msms(ProveStaging& staging) const {
  using namespace staging;
  ProveStaging::Impl& st = staging.impl();
  if (st.step != Step::kEnqueued) misuse("finish of an instance not enqueued");
  st.fence.wait();
  {
    // Device times between the stage events (all passed: they precede the fence).
    DeviceGuard guard(st.events_ordinal);
    auto ms = [&st](StageEvent a, StageEvent b) {
      float v = 0;
      CUZK_CUDA_CHECK(cudaEventElapsedTime(&v, st.event(a), st.event(b)));
      return double(v);
    };
    GpuProveStats& x = st.stats;
    x.h_upload_ms = ms(kUploadBegin, kUploadedC);
    x.h_gpu_ms = ms(kHBegin, kHEnd);
    x.h_ms = ms(kUploadBegin, kHEnd);
    x.h_msm_ms = ms(kHEnd, kHMsmEnd);
    x.l_msm_ms = ms(kHMsmEnd, kLEnd);
    x.a_msm_ms = ms(kLEnd, kAEnd);
    x.b_msm_ms = ms(kAEnd, kBEnd);
    x.device_ms = ms(kUploadBegin, kBEnd);
  }
  // The device's satisfaction check (the mat-vec wrote the smallest failing
  // row before the fence): the same typed error as the host check, so the
  // witness is blamed, not the device. The MSMs ran on a witness that does
  // not satisfy the circuit: their results are dropped.
  if (st.device_check) {
    const std::uint64_t row = st.first_unsatisfied.get()[0];
    if (row != kAllRowsSatisfied) {
      st.step = Step::kIdle;
      throw groth16::UnsatisfiedError(static_cast<std::size_t>(row));
    }
  }
  groth16::MsmResults r;
  r.h = slot_result<ff::Fp>(st.slot(kSlotH), st.meta[kSlotH]);
  r.l = slot_result<ff::Fp>(st.slot(kSlotL), st.meta[kSlotL]);
  r.a = slot_result<ff::Fp>(st.slot(kSlotA), st.meta[kSlotA]);
  r.b_g1 = slot_result<ff::Fp>(st.slot(kSlotBG1), st.meta[kSlotBG1]);
  r.b_g2 = slot_result<ff::Fp2>(st.slot(kSlotBG2), st.meta[kSlotBG2]);
  st.step = Step::kIdle;
  return r;
}

groth16::Proof GpuProver::finish(const ResidentSrs& srs, ProveStaging& staging,
                                 const groth16::Blinding& blinding) const {
  return finish(srs.params().vk, staging, blinding);
}

groth16::Proof GpuProver::finish(const groth16::VerifyingKey& vk, ProveStaging& staging,
                                 const groth16::Blinding& blinding) const {
  stage("assemble", 0);
  const auto t0 = std::chrono::steady_clock::now();
  const groth16::MsmResults r = finish_msms(staging);
  groth16::Proof proof = groth16::assemble_proof(vk, r, blinding);
  staging.impl().stats.assemble_ms = ms_since(t0);
  return proof;
}

// ---- Blocking entry points, on the three steps ---------------------------------

std::vector<Fr> GpuProver::compute_h(const groth16::R1cs& r1cs, const groth16::Witness& w,
                                     groth16::SatisfactionCheck check) {
  using namespace staging;
  check_witness(r1cs, w);
  const int log_m = log_domain(r1cs);
  const std::size_t m = std::size_t{1} << log_m;
  ProveStaging& staging = own_staging();
  ProveStaging::Impl& st = staging.impl();
  st.begin_prepare();
  Fr* abc = grow_pinned(st.abc_own, 3 * m);
  groth16::evaluate_into(r1cs, w.inputs, w.aux, {abc, m}, {abc + m, m}, {abc + 2 * m, m}, pool_, check);
  std::vector<Fr> h(m - 1);
  if (m == 1) return h;
  DeviceGuard guard(impl_->ordinal);
  Impl& d = *impl_;
  const std::size_t abc_vectors = h_stage_out_of_place(log_m) ? 4 : 3;
  u32* abc_dev = grow_device(d.abc, abc_vectors * m * kFrLimbs, "a, b, c");
  if (!st.events) {
    st.events = std::make_unique<std::array<detail::Event, kStageEvents>>();
    st.events_ordinal = d.ordinal;
  }
  const cudaStream_t cp = d.copy.get();
  if (d.idle_recorded) CUZK_CUDA_CHECK(cudaStreamWaitEvent(cp, d.idle.get(), 0));
  for (int k = 0; k < 3; ++k) {
    upload(cp, abc_dev + k * m * kFrLimbs, abc + k * m, m * sizeof(Fr));
    (*st.events)[kUploadedA + k].record(cp);
  }
  const u32* dh = queue_h(abc_dev, log_m, staging);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(h.data(), dh, (m - 1) * sizeof(Fr), cudaMemcpyDeviceToHost, d.compute.get()));
  d.compute.sync();
  return h;
}

groth16::MsmResults GpuProver::device_stages(const DeviceSrsBases& bases, const DeviceStageInputs& in) {
  const int log_m = in.log_m;
  const std::size_t m = std::size_t{1} << log_m;
  if (log_m < 0 || log_m > kLogDomainMax || in.abc.size() != 3 * m || in.a_aux_density == nullptr ||
      in.b_input_density == nullptr || in.b_aux_density == nullptr ||
      bases.a_count != in.inputs.size() + in.a_aux_density->popcount() ||
      bases.b_count != in.b_input_density->popcount() + in.b_aux_density->popcount()) {
    throw Error(ErrorKind::kInvalidArgument, "device_stages: inconsistent shapes");
  }
  ProveStaging& staging = own_staging();
  ProveStaging::Impl& st = staging.impl();
  st.begin_prepare();
  prepare_witness_msms(in.inputs, in.aux, *in.a_aux_density, *in.b_input_density, *in.b_aux_density, staging);
  st.abc = in.abc.data();  // the caller's: valid until we return
  st.log_m = log_m;
  enqueue(bases, staging).wait();
  const groth16::MsmResults r = finish_msms(staging);
  last_stats_ = st.stats;
  st.abc = nullptr;
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
  ProveStaging& staging = own_staging();
  std::vector<groth16::Proof> out;
  out.reserve(witnesses.size());
  for (std::size_t i = 0; i < witnesses.size(); ++i) {
    prepare(r1cs, witnesses[i], staging, options_.satisfaction);
    enqueue(srs, staging).wait();
    out.push_back(finish(srs, staging, blinding[i]));
    last_stats_ = staging.stats();
  }
  return out;
}

std::vector<groth16::Proof> GpuProver::prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                             std::span<const groth16::Witness> witnesses,
                                             std::span<const groth16::Blinding> blinding) {
  // Shape errors first: a bad request must not evict or upload an SRS.
  for (const groth16::Witness& w : witnesses) groth16::check_inputs(params, r1cs, w);
  return prove(cache_srs(params, &r1cs), r1cs, witnesses, blinding);
}

AbcSource GpuProver::abc_source_for(const groth16::R1cs& r1cs) const {
  if (options_.abc_source != AbcSource::kDevice || impl_->device_r1cs_unfit.load(std::memory_order_relaxed) == &r1cs) {
    return AbcSource::kHost;
  }
  const groth16::R1cs* resident = impl_->device_r1cs_for.load(std::memory_order_acquire);
  if (resident != nullptr && resident != &r1cs &&
      r1cs.num_constraints() * kSideSrsRatio <= impl_->device_r1cs_rows.load(std::memory_order_relaxed)) {
    return AbcSource::kHost;  // a small circuit beside a large one's matrices
  }
  return AbcSource::kDevice;
}

std::size_t GpuProver::device_r1cs_bytes() const { return impl_->device_r1cs_bytes.load(std::memory_order_relaxed); }

const ResidentSrs& GpuProver::cache_srs(const groth16::Parameters& params, const groth16::R1cs* r1cs) {
  if (impl_->pending) staging::misuse("SRS cached under an enqueue in steps");
  if (cached_srs_ && cached_srs_->matches(params)) return *cached_srs_;
  if (side_srs_ && side_srs_->matches(params)) return *side_srs_;
  const std::size_t side_bytes = ResidentSrs::bytes_for(params);
  if (cached_srs_ && side_bytes * kSideSrsRatio <= cached_srs_->bytes()) {
    // Beside the cached SRS: whole on the device when it fits with the
    // margin, else every base streamed from pinned host memory. Evicting the
    // large set for it would cost the large job far more than streaming costs
    // the small one: on an 80 GB H100, a WinningPoSt's 0.2 GB evicting a
    // 32 GiB PoRep's SRS and matrices cost the next partition 33.7 s of reads
    // and 18 s of uploads, while streaming the WinningPoSt's bases copies
    // ~0.2 GB per proof. Its proofs use the workspace as it is (grown where
    // they need more).
    side_srs_.reset();
    if (device_.free_memory_bytes() >= side_bytes + kSideSrsMarginBytes) {
      try {
        side_srs_ =
            std::make_unique<ResidentSrs>(device_, params, std::numeric_limits<std::size_t>::max(), SrsOverflow::kFail);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kOutOfDeviceMemory) throw;
      }
    }
    if (!side_srs_) side_srs_ = std::make_unique<ResidentSrs>(device_, params, 0, SrsOverflow::kStreamFromHost);
    ++srs_uploads_;
    return *side_srs_;
  }
  {
    // A small cached SRS replaced by a large one stays as the side SRS when
    // the large one still fits whole beside it: a WinningPoSt proved before
    // a SnapDeals job otherwise uploaded its 0.24 GB again during it (622 ms
    // on an H100, bench/RESULTS.md).
    std::unique_ptr<ResidentSrs> kept;
    if (cached_srs_ && cached_srs_->pinned_bytes() == 0 && cached_srs_->bytes() * kSideSrsRatio <= side_bytes) {
      kept = std::move(cached_srs_);
    }
    side_srs_.reset();
    if (cached_srs_ || kept) {
      // The workspace was sized for the old circuit: give the device all of
      // its memory for the new bases.
      cached_srs_.reset();
      release_workspace();
    }
    const std::size_t abc_bytes =
        r1cs != nullptr && abc_source_for(*r1cs) == AbcSource::kDevice ? device_abc_working_bytes(*r1cs) : 0;
    std::size_t budget = srs_device_budget_for(device_, params, options_.srs_device_budget_bytes, abc_bytes);
    if (kept && budget < side_bytes) {
      kept.reset();  // the large set would be streamed in part: it gets the room
      budget = srs_device_budget_for(device_, params, options_.srs_device_budget_bytes, abc_bytes);
    }
    cached_srs_ = std::make_unique<ResidentSrs>(device_, params, budget, SrsOverflow::kStreamFromHost);
    side_srs_ = std::move(kept);
    ++srs_uploads_;
  }
  return *cached_srs_;
}

}  // namespace cuzk::gpu
