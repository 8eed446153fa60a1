// Helpers shared by the offline command groups (offline.cpp, porep.cpp,
// post.cpp, update.cpp): whole-file reads and writes, hex, the sector-size
// syntax of --sector-size, and the error-to-exit-status mapping the groups
// have in common. Every input error is a Malformed (one line, exit 2).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cuzkctl/commands.hpp"

namespace cuzkctl {

// A malformed-input failure: reported on one line, exit status 2.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The whole file. Throws Malformed when it cannot be opened.
std::string read_text(const std::filesystem::path& path);
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path);

// Creates or truncates `path`. Throws Malformed when it cannot be written.
void write_bytes(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

// Lowercase hex, two digits a byte, in byte order.
std::string hex(std::span<const std::uint8_t> bytes);

// 64 hex digits (either case, optionally after "0x") -> 32 bytes in order.
// Throws Malformed naming `what` (e.g. "--randomness").
std::array<std::uint8_t, 32> parse_hex32(std::string_view s, std::string_view what);

// "2KiB", "8MiB", "512MiB", "32GiB", "64GiB", "2048B" or a byte count ->
// bytes. Throws Malformed on anything else.
std::uint64_t parse_sector_size(const std::string& s);

// Runs `fn` and reports the errors every offline group shares as one line
// on stderr plus ctx.exit_code:
//   Malformed, std::filesystem::filesystem_error  "error: <what>"         -> 2
//   groth16::ParamsError                          "error: params: <what>" -> 2
//   circuits::filecoin::PorepC2Error              "error: <c2_label>: <what>"
//       (just "error: <what>" when c2_label is empty) -> 1 for kInvalidProof, else 2.
// Any other exception propagates, so a group wraps this call in a try that
// catches its own error types.
void run_reporting_errors(Context& ctx, std::string_view c2_label, const std::function<void()>& fn);

}  // namespace cuzkctl
