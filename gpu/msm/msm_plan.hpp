// MSM planning: window size, chunking of the points and the layout of the
// per-device scratch arena. Pure host arithmetic (no CUDA), so it is unit-tested
// without a device (tests/gpu/msm_plan_test.cpp) and shared by the kernels
// (gpu/msm/msm.cu) and the public Device API.
//
// One chunk of n points needs 16 n W bytes of sort pairs (4 u32 arrays of
// n W entries), bucket bounds 8 W 2^c B and W 2^(c-1) XYZZ buckets (192 B for
// G1, 384 B for G2), plus the affine tree's round buffers (~160 B per entry
// of a slab for G1): a 2^27 G1 MSM at c = 22 needs 54.1 GiB in one chunk, more
// than fits beside a 44 GiB SRS and the NTT buffers on most devices, hence the
// chunks below.
//
// Chunked scheme: the buckets (W * 2^(c-1) points) live for the whole MSM;
// each chunk of m points is recoded, sorted and accumulated into them, and
// the bucket reduction runs once at the end. A chunk therefore costs only its
// sort plus one load/store of the touched buckets; the window size is chosen
// for the whole n, not for the chunk. With at most kTreeReduceMaxChunks
// chunks the buckets stay affine, one array per chunk, and the reduction runs
// as trees (TreeReduceShape).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace cuzk::gpu {

inline constexpr std::size_t kDefaultMsmScratchBytes = std::size_t{8} << 30;
// The scratch limit a Device of device_bytes gets by default: a quarter of
// its memory, at least kDefaultMsmScratchBytes and at most 32 GiB; from
// kLargeDeviceBytes on, 5/12 of it up to 64 GiB (an H200, 139.8 GiB: 58.2).
// The affine tree turns memory into speed: on the H200 a 32 GiB arena
// against 8 GiB took G1 2^24 from 113.0 to 93.9 ms and 2^27 from 814.5 to
// 656.8 ms, and 2^27 in one chunk (54.1 GiB: two buffer sets of one 2^27-entry
// window each) against two (32 GiB) from 619.3 to 585.4 ms (bench/gpu/NOTES.md).
// A 32 GiB PoRep pipeline's device memory peaked at 104.2 GiB with the 32 GiB
// arena; the larger one leaves a whole PoRep SRS resident beside it only on
// the large devices, hence the step (smaller ones would stream more of it).
inline constexpr std::size_t kLargeDeviceBytes = std::size_t{128} << 30;
constexpr std::size_t default_msm_scratch_bytes(std::size_t device_bytes) {
  if (device_bytes >= kLargeDeviceBytes) return std::min(device_bytes / 12 * 5, std::size_t{64} << 30);
  return std::clamp(device_bytes / 4, kDefaultMsmScratchBytes, std::size_t{32} << 30);
}

namespace msm {

inline constexpr int kScalarBits = 255;  // r < 2^255
inline constexpr int kMinWindowBits = 2;
inline constexpr int kMaxWindowBits = 24;
// Window sizes the automatic choice considers.
inline constexpr int kAutoWindowBitsMin = 4;
inline constexpr int kAutoWindowBitsMax = 22;
// Points in a chunk are at least this many (unless n is smaller).
inline constexpr std::size_t kMinChunkPoints = std::size_t{1} << 14;
inline constexpr std::size_t kAlignBytes = 256;
// Sort entries of one chunk: positions and CUB's item count are 32-bit.
inline constexpr std::uint64_t kMaxEntries = (std::uint64_t{1} << 31) - 1;
// Bases streamed from host memory (staged_point_bytes > 0 below): at least this
// many chunks when n allows, so that the copy of chunk k + 1 overlaps chunk k's
// work and only the first chunk's copy (less its digits and sort) is exposed.
inline constexpr std::size_t kMinStreamedChunks = 4;
// Affine tree: entries per slab (the windows whose rounds run together; the
// round buffers are sized for one slab, ~160 B per entry for G1) and outputs
// per thread of the forward / backward kernels (one running product each).
inline constexpr std::size_t kTreeSlabEntries = std::size_t{1} << 26;
inline constexpr int kTreeOutputsPerThread = 16;
// Affine tree: slab buffer sets. With two, consecutive slabs run on two
// streams, so one slab's latency-bound steps (the per-warp inversions, the
// per-bucket kernels, the short last rounds) overlap the other's products.
inline constexpr int kTreeSets = 2;

// Signed c-bit digits of a scalar < 2^255: W = ceil(256 / c) windows. The
// recoding carries 1 into the next window when a digit exceeds 2^(c-1), so
// 255 bits need W c >= 256 (for c | 255, e.g. c = 15 or 17, the last window
// holds only that carry).
constexpr int windows_for(int c) { return (kScalarBits + 1 + c - 1) / c; }
// Bits of the scalar that land in the top window (before the carry).
constexpr int top_window_bits(int c) { return kScalarBits - (windows_for(c) - 1) * c; }
// Buckets per window: digits 1 .. 2^(c-1) (digit 0 adds nothing).
constexpr std::uint64_t buckets_per_window(int c) { return std::uint64_t{1} << (c - 1); }
// Sort keys: window w, digit d -> (w << c) | d; digit-0 entries get the
// sentinel W << c, which sorts after every bucket key.
constexpr std::uint64_t sentinel_key(int c) { return std::uint64_t(windows_for(c)) << c; }
constexpr int key_bits(int c) {
  int b = 0;
  for (std::uint64_t k = sentinel_key(c); k != 0; k >>= 1) ++b;
  return b;
}
// Whether the affine tree sorts each window's entries on their own, on the
// digit's c bits: when that takes fewer radix passes (8 bits each) than one
// sort of all entries on key_bits (c = 22: 3 instead of 4; c = 16: 2 instead
// of 3). Otherwise the per-window calls only add launches (H200, G1 2^24 at c
// = 20: sort 5.2 -> 6.1 ms).
constexpr bool tree_sorts_by_window(int c) { return (c + 7) / 8 < (key_bits(c) + 7) / 8; }

// Modelled run time of an MSM that gives each bucket one thread, in units of
// "one mixed add on every resident thread" (resident_threads below): it
// chooses c below kTreeModelMinPoints, where the tree model is not measured
// and a window that leaves a few heavy top buckets is what must be avoided
// (the tree's long buckets then cost rounds too):
// - accumulation: max(n W / resident_threads, heaviest bucket), where a
//   uniformly random scalar < r < 0.4534 * 2^255 spreads over about
//   0.45 * 2^t non-zero top-window digits (t = top_window_bits): at 2^18 and
//   c = 14 (t = 3) four top buckets each hold n / 4 points, one thread each;
// - reduction: about 2 full adds (2.8 mixed adds) per bucket spread over the
//   threads, plus a double-and-add chain of c steps per segment (measured on
//   H200 at 2^24, c = 20: 22.6 ms of reduction against 250 ms of accumulation,
//   which this model gives within 1%);
// - sort: ~3% of a mixed add per entry (measured 6.5 ms vs 250 ms at 2^24);
// - per chunk after the first: one load and store of every bucket (~0.1 add).
inline double model_cost(std::uint64_t n, int c, std::uint64_t chunks, double resident_threads) {
  const double w = windows_for(c);
  const double buckets = w * double(buckets_per_window(c));
  const double work = double(n) * w;
  const double top_digits = std::max(1.0, 0.4534 * double(std::uint64_t{1} << top_window_bits(c)));
  const double heaviest = std::max(double(n) / top_digits, double(n) / double(buckets_per_window(c)));
  const double accumulate = std::max(work / resident_threads, heaviest);
  const double reduce = 2.8 * buckets / resident_threads + 2.0 * c;
  const double sort = 0.03 * work / resident_threads;
  const double chunking = 0.1 * double(chunks - 1) * buckets / resident_threads;
  return accumulate + reduce + sort + chunking;
}

// The affine tree's run time in units of one tree add (H200, G1 0.338 ns and
// G2 1.08 ns per add at 2^24..2^27; bench/gpu/NOTES.md, "The bucket reduction
// as two more trees"):
// - accumulation: one unit per entry, n W; a long bucket costs rounds, not
//   one thread's time, so no heaviest-bucket term;
// - sort: per radix pass (8 key bits each) and entry, G1 0.0225, G2 0.0072
//   (20.4 ms for 3 passes over 872M entries; 23.9 ms for 4 over 805M),
//   ceil(c / 8) passes when the windows are sorted one by one;
// - reduction by trees (tree_reduce): G1 2.1, G2 2.8 per bucket and chunk
//   (c = 22: 19.3 ms for 25.2M buckets) plus ~3 ms; else the running-sum
//   reduction, G1 5.1 and G2 5.5 per bucket (11.7 / 40.7 ms at c = 20);
// - per chunk after the first: 0.1 per bucket.
// G1 2^26: c = 20 325.2 ms, c = 22 316.1 (this model: 322.6 / 317.3); 2^24:
// c = 20 87.8, c = 22 99.9 (86.5 / 94.7).
inline double tree_model_cost(std::uint64_t n, int c, std::uint64_t chunks, bool tree_reduce, bool g2) {
  const double add_ns = g2 ? 1.08 : 0.338;
  const double work = double(n) * double(windows_for(c));
  const double buckets = double(windows_for(c)) * double(buckets_per_window(c));
  const double passes = double(((tree_sorts_by_window(c) ? c : key_bits(c)) + 7) / 8);
  const double sort = (g2 ? 0.0072 : 0.0225) * passes * work;
  const double reduce =
      tree_reduce ? (g2 ? 2.8 : 2.1) * buckets * double(chunks) + 3e6 / add_ns : (g2 ? 5.5 : 5.1) * buckets;
  const double chunking = 0.1 * double(chunks - 1) * buckets;
  return work + sort + reduce + chunking;
}
// The tree model is measured from 2^22 points up; below, model_cost decides.
inline constexpr std::uint64_t kTreeModelMinPoints = std::uint64_t{1} << 22;

#if defined(__CUDACC__)
#define CUZK_MSM_HD __host__ __device__
#else
#define CUZK_MSM_HD
#endif

// ---- Affine tree: the index decisions of gpu/msm/msm_tree.cu ---------------
// A round turns each bucket's list of len points into ceil(len / 2): output j
// of the bucket adds its inputs 2j and 2j + 1 (the last one alone when len is
// odd). A bucket reaching len 1 is final (merged into its XYZZ bucket) and
// leaves the lists; so every round's list is at most 2/3 of the previous one
// (len 3 -> 2 is the worst ratio).
CUZK_MSM_HD constexpr std::uint32_t tree_next_len(std::uint32_t len) { return len >= 2 ? (len + 1) / 2 : 0; }
// Largest list after the first round, for a slab of `entries` inputs; later
// rounds use 2/3 of the round before, so two buffers of this and 2/3 of it
// hold the ping-pong.
constexpr std::uint64_t tree_list_max(std::uint64_t entries) { return entries * 2 / 3 + 1; }
// Output k of thread slot t (k < kTreeOutputsPerThread): a warp's 32 slots
// take 32 consecutive outputs per k, so their loads and stores coalesce.
CUZK_MSM_HD constexpr std::uint64_t tree_output(std::uint64_t slot, int k) {
  return (slot >> 5) * (32u * kTreeOutputsPerThread) + std::uint64_t(k) * 32u + (slot & 31u);
}
// Thread slots covering a list of `outputs` (whole warps).
CUZK_MSM_HD constexpr std::uint64_t tree_slots(std::uint64_t outputs) {
  return (outputs + 32u * kTreeOutputsPerThread - 1) / (32u * kTreeOutputsPerThread) * 32u;
}
// Rounds that bring a list of `len` points to one: ceil(log2 len).
constexpr int tree_rounds_for(std::uint64_t len) {
  int r = 0;
  for (std::uint64_t l = len; l > 1; l = (l + 1) / 2) ++r;
  return r;
}
// Rounds the host launches for a slab: enough for the largest bucket that
// uniformly random scalars make likely (mean + 5 standard deviations of the
// Poisson count; the top window's few digits hold ~n / (0.4534 2^t) points
// each). Buckets still longer after them are summed by the finish kernels
// (one thread each, or a block for a long leftover): exact for every input.
inline int tree_rounds(std::uint64_t chunk_points, int c, bool has_top_window) {
  const double mean_regular = double(chunk_points) / double(buckets_per_window(c));
  const double top_digits = std::max(1.0, 0.4534 * double(std::uint64_t{1} << top_window_bits(c)));
  const double mean = has_top_window ? std::max(mean_regular, double(chunk_points) / top_digits) : mean_regular;
  const double m = std::min(double(chunk_points), mean + 5.0 * std::sqrt(mean) + 2.0);
  return std::max(1, tree_rounds_for(std::uint64_t(std::ceil(m))));
}

// ---- Affine tree: the bucket reduction as two more trees --------------------
// The reduction wants sum_d d B_d over a window's buckets d = 1 .. 2^m
// (m = c - 1). Write d = a 2^h + b with b < 2^h (h = ceil(m / 2)):
//   sum_d d B_d = 2^h sum_a a C_a + sum_b b D_b,
//   C_a = sum_b B_{a 2^h + b}  (a = 1 .. A, A = 2^(m - h)),
//   D_b = sum_a B_{a 2^h + b}  (b = 1 .. 2^h - 1).
// C and D are plain group sums: every bucket enters at most two of them, and
// they run as affine trees (~6 products per add, against the running-sum
// reduction's two XYZZ adds of 14 products per bucket). What is left,
// E_k = D_k + 2^h C_k for k = 1 .. 2^h, is a window of 2^h XYZZ buckets for
// the running-sum reduction. With K chunks (K affine bucket arrays, one per
// chunk) every group takes each chunk's copy of its buckets.
// A window's entries: the C groups (a = 1 .. A; 2^h buckets each, a = A only
// d = 2^m) then the D groups (A buckets each), each group's entries chunk by
// chunk, contiguous.
struct TreeReduceShape {
  int h = 0;                    // low digit bits
  std::uint32_t a_max = 0;      // A = 2^(m - h)
  std::uint32_t chunks = 0;     // K
  std::uint64_t c_entries = 0;  // entries of a window's C groups
  std::uint64_t window_entries = 0;
  std::uint32_t window_groups = 0;  // A + 2^h - 1
  int rounds = 0;                   // tree rounds that bring the longest group to one point
};
constexpr TreeReduceShape tree_reduce_shape(int c, std::uint32_t chunks) {
  TreeReduceShape s;
  const int m = c - 1;
  s.h = (m + 1) / 2;
  s.a_max = std::uint32_t{1} << (m - s.h);
  s.chunks = chunks;
  const std::uint64_t low = std::uint64_t{1} << s.h;
  s.c_entries = std::uint64_t(chunks) * ((s.a_max - 1) * low + 1);
  s.window_entries = s.c_entries + std::uint64_t(chunks) * s.a_max * (low - 1);
  s.window_groups = std::uint32_t(s.a_max + low - 1);
  s.rounds = tree_rounds_for(std::uint64_t(chunks) * low);
  return s;
}
// Group g of a window (g < window_groups): its entries [start, start + len)
// (window-local) and its weight (a 2^h for C_a, b for D_b).
struct TreeReduceGroup {
  std::uint64_t start;
  std::uint32_t len;
  std::uint32_t weight;
};
CUZK_MSM_HD constexpr TreeReduceGroup tree_reduce_group(const TreeReduceShape& s, std::uint32_t g) {
  const std::uint32_t low = std::uint32_t{1} << s.h;
  if (g < s.a_max) {  // C_{g + 1}
    const std::uint32_t len = g + 1 < s.a_max ? s.chunks * low : s.chunks;
    return {std::uint64_t(g) * s.chunks * low, len, (g + 1) << s.h};
  }
  const std::uint32_t j = g - s.a_max;  // D_{j + 1}
  return {s.c_entries + std::uint64_t(j) * s.chunks * s.a_max, s.chunks * s.a_max, j + 1};
}
// Entry e of a window (e < window_entries): chunk k's bucket d.
struct TreeReduceEntry {
  std::uint32_t chunk;
  std::uint32_t digit;
};
CUZK_MSM_HD constexpr TreeReduceEntry tree_reduce_entry(const TreeReduceShape& s, std::uint64_t e) {
  const std::uint64_t low = std::uint64_t{1} << s.h;
  if (e < s.c_entries) {
    const std::uint64_t group_entries = std::uint64_t(s.chunks) * low;
    const std::uint64_t a = e / group_entries + 1;
    const std::uint64_t r = e % group_entries;
    if (a == s.a_max) return {std::uint32_t(r), std::uint32_t(a << s.h)};  // one bucket per chunk
    return {std::uint32_t(r / low), std::uint32_t((a << s.h) + r % low)};
  }
  const std::uint64_t group_entries = std::uint64_t(s.chunks) * s.a_max;
  const std::uint64_t b = (e - s.c_entries) / group_entries + 1;
  const std::uint64_t r = (e - s.c_entries) % group_entries;
  return {std::uint32_t(r / s.a_max), std::uint32_t(((r % s.a_max) << s.h) + b)};
}
// The tree reduction keeps each chunk's buckets affine, so at most this many
// chunks (their affine arrays share the XYZZ buckets' region).
inline constexpr std::uint32_t kTreeReduceMaxChunks = 2;

// Byte layout of one MSM call in the scratch arena (offsets from its base).
struct Plan {
  int window_bits = 0;
  int windows = 0;
  std::uint64_t buckets_per_window = 0;
  std::uint64_t bucket_count = 0;  // windows * buckets_per_window
  std::uint64_t key_count = 0;     // sentinel_key + 1 (bounds arrays' length)
  std::size_t chunk_points = 0;    // points per chunk (the last may be shorter)
  std::size_t chunks = 0;
  std::uint64_t seg_len = 0;   // buckets per reduction segment
  std::uint64_t segments = 0;  // all windows
  // Offsets (bytes) and the total.
  std::size_t buckets_off = 0, starts_off = 0, ends_off = 0, nonzero_off = 0, segs_off = 0, window_sums_off = 0;
  std::size_t keys_off[2] = {0, 0}, vals_off[2] = {0, 0};
  std::size_t sort_temp_off = 0, sort_temp_bytes = 0;
  // Streamed bases: two staging slots of chunk_points packed points (the copy
  // of chunk k + 1 fills one while chunk k accumulates from the other); 0 when
  // the bases are on the device.
  std::size_t staging_off[2] = {0, 0}, staging_bytes = 0;
  // Affine tree: slab windows, the largest slab's entries and
  // buckets, and the round buffers (point lists + where each output's inputs are, per-bucket
  // lengths and starts for the current and next round, the thread slots'
  // products and prefixes, CUB's scan scratch).
  int tree_slab_windows = 0;
  std::uint64_t tree_entries = 0, tree_buckets = 0, tree_list[2] = {0, 0}, tree_slots_max = 0;
  std::size_t tree_list_off[2] = {0, 0}, tree_pair_in_off[2] = {0, 0};
  std::size_t tree_len_off[2] = {0, 0}, tree_start_off[2] = {0, 0};
  std::size_t tree_slot_off = 0, tree_prefix_off = 0, tree_scan_temp_off = 0, tree_scan_temp_bytes = 0;
  std::size_t tree_output_prefix_off = 0, tree_sums_off = 0;
  // Buffer sets (1 or 2: slab i uses set i % tree_sets); set k's offsets are
  // set 0's plus k * tree_set_bytes. Set 0 starts at keys_off[0]: the sets
  // overlay the sort keys and CUB's sort scratch.
  int tree_sets = 0;
  std::size_t tree_set_bytes = 0;
  // Affine tree reduction (tree_reduce_chunks > 0; TreeReduceShape above):
  // the chunks' affine buckets fill the XYZZ buckets' region, the entries'
  // bucket indices and the E window go into the dead sort values (vals[0],
  // vals[1]), the trees run on set 0. 0 when it does not fit (more than
  // kTreeReduceMaxChunks chunks, or a small MSM whose slab buffers are
  // smaller than the reduction's groups): the running-sum reduction then.
  // Its windows run in slabs of tree_reduce_slab_windows on the buffer sets,
  // alternating like the accumulation's.
  std::uint32_t tree_reduce_chunks = 0;
  int tree_reduce_slab_windows = 0;
  std::size_t tree_reduce_index_off = 0, tree_reduce_e_off = 0;
  std::size_t total_bytes = 0;
};

// model_cost's unit of parallelism: 3 blocks of 128 threads per SM, the
// occupancy of the per-bucket XYZZ accumulation it was measured with.
constexpr double resident_threads(int sm_count) { return double(sm_count) * 384.0; }

inline constexpr std::size_t align_up(std::size_t x) { return (x + kAlignBytes - 1) / kAlignBytes * kAlignBytes; }

// Reduction segments: seg_len doubles until at most 2^16 segments remain (enough
// threads to fill 132 SMs a few times over), never past one window.
inline void set_segments(Plan& p) {
  constexpr std::uint64_t kSegmentsTarget = std::uint64_t{1} << 16;
  p.seg_len = 1;
  while (p.seg_len < p.buckets_per_window && p.bucket_count / p.seg_len > kSegmentsTarget) p.seg_len *= 2;
  p.segments = p.bucket_count / p.seg_len;
}

// Whether the tree reduction fits a tree plan (see Plan::tree_reduce_chunks),
// and where its arrays go.
inline void set_tree_reduce(Plan& p, std::size_t chunk_entries, std::size_t xyzz_bytes) {
  p.tree_reduce_chunks = 0;
  if (p.chunks == 0 || p.chunks > kTreeReduceMaxChunks || p.window_bits < 3) return;
  const TreeReduceShape s = tree_reduce_shape(p.window_bits, std::uint32_t(p.chunks));
  const std::uint64_t entries = s.window_entries * std::uint64_t(p.windows);
  const std::size_t e_bytes = (std::size_t{1} << s.h) * std::size_t(p.windows) * xyzz_bytes;
  const std::uint64_t slab =
      std::min({p.tree_entries / s.window_entries, p.tree_buckets / s.window_groups, std::uint64_t(p.windows)});
  if (slab == 0 || entries * 4 > chunk_entries * 4 || e_bytes > chunk_entries * 4) return;
  p.tree_reduce_chunks = std::uint32_t(p.chunks);
  // With two sets, at least two slabs: one's latency-bound steps (each of its
  // ~10 rounds' inversions and per-group kernels) beside the other's products.
  const std::uint64_t per_set = (std::uint64_t(p.windows) + p.tree_sets - 1) / std::uint64_t(p.tree_sets);
  p.tree_reduce_slab_windows = int(std::min(slab, per_set));
  p.tree_reduce_index_off = p.vals_off[0];
  p.tree_reduce_e_off = p.vals_off[1];
}

// Lays out the arena for window c and chunks of `chunk_points`; sort_temp(entries,
// key_bits) returns CUB's scratch bytes for a sort of that many pairs;
// staged_point_bytes > 0 adds the two staging slots of streamed bases.
template <class SortTemp>
Plan layout(int c, std::size_t chunk_points, std::size_t n, std::size_t xyzz_bytes, const SortTemp& sort_temp,
            std::size_t staged_point_bytes = 0, std::size_t tree_slab_entries = kTreeSlabEntries,
            int tree_sets = kTreeSets) {
  Plan p;
  p.window_bits = c;
  p.windows = windows_for(c);
  p.buckets_per_window = buckets_per_window(c);
  p.bucket_count = std::uint64_t(p.windows) * p.buckets_per_window;
  p.key_count = sentinel_key(c) + 1;
  p.chunk_points = chunk_points;
  p.chunks = chunk_points == 0 ? 0 : (n + chunk_points - 1) / chunk_points;
  set_segments(p);
  const std::size_t entries = chunk_points * std::size_t(p.windows);
  std::size_t off = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t at = off;
    off += align_up(bytes);
    return at;
  };
  p.buckets_off = take(p.bucket_count * xyzz_bytes);
  p.starts_off = take(p.key_count * 4);
  p.ends_off = take(p.key_count * 4);
  p.nonzero_off = take(4);
  p.segs_off = take(std::size_t(p.segments) * xyzz_bytes);
  p.window_sums_off = take(std::size_t(p.windows) * xyzz_bytes);
  for (int i = 0; i < 2; ++i) p.vals_off[i] = take(entries * 4);
  // The sort keys and CUB's scratch are dead once the bucket bounds are found
  // (before any accumulation): the affine tree's buffers overlay them.
  for (int i = 0; i < 2; ++i) p.keys_off[i] = take(entries * 4);
  // CUB's scratch need is not promised to be monotone in the item count: ask
  // for the full chunks and for the (shorter) last one.
  const std::size_t last_entries = p.chunks == 0 ? 0 : (n - (p.chunks - 1) * chunk_points) * std::size_t(p.windows);
  p.sort_temp_bytes =
      entries == 0 ? 0 : std::max(sort_temp(entries, key_bits(c)), sort_temp(last_entries, key_bits(c)));
  if (entries > 0 && tree_sorts_by_window(c)) {
    // Each window's entries sorted on their own, on the digit's c bits.
    const std::size_t last_points = n - (p.chunks - 1) * chunk_points;
    p.sort_temp_bytes = std::max(sort_temp(chunk_points, c), sort_temp(last_points, c));
  }
  p.sort_temp_off = take(p.sort_temp_bytes);
  if (chunk_points > 0) {
    const std::size_t sort_end = off;
    off = p.keys_off[0];
    // xyzz_bytes / 2 = one affine point; a slab's entries <= windows * points.
    const std::size_t affine_bytes = xyzz_bytes / 2;
    const std::size_t field_bytes = affine_bytes / 2;
    p.tree_slab_windows = int(std::clamp<std::size_t>(tree_slab_entries / chunk_points, 1, std::size_t(p.windows)));
    p.tree_entries = std::uint64_t(p.tree_slab_windows) * chunk_points;
    p.tree_buckets = std::uint64_t(p.tree_slab_windows) * p.buckets_per_window;
    p.tree_list[0] = tree_list_max(p.tree_entries);
    p.tree_list[1] = tree_list_max(p.tree_list[0]);
    p.tree_slots_max = tree_slots(p.tree_list[0]);
    for (int i = 0; i < 2; ++i) {
      p.tree_list_off[i] = take(p.tree_list[i] * affine_bytes);
      p.tree_pair_in_off[i] = take(p.tree_list[i] * 4);
      p.tree_len_off[i] = take((p.tree_buckets + 1) * 4);
      p.tree_start_off[i] = take((p.tree_buckets + 1) * 4);
    }
    // The forward pass's running prefix per output, dense (written in 48 B
    // halves of the 96 B output slots it cost 3.6 multiplies' time per output
    // on the H200: partial-sector writes), and each bucket's final point.
    p.tree_output_prefix_off = take(p.tree_list[0] * field_bytes);
    p.tree_sums_off = take(p.tree_buckets * affine_bytes);
    p.tree_slot_off = take(p.tree_slots_max * field_bytes);
    p.tree_prefix_off = take(p.tree_slots_max * field_bytes);
    // CUB's decoupled look-back scan keeps ~16 B per tile of >= 256 items.
    p.tree_scan_temp_bytes = align_up(16 * ((p.tree_buckets + 1) / 256 + 1) + 4096);
    p.tree_scan_temp_off = take(p.tree_scan_temp_bytes);
    // A second set only helps when there is a second slab to run beside the first.
    const int slabs = (p.windows + p.tree_slab_windows - 1) / p.tree_slab_windows;
    p.tree_sets = std::clamp(tree_sets, 1, std::min(slabs, 2));
    p.tree_set_bytes = off - p.keys_off[0];  // a sum of aligned regions: aligned
    for (int k = 1; k < p.tree_sets; ++k) take(p.tree_set_bytes);
    off = std::max(off, sort_end);
    set_tree_reduce(p, entries, xyzz_bytes);
  }
  p.staging_bytes = staged_point_bytes * chunk_points;
  if (p.staging_bytes > 0) {
    for (int i = 0; i < 2; ++i) p.staging_off[i] = take(p.staging_bytes);
  }
  p.total_bytes = off;
  return p;
}

// Largest chunk (for window c) whose layout fits in limit_bytes, spread evenly
// over the chunks; 0 when not even kMinChunkPoints (or n, if smaller) fits.
template <class SortTemp>
Plan fit_chunks(int c, std::size_t n, std::size_t xyzz_bytes, std::size_t limit_bytes, const SortTemp& sort_temp,
                std::size_t staged_point_bytes = 0) {
  const std::size_t w = std::size_t(windows_for(c));
  std::size_t m = std::min<std::size_t>(n, std::size_t(kMaxEntries / w));
  const std::size_t floor_points = std::min(n, kMinChunkPoints);
  if (staged_point_bytes > 0) {
    m = std::min(m, std::max(floor_points, (n + kMinStreamedChunks - 1) / kMinStreamedChunks));
  }
  std::size_t tree_slab_entries = kTreeSlabEntries;
  int tree_sets = kTreeSets;
  for (;;) {
    // Same chunk count, points spread evenly: the last chunk is not a sliver.
    const std::size_t chunks = (n + m - 1) / m;
    m = (n + chunks - 1) / chunks;
    Plan p = layout(c, m, n, xyzz_bytes, sort_temp, staged_point_bytes, tree_slab_entries, tree_sets);
    if (p.total_bytes <= limit_bytes) return p;
    // The affine tree gives up windows per slab (more rounds of launches),
    // then its second buffer set (no overlap of slabs), before points per
    // chunk (more sorts and merges into the XYZZ buckets). H200, G1 2^24,
    // accumulation: 4 windows x 2 sets 75.5 ms, 4 x 1 81.3, 1 x 2 84.4,
    // 1 x 1 95.0 (bench/gpu/NOTES.md).
    if (p.tree_slab_windows > 1) {
      tree_slab_entries = std::size_t(p.tree_slab_windows / 2) * m;
      continue;
    }
    if (p.tree_sets > 1) {
      tree_sets = 1;
      continue;
    }
    if (m <= floor_points) return Plan{};
    // Shrink by the overshoot (16 W bytes of sort pairs per point, two
    // staged copies of streamed points; the affine tree's lists are larger:
    // the layout's own bytes per point bound them, buckets included), at
    // least by 1/8. Underestimating the bytes per point would cut too much.
    const std::size_t over = p.total_bytes - limit_bytes;
    const std::size_t per_point = std::max(16 * w + 2 * staged_point_bytes, p.total_bytes / m);
    const std::size_t cut = std::max(over / per_point + 1, m / 8);
    m = std::max(floor_points, m > cut ? m - cut : std::size_t{1});
    // The shorter chunks may fit the tree's wider slabs and second set again.
    tree_slab_entries = kTreeSlabEntries;
    tree_sets = kTreeSets;
  }
}

// Plans an n-point MSM whose scratch fits in limit_bytes. window_bits = 0
// chooses c by model_cost among the windows that fit; otherwise c is taken as
// given. Returns a Plan with total_bytes = 0 when nothing fits (the caller
// reports how much would be needed: minimum_bytes below).
template <class SortTemp>
Plan plan(std::size_t n, std::size_t xyzz_bytes, int window_bits, std::size_t limit_bytes, double resident_threads,
          const SortTemp& sort_temp, std::size_t staged_point_bytes = 0) {
  if (n == 0) return Plan{};
  if (window_bits != 0) {
    return fit_chunks(window_bits, n, xyzz_bytes, limit_bytes, sort_temp, staged_point_bytes);
  }
  Plan best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int c = kAutoWindowBitsMin; c <= kAutoWindowBitsMax; ++c) {
    // Cheap reject before laying out: the buckets alone exceed the limit.
    if (std::uint64_t(windows_for(c)) * buckets_per_window(c) * xyzz_bytes > limit_bytes) continue;
    const Plan p = fit_chunks(c, n, xyzz_bytes, limit_bytes, sort_temp, staged_point_bytes);
    if (p.total_bytes == 0) continue;
    const double cost = n >= kTreeModelMinPoints
                            ? tree_model_cost(n, c, p.chunks, p.tree_reduce_chunks > 0, xyzz_bytes > 192)
                            : model_cost(n, c, p.chunks, resident_threads);
    if (cost < best_cost) {
      best_cost = cost;
      best = p;
    }
  }
  return best;
}

// Scratch bytes of the smallest plan for window c (one minimum-size chunk).
template <class SortTemp>
std::size_t minimum_bytes(int c, std::size_t n, std::size_t xyzz_bytes, const SortTemp& sort_temp,
                          std::size_t staged_point_bytes = 0) {
  const std::size_t m = std::min(n, kMinChunkPoints);
  return layout(c, m, n, xyzz_bytes, sort_temp, staged_point_bytes, m).total_bytes;
}

// Window the automatic plan picks for n G1 points when memory is not the limit.
inline int default_window_bits(std::size_t n, double resident_threads) {
  const auto no_temp = [](std::size_t, int) { return std::size_t{0}; };
  const Plan p = plan(n, 192, 0, std::numeric_limits<std::size_t>::max() / 2, resident_threads, no_temp);
  return p.window_bits;
}

}  // namespace msm
}  // namespace cuzk::gpu
