// Helpers shared by the offline command groups (offline.cpp, porep.cpp,
// post.cpp, update.cpp): whole-file reads and writes, hex, the sector-size
// syntax of --sector-size, and the error-to-exit-status mapping the groups
// have in common. Every input error is a Malformed: one line
// "error: <kind>: <message>" (cli/cli_contract.hpp), exit 2 unless it says
// otherwise.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_contract.hpp"
#include "cuzkctl/commands.hpp"

namespace cuzkctl {

// A malformed-input failure: reported on one line with its kind; exit
// status 2 by default.
class Malformed : public std::runtime_error {
 public:
  explicit Malformed(const std::string& what, std::string_view kind = cuzk::cli::kind::kInvalidInput,
                     int exit_code = kExitMalformed)
      : std::runtime_error(what), kind_(kind), exit_code_(exit_code) {}
  std::string_view kind() const { return kind_; }
  int exit_code() const { return exit_code_; }

 private:
  std::string_view kind_;  // one of the cli::kind constants (static storage)
  int exit_code_;
};

// The command line is wrong (a missing or bad option): invalid_argument, exit 2.
struct Usage : Malformed {
  explicit Usage(const std::string& what) : Malformed(what, cuzk::cli::kind::kInvalidArgument) {}
};

// An input that cannot be opened: not_found when the path does not exist,
// else io; exit 2.
Malformed unreadable(const std::filesystem::path& path);
// An output that cannot be written: io, exit 1 (the input was fine).
Malformed unwritable(const std::filesystem::path& path);

// The whole file. Throws unreadable() when it cannot be opened.
std::string read_text(const std::filesystem::path& path);
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path);

// Creates or truncates `path`. Throws unwritable() when it cannot be written.
void write_bytes(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

// Lowercase hex, two digits a byte, in byte order.
std::string hex(std::span<const std::uint8_t> bytes);

// 64 hex digits (either case, optionally after "0x") -> 32 bytes in order.
// Throws Malformed naming `what` (e.g. "--randomness").
std::array<std::uint8_t, 32> parse_hex32(std::string_view s, std::string_view what);

// "2KiB", "8MiB", "512MiB", "32GiB", "64GiB", "2048B" or a byte count ->
// bytes. Throws Malformed on anything else.
std::uint64_t parse_sector_size(const std::string& s);

// Progress of a long step on stderr. On a terminal one line rewritten in
// place at most four times a second; otherwise (a pipe, a log file) a plain
// line at every tenth of the way, so that lines never run together.
class Progress {
 public:
  explicit Progress(std::string what);
  void operator()(std::uint64_t done, std::uint64_t total);

 private:
  std::string what_;
  bool tty_;
  int last_tenth_ = -1;
  std::chrono::steady_clock::time_point last_{};
};

// Runs `fn` and reports the errors every offline group shares as one line
// on stderr plus ctx.exit_code:
//   Malformed                          "error: <its kind>: <what>"         -> its exit status
//   std::filesystem::filesystem_error  "error: not_found|io: <what>"       -> 2
//   groth16::ParamsError               "error: invalid_input: params: <what>" -> 2
//   circuits::filecoin::PorepC2Error   "error: invalid_proof|invalid_input: [<c2_label>: ]<what>"
//       -> 1 for kInvalidProof, else 2.
// Any other exception propagates, so a group wraps this call in a try that
// catches its own error types.
void run_reporting_errors(Context& ctx, std::string_view c2_label, const std::function<void()>& fn);

}  // namespace cuzkctl
