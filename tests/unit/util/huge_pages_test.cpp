#include "util/huge_pages.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <vector>

#include "unit/util/resident_pages.hpp"

namespace cuzk {
namespace {

using cuzk::testing::resident_pages;

// A fresh anonymous mapping, unmapped at scope exit: no allocator can hand
// the test pages that are already resident.
class Mapping {
 public:
  explicit Mapping(std::size_t bytes) : bytes_(bytes) {
    p_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) std::abort();
  }
  ~Mapping() { ::munmap(p_, bytes_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::uint8_t* data() const { return static_cast<std::uint8_t*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_;
  std::size_t bytes_;
};

TEST(HugePages, ALargeFreshRangeIsResidentAndZeroBeforeItIsWritten) {
  Mapping m(kHugePagesMinBytes + (std::size_t{16} << 20));
  ASSERT_EQ(resident_pages(m.data(), m.bytes()), 0u);
  // An unaligned start and end: only the whole pages inside are populated.
  if (!prefault_huge_pages(m.data() + 100, m.bytes() - 200)) {
    GTEST_SKIP() << "this kernel refused MADV_POPULATE_WRITE (before Linux 5.14?): ranges fault in as written";
  }
  const std::size_t page = 4096, pages = m.bytes() / page;
  EXPECT_GE(resident_pages(m.data(), m.bytes()), pages - 2);
  // Populated pages read as zeros and take writes.
  EXPECT_EQ(m.data()[m.bytes() / 2], 0u);
  m.data()[m.bytes() / 2] = 7;
  m.data()[m.bytes() - 1] = 9;
  EXPECT_EQ(m.data()[m.bytes() / 2], 7u);
  EXPECT_EQ(m.data()[m.bytes() - 1], 9u);
}

TEST(HugePages, SlicesPopulatedOnSeveralThreadsCoverTheWholeRange) {
  // 200 MiB + 12 KiB in 4 slices: the last slice takes the rest.
  Mapping m((std::size_t{200} << 20) + 3 * 4096);
  if (!prefault_huge_pages(m.data() + 8, m.bytes() - 16, 4)) {
    GTEST_SKIP() << "this kernel refused MADV_POPULATE_WRITE (before Linux 5.14?): ranges fault in as written";
  }
  const std::size_t pages = m.bytes() / 4096;
  EXPECT_GE(resident_pages(m.data(), m.bytes()), pages - 2);
  for (std::size_t at = 4096; at < m.bytes() - 4096; at += std::size_t{1} << 20) EXPECT_EQ(m.data()[at], 0u) << at;
  m.data()[m.bytes() - 4097] = 3;
  EXPECT_EQ(m.data()[m.bytes() - 4097], 3u);
}

TEST(HugePages, RangesUnder64MiBAreLeftToFaultIn) {
  Mapping m(kHugePagesMinBytes - 4096);
  EXPECT_FALSE(prefault_huge_pages(m.data(), m.bytes()));
  EXPECT_EQ(resident_pages(m.data(), m.bytes()), 0u);
  EXPECT_FALSE(prefault_huge_pages(nullptr, 0));
}

TEST(HugePages, AVectorsSpareCapacityIsPopulatedAndItsElementsKept) {
  std::vector<std::uint64_t> v{1, 2, 3};
  v.reserve((kHugePagesMinBytes + (std::size_t{8} << 20)) / sizeof(std::uint64_t));
  const bool populated = prefault_huge_pages_for(v);
  EXPECT_EQ(v, (std::vector<std::uint64_t>{1, 2, 3}));
  if (populated) {
    const std::size_t spare = (v.capacity() - v.size()) * sizeof(std::uint64_t);
    EXPECT_GE(resident_pages(v.data() + v.size(), spare), spare / 4096 - 2);
  }
  v.resize(v.capacity(), 5);
  EXPECT_EQ(v[v.size() / 2], 5u);
  EXPECT_EQ(v[2], 3u);
}

}  // namespace
}  // namespace cuzk
