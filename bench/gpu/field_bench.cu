// bench_gpu field [--ops-per-thread K] [--waves W] [--reps R]
//
// Each form of the device Montgomery multiplication (gpu/ff/field.cuh: row-wise
// CIOS, even/odd accumulators) for Fp mul, Fp sqr, Fr mul and Fr sqr, and both
// forms of the Fp2 product (three full products "karat3", lazily reduced
// "lazy"; the Fp multiply under both is CUZK_FIELD_MUL's), alone in
// a kernel: every thread runs C independent chains x_c = x_c * y (or x_c^2)
// for K / C iterations (K = 1024 by default), C = 1 (the multiply's latency
// shows: one dependent chain per thread) and C = 4 (throughput: four
// independent multiplies to interleave). The grid is W full waves (default 4)
// of 256-thread blocks at the occupancy the kernel's registers allow; the
// seeds come from device memory and every thread stores its chains' sum, so
// nothing folds away. CUDA events around each launch, median of R (default 5)
// after one warm-up.
//
// Columns: registers per thread and local memory (cudaFuncGetAttributes),
// resident blocks per SM, median ms, Gops/s and ns per op for the whole
// device, and P/clk/SM: 32x32 product pairs per SM clock (Fp mul 2*144+12 =
// 300 P, Fr mul 2*64+8 = 136 P; squarings counted at their own nominal
// N(N-1)/2 + N + N^2 + N: Fp 234, Fr 108), to set against NOTES' measured
// 22.8 P/clk/SM and the 32 P/clk/SM ceiling (64 IMAD/clk/SM). Fp2 rows count
// each form's own products (karat3 3 x 300 = 900, lazy 3 x 144 + 2 x 156 =
// 744), so compare their ns/op, not P/clk/SM. "check" compares each kernel's
// stored sums with the first form's of its group (CIOS; karat3 for Fp2; same
// seeds, same chains): the forms compute the same function, so the bits must agree.
//
// Fr mul has three more forms that only this bench uses (bench/gpu/NOTES.md,
// "The Fr product's pipes"): "f64" (bench/gpu/fr_f64.cuh, the
// products on the FP64 pipe), "kara" (bench/gpu/fr_karatsuba.cuh, 48 of the
// 64 a*b product pairs) and "hybrid" (chains in pairs, one even/odd product and
// one f64 product each, so that the IMAD and FP64 pipes run side by side).
#include "field_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "fr_f64.cuh"
#include "fr_karatsuba.cuh"

namespace cuzk::bench {
namespace {

using gpu::dev::Fp;
using gpu::dev::Fp2;
using gpu::dev::Fr;
using gpu::dev::MulForm;
using gpu::dev::u32;

constexpr int kThreads = 256;
constexpr int kSeedCount = 4096;  // elements per field in the seed table (power of 2)

// kMulKaratsuba3 / kMulLazy: the Fp2 product forms (F = Fp2, MulForm unused).
enum class Op { kMul, kSqr, kMulKaratsuba3, kMulLazy };

template <Op op, MulForm form, class F>
__device__ __forceinline__ F apply(const F& x, const F& y) {
  if constexpr (op == Op::kMulKaratsuba3) {
    return F::mul_karatsuba3(x, y);
  } else if constexpr (op == Op::kMulLazy) {
    return F::mul_lazy(x, y);
  } else if constexpr (op == Op::kMul) {
    if constexpr (form == MulForm::kCios) {
      return F::mul_cios(x, y);
    } else {
      return F::mul_evenodd(x, y);
    }
  } else {
    if constexpr (form == MulForm::kCios) {
      return x.sqr_cios();
    } else {
      return x.sqr_evenodd();
    }
  }
}

namespace f64x = gpu::dev::f64x;

// The bench-only Fr forms: prepare(y) is the multiplier as a table would hold
// it, mul(x, prepared) the product.
// f64: y scaled by 2^4 (so that a y' 2^-260 = a y 2^-256, the other forms'
// result) and split into 52-bit limbs.
struct F64Form {
  __device__ static f64x::F52 prepare(Fr y) {
#pragma unroll
    for (int i = 0; i < 4; ++i) y = y + y;
    return f64x::to_f52(y.l);
  }
  __device__ static Fr mul(const Fr& x, const f64x::F52& y) {
    Fr r;
    f64x::mul(x.l, y, r.l);
    return r;
  }
};
// kara: y's halves and their sum.
struct KaraForm {
  __device__ static gpu::dev::kara::Split prepare(const Fr& y) { return gpu::dev::kara::split(y); }
  __device__ static Fr mul(const Fr& x, const gpu::dev::kara::Split& y) { return gpu::dev::kara::mul(x, y); }
};

template <class Form, int kChains>
__global__ void __launch_bounds__(kThreads) fr_form_loop_kernel(const Fr* seeds, Fr* out, int iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  Fr x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = seeds[(t + 977u * c) & (kSeedCount - 1)];
  const auto y = Form::prepare(seeds[(3u * t + 1) & (kSeedCount - 1)]);
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = Form::mul(x[c], y);
  }
  Fr sum = x[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) sum = sum + x[c];
  out[t] = sum;
}

// Hybrid: per pair of chains, one even/odd product (the IMAD pipe) and one
// FP64 product (the FP64 pipe), interleavable by the scheduler.
template <int kPairs>
__global__ void __launch_bounds__(kThreads) hybrid_loop_kernel(const Fr* seeds, Fr* out, int iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  Fr xe[kPairs], xf[kPairs];
#pragma unroll
  for (int c = 0; c < kPairs; ++c) {
    xe[c] = seeds[(t + 977u * (2 * c)) & (kSeedCount - 1)];
    xf[c] = seeds[(t + 977u * (2 * c + 1)) & (kSeedCount - 1)];
  }
  const Fr y = seeds[(3u * t + 1) & (kSeedCount - 1)];
  Fr y16 = y;
#pragma unroll
  for (int i = 0; i < 4; ++i) y16 = y16 + y16;
  const f64x::F52 y52 = f64x::to_f52(y16.l);
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kPairs; ++c) {
      xe[c] = Fr::mul_evenodd(xe[c], y);
      f64x::mul(xf[c].l, y52, xf[c].l);
    }
  }
  Fr sum = xe[0] + xf[0];
#pragma unroll
  for (int c = 1; c < kPairs; ++c) sum = sum + xe[c] + xf[c];
  out[t] = sum;
}

template <class F, Op op, MulForm form, int kChains>
__global__ void __launch_bounds__(kThreads) field_loop_kernel(const F* seeds, F* out, int iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  F x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = seeds[(t + 977u * c) & (kSeedCount - 1)];
  const F y = seeds[(3u * t + 1) & (kSeedCount - 1)];
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = apply<op, form>(x[c], y);
  }
  F sum = x[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) sum = sum + x[c];
  out[t] = sum;
}

struct Case {
  const char* field;
  const char* op;
  const char* form;
  int chains;
  int products;  // nominal 32x32 product pairs per operation
  int limbs;
  const void* kernel;
  void (*launch)(unsigned blocks, cudaStream_t s, const u32* seeds, u32* out, int iters);
};

template <class F, Op op, MulForm form, int kChains>
Case make_case(const char* field, const char* op_name, const char* form_name, int products) {
  auto launch = [](unsigned blocks, cudaStream_t s, const u32* seeds, u32* out, int iters) {
    field_loop_kernel<F, op, form, kChains>
        <<<blocks, kThreads, 0, s>>>(reinterpret_cast<const F*>(seeds), reinterpret_cast<F*>(out), iters);
    CUZK_CUDA_CHECK_LAUNCH();
  };
  return {field,
          op_name,
          form_name,
          kChains,
          products,
          int(sizeof(F) / sizeof(u32)),
          reinterpret_cast<const void*>(&field_loop_kernel<F, op, form, kChains>),
          launch};
}

// A case for one of the bench-only Fr kernels below (f64, hybrid, kara):
// kChains independent products per thread.
template <void (*kKernel)(const Fr*, Fr*, int), int kChains>
Case make_fr_case(const char* form) {
  auto launch = [](unsigned blocks, cudaStream_t s, const u32* seeds, u32* out, int iters) {
    kKernel<<<blocks, kThreads, 0, s>>>(reinterpret_cast<const Fr*>(seeds), reinterpret_cast<Fr*>(out), iters);
    CUZK_CUDA_CHECK_LAUNCH();
  };
  return {"Fr", "mul", form, kChains, 2 * 64 + 8, 8, reinterpret_cast<const void*>(kKernel), launch};
}
template <int kChains>
Case make_f64_case() {
  return make_fr_case<&fr_form_loop_kernel<F64Form, kChains>, kChains>("f64");
}
template <int kPairs>
Case make_hybrid_case() {
  return make_fr_case<&hybrid_loop_kernel<kPairs>, 2 * kPairs>("hybrid");
}
template <int kChains>
Case make_kara_case() {
  return make_fr_case<&fr_form_loop_kernel<KaraForm, kChains>, kChains>("kara");
}

template <class F, Op op>
void add_cases(std::vector<Case>& cases, const char* field, const char* op_name, int products) {
  cases.push_back(make_case<F, op, MulForm::kCios, 1>(field, op_name, "cios", products));
  cases.push_back(make_case<F, op, MulForm::kEvenOdd, 1>(field, op_name, "evenodd", products));
  cases.push_back(make_case<F, op, MulForm::kCios, 4>(field, op_name, "cios", products));
  cases.push_back(make_case<F, op, MulForm::kEvenOdd, 4>(field, op_name, "evenodd", products));
}
// Fp2 products: karat3 (the reference) then lazy, for 1 and 4 chains.
void add_fp2_cases(std::vector<Case>& cases) {
  for (const bool four : {false, true}) {
    cases.push_back(four ? make_case<Fp2, Op::kMulKaratsuba3, gpu::dev::kMulForm, 4>("Fp2", "mul", "karat3", 900)
                         : make_case<Fp2, Op::kMulKaratsuba3, gpu::dev::kMulForm, 1>("Fp2", "mul", "karat3", 900));
    cases.push_back(four ? make_case<Fp2, Op::kMulLazy, gpu::dev::kMulForm, 4>("Fp2", "mul", "lazy", 744)
                         : make_case<Fp2, Op::kMulLazy, gpu::dev::kMulForm, 1>("Fp2", "mul", "lazy", 744));
  }
}

// Random limbs below 2^(32N - 4): under p for both fields (p > 2^380, r > 2^254), so valid inputs.
std::vector<u32> random_limbs(int limbs, std::uint64_t seed, int elements_per_seed = 1) {
  std::mt19937_64 rng(seed);
  std::vector<u32> v(std::size_t(kSeedCount) * elements_per_seed * limbs);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = u32(rng());
    if (i % limbs == std::size_t(limbs - 1)) v[i] >>= 4;
  }
  return v;
}

int option(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int bench_field(gpu::Device& device, int argc, char** argv) {
  const int ops_per_thread = std::max(4, option(argc, argv, "--ops-per-thread", 1024));
  const int waves = std::max(1, option(argc, argv, "--waves", 4));
  const int reps = std::max(1, option(argc, argv, "--reps", 5));
  gpu::detail::DeviceGuard guard(device.info().ordinal);
  int clock_khz = 0;
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device.info().ordinal));
  const int sms = device.info().sm_count;
  std::printf("field bench: %d SMs at %.0f MHz (peak), %d ops per thread, %d waves of %d-thread blocks, median of %d\n",
              sms, clock_khz / 1e3, ops_per_thread, waves, kThreads, reps);

  std::vector<Case> cases;
  add_cases<Fp, Op::kMul>(cases, "Fp", "mul", 2 * 144 + 12);
  add_cases<Fp, Op::kSqr>(cases, "Fp", "sqr", 66 + 12 + 144 + 12);
  cases.push_back(make_case<Fr, Op::kMul, MulForm::kCios, 1>("Fr", "mul", "cios", 2 * 64 + 8));
  cases.push_back(make_case<Fr, Op::kMul, MulForm::kEvenOdd, 1>("Fr", "mul", "evenodd", 2 * 64 + 8));
  cases.push_back(make_f64_case<1>());
  cases.push_back(make_kara_case<1>());
  cases.push_back(make_case<Fr, Op::kMul, MulForm::kCios, 2>("Fr", "mul", "cios", 2 * 64 + 8));
  cases.push_back(make_case<Fr, Op::kMul, MulForm::kEvenOdd, 2>("Fr", "mul", "evenodd", 2 * 64 + 8));
  cases.push_back(make_hybrid_case<1>());
  cases.push_back(make_kara_case<2>());
  cases.push_back(make_case<Fr, Op::kMul, MulForm::kCios, 4>("Fr", "mul", "cios", 2 * 64 + 8));
  cases.push_back(make_case<Fr, Op::kMul, MulForm::kEvenOdd, 4>("Fr", "mul", "evenodd", 2 * 64 + 8));
  cases.push_back(make_f64_case<4>());
  cases.push_back(make_kara_case<4>());
  cases.push_back(make_hybrid_case<2>());
  add_cases<Fr, Op::kSqr>(cases, "Fr", "sqr", 28 + 8 + 64 + 8);
  add_fp2_cases(cases);

  // Fp2 seeds: consecutive pairs of the Fp table (an Fp2 is two Fp): the first kSeedCount are valid.
  const std::vector<u32> fp_seeds = random_limbs(12, 1, 2), fr_seeds = random_limbs(8, 2);
  gpu::detail::DeviceBuffer<u32> d_fp(fp_seeds.size(), "field bench Fp seeds"),
      d_fr(fr_seeds.size(), "field bench Fr seeds");
  CUZK_CUDA_CHECK(cudaMemcpy(d_fp.get(), fp_seeds.data(), fp_seeds.size() * 4, cudaMemcpyHostToDevice));
  CUZK_CUDA_CHECK(cudaMemcpy(d_fr.get(), fr_seeds.data(), fr_seeds.size() * 4, cudaMemcpyHostToDevice));
  gpu::detail::Stream stream;
  gpu::detail::Event begin, end;

  std::printf("\n%-4s %-4s %-8s %6s %5s %5s %6s %9s %9s %9s %9s  %s\n", "fld", "op", "form", "chains", "regs", "lmem",
              "blk/SM", "ms", "Gops/s", "ns/op", "P/clk/SM", "check");
  bool all_agree = true;
  std::vector<u32> reference;  // the CIOS kernel's sums for the current (field, op, chains)
  for (const Case& c : cases) {
    cudaFuncAttributes attr{};
    CUZK_CUDA_CHECK(cudaFuncGetAttributes(&attr, c.kernel));
    int blocks_per_sm = 0;
    CUZK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, c.kernel, kThreads, 0));
    const unsigned blocks = unsigned(std::max(1, blocks_per_sm) * sms * waves);
    const std::size_t threads = std::size_t(blocks) * kThreads;
    const int iters = ops_per_thread / c.chains;
    gpu::detail::DeviceBuffer<u32> out(threads * std::size_t(c.limbs), "field bench out");
    const u32* seeds = c.limbs == 8 ? d_fr.get() : d_fp.get();  // Fp and Fp2 (24 limbs) share the Fp table

    c.launch(blocks, stream.get(), seeds, out.get(), iters);  // warm-up
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      begin.record(stream.get());
      c.launch(blocks, stream.get(), seeds, out.get(), iters);
      end.record(stream.get());
      end.sync();
      float t = 0;
      CUZK_CUDA_CHECK(cudaEventElapsedTime(&t, begin.get(), end.get()));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double med_s = ms[ms.size() / 2] * 1e-3;
    const double ops = double(threads) * iters * c.chains;
    const double p_per_clk_sm = ops * c.products / (med_s * clock_khz * 1e3 * sms);

    std::vector<u32> sums(threads * std::size_t(c.limbs));
    CUZK_CUDA_CHECK(cudaMemcpy(sums.data(), out.get(), sums.size() * 4, cudaMemcpyDeviceToHost));
    std::string check;
    if (std::strcmp(c.form, "cios") == 0 || std::strcmp(c.form, "karat3") == 0) {
      reference = sums;
      check = "reference";
    } else {
      // Same grid only when both kernels have the same occupancy; compare the common prefix.
      const std::size_t n = std::min(reference.size(), sums.size());
      const bool same = n > 0 && std::equal(sums.begin(), sums.begin() + std::ptrdiff_t(n), reference.begin());
      check = same ? "= reference" : "MISMATCH vs reference";
      all_agree = all_agree && same;
    }
    std::printf("%-4s %-4s %-8s %6d %5d %5zu %6d %9.3f %9.2f %9.4f %9.2f  %s\n", c.field, c.op, c.form, c.chains,
                attr.numRegs, attr.localSizeBytes, blocks_per_sm, med_s * 1e3, ops / med_s * 1e-9, med_s * 1e9 / ops,
                p_per_clk_sm, check.c_str());
  }
  std::printf("\nP/clk/SM anchors: NOTES' measured rate 22.8, IMAD ceiling 32 (64 IMAD/clk/SM, 2 per product pair)\n");
  return all_agree ? 0 : 1;
}

}  // namespace cuzk::bench
