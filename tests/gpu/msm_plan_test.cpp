// Host-side checks of the MSM's window and chunk arithmetic (gpu/msm/msm_plan.hpp).
// No device needed: these run everywhere, also where the GPU tests skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ff/fp.hpp"
#include "gpu/msm/msm_plan.hpp"

namespace cuzk::gpu::msm {
namespace {

using ff::Fr;

constexpr std::size_t kG1Xyzz = 192, kG2Xyzz = 384;
constexpr double kH200Threads = resident_threads(132);

// A stand-in for CUB's scratch, deliberately generous: 1 KiB per 4096 pairs plus 64 MiB.
std::size_t fake_sort_temp(std::size_t entries, int) { return (std::size_t{64} << 20) + entries / 4; }

// Bit i of a standard integer.
int bit(const ff::BigInt<4>& x, int i) { return int((x.limb[i / 64] >> (i % 64)) & 1); }

// The signed recoding the digits kernel does, written out on the host from the
// scalar's bits: W windows of c bits, digit > 2^(c-1) becomes digit - 2^c with
// a carry. Checks: every |digit| <= 2^(c-1), the top window never goes
// negative (its carry would be lost), and sum_w d_w 2^(w c) == s in Fr.
void check_recoding(const Fr& s, int c) {
  const ff::BigInt<4> x = s.to_int();
  const int windows = windows_for(c);
  const std::int64_t half = std::int64_t{1} << (c - 1);
  std::int64_t carry = 0;
  Fr sum = Fr::zero();
  Fr weight = Fr::one();
  const Fr step = Fr::from_u64(2).pow(std::uint64_t(c));
  for (int w = 0; w < windows; ++w) {
    std::int64_t d = carry;
    for (int i = 0; i < c && w * c + i < 256; ++i) d += std::int64_t(bit(x, w * c + i)) << i;
    carry = 0;
    if (d > half) {
      d -= std::int64_t{1} << c;
      carry = 1;
    }
    ASSERT_LE(d, half);
    ASSERT_GE(d, -half);
    if (w == windows - 1) {
      ASSERT_GE(d, 0) << "top window negative, c=" << c;
    }
    const Fr fd = d >= 0 ? Fr::from_u64(std::uint64_t(d)) : -Fr::from_u64(std::uint64_t(-d));
    sum += fd * weight;
    weight *= step;
  }
  ASSERT_EQ(carry, 0);
  EXPECT_TRUE(sum == s) << "c=" << c;
}

TEST(GpuMsmPlan, SignedRecodingCoversEveryScalarForEveryWindow) {
  std::mt19937_64 rng(7);
  std::vector<Fr> scalars = {Fr::zero(), Fr::one(), -Fr::one(), -Fr::from_u64(2)};
  for (int i = 0; i < 40; ++i) scalars.push_back(Fr::random(rng));
  for (int c = kMinWindowBits; c <= kMaxWindowBits; ++c) {
    const int w = windows_for(c);
    EXPECT_GE(w * c, 256) << "c=" << c;        // room for the carry out of bit 254
    EXPECT_LT((w - 1) * c, 256) << "c=" << c;  // and no window more than needed
    EXPECT_GE(top_window_bits(c), 0);
    EXPECT_LT(top_window_bits(c), c);
    EXPECT_LT(sentinel_key(c), std::uint64_t{1} << 32);
    EXPECT_GT(std::uint64_t{1} << key_bits(c), sentinel_key(c));
    // The largest bucket key (top window, digit 2^(c-1)) sorts before the sentinel.
    EXPECT_LT((std::uint64_t(w - 1) << c) | buckets_per_window(c), sentinel_key(c));
    for (const Fr& s : scalars) check_recoding(s, c);
  }
}

// Below kTreeModelMinPoints (model_cost decides): c = 14 at ~2^18 would give
// a 3-bit top window whose ~4 non-zero digits each hold n/4 points (a 4 s MSM
// when one thread walked each bucket). The chosen window keeps the heaviest
// bucket within the average work per thread (or tiny). From 2^22 on the tree
// model chooses (a long bucket costs the tree rounds, not one thread's time:
// AffineTreeWindowModel).
TEST(GpuMsmPlan, AutoWindowAvoidsHeavyTopBuckets) {
  for (int log_n = 10; log_n <= 27; ++log_n) {
    const std::size_t n = std::size_t{1} << log_n;
    const int c = default_window_bits(n, kH200Threads);
    ASSERT_GE(c, kAutoWindowBitsMin);
    ASSERT_LE(c, kAutoWindowBitsMax);
    // Odd sizes in between choose within range too.
    const int c_odd = default_window_bits(n + n / 3, kH200Threads);
    EXPECT_GE(c_odd, kAutoWindowBitsMin);
    EXPECT_LE(c_odd, kAutoWindowBitsMax);
    if (n >= kTreeModelMinPoints) continue;
    const double top_digits = std::max(1.0, 0.4534 * double(std::uint64_t{1} << top_window_bits(c)));
    const double heaviest = double(n) / top_digits;
    const double per_thread = double(n) * windows_for(c) / kH200Threads;
    EXPECT_LE(heaviest, std::max(per_thread, 64.0)) << "log n=" << log_n << " c=" << c;
  }
  EXPECT_NE(default_window_bits(std::size_t{1} << 18, kH200Threads), 14);
  EXPECT_LT(default_window_bits(1000, kH200Threads), default_window_bits(std::size_t{1} << 24, kH200Threads));
}

void check_layout(const Plan& p, std::size_t n, std::size_t xyzz, std::size_t limit) {
  ASSERT_GT(p.total_bytes, 0u);
  EXPECT_LE(p.total_bytes, limit);
  EXPECT_GE(p.chunks * p.chunk_points, n);
  EXPECT_LT((p.chunks - 1) * p.chunk_points, n);
  EXPECT_LE(std::uint64_t(p.chunk_points) * p.windows, kMaxEntries);
  EXPECT_EQ(p.bucket_count, std::uint64_t(p.windows) << (p.window_bits - 1));
  EXPECT_EQ(p.segments * p.seg_len, p.bucket_count);
  EXPECT_EQ(p.buckets_per_window % p.seg_len, 0u);
  // Regions in order, aligned, not overlapping, each as large as its contents.
  const std::size_t entries = p.chunk_points * std::size_t(p.windows);
  // Regions by lifetime: kLive for the whole MSM, kSort until the bucket
  // bounds are found, kTree while the affine tree accumulates (it overlays
  // kSort). Aligned, inside the total, and apart from every region they share
  // a lifetime with.
  enum Life { kLive, kSort, kTree };
  struct Region {
    std::size_t off, bytes;
    Life life;
  };
  std::vector<Region> regions = {{p.buckets_off, p.bucket_count * xyzz, kLive},
                                 {p.starts_off, p.key_count * 4, kLive},
                                 {p.ends_off, p.key_count * 4, kLive},
                                 {p.nonzero_off, 4, kLive},
                                 {p.segs_off, std::size_t(p.segments) * xyzz, kLive},
                                 {p.window_sums_off, std::size_t(p.windows) * xyzz, kLive},
                                 {p.vals_off[0], entries * 4, kLive},
                                 {p.vals_off[1], entries * 4, kLive},
                                 {p.keys_off[0], entries * 4, kSort},
                                 {p.keys_off[1], entries * 4, kSort},
                                 {p.sort_temp_off, p.sort_temp_bytes, kSort}};
  for (int i = 0; i < 2 && p.staging_bytes > 0; ++i) regions.push_back({p.staging_off[i], p.staging_bytes, kLive});
  {
    // A slab's entries fit its lists; the second list holds 2/3 of the first.
    EXPECT_GE(p.tree_slab_windows, 1);
    EXPECT_LE(p.tree_slab_windows, p.windows);
    EXPECT_EQ(p.tree_entries, std::uint64_t(p.tree_slab_windows) * p.chunk_points);
    EXPECT_GE(p.tree_list[0], p.tree_entries * 2 / 3);
    EXPECT_GE(p.tree_list[1], p.tree_list[0] * 2 / 3);
    EXPECT_GE(p.tree_slots_max, tree_slots(p.tree_list[0]));
    // Two sets only with two slabs to run side by side.
    const int slabs = (p.windows + p.tree_slab_windows - 1) / p.tree_slab_windows;
    EXPECT_GE(p.tree_sets, 1);
    EXPECT_LE(p.tree_sets, std::min(2, slabs));
    for (int set = 0; set < p.tree_sets; ++set) {
      const std::size_t d = std::size_t(set) * p.tree_set_bytes;
      for (int i = 0; i < 2; ++i) {
        regions.push_back({d + p.tree_list_off[i], p.tree_list[i] * (xyzz / 2), kTree});
        regions.push_back({d + p.tree_pair_in_off[i], p.tree_list[i] * 4, kTree});
        regions.push_back({d + p.tree_len_off[i], (p.tree_buckets + 1) * 4, kTree});
        regions.push_back({d + p.tree_start_off[i], (p.tree_buckets + 1) * 4, kTree});
      }
      regions.push_back({d + p.tree_output_prefix_off, p.tree_list[0] * (xyzz / 4), kTree});
      regions.push_back({d + p.tree_sums_off, p.tree_buckets * (xyzz / 2), kTree});
      regions.push_back({d + p.tree_slot_off, p.tree_slots_max * (xyzz / 4), kTree});
      regions.push_back({d + p.tree_prefix_off, p.tree_slots_max * (xyzz / 4), kTree});
      regions.push_back({d + p.tree_scan_temp_off, p.tree_scan_temp_bytes, kTree});
    }
  }
  if (p.tree_reduce_chunks > 0) {
    // The tree reduction: the chunks' affine buckets fill the XYZZ buckets'
    // region; its index array and E window fit the dead sort values; its
    // entries and groups fit set 0's lists and per-bucket arrays.
    EXPECT_EQ(p.tree_reduce_chunks, p.chunks);
    EXPECT_LE(p.chunks, kTreeReduceMaxChunks);
    EXPECT_LE(p.chunks * p.bucket_count * (xyzz / 2), p.bucket_count * xyzz);
    const TreeReduceShape s = tree_reduce_shape(p.window_bits, p.tree_reduce_chunks);
    EXPECT_GE(p.tree_reduce_slab_windows, 1);
    EXPECT_LE(p.tree_reduce_slab_windows, p.windows);
    EXPECT_LE(s.window_entries * std::uint64_t(p.tree_reduce_slab_windows), p.tree_entries);
    EXPECT_LE(std::uint64_t(s.window_groups) * std::uint64_t(p.tree_reduce_slab_windows), p.tree_buckets);
    EXPECT_EQ(p.tree_reduce_index_off, p.vals_off[0]);
    EXPECT_LE(s.window_entries * p.windows * 4, entries * 4);
    EXPECT_EQ(p.tree_reduce_e_off, p.vals_off[1]);
    EXPECT_LE((std::size_t{1} << s.h) * p.windows * xyzz, entries * 4);
  }
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const Region& a = regions[i];
    EXPECT_EQ(a.off % kAlignBytes, 0u) << i;
    EXPECT_LE(a.off + a.bytes, p.total_bytes) << "region " << i;
    for (std::size_t j = i + 1; j < regions.size(); ++j) {
      const Region& b = regions[j];
      const bool share_lifetime = a.life == kLive || b.life == kLive || a.life == b.life;
      if (share_lifetime && a.bytes > 0 && b.bytes > 0) {
        EXPECT_TRUE(a.off + a.bytes <= b.off || b.off + b.bytes <= a.off) << "regions " << i << " and " << j;
      }
    }
  }
}

// The sizes of a 32 GiB PoRep partition with an 8 GiB scratch limit: H is a
// 2^27 - 1 point G1 MSM, B_G2 up to 2^25 G2 points.
TEST(GpuMsmPlan, LargeMsmsChunkIntoTheScratchLimit) {
  const std::size_t limit = kDefaultMsmScratchBytes;
  const std::size_t h = (std::size_t{1} << 27) - 1;
  const Plan g1 = plan(h, kG1Xyzz, 0, limit, kH200Threads, fake_sort_temp);
  check_layout(g1, h, kG1Xyzz, limit);
  EXPECT_GT(g1.chunks, 1u);  // one chunk would need ~16 W B per point = 26 GiB
  const std::size_t b = std::size_t{1} << 25;
  const Plan g2 = plan(b, kG2Xyzz, 0, limit, kH200Threads, fake_sort_temp);
  check_layout(g2, b, kG2Xyzz, limit);
  // Unlimited memory: 2^27 points in one chunk (n W < 2^31).
  const Plan one = plan(h, kG1Xyzz, 0, std::size_t{1} << 40, kH200Threads, fake_sort_temp);
  check_layout(one, h, kG1Xyzz, std::size_t{1} << 40);
  EXPECT_EQ(one.chunks, 1u);
}

TEST(GpuMsmPlan, SmallLimitsChunkOrFail) {
  const std::size_t n = 100003;
  // A fixed window and a limit below the single-chunk need: several chunks.
  const Plan p = plan(n, kG1Xyzz, 12, std::size_t{96} << 20, kH200Threads, fake_sort_temp);
  check_layout(p, n, kG1Xyzz, std::size_t{96} << 20);
  EXPECT_GE(p.chunks, 2u);
  EXPECT_EQ(p.window_bits, 12);
  // Odd chunk sizes: the chunks are spread evenly.
  EXPECT_LT(p.chunks * p.chunk_points - n, p.chunks);
  // Nothing fits in 1 MiB.
  EXPECT_EQ(plan(n, kG1Xyzz, 0, std::size_t{1} << 20, kH200Threads, fake_sort_temp).total_bytes, 0u);
  EXPECT_GT(minimum_bytes(12, n, kG1Xyzz, fake_sort_temp), std::size_t{1} << 20);
  // The configuration of GpuMsm.ChunkedRunsMatchHost (c = 12, 48 MiB) fits
  // in several chunks (CUB's scratch for ~10^6 pairs is about 1 MiB;
  // modelled generously here).
  const auto small_sort_temp = [](std::size_t entries, int) { return (std::size_t{2} << 20) + entries / 8; };
  const Plan g1 = plan(200003, kG1Xyzz, 12, std::size_t{48} << 20, kH200Threads, small_sort_temp);
  check_layout(g1, 200003, kG1Xyzz, std::size_t{48} << 20);
  EXPECT_GE(g1.chunks, 2u);
  const Plan g2 = plan(120001, kG2Xyzz, 12, std::size_t{48} << 20, kH200Threads, small_sort_temp);
  check_layout(g2, 120001, kG2Xyzz, std::size_t{48} << 20);
  EXPECT_GE(g2.chunks, 2u);
  // Every size 2^10 .. 2^27 plans within the default limit, G1 and G2.
  for (int log_n = 10; log_n <= 27; ++log_n) {
    const std::size_t m = (std::size_t{1} << log_n) - 3;
    for (std::size_t xyzz : {kG1Xyzz, kG2Xyzz}) {
      const Plan q = plan(m, xyzz, 0, kDefaultMsmScratchBytes, kH200Threads, fake_sort_temp);
      check_layout(q, m, xyzz, kDefaultMsmScratchBytes);
    }
  }
}

// The affine tree's pairing, replayed on integers with gpu/msm/msm_tree.cu's
// round structure (halve, exclusive scan, map writing each output's inputs,
// pair, finish): every bucket's
// sum comes out exactly, whatever its length, the lists stay within the
// plan's bounds, and the thread slots cover every output once.
TEST(GpuMsmPlan, AffineTreeRoundsSumEveryBucket) {
  std::mt19937_64 rng(61);
  for (int trial = 0; trial < 6; ++trial) {
    const std::size_t buckets = 1 + rng() % 3000;
    std::vector<std::uint32_t> len(buckets), start(buckets);
    std::vector<std::uint64_t> list, expect(buckets, 0), got(buckets, 0);
    for (std::size_t b = 0; b < buckets; ++b) {
      const std::uint64_t r = rng() % 10;
      len[b] = std::uint32_t(r < 2 ? r : r < 8 ? rng() % 40 : rng() % 3000);  // empty, single, short, long
      start[b] = std::uint32_t(list.size());
      for (std::uint32_t i = 0; i < len[b]; ++i) {
        list.push_back(rng() >> 8);
        expect[b] += list.back();
      }
    }
    std::uint64_t bound = list.size();
    const int rounds = 1 + trial % 4;  // few rounds: the finish sums long leftovers
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::uint32_t> len_next(buckets), start_next(buckets + 1, 0);
      for (std::size_t b = 0; b < buckets; ++b) {
        len_next[b] = tree_next_len(len[b]);
        start_next[b + 1] = start_next[b] + len_next[b];
      }
      // map: where each output's inputs are (first index, whether a second follows).
      std::vector<std::pair<std::uint32_t, bool>> pair_in(start_next[buckets]);
      for (std::size_t b = 0; b < buckets; ++b) {
        if (len[b] == 1) got[b] += list[start[b]];  // final: merged into the bucket
        for (std::uint32_t j = 0; j < len_next[b]; ++j) {
          pair_in[start_next[b] + j] = {start[b] + 2 * j, 2 * j + 1 < len[b]};
        }
      }
      const std::uint64_t outputs = start_next[buckets];
      bound = tree_list_max(bound);
      ASSERT_LE(outputs, bound) << "round " << r;
      std::vector<std::uint64_t> next(outputs);
      std::vector<int> seen(outputs, 0);
      for (std::uint64_t t = 0; t < tree_slots(outputs); ++t) {
        for (int k = 0; k < kTreeOutputsPerThread; ++k) {
          const std::uint64_t o = tree_output(t, k);
          if (o >= outputs) break;
          ++seen[o];
          const auto [i1, has2] = pair_in[o];
          next[o] = list[i1] + (has2 ? list[i1 + 1] : 0);
        }
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int v) { return v == 1; })) << "round " << r;
      list = std::move(next);
      len = std::move(len_next);
      start.assign(start_next.begin(), start_next.end() - 1);
    }
    for (std::size_t b = 0; b < buckets; ++b) {
      for (std::uint32_t i = 0; i < len[b]; ++i) got[b] += list[start[b] + i];  // the finish kernel
    }
    EXPECT_EQ(got, expect) << "trial " << trial;
  }
}

// Rounds planned for the bench's shape (2^24 points, c = 20): regular windows
// hold ~32 points per bucket (6 rounds bring 58 to 1), the top window's ~15k
// digits ~1100 (11 rounds); and the layout keeps every region apart.
TEST(GpuMsmPlan, AffineTreeRoundsAndLayout) {
  EXPECT_EQ(tree_rounds_for(1), 0);
  EXPECT_EQ(tree_rounds_for(2), 1);
  EXPECT_EQ(tree_rounds_for(3), 2);
  EXPECT_EQ(tree_rounds_for(64), 6);
  EXPECT_EQ(tree_rounds_for(65), 7);
  const std::uint64_t n = std::uint64_t{1} << 24;
  EXPECT_EQ(tree_rounds(n, 20, false), 6);
  EXPECT_EQ(tree_rounds(n, 20, true), 11);
  EXPECT_GE(tree_rounds(1000, 16, false), 1);
  for (std::size_t points : {std::size_t{1000}, std::size_t{1} << 20, std::size_t{1} << 24}) {
    for (std::size_t xyzz : {kG1Xyzz, kG2Xyzz}) {
      const std::size_t limit = std::size_t{12} << 30;
      const Plan p = plan(points, xyzz, 0, limit, kH200Threads, fake_sort_temp);
      check_layout(p, points, xyzz, limit);
    }
  }
  // The bench's 2^26 G1 MSM in the default 8 GiB: a few chunks of millions of
  // points (a bytes-per-point estimate that ignored the tree's lists once cut
  // the chunks to the 16k floor: 4096 chunks, 10x slower on the H200).
  const Plan big = plan(std::size_t{1} << 26, kG1Xyzz, 0, kDefaultMsmScratchBytes, kH200Threads, fake_sort_temp);
  check_layout(big, std::size_t{1} << 26, kG1Xyzz, kDefaultMsmScratchBytes);
  EXPECT_LE(big.chunks, 8u);
  // A small limit (64 MiB above the fake sort scratch; c = 12, streamed
  // bases): fewer windows per slab first, then smaller chunks.
  const std::size_t small = std::size_t{128} << 20;
  const Plan p = plan(1000003, kG1Xyzz, 12, small, kH200Threads, fake_sort_temp, 96);
  check_layout(p, 1000003, kG1Xyzz, small);
  EXPECT_LT(p.tree_slab_windows, p.windows);
}

// The tree reduction's groups (msm::TreeReduceShape): every entry of a
// window belongs to exactly one group, every chunk's bucket d to the groups
// whose weights sum to d (so sum_g weight_g * (group sum) = sum_d d B_d), the
// weights fit the 2^h-bucket E window (C_a at a <= 2^h, scaled by 2^h; D_b at
// b < 2^h), and the rounds bring the longest group to one point.
TEST(GpuMsmPlan, AffineTreeReductionWeighsEveryBucketByItsDigit) {
  for (int c = 3; c <= 22; ++c) {
    for (std::uint32_t chunks = 1; chunks <= kTreeReduceMaxChunks; ++chunks) {
      SCOPED_TRACE(::testing::Message() << "c=" << c << " chunks=" << chunks);
      const TreeReduceShape s = tree_reduce_shape(c, chunks);
      const std::uint64_t digits = buckets_per_window(c);
      const std::uint32_t low = std::uint32_t{1} << s.h;
      ASSERT_LE(s.a_max, low);
      ASSERT_EQ(s.window_groups, s.a_max + low - 1);
      std::vector<unsigned char> seen(s.window_entries, 0);
      std::vector<std::uint64_t> weight(chunks * (digits + 1), 0);
      std::uint32_t longest = 0;
      for (std::uint32_t g = 0; g < s.window_groups; ++g) {
        const TreeReduceGroup grp = tree_reduce_group(s, g);
        ASSERT_LE(grp.start + grp.len, s.window_entries) << g;
        ASSERT_GT(grp.len, 0u) << g;
        longest = std::max(longest, grp.len);
        // Group g sits at E bucket weight / 2^h (C) or weight (D).
        if (g < s.a_max) {
          ASSERT_EQ(grp.weight, (g + 1) << s.h);
        } else {
          ASSERT_EQ(grp.weight, g - s.a_max + 1);
          ASSERT_LT(grp.weight, low);
        }
        for (std::uint64_t e = grp.start; e < grp.start + grp.len; ++e) {
          ASSERT_EQ(seen[e], 0) << "entry " << e << " in two groups";
          seen[e] = 1;
          const TreeReduceEntry x = tree_reduce_entry(s, e);
          ASSERT_LT(x.chunk, chunks);
          ASSERT_GE(x.digit, 1u);
          ASSERT_LE(x.digit, digits);
          weight[x.chunk * (digits + 1) + x.digit] += grp.weight;
        }
      }
      for (std::uint64_t e = 0; e < s.window_entries; ++e) ASSERT_EQ(seen[e], 1) << "entry " << e << " in no group";
      for (std::uint32_t k = 0; k < chunks; ++k) {
        for (std::uint64_t d = 1; d <= digits; ++d) ASSERT_EQ(weight[k * (digits + 1) + d], d) << "d=" << d;
      }
      EXPECT_EQ(s.rounds, tree_rounds_for(longest));
    }
  }
  // c = 20 (the bench's 2^24..2^27): 2^20 entries and 1535 groups per window
  // for one chunk, against 2^19 buckets reduced by two XYZZ adds each.
  const TreeReduceShape s20 = tree_reduce_shape(20, 1);
  EXPECT_EQ(s20.h, 10);
  EXPECT_EQ(s20.a_max, 512u);
  EXPECT_EQ(s20.window_groups, 1535u);
  EXPECT_EQ(s20.window_entries, (std::uint64_t{1} << 20) - 1024 - 512 + 1);
  EXPECT_EQ(s20.rounds, 10);
}

// The tree's window model (tree_model_cost, from 2^22 points): in the H200's
// 32 GiB arena G1 2^24 keeps c = 20 (measured 87.8 ms vs 99.9 at c = 22),
// G1 2^26 takes c = 22 (316.1 vs 325.2 ms: a window fewer outweighs 4x the
// buckets once they are reduced by trees), G2 2^25 keeps c = 20; without the
// tree reduction (3+ chunks) the running-sum reduction's cost keeps c small.
TEST(GpuMsmPlan, AffineTreeWindowModel) {
  const std::size_t limit = std::size_t{32} << 30;
  const auto pick = [&](std::size_t n, std::size_t xyzz) {
    return plan(n, xyzz, 0, limit, kH200Threads, fake_sort_temp).window_bits;
  };
  EXPECT_EQ(pick(std::size_t{1} << 24, kG1Xyzz), 20);
  EXPECT_EQ(pick(std::size_t{1} << 26, kG1Xyzz), 22);
  EXPECT_EQ(pick(std::size_t{1} << 25, kG2Xyzz), 20);
  // The model's own ordering at the measured points.
  EXPECT_LT(tree_model_cost(std::size_t{1} << 24, 20, 1, true, false),
            tree_model_cost(std::size_t{1} << 24, 22, 1, true, false));
  EXPECT_LT(tree_model_cost(std::size_t{1} << 26, 22, 1, true, false),
            tree_model_cost(std::size_t{1} << 26, 20, 1, true, false));
  // c = 22 with the running-sum reduction (25M XYZZ buckets) loses to c = 20 reduced by trees.
  EXPECT_LT(tree_model_cost(std::size_t{1} << 26, 20, 1, true, false),
            tree_model_cost(std::size_t{1} << 26, 22, 3, false, false));
  // Below kTreeModelMinPoints model_cost decides: at 2^20 the window whose
  // modelled cost is lowest among those that fit.
  int best_c = 0;
  double best = 1e300;
  for (int c = kAutoWindowBitsMin; c <= kAutoWindowBitsMax; ++c) {
    const double cost = model_cost(std::size_t{1} << 20, c, 1, kH200Threads);
    if (cost < best) {
      best = cost;
      best_c = c;
    }
  }
  EXPECT_EQ(pick(std::size_t{1} << 20, kG1Xyzz), best_c);
}

// The tree sorts window by window only where that saves radix passes, and
// then reserves CUB's scratch for one window's entries, not all of them.
TEST(GpuMsmPlan, AffineTreeSortsByWindowWhereItSavesPasses) {
  EXPECT_TRUE(tree_sorts_by_window(22));   // 22 bits: 3 passes; 26 key bits: 4
  EXPECT_TRUE(tree_sorts_by_window(16));   // 2 against 3
  EXPECT_TRUE(tree_sorts_by_window(12));   // 2 against 3 (22 windows: 17 key bits)
  EXPECT_FALSE(tree_sorts_by_window(20));  // 3 either way
  EXPECT_FALSE(tree_sorts_by_window(17));  // 3 either way (21 key bits)
  const std::size_t limit = std::size_t{32} << 30;
  const std::size_t n = std::size_t{1} << 26;
  for (int c : {20, 22}) {
    const Plan tree = plan(n, kG1Xyzz, c, limit, kH200Threads, fake_sort_temp);
    ASSERT_EQ(tree.chunks, 1u);
    const std::size_t all_entries = fake_sort_temp(n * std::size_t(tree.windows), key_bits(c));
    EXPECT_EQ(tree.sort_temp_bytes, tree_sorts_by_window(c) ? fake_sort_temp(n, c) : all_entries) << c;
  }
}

// A 32 GiB arena (the default of devices under kLargeDeviceBytes): G1 2^24
// runs 4-window slabs on two buffer sets, and 2^27 (the H MSM) keeps both sets
// in two chunks. The sets overlay the sort keys: the plan is smaller than the
// regions laid end to end. The H200's own default (58.2 GiB) takes 2^27 in one
// chunk on two sets (54.1 GiB with CUB's sort temp; H200: 585.4 against 619.3 ms).
TEST(GpuMsmPlan, AffineTreeTwoSetsInTheH200Arena) {
  const std::size_t h200_bytes = std::size_t{143155} << 20;  // 139.8 GiB (cudaDeviceProp::totalGlobalMem)
  const std::size_t h200_limit = default_msm_scratch_bytes(h200_bytes);
  EXPECT_EQ(h200_limit, h200_bytes / 12 * 5);
  const std::size_t limit = std::size_t{32} << 30;
  const Plan p24 = plan(std::size_t{1} << 24, kG1Xyzz, 0, limit, kH200Threads, fake_sort_temp);
  check_layout(p24, std::size_t{1} << 24, kG1Xyzz, limit);
  EXPECT_EQ(p24.chunks, 1u);
  EXPECT_EQ(p24.tree_slab_windows, 4);
  EXPECT_EQ(p24.tree_sets, 2);
  EXPECT_EQ(p24.tree_list_off[0], p24.keys_off[0]);
  EXPECT_LT(p24.total_bytes, p24.sort_temp_off + p24.sort_temp_bytes + 2 * p24.tree_set_bytes);
  const std::size_t h = (std::size_t{1} << 27) - 1;
  const Plan p27 = plan(h, kG1Xyzz, 0, limit, kH200Threads, fake_sort_temp);
  check_layout(p27, h, kG1Xyzz, limit);
  EXPECT_EQ(p27.chunks, 2u);
  EXPECT_EQ(p27.tree_sets, 2);
  // Both reduce by trees (one and two chunks of affine buckets); G2 2^25 too.
  EXPECT_EQ(p24.tree_reduce_chunks, 1u);
  EXPECT_EQ(p27.tree_reduce_chunks, 2u);
  const Plan g2 = plan(std::size_t{1} << 25, kG2Xyzz, 0, limit, kH200Threads, fake_sort_temp);
  check_layout(g2, std::size_t{1} << 25, kG2Xyzz, limit);
  EXPECT_EQ(g2.tree_reduce_chunks, g2.chunks);
  // Three chunks keep the XYZZ buckets and the running-sum reduction.
  const Plan p27_8 = plan(h, kG1Xyzz, 0, kDefaultMsmScratchBytes, kH200Threads, fake_sort_temp);
  check_layout(p27_8, h, kG1Xyzz, kDefaultMsmScratchBytes);
  EXPECT_GT(p27_8.chunks, 2u);
  EXPECT_EQ(p27_8.tree_reduce_chunks, 0u);
  // GpuMsm.AffineTreeSlabsOnTwoStreams' shape (c = 4, 2^20 + 7 points, the
  // 8 GiB test arena): several slabs on two sets, G1 and G2.
  for (std::size_t xyzz : {kG1Xyzz, kG2Xyzz}) {
    const std::size_t n = (std::size_t{1} << 20) + 7;
    const Plan q = plan(n, xyzz, 4, kDefaultMsmScratchBytes, kH200Threads, fake_sort_temp);
    check_layout(q, n, xyzz, kDefaultMsmScratchBytes);
    EXPECT_EQ(q.chunks, 1u);
    EXPECT_EQ(q.tree_sets, 2);
    EXPECT_GT(q.windows, 2 * q.tree_slab_windows);
  }
  // The H200 default: the H MSM in one chunk, both sets, one chunk of affine
  // buckets for the reduction.
  const Plan p27_h200 = plan(h, kG1Xyzz, 0, h200_limit, kH200Threads, fake_sort_temp);
  check_layout(p27_h200, h, kG1Xyzz, h200_limit);
  EXPECT_EQ(p27_h200.chunks, 1u);
  EXPECT_EQ(p27_h200.tree_sets, 2);
  EXPECT_EQ(p27_h200.tree_reduce_chunks, 1u);
  EXPECT_GT(p27_h200.total_bytes, limit + (std::size_t{16} << 30));  // why the 32 GiB arena splits it
  // Smaller cards keep the 8 GiB floor; a quarter of the memory up to 32 GiB
  // below kLargeDeviceBytes; 5/12 from there, up to 64 GiB.
  EXPECT_EQ(default_msm_scratch_bytes(std::size_t{16} << 30), kDefaultMsmScratchBytes);
  EXPECT_EQ(default_msm_scratch_bytes(std::size_t{80} << 30), std::size_t{20} << 30);
  EXPECT_EQ(default_msm_scratch_bytes(kLargeDeviceBytes - 1), (kLargeDeviceBytes - 1) / 4);
  EXPECT_EQ(default_msm_scratch_bytes(std::size_t{192} << 30), std::size_t{64} << 30);
}

}  // namespace
}  // namespace cuzk::gpu::msm
