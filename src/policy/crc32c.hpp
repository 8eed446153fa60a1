// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI,
// ext4 metadata and LevelDB/RocksDB logs: detects every burst error up to 32
// bits, which covers the torn sectors and bit flips a journal meets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cuzk::policy {

// crc32c(data) continuing from a previous value (0 to start). Uses the
// SSE4.2 crc32 instruction where the CPU has it.
std::uint32_t crc32c(std::span<const std::uint8_t> data, std::uint32_t crc = 0);
// The same CRC, table-driven byte at a time on every CPU (the reference the
// hardware path is tested against).
std::uint32_t crc32c_bytewise(std::span<const std::uint8_t> data, std::uint32_t crc = 0);

}  // namespace cuzk::policy
