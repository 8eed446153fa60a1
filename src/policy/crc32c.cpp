#include "policy/crc32c.hpp"

#include <array>

namespace cuzk::policy {

namespace {
// table[b] = CRC of the single byte b (reflected, no pre/post inversion).
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[b] = c;
  }
  return t;
}
constexpr auto kTable = make_table();
}  // namespace

std::uint32_t crc32c(std::span<const std::uint8_t> data, std::uint32_t crc) {
  crc = ~crc;  // standard pre/post inversion, so continuation composes
  for (std::uint8_t byte : data) crc = kTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace cuzk::policy
