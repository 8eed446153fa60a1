// Giving the pages of a large buffer back to the kernel while the buffer
// itself (its allocation, address and size) stays, so that the owner can
// fill it again later.
//
// Why: a 32 GiB PoRep parameter set's five SRS vectors hold 51 GB of host
// memory. Once the bases are resident in device memory the GPU never reads
// them again, yet the vectors are shared (`const groth16::Parameters&`) by
// every holder and their sizes are read on every proof; releasing their
// pages keeps every holder's view intact and returns the memory.
//
// release() drops the whole pages strictly inside [data, data + bytes)
// (MADV_DONTNEED: anonymous pages are freed at once) and makes them
// inaccessible (PROT_NONE): a read of released memory is a bug and faults
// instead of returning zeros. The partial first and last pages keep their
// bytes (they may share a page with an allocator's bookkeeping). restore()
// makes the pages writable again; they read as zeros until refilled.
// A buffer must be restored before its allocation is freed or reused.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuzk {

class ReleasedPages {
 public:
  ReleasedPages() = default;
  // Releases the interior pages of [data, data + bytes); nothing when the
  // range holds no whole page. Aborts if the kernel refuses (a bug: the
  // range is not a mapping of ours).
  static ReleasedPages release(const void* data, std::size_t bytes);
  ~ReleasedPages() { restore(); }
  ReleasedPages(ReleasedPages&& o) noexcept : begin_(o.begin_), bytes_(o.bytes_) { o.bytes_ = 0; }
  ReleasedPages& operator=(ReleasedPages&& o) noexcept;
  ReleasedPages(const ReleasedPages&) = delete;
  ReleasedPages& operator=(const ReleasedPages&) = delete;

  // Makes the pages readable and writable again (zero-filled); idempotent.
  void restore();
  // Bytes given back (whole pages).
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }

 private:
  ReleasedPages(std::uintptr_t begin, std::size_t bytes) : begin_(begin), bytes_(bytes) {}
  std::uintptr_t begin_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace cuzk
