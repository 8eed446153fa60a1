#include "util/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

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

bool prefault_huge_pages(void* data, std::size_t bytes, std::size_t threads) {
  const auto [p, n] = advise(data, bytes);
  if (n == 0) return false;
#ifdef MADV_POPULATE_WRITE
  // Slices of whole huge pages (the last takes the rest), at least one per 32 MiB.
  constexpr std::size_t kSliceUnit = std::size_t{2} << 20;
  const std::size_t slices = std::clamp<std::size_t>(std::min(threads, n / (16 * kSliceUnit)), 1, 64);
  const std::size_t per = (n / slices) & ~(kSliceUnit - 1);
  auto* base = static_cast<std::uint8_t*>(p);
  auto populate = [base, n, per, slices](std::size_t i) {
    const std::size_t begin = i * per, end = i + 1 == slices ? n : begin + per;
    return ::madvise(base + begin, end - begin, MADV_POPULATE_WRITE) == 0;  // EINVAL before Linux 5.14
  };
  std::vector<char> ok(slices, 0);
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(slices - 1);
    for (std::size_t i = 1; i < slices; ++i) helpers.emplace_back([&ok, populate, i] { ok[i] = populate(i); });
    ok[0] = populate(0);
  }  // joined
  return std::all_of(ok.begin(), ok.end(), [](char x) { return x != 0; });
#else
  (void)threads;
  return false;
#endif
}

void advise_huge_pages(void* data, std::size_t bytes) { (void)advise(data, bytes); }

}  // namespace cuzk
