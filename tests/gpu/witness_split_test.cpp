// The fused selection + split of the witness MSMs' scalars (host only: runs
// without a device) against the obvious two steps: select the scalars into a
// vector, then split that vector into ones / tail.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ff/fp.hpp"
#include "gpu/groth16/witness_split.hpp"

namespace cuzk::gpu::detail {
namespace {

using ff::Fr;

struct Source {
  std::vector<Fr> xs;
  groth16::BitVec density;  // unused when all_selected
  bool all_selected = false;
};

// p_zero / p_one: fractions of scalars 0 and 1; p_set: density of the bit vector.
Source make_source(std::mt19937_64& rng, std::size_t n, double p_zero, double p_one, double p_set, bool all) {
  Source s;
  s.all_selected = all;
  s.density = groth16::BitVec(n);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = u(rng);
    s.xs.push_back(r < p_zero ? Fr::zero() : r < p_zero + p_one ? Fr::one() : Fr::from_u64(rng() | 2));
    if (u(rng) < p_set) s.density.set(i);
  }
  return s;
}

struct Reference {
  std::vector<Fr> selected;
  std::vector<std::uint32_t> ones, tail_idx;
  std::vector<Fr> tail;
  std::size_t zeros = 0;
};

Reference reference(const std::vector<Source>& sources) {
  Reference r;
  for (const Source& s : sources) {
    for (std::size_t i = 0; i < s.xs.size(); ++i) {
      if (s.all_selected || s.density.get(i)) r.selected.push_back(s.xs[i]);
    }
  }
  for (std::size_t i = 0; i < r.selected.size(); ++i) {
    const Fr& x = r.selected[i];
    if (x == Fr::zero()) {
      ++r.zeros;
    } else if (x == Fr::one()) {
      r.ones.push_back(static_cast<std::uint32_t>(i));
    } else {
      r.tail_idx.push_back(static_cast<std::uint32_t>(i));
      r.tail.push_back(x);
    }
  }
  return r;
}

void check(const std::vector<Source>& sources, ThreadPool& pool) {
  std::vector<SelectSegment> segments;
  for (const Source& s : sources) segments.push_back({s.xs, s.all_selected ? nullptr : &s.density});
  const Reference want = reference(sources);
  const SelectSplit split(segments, pool);
  const SelectSplitCounts& c = split.totals();
  ASSERT_EQ(c.selected, want.selected.size());
  ASSERT_EQ(c.zeros, want.zeros);
  ASSERT_EQ(c.ones, want.ones.size());
  ASSERT_EQ(c.tail, want.tail.size());

  // Poisoned outputs one element longer than needed: the fill must write
  // exactly its count and nothing past it.
  const Fr poison = Fr::from_u64(0xdead);
  std::vector<std::uint32_t> ones(c.ones + 1, 0xffffffffu), tail_idx(c.tail + 1, 0xffffffffu);
  std::vector<Fr> tail(c.tail + 1, poison), selected(c.selected + 1, poison);
  split.fill_split(ones.data(), tail_idx.data(), tail.data(), pool);
  split.fill_selected(selected.data(), pool);
  EXPECT_EQ(ones.back(), 0xffffffffu);
  EXPECT_EQ(tail_idx.back(), 0xffffffffu);
  EXPECT_EQ(tail.back(), poison);
  EXPECT_EQ(selected.back(), poison);
  ones.pop_back();
  tail_idx.pop_back();
  tail.pop_back();
  selected.pop_back();
  EXPECT_EQ(ones, want.ones);
  EXPECT_EQ(tail_idx, want.tail_idx);
  EXPECT_EQ(tail, want.tail);
  EXPECT_EQ(selected, want.selected);
}

TEST(WitnessSplit, MatchesSelectThenSplitOnRandomShapes) {
  ThreadPool pool(4);
  std::mt19937_64 rng(20261130);
  // Lengths around the 64-bit word and the 4096-element chunk minimum, and
  // long enough for several chunks per thread.
  const std::size_t lengths[] = {0, 1, 63, 64, 65, 127, 4095, 4096, 4097, 8191, 20000, 100003};
  for (std::size_t n_in : {std::size_t{0}, std::size_t{1}, std::size_t{70}}) {
    for (std::size_t n_aux : lengths) {
      for (double p_set : {0.0, 0.3, 1.0}) {
        SCOPED_TRACE(testing::Message() << "inputs " << n_in << ", aux " << n_aux << ", density " << p_set);
        // A's shape: every input, then aux by density; B's: both by density; L's: aux alone.
        check({make_source(rng, n_in, 0.45, 0.45, 1.0, true), make_source(rng, n_aux, 0.45, 0.45, p_set, false)}, pool);
        check({make_source(rng, n_in, 0.2, 0.5, p_set, false), make_source(rng, n_aux, 0.1, 0.2, p_set, false)}, pool);
        check({make_source(rng, n_aux, 0.45, 0.45, 1.0, true)}, pool);
      }
    }
  }
}

TEST(WitnessSplit, AllZeroAllOneAndNoSegments) {
  ThreadPool pool(3);
  std::mt19937_64 rng(7);
  check({make_source(rng, 10000, 1.0, 0.0, 0.5, false)}, pool);  // all zero: no ones, no tail
  check({make_source(rng, 10000, 0.0, 1.0, 0.5, false)}, pool);  // all one: no tail
  check({make_source(rng, 10000, 0.0, 0.0, 0.9, false)}, pool);  // all tail
  check({}, pool);
  std::vector<SelectSegment> none;
  const SelectSplit empty(none, pool);
  EXPECT_EQ(empty.totals().selected, 0u);
}

TEST(WitnessSplit, OneThreadPool) {
  ThreadPool pool(1);
  std::mt19937_64 rng(11);
  check({make_source(rng, 33, 0.3, 0.3, 1.0, true), make_source(rng, 50001, 0.3, 0.3, 0.6, false)}, pool);
}

}  // namespace
}  // namespace cuzk::gpu::detail
