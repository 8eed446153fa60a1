// Fused selection + split of a witness MSM's scalars (host only, no device).
//
// The witness MSMs (A, B, L) run over scalars selected from the witness by a
// density bit vector (A: every input, then the aux whose a_aux bit is set; B:
// the inputs by b_input, then the aux by b_aux; L: every aux). Scalars 0
// contribute nothing and scalars 1 contribute their base once, so only the
// rest (the tail) needs a Pippenger MSM. This pass walks the sources once per
// chunk and writes, in the selected index space, the indices of the ones and
// the tail's indices and values straight into the caller's (pinned, reused)
// buffers: no intermediate vector of all selected scalars (that vector, 4 GiB
// for A of a 32 GiB PoRep partition, cost about 2.5 s of value-initialisation,
// page faults and re-reading per partition on the H200 host).
//
// Two parallel passes over the same chunks (ranges of source indices, multiples
// of 64 so that a chunk owns whole density words): the count pass classifies
// every selected scalar and gives each chunk its offsets (prefix sums), the
// fill pass writes. Both are order-preserving, so the output equals selecting
// first and splitting after (tests/gpu/witness_split_test.cpp checks that).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ff/fp.hpp"
#include "gpu/error.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu::detail {

// One source of a selection: the xs whose density bit is set (every x when
// density is null), in index order. A density covers at least xs.size() bits.
struct SelectSegment {
  std::span<const ff::Fr> xs;
  const groth16::BitVec* density = nullptr;
};

struct SelectSplitCounts {
  std::size_t selected = 0, zeros = 0, ones = 0, tail = 0;
};

class SelectSplit {
 public:
  // The count pass. Throws kInvalidArgument for 2^32 or more selected scalars
  // (the indices are 32-bit on the device).
  SelectSplit(std::span<const SelectSegment> segments, ThreadPool& pool) : segments_(segments.begin(), segments.end()) {
    std::size_t total = 0;
    for (const SelectSegment& s : segments_) total += s.xs.size();
    // About 8 chunks per thread, at least 4096 source elements (64 words)
    // each, taken one at a time by the threads (run_tasks): the densities are
    // uneven (B's b_aux bits sit in the first half of the aux), so a fixed
    // share of chunks per thread would leave threads idle.
    const std::size_t target = std::max<std::size_t>(1, 8 * pool.size());
    std::size_t per = std::max<std::size_t>(4096, (total + target - 1) / target);
    per = (per + 63) / 64 * 64;
    for (std::size_t g = 0; g < segments_.size(); ++g) {
      const std::size_t n = segments_[g].xs.size();
      for (std::size_t b = 0; b < n; b += per) chunks_.push_back({g, b, std::min(n, b + per), {}});
    }
    pool.run_tasks(chunks_.size(), [&](std::size_t k) {
      SelectSplitCounts c;
      for_each_selected(chunks_[k], [&](std::size_t, const ff::Fr& x) {
        ++c.selected;
        if (x.is_zero()) {
          ++c.zeros;
        } else if (x.is_one()) {
          ++c.ones;
        } else {
          ++c.tail;
        }
      });
      chunks_[k].at = c;
    });
    // Exclusive prefix sums: chunk k's counts become its output offsets.
    for (Chunk& ch : chunks_) {
      const SelectSplitCounts c = ch.at;
      ch.at = totals_;
      totals_.selected += c.selected;
      totals_.zeros += c.zeros;
      totals_.ones += c.ones;
      totals_.tail += c.tail;
    }
    if (totals_.selected >= (std::size_t{1} << 32)) {
      throw Error(ErrorKind::kInvalidArgument, "witness MSM of 2^32 or more points");
    }
  }

  const SelectSplitCounts& totals() const { return totals_; }

  // The fill pass, split form: ones[0, totals().ones) = selected indices of the
  // scalars equal to 1, tail_idx / tail[0, totals().tail) = selected indices
  // and values of the other non-zero scalars; all in selected order.
  void fill_split(std::uint32_t* ones, std::uint32_t* tail_idx, ff::Fr* tail, ThreadPool& pool) const {
    pool.run_tasks(chunks_.size(), [&](std::size_t k) {
      std::size_t o = chunks_[k].at.ones, t = chunks_[k].at.tail;
      for_each_selected(chunks_[k], [&](std::size_t sel, const ff::Fr& x) {
        if (x.is_zero()) return;
        if (x.is_one()) {
          ones[o++] = static_cast<std::uint32_t>(sel);
        } else {
          tail_idx[t] = static_cast<std::uint32_t>(sel);
          tail[t++] = x;
        }
      });
    });
  }

  // The fill pass, gathered form: out[0, totals().selected) = the selected scalars.
  void fill_selected(ff::Fr* out, ThreadPool& pool) const {
    pool.run_tasks(chunks_.size(), [&](std::size_t k) {
      for_each_selected(chunks_[k], [&](std::size_t sel, const ff::Fr& x) { out[sel] = x; });
    });
  }

 private:
  struct Chunk {
    std::size_t segment, begin, end;  // source indices [begin, end), begin a multiple of 64
    SelectSplitCounts at;             // counts after the count pass, then offsets
  };

  // f(selected index, x) for the chunk's selected xs in order (the selected
  // index counts from the chunk's offset, valid once the offsets are set).
  template <class F>
  void for_each_selected(const Chunk& ch, F&& f) const {
    const SelectSegment& s = segments_[ch.segment];
    std::size_t sel = ch.at.selected;
    if (s.density == nullptr) {
      for (std::size_t i = ch.begin; i < ch.end; ++i) f(sel++, s.xs[i]);
      return;
    }
    const std::span<const std::uint64_t> words = s.density->words();
    for (std::size_t w = ch.begin / 64; w * 64 < ch.end; ++w) {
      std::uint64_t bits = words[w];
      const std::size_t left = ch.end - w * 64;
      if (left < 64) bits &= (std::uint64_t{1} << left) - 1;  // the last word of the segment
      while (bits != 0) {
        const std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        bits &= bits - 1;
        f(sel++, s.xs[i]);
      }
    }
  }

  std::vector<SelectSegment> segments_;
  std::vector<Chunk> chunks_;
  SelectSplitCounts totals_;
};

}  // namespace cuzk::gpu::detail
