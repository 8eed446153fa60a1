// Backing a large, freshly allocated buffer with transparent huge pages and
// faulting it in at once, before it is filled.
//
// Why: a 32 GiB PoRep partition's witness is 4.2 GB of fresh memory each
// time a synthesis cannot reuse a proved partition's. Faulted 4 KiB page by
// page as synthesis writes it, it cost 9.3-13.6 s of kernel time and
// 4.9-6.6 s of user time on one thread; advised MADV_HUGEPAGE and populated
// with MADV_POPULATE_WRITE, 2.4-6.2 s of kernel and 0.8-1.0 s of user time
// (the user time of reused memory: the TLB, on a VM also the hypervisor's
// nested page faults). Populating 4 KiB pages alone left user time at
// 7.0-7.4 s. (Dev VM, kernel 6.18, THP `madvise`, defrag `madvise`,
// bench_synthesis on a 32 GiB C1, alternating runs, bench/RESULTS.md.)
//
// Advice only: where the kernel lacks MADV_POPULATE_WRITE (before 5.14) or
// THP is off, the buffer is left to fault in as before. Only the whole pages
// strictly inside the range are advised; ranges under 64 MiB are left alone.
// Returns whether the pages were populated (false: left to fault in).
#pragma once

#include <cstddef>
#include <vector>

namespace cuzk {

inline constexpr std::size_t kHugePagesMinBytes = std::size_t{64} << 20;

// `threads` > 1 populates that many slices of the range at once (the calling
// thread takes one): the kernel clears fresh pages at a few GB/s per core,
// which on one thread paced the R1CS cache file's load (clear_page 31% of
// its profile, bench/RESULTS.md "Parameter loading").
bool prefault_huge_pages(void* data, std::size_t bytes, std::size_t threads = 1);

// Advice alone (MADV_HUGEPAGE, the same range rules): the pages still fault
// in as they are written, 2 MiB at a time instead of 4 KiB, so that a buffer
// filled piece by piece over a long read (a .params vector) costs no
// up-front stall to populate.
void advise_huge_pages(void* data, std::size_t bytes);
template <class T>
void advise_huge_pages_for(std::vector<T>& v) {
  advise_huge_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
}

// The capacity of `v` beyond its size (call it right after a reserve that
// allocated): the part the caller is about to fill.
template <class T>
bool prefault_huge_pages_for(std::vector<T>& v, std::size_t threads = 1) {
  return prefault_huge_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T), threads);
}

}  // namespace cuzk
