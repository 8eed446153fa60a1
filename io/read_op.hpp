// Bookkeeping shared by both back ends for one request that may need several
// read syscalls (split by max_op_bytes, or resumed after a short read).
// Internal to io/.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "io/file_source.hpp"

namespace cuzk::io::detail {

// Largest read issued as one op: read(2) returns at most 0x7ffff000 bytes;
// 1 GiB keeps io_uring's u32 length and O_DIRECT alignment both happy.
inline constexpr std::size_t kMaxOpBytes = std::size_t{1} << 30;

struct PendingRead {
  ReadRequest req;
  std::size_t done_bytes = 0;

  std::uint64_t op_offset() const { return req.offset_bytes + done_bytes; }
  std::byte* op_dst() const { return req.dst + done_bytes; }
  std::size_t op_length(std::size_t max_op_bytes) const {
    std::size_t left = req.length_bytes - done_bytes;
    return left < max_op_bytes ? left : max_op_bytes;
  }
  // Accounts for one op's result (bytes, or -errno). Returns true when the
  // request is finished (complete, end of file, or failed with *err set).
  bool advance(long result, bool direct, int* err) {
    if (result == -EINTR || result == -EAGAIN) return false;  // retry the same op
    if (result < 0) {
      *err = int(-result);
      return true;
    }
    if (result == 0) return true;  // end of file
    done_bytes += std::size_t(result);
    if (done_bytes == req.length_bytes) return true;
    // An O_DIRECT read stops short of an aligned length only at end of file;
    // the rest could not be resumed at an unaligned offset anyway.
    if (direct && done_bytes % kDirectAlignmentBytes != 0) return true;
    return false;
  }
};

// submit()'s preconditions (caller bugs, so they abort): room in the queue,
// and under O_DIRECT an aligned offset, length and buffer.
inline void check_submittable(const ReadRequest& req, std::size_t in_flight, std::size_t queue_depth, bool direct) {
  if (in_flight >= queue_depth) std::abort();
  if (direct && (req.offset_bytes % kDirectAlignmentBytes != 0 || req.length_bytes % kDirectAlignmentBytes != 0 ||
                 reinterpret_cast<std::uintptr_t>(req.dst) % kDirectAlignmentBytes != 0)) {
    std::abort();
  }
}

// The per-op cap for a source: the option, clamped and (under O_DIRECT)
// rounded down to the alignment.
inline std::size_t effective_max_op(std::size_t opt_bytes, bool direct) {
  std::size_t m = opt_bytes == 0 || opt_bytes > kMaxOpBytes ? kMaxOpBytes : opt_bytes;
  if (direct) m = m / kDirectAlignmentBytes * kDirectAlignmentBytes;
  return m == 0 ? kDirectAlignmentBytes : m;
}

}  // namespace cuzk::io::detail
