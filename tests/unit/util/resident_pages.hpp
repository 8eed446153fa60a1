// Test helper: how many whole pages inside [p, p + bytes) are resident, by
// mincore (an oracle independent of util/page_release.hpp's arithmetic).
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuzk::testing {

inline std::size_t resident_pages(const void* p, std::size_t bytes) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (start + page - 1) & ~(page - 1);
  const std::uintptr_t end = (start + bytes) & ~(page - 1);
  if (end <= begin) return 0;
  std::vector<unsigned char> v((end - begin) / page);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, v.data()), 0);
  std::size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

}  // namespace cuzk::testing
