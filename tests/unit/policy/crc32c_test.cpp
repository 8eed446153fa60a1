// CRC-32C: the SSE4.2 path (where the CPU has it) against a bit-at-a-time
// definition written here, on random data of every small length and offset
// (unaligned loads, 8-byte blocks plus a tail) and on a large buffer.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "policy/crc32c.hpp"

namespace cuzk::policy {
namespace {

// The definition: reflected polynomial 0x82F63B78, inverted in and out.
std::uint32_t crc32c_bitwise(std::span<const std::uint8_t> data) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint8_t b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

TEST(Crc32c, EveryLengthAndOffsetMatchesTheDefinition) {
  std::mt19937_64 rng(20261130);
  std::vector<std::uint8_t> buf(200);
  for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
  for (std::size_t off = 0; off < 8; ++off) {
    for (std::size_t len = 0; off + len <= 120; ++len) {
      std::span<const std::uint8_t> s(buf.data() + off, len);
      std::uint32_t want = crc32c_bitwise(s);
      ASSERT_EQ(crc32c(s), want) << "offset " << off << " length " << len;
      ASSERT_EQ(crc32c_bytewise(s), want) << "offset " << off << " length " << len;
    }
  }
}

TEST(Crc32c, LargeBuffersAndContinuationAgree) {
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> big((1u << 20) + 13);
  for (auto& b : big) b = static_cast<std::uint8_t>(rng());
  std::uint32_t whole = crc32c(big);
  EXPECT_EQ(whole, crc32c_bitwise(big));
  std::span<const std::uint8_t> s(big);
  EXPECT_EQ(crc32c(s.subspan(333'333), crc32c(s.first(333'333))), whole);
  big[777'777] ^= 0x04;  // one flipped bit changes it
  EXPECT_NE(crc32c(big), whole);
}

}  // namespace
}  // namespace cuzk::policy
