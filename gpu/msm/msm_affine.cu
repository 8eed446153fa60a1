// Batch-affine bucket accumulation (MsmAlgorithm::kBatchAffine).
//
// Why: an XYZZ mixed add costs 8M + 2S (~2868 products for G1). Adding two
// affine points costs 1M + 1S + 1M once the inverse of x2 - x1 is known:
//   lambda = (y2 - y1) / (x2 - x1), x3 = lambda^2 - x1 - x2,
//   y3 = lambda (x1 - x3) - y1,
// and Montgomery's trick shares one inversion among many independent adds:
// with prefix products p_k = d_0 ... d_k, one inverse of the last prefix gives
// every 1/d_k at 3M each (1M forward, 2M backward). So ~5M + 1S per add plus
// the amortized inversion (bench/gpu/NOTES.md, "batch affine": ~34% fewer
// products than XYZZ).
//
// Layout of the work (same entries as the balanced path in msm.cu): the
// chunk's sorted (bucket, point) entries are cut into equal runs of run_len
// entries; every thread owns K runs ("lanes") and keeps one affine
// accumulator per lane in local memory. A block of kThreads threads advances
// all its K * kThreads lanes by one entry per step: each lane's add needs
// 1/d_k, the block multiplies its d_k up a product tree in shared memory,
// thread 0 inverts the root, and the tree hands every thread the inverse of
// its own product. One inversion serves K * kThreads = 1024 G1 adds.
//
// The inversion is a binary extended Euclid (variable time: a few hundred
// cheap shift/subtract steps, far less latency than Fermat's ~450 dependent
// multiplications, which would leave the block idle longer than the step's
// adds take). MSM timing already depends on the scalars through the bucket
// sizes; the bases and the bucket contents are not secret beyond that.
//
// Exceptional cases, each exact (a lane whose step needs no inversion puts 1
// in the tree):
//   point is the identity (0, 0)        -> accumulator unchanged;
//   accumulator empty (a new bucket)    -> accumulator = point;
//   x1 == x2, y1 == y2 != 0             -> doubling: lambda = 3 x1^2 / (2 y1);
//   x1 == x2 otherwise (P + (-P))       -> accumulator = identity.
//
// Buckets stay XYZZ across chunks (msm.cu's reduction is unchanged). When a
// lane's bucket ends it stores its affine sum: in bucket_sums[bucket] if the
// bucket began in this run, else in first_partials[run]. merge_kernel then
// adds, per bucket, its bucket_sums entry and the first partials of the later
// runs it straddles into the XYZZ bucket (XYZZ mixed adds: ~1 per bucket, a
// few % of the accumulation's adds at 2^24).
#include "gpu/msm/msm_affine.hpp"

#include <algorithm>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/ff/field.cuh"
#include "gpu/ff/inverse.cuh"

namespace cuzk::gpu::kernels::affine {
namespace {

using dev::Fp;
using dev::Fp2;
using dev::u32;
using u64 = std::uint64_t;
using dev::inversion::inverse;

constexpr u32 kSignBit = 0x80000000u;
// Threads per block: the product tree has 2 * kThreads nodes in shared memory
// (12 KiB for G1, 24 KiB for G2).
constexpr int kThreads = 128;
// Lanes (independent runs) per thread: K * kThreads adds per inversion.
// Local memory per lane: accumulator + point + prefix = 240 B (G1), 480 B (G2).
template <class F>
constexpr int kLanes = sizeof(F) == sizeof(Fp) ? 8 : 4;

// ---- Accumulation -----------------------------------------------------------

__device__ __forceinline__ u64 bucket_index(u32 key, int c, u32 buckets_per_window) {
  return u64(key >> c) * buckets_per_window + (key & ((1u << c) - 1)) - 1;
}

// Lane k of thread t in block b owns run r = (b K + k) kThreads + t: entries
// [r run_len, min(r run_len + run_len, nonzero)). Every thread of the block
// runs run_len steps (the block synchronizes in each), empty lanes included.
template <class F, int K>
__global__ void __launch_bounds__(kThreads, sizeof(F) == sizeof(Fp) ? 4 : 2)
    accumulate_affine_kernel(const dev::Affine<F>* bases, const u32* keys, const u32* vals, const u32* nonzero,
                             u32 run_len, int c, u32 buckets_per_window, dev::Affine<F>* bucket_sums,
                             dev::Affine<F>* first_partials) {
  using A = dev::Affine<F>;
  __shared__ F tree[2 * kThreads];  // node i has children 2i, 2i + 1; leaves at kThreads + t
  const u32 tid = threadIdx.x;
  const u32 nz = *nonzero;
  A acc[K];
  A pt[K];    // the point being added this step
  F pre[K];   // exclusive prefix product of the thread's d's this step
  u32 lo[K], hi[K], cur[K];
  u32 before = 0;  // bit k: lane k's current bucket began before its run
#pragma unroll 1
  for (int k = 0; k < K; ++k) {
    const u64 r = (u64(blockIdx.x) * K + k) * kThreads + tid;
    const u64 l = r * run_len;
    lo[k] = l < nz ? u32(l) : nz;
    hi[k] = u32(min(l + u64(run_len), u64(nz)));
    if (lo[k] < hi[k]) {
      cur[k] = keys[lo[k]];
      if (lo[k] > 0 && keys[lo[k] - 1] == cur[k]) before |= 1u << k;
    } else {
      cur[k] = 0;
    }
    acc[k].x = F::zero();
    acc[k].y = F::zero();
  }
  // Stores lane k's finished accumulator where merge_kernel finds it.
  auto flush = [&](int k) {
    if ((before >> k) & 1u) {
      first_partials[lo[k] / run_len] = acc[k];
    } else {
      bucket_sums[bucket_index(cur[k], c, buckets_per_window)] = acc[k];
    }
  };

  for (u32 j = 0; j < run_len; ++j) {
    // 1. Classify each lane's step; the lanes that add multiply their
    //    denominator into the thread's running product.
    u32 add_mask = 0, dbl_mask = 0;
    F run = F::one();
#pragma unroll 1
    for (int k = 0; k < K; ++k) {
      const u32 q = lo[k] + j;
      if (q >= hi[k]) continue;
      const u32 key = keys[q];
      const u32 v = vals[q];
      if (key != cur[k]) {
        flush(k);
        acc[k].x = F::zero();
        acc[k].y = F::zero();
        cur[k] = key;
        before &= ~(1u << k);  // this bucket starts inside the run
      }
      A p = bases[v & ~kSignBit];
      if (v & kSignBit) p.y = -p.y;  // -(0, 0) stays (0, 0)
      if (p.is_identity()) continue;
      const A a = acc[k];
      if (a.is_identity()) {
        acc[k] = p;
      } else if (a.x != p.x) {
        add_mask |= 1u << k;
        pt[k] = p;
        pre[k] = run;
        run = run * (p.x - a.x);
      } else if (a.y == p.y && !a.y.is_zero()) {
        dbl_mask |= 1u << k;
        pt[k] = p;
        pre[k] = run;
        run = run * a.y.dbl();
      } else {
        acc[k].x = F::zero();  // P + (-P) (or 2P with y = 0): the identity
        acc[k].y = F::zero();
      }
    }

    // 2. Inverse of every thread's product through the block's product tree.
    tree[kThreads + tid] = run;
    for (u32 m = kThreads / 2; m >= 1; m >>= 1) {
      __syncthreads();
      if (tid < m) tree[m + tid] = tree[2 * (m + tid)] * tree[2 * (m + tid) + 1];
    }
    __syncthreads();
    if (tid == 0) tree[1] = inverse(tree[1]);
    // A node's inverse gives its children's: 1/a = (1/(ab)) b, 1/b = (1/(ab)) a.
    for (u32 m = 1; m < kThreads; m <<= 1) {
      __syncthreads();
      if (tid < m) {
        const u32 node = m + tid;
        const F inv_node = tree[node];
        const F left = tree[2 * node];
        const F right = tree[2 * node + 1];
        tree[2 * node] = inv_node * right;
        tree[2 * node + 1] = inv_node * left;
      }
    }
    __syncthreads();
    // Each thread reads only its own leaf; the next step's first write to the
    // tree is its own leaf too, and every other write follows a barrier.
    F inv = tree[kThreads + tid];

    // 3. Backwards over the lanes: 1/d_k = inv * pre[k] with inv = 1 / (d_0 ... d_k),
    //    then inv *= d_k for the lanes below; finish each add.
#pragma unroll 1
    for (int k = K - 1; k >= 0; --k) {
      const u32 bit = 1u << k;
      if (((add_mask | dbl_mask) & bit) == 0) continue;
      const bool dbl = (dbl_mask & bit) != 0;
      const A a = acc[k];
      const A p = pt[k];
      const F inv_k = inv * pre[k];
      if ((add_mask | dbl_mask) & (bit - 1)) inv = inv * (dbl ? a.y.dbl() : p.x - a.x);
      F num;
      if (dbl) {
        const F x2 = a.x.sqr();
        num = x2.dbl() + x2;  // 3 x^2 (a = 0)
      } else {
        num = p.y - a.y;
      }
      const F lambda = num * inv_k;
      A r;
      r.x = lambda.sqr() - a.x - p.x;  // p.x = a.x when doubling: x3 = lambda^2 - 2x
      r.y = lambda * (a.x - r.x) - a.y;
      acc[k] = r;
    }
  }
#pragma unroll 1
  for (int k = 0; k < K; ++k) {
    if (lo[k] < hi[k]) flush(k);
  }
}

// Per bucket with entries in this chunk: running XYZZ value + the sum from
// the run where the bucket starts + the first partials of the later runs it
// reaches into.
template <class F>
__global__ void merge_kernel(const u32* start, const u32* end, u32 run_len, int c, u32 buckets_per_window,
                             u32 windows, dev::Xyzz<F>* buckets, const dev::Affine<F>* bucket_sums,
                             const dev::Affine<F>* first_partials) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= u64(windows) * buckets_per_window) return;
  const u32 w = u32(t / buckets_per_window);
  const u32 b = u32(t % buckets_per_window) + 1;
  const u32 key = (w << c) | b;
  const u32 s = start[key], e = end[key];
  if (s == e) return;  // no entry in this chunk (bounds were zeroed)
  dev::Xyzz<F> acc = buckets[t];
  const dev::Affine<F> own = bucket_sums[t];
  acc.add_affine(own.x, own.y);
  for (u64 r = s / run_len + 1; r * run_len < e; ++r) {
    const dev::Affine<F> part = first_partials[r];
    acc.add_affine(part.x, part.y);
  }
  buckets[t] = acc;
}

template <class F>
void launch(cudaStream_t s, const ChunkArgs& a) {
  constexpr int K = kLanes<F>;
  if (a.total == 0 || a.runs_max == 0) return;
  const u64 run_len = (a.total + a.runs_max - 1) / a.runs_max;
  const u64 runs = (a.total + run_len - 1) / run_len;  // <= runs_max
  const u64 per_block = u64(kThreads) * K;
  const u64 blocks = (runs + per_block - 1) / per_block;
  const auto* bases = reinterpret_cast<const dev::Affine<F>*>(a.bases);
  auto* sums = static_cast<dev::Affine<F>*>(a.bucket_sums);
  auto* partials = static_cast<dev::Affine<F>*>(a.first_partials);
  accumulate_affine_kernel<F, K><<<unsigned(blocks), kThreads, 0, s>>>(
      bases, a.keys, a.vals, a.nonzero, u32(run_len), a.window_bits, a.buckets_per_window, sums, partials);
  CUZK_CUDA_CHECK_LAUNCH();
  const u64 bucket_count = u64(a.windows) * a.buckets_per_window;
  merge_kernel<F><<<detail::grid_for(bucket_count, 128), 128, 0, s>>>(
      a.start, a.end, u32(run_len), a.window_bits, a.buckets_per_window, a.windows,
      static_cast<dev::Xyzz<F>*>(a.buckets), sums, partials);
  CUZK_CUDA_CHECK_LAUNCH();
}

template <class F>
std::size_t local_bytes() {
  return detail::max_local_bytes({reinterpret_cast<const void*>(&accumulate_affine_kernel<F, kLanes<F>>),
                                  reinterpret_cast<const void*>(&merge_kernel<F>)});
}

}  // namespace

void accumulate_g1(cudaStream_t s, const ChunkArgs& args) { launch<Fp>(s, args); }
void accumulate_g2(cudaStream_t s, const ChunkArgs& args) { launch<Fp2>(s, args); }

std::size_t local_bytes_per_thread(bool g2) { return g2 ? local_bytes<Fp2>() : local_bytes<Fp>(); }

}  // namespace cuzk::gpu::kernels::affine
