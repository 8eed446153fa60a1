#include "cuzkctl/commands/offline_util.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "circuits/filecoin/porep_c2.hpp"
#include "groth16/params.hpp"

namespace cuzkctl {

namespace kind = cuzk::cli::kind;

Malformed unreadable(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Malformed("no such file: " + path.string(), kind::kNotFound);
  return Malformed("cannot read " + path.string(), kind::kIo);
}

Malformed unwritable(const std::filesystem::path& path) {
  return Malformed("cannot write " + path.string(), kind::kIo, kExitInvalid);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw unreadable(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  const std::string s = read_text(path);
  return {s.begin(), s.end()};
}

void write_bytes(const std::filesystem::path& path, std::span<const std::uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()))) {
    throw unwritable(path);
  }
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes.size());
  for (std::uint8_t x : bytes) {
    s.push_back(kDigits[x >> 4]);
    s.push_back(kDigits[x & 15]);
  }
  return s;
}

std::array<std::uint8_t, 32> parse_hex32(std::string_view s, std::string_view what) {
  if (s.starts_with("0x")) s.remove_prefix(2);
  if (s.size() != 64) throw Usage(std::string(what) + " must be 32 bytes of hex");
  const auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw Usage(std::string(what) + " is not hex");
  };
  std::array<std::uint8_t, 32> d{};
  for (std::size_t i = 0; i < d.size(); ++i) {
    d[i] = std::uint8_t(nibble(s[2 * i]) << 4 | nibble(s[2 * i + 1]));
  }
  return d;
}

std::uint64_t parse_sector_size(const std::string& s) {
  std::size_t pos = 0;
  std::uint64_t n = 0;
  try {
    n = std::stoull(s, &pos);
  } catch (const std::exception&) {
    throw Usage("bad sector size '" + s + "'");
  }
  const std::string unit = s.substr(pos);
  if (unit.empty() || unit == "B") return n;
  if (unit == "KiB") return n << 10;
  if (unit == "MiB") return n << 20;
  if (unit == "GiB") return n << 30;
  throw Usage("bad sector size unit '" + unit + "' (use KiB, MiB or GiB)");
}

Progress::Progress(std::string what) : what_(std::move(what)), tty_(::isatty(STDERR_FILENO) != 0) {}

void Progress::operator()(std::uint64_t done, std::uint64_t total) {
  const double percent = total != 0 ? 100.0 * double(done) / double(total) : 100.0;
  if (tty_) {
    auto now = std::chrono::steady_clock::now();
    if (done != total && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    std::fprintf(stderr, "\r%s: %5.1f%% (%llu/%llu)", what_.c_str(), percent, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
    if (done == total) std::fputc('\n', stderr);
    return;
  }
  const int tenth = done == total ? 10 : static_cast<int>(percent / 10.0);
  if (tenth == last_tenth_) return;
  last_tenth_ = tenth;
  std::fprintf(stderr, "%s: %3d%% (%llu/%llu)\n", what_.c_str(), tenth * 10, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total));
}

void run_reporting_errors(Context& ctx, std::string_view c2_label, const std::function<void()>& fn) {
  using cuzk::circuits::filecoin::PorepC2Error;
  using cuzk::circuits::filecoin::PorepC2ErrorKind;
  try {
    fn();
  } catch (const Malformed& e) {
    report_error(ctx, e.kind(), e.what(), e.exit_code());
  } catch (const std::filesystem::filesystem_error& e) {
    const bool missing = e.code() == std::errc::no_such_file_or_directory;
    report_error(ctx, missing ? kind::kNotFound : kind::kIo, e.what(), kExitMalformed);
  } catch (const cuzk::groth16::ParamsError& e) {
    // A parameter file that cannot be opened is io (missing files are
    // caught before they reach the reader: unreadable()).
    const bool io = e.kind() == cuzk::groth16::ParamsErrorKind::kIo;
    report_error(ctx, io ? kind::kIo : kind::kInvalidInput, std::string("params: ") + e.what(), kExitMalformed);
  } catch (const PorepC2Error& e) {
    const bool invalid = e.kind() == PorepC2ErrorKind::kInvalidProof;
    std::string message = c2_label.empty() ? e.what() : std::string(c2_label) + ": " + e.what();
    report_error(ctx, invalid ? kind::kInvalidProof : kind::kInvalidInput, message,
                 invalid ? kExitInvalid : kExitMalformed);
  }
}

}  // namespace cuzkctl
