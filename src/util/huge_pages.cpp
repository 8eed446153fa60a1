#include "util/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <utility>

namespace cuzk {

namespace {

// The whole pages strictly inside [data, data + bytes), advised
// MADV_HUGEPAGE; {nullptr, 0} when the range is under kHugePagesMinBytes.
std::pair<void*, std::size_t> advise(void* data, std::size_t bytes) {
  if (bytes < kHugePagesMinBytes) return {nullptr, 0};
  constexpr std::uintptr_t kPage = 4096;
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (start + kPage - 1) & ~(kPage - 1);
  const std::uintptr_t end = (start + bytes) & ~(kPage - 1);
  if (end <= begin) return {nullptr, 0};
  void* p = reinterpret_cast<void*>(begin);
  const std::size_t n = end - begin;
  (void)::madvise(p, n, MADV_HUGEPAGE);  // EINVAL without THP: 4 KiB pages then
  return {p, n};
}

}  // namespace

bool prefault_huge_pages(void* data, std::size_t bytes) {
  const auto [p, n] = advise(data, bytes);
  if (n == 0) return false;
#ifdef MADV_POPULATE_WRITE
  return ::madvise(p, n, MADV_POPULATE_WRITE) == 0;  // EINVAL before Linux 5.14: faulted as written
#else
  return false;
#endif
}

void advise_huge_pages(void* data, std::size_t bytes) { (void)advise(data, bytes); }

}  // namespace cuzk
