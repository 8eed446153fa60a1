// Pippenger MSM over G1 (Fp) and G2 (Fp2), one template over the point field.
//
// 1. digits: each scalar (from Montgomery form) is cut into W = ceil(256/c)
//    signed c-bit digits in [-2^(c-1), 2^(c-1)] (a digit above 2^(c-1) becomes
//    digit - 2^c with a carry into the next window). Bit 255 of a scalar < r is
//    0, so the top window never carries out. Entry (window w, point i) gets the
//    key w << c | |digit| and the value i | sign << 31.
// 2. CUB radix sort of all n*W (key, value) pairs on the low c + log2(W) bits
//    groups points by bucket; a pass over the sorted keys records each
//    bucket's [start, end). Digit-0 entries sort first and are never read.
// 3. accumulation: one thread per (window, bucket) walks its points with
//    XYZZ mixed adds (8M + 2S), negating y for negative digits.
// 4. reduction sum_b b * B_b per window: threads own segments of seg_len
//    buckets and run the running-sum trick from the top bucket down, which
//    gives sum (b - lo + 1) B_b; adding (lo - 1) * (sum of the segment) by
//    double-and-add makes it exact. Then one block per window adds the
//    segment results. The W window sums go back to the host, which combines
//    them by Horner's rule (c doublings per window): one GPU thread took ~7 ms
//    for that chain of ~250 dependent doublings, the host takes well under 1 ms.
#include <cub/device/device_radix_sort.cuh>

#include <bit>
#include <cstring>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/field.cuh"
#include "gpu/kernels.hpp"

namespace cuzk::gpu::kernels {
namespace {

using dev::Fr;
using u64 = std::uint64_t;

constexpr u32 kSignBit = 0x80000000u;
constexpr int kWindowSumThreads = 64;
// Segments in the bucket reduction, all windows together: enough threads to
// fill 132 SMs a few times over.
constexpr u64 kReductionSegmentsTarget = u64{1} << 16;

__global__ void digits_kernel(const Fr* scalars, u64 n, int c, int windows, u32* keys, u32* vals) {
  const u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Fr s = scalars[i].from_mont();
  const u32 full = 1u << c;
  const u32 half = full >> 1;
  u32 carry = 0;
  for (int w = 0; w < windows; ++w) {
    const int bit = w * c;
    const int limb = bit >> 5;
    const int sh = bit & 31;
    u64 v = 0;
    if (limb < 8) {
      v = s.l[limb] >> sh;
      if (sh + c > 32 && limb + 1 < 8) v |= u64(s.l[limb + 1]) << (32 - sh);
    }
    u32 d = u32(v & (full - 1)) + carry;
    const bool neg = d > half;
    if (neg) d = full - d;  // digit d - 2^c, magnitude 2^c - d
    carry = neg ? 1u : 0u;
    keys[u64(w) * n + i] = (u32(w) << c) | d;
    vals[u64(w) * n + i] = u32(i) | (neg ? kSignBit : 0u);
  }
}

__global__ void bucket_bounds_kernel(const u32* keys, u64 total, u32* start, u32* end) {
  const u64 p = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= total) return;
  const u32 k = keys[p];
  if (p == 0 || keys[p - 1] != k) start[k] = u32(p);
  if (p + 1 == total || keys[p + 1] != k) end[k] = u32(p + 1);
}

// ptxas gives the G1 version 130 registers (3 blocks of 128 threads per SM).
// Capping it at 4 or 5 blocks per SM (__launch_bounds__) was measured 13%
// slower on H200 (2^24: 279 ms vs 248 ms of accumulation).
template <class F>
__global__ void __launch_bounds__(128) accumulate_kernel(const dev::Affine<F>* bases, const u32* vals, const u32* start, const u32* end,
                                  int c, u32 buckets_per_window, u32 windows, dev::Xyzz<F>* buckets) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= u64(windows) * buckets_per_window) return;
  const u32 w = u32(t / buckets_per_window);
  const u32 b = u32(t % buckets_per_window) + 1;
  const u32 key = (w << c) | b;
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  const u32 e = end[key];
  for (u32 p = start[key]; p < e; ++p) {
    const u32 v = vals[p];
    const dev::Affine<F> a = bases[v & ~kSignBit];
    const F y = (v & kSignBit) ? -a.y : a.y;
    // The hot loop of the MSM: inline for G1; G2's body is too large to inline.
    if constexpr (sizeof(F) == sizeof(dev::Fp)) {
      acc.add_affine_inline(a.x, y);
    } else {
      acc.add_affine(a.x, y);
    }
  }
  buckets[t] = acc;
}

template <class F>
__global__ void segment_kernel(const dev::Xyzz<F>* buckets, u32 buckets_per_window, u32 seg_len, u32 segments_total,
                               int c, dev::Xyzz<F>* seg_out) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= segments_total) return;
  const u32 segs_per_window = buckets_per_window / seg_len;
  const u32 w = t / segs_per_window;
  const u32 g = t % segs_per_window;
  const u32 lo = g * seg_len + 1;  // bucket values lo .. lo + seg_len - 1
  const dev::Xyzz<F>* bw = buckets + u64(w) * buckets_per_window;
  dev::Xyzz<F> sum = dev::Xyzz<F>::identity();
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u32 b = lo + seg_len - 1; b >= lo; --b) {
    sum.add(bw[b - 1]);  // sum = B_hi + ... + B_b
    acc.add(sum);        // acc gains one more copy of each B_b' with b' >= b
  }
  // acc = sum_b (b - lo + 1) B_b; add (lo - 1) * sum to weight bucket b by b.
  const u32 k = lo - 1;
  dev::Xyzz<F> kx = dev::Xyzz<F>::identity();
  for (int bit = c - 1; bit >= 0; --bit) {
    kx = kx.dbl();
    if ((k >> bit) & 1u) kx.add(sum);
  }
  acc.add(kx);
  seg_out[t] = acc;
}

template <class F>
__global__ void window_sum_kernel(const dev::Xyzz<F>* segs, u32 segs_per_window, dev::Xyzz<F>* window_out) {
  __shared__ dev::Xyzz<F> partial[kWindowSumThreads];
  const u32 w = blockIdx.x;
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u32 j = threadIdx.x; j < segs_per_window; j += kWindowSumThreads) acc.add(segs[u64(w) * segs_per_window + j]);
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (u32 stride = kWindowSumThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      dev::Xyzz<F> a = partial[threadIdx.x];
      a.add(partial[threadIdx.x + stride]);
      partial[threadIdx.x] = a;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) window_out[w] = partial[0];
}

template <class F>
std::vector<u32> msm_run(cudaStream_t s, const u32* bases_raw, const u32* scalars_raw, std::size_t n, int c,
                         MsmPhaseMs* phases) {
  using Point = dev::Xyzz<F>;
  // Events between the phases, read only when the caller asked for timings.
  detail::Event ev[5];
  auto mark = [&](int i) {
    if (phases != nullptr) ev[i].record(s);
  };
  if (n == 0) return {};
  if (c < 2 || c > 24) throw Error(ErrorKind::kInvalidArgument, "msm: window bits out of range");
  const int windows = (256 + c - 1) / c;
  const u32 buckets_per_window = 1u << (c - 1);
  const u64 total = u64(n) * windows;
  if (n >= kSignBit || total >= (u64{1} << 31)) {
    throw Error(ErrorKind::kInvalidArgument, "msm: too many points for one call");
  }
  const auto* bases = reinterpret_cast<const dev::Affine<F>*>(bases_raw);
  const auto* scalars = reinterpret_cast<const Fr*>(scalars_raw);
  const int key_bits = c + std::bit_width(unsigned(windows - 1));
  const u64 key_count = u64(windows) << c;

  detail::DeviceBuffer<u32> start(key_count, "msm bucket starts");
  detail::DeviceBuffer<u32> end(key_count, "msm bucket ends");
  detail::DeviceBuffer<u32> vals_sorted_owner;
  const u32* vals_sorted = nullptr;
  {
    detail::DeviceBuffer<u32> keys(total, "msm keys"), keys_alt(total, "msm keys");
    detail::DeviceBuffer<u32> vals(total, "msm values"), vals_alt(total, "msm values");
    mark(0);
    digits_kernel<<<detail::grid_for(n, 256), 256, 0, s>>>(scalars, n, c, windows, keys.get(), vals.get());
    CUZK_CUDA_CHECK_LAUNCH();
    cub::DoubleBuffer<u32> dk(keys.get(), keys_alt.get());
    cub::DoubleBuffer<u32> dv(vals.get(), vals_alt.get());
    std::size_t temp_bytes = 0;
    CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, dk, dv, int(total), 0, key_bits, s));
    detail::DeviceBuffer<unsigned char> temp(temp_bytes, "msm sort scratch");
    mark(1);
    CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, dk, dv, int(total), 0, key_bits, s));
    CUZK_CUDA_CHECK(cudaMemsetAsync(start.get(), 0, start.bytes(), s));
    CUZK_CUDA_CHECK(cudaMemsetAsync(end.get(), 0, end.bytes(), s));
    bucket_bounds_kernel<<<detail::grid_for(total, 256), 256, 0, s>>>(dk.Current(), total, start.get(), end.get());
    CUZK_CUDA_CHECK_LAUNCH();
    // Keep the sorted values; the other three arrays go when this scope ends
    // (cudaFree waits for the device, so the stream's work has finished).
    if (dv.Current() == vals.get()) {
      vals_sorted_owner = std::move(vals);
    } else {
      vals_sorted_owner = std::move(vals_alt);
    }
    vals_sorted = vals_sorted_owner.get();
  }

  const u64 bucket_count = u64(windows) * buckets_per_window;
  detail::DeviceBuffer<Point> buckets(bucket_count, "msm buckets");
  mark(2);
  accumulate_kernel<F><<<detail::grid_for(bucket_count, 128), 128, 0, s>>>(
      bases, vals_sorted, start.get(), end.get(), c, buckets_per_window, u32(windows), buckets.get());
  CUZK_CUDA_CHECK_LAUNCH();
  mark(3);
  u64 seg_len = 1;
  while (seg_len < buckets_per_window && bucket_count / seg_len > kReductionSegmentsTarget) seg_len *= 2;
  const u32 segs_per_window = u32(buckets_per_window / seg_len);
  const u32 segments_total = segs_per_window * u32(windows);
  detail::DeviceBuffer<Point> segs(segments_total, "msm segments");
  segment_kernel<F><<<detail::grid_for(segments_total, 64), 64, 0, s>>>(buckets.get(), buckets_per_window, u32(seg_len),
                                                                        segments_total, c, segs.get());
  CUZK_CUDA_CHECK_LAUNCH();
  detail::DeviceBuffer<Point> window_sums(windows, "msm window sums");
  window_sum_kernel<F><<<unsigned(windows), kWindowSumThreads, 0, s>>>(segs.get(), segs_per_window, window_sums.get());
  CUZK_CUDA_CHECK_LAUNCH();
  std::vector<u32> result(windows * sizeof(Point) / sizeof(u32));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(result.data(), window_sums.get(), windows * sizeof(Point), cudaMemcpyDeviceToHost, s));
  mark(4);
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  if (phases != nullptr) {
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&phases->digits_ms, ev[0].get(), ev[1].get()));
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&phases->sort_ms, ev[1].get(), ev[2].get()));
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&phases->accumulate_ms, ev[2].get(), ev[3].get()));
    CUZK_CUDA_CHECK(cudaEventElapsedTime(&phases->reduce_ms, ev[3].get(), ev[4].get()));
  }
  return result;
}

}  // namespace

std::vector<u32> msm_g1(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n, int window_bits,
                        MsmPhaseMs* phases) {
  return msm_run<dev::Fp>(s, bases, scalars, n, window_bits, phases);
}

std::vector<u32> msm_g2(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n, int window_bits,
                        MsmPhaseMs* phases) {
  return msm_run<dev::Fp2>(s, bases, scalars, n, window_bits, phases);
}

}  // namespace cuzk::gpu::kernels
