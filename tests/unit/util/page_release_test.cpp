#include "util/page_release.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "unit/util/resident_pages.hpp"

namespace cuzk {
namespace {

using cuzk::testing::resident_pages;

TEST(ReleasedPages, GivesTheInteriorPagesBackAndKeepsTheEdges) {
  const std::size_t n = (std::size_t{32} << 20) / sizeof(std::uint64_t) + 3;  // not page-aligned at the end
  std::vector<std::uint64_t> v(n);
  std::iota(v.begin(), v.end(), std::uint64_t{1});
  const std::size_t bytes = n * sizeof(std::uint64_t);
  const std::size_t pages = resident_pages(v.data(), bytes);
  ASSERT_GT(pages, std::size_t{8000});  // 32 MiB touched: ~8192 pages of 4 KiB

  ReleasedPages r = ReleasedPages::release(v.data(), bytes);
  EXPECT_GE(r.bytes(), bytes - 2 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(resident_pages(v.data(), bytes), 0u);
  // The partial last page keeps its values.
  EXPECT_EQ(v.back(), n);

  r.restore();
  EXPECT_TRUE(r.empty());
  // Readable again, zero until refilled; refilled, the data is back.
  EXPECT_EQ(v[n / 2], 0u);
  std::iota(v.begin(), v.end(), std::uint64_t{1});
  EXPECT_EQ(v[n / 2], n / 2 + 1);
}

TEST(ReleasedPages, ARangeWithoutAWholePageReleasesNothing) {
  std::vector<std::uint8_t> v(100, 7);
  ReleasedPages r = ReleasedPages::release(v.data(), v.size());
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(v[50], 7);
  EXPECT_TRUE(ReleasedPages::release(nullptr, 1 << 20).empty());
}

TEST(ReleasedPages, DestructionRestoresAccess) {
  std::vector<std::uint64_t> v((std::size_t{4} << 20) / sizeof(std::uint64_t), 5);
  { ReleasedPages r = ReleasedPages::release(v.data(), v.size() * sizeof(std::uint64_t)); }
  v[v.size() / 2] = 9;  // would fault if the pages were still protected
  EXPECT_EQ(v[v.size() / 2], 9u);
}

TEST(ReleasedPagesDeathTest, ReadingReleasedMemoryFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<std::uint64_t> v((std::size_t{4} << 20) / sizeof(std::uint64_t), 5);
  ReleasedPages r = ReleasedPages::release(v.data(), v.size() * sizeof(std::uint64_t));
  volatile const std::uint64_t* p = v.data() + v.size() / 2;
  EXPECT_DEATH(
      {
        std::uint64_t x = *p;
        (void)x;
      },
      "");
}

}  // namespace
}  // namespace cuzk
