#include "cuzkctl/commands/offline_util.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "circuits/filecoin/porep_c2.hpp"
#include "groth16/params.hpp"

namespace cuzkctl {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Malformed("cannot open " + path.string());
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
    throw Malformed("cannot write " + path.string());
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
  if (s.size() != 64) throw Malformed(std::string(what) + " must be 32 bytes of hex");
  const auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw Malformed(std::string(what) + " is not hex");
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
    throw Malformed("bad sector size '" + s + "'");
  }
  const std::string unit = s.substr(pos);
  if (unit.empty() || unit == "B") return n;
  if (unit == "KiB") return n << 10;
  if (unit == "MiB") return n << 20;
  if (unit == "GiB") return n << 30;
  throw Malformed("bad sector size unit '" + unit + "' (use KiB, MiB or GiB)");
}

void run_reporting_errors(Context& ctx, std::string_view c2_label, const std::function<void()>& fn) {
  using cuzk::circuits::filecoin::PorepC2Error;
  using cuzk::circuits::filecoin::PorepC2ErrorKind;
  try {
    fn();
  } catch (const Malformed& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    ctx.exit_code = kExitMalformed;
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    ctx.exit_code = kExitMalformed;
  } catch (const cuzk::groth16::ParamsError& e) {
    std::fprintf(stderr, "error: params: %s\n", e.what());
    ctx.exit_code = kExitMalformed;
  } catch (const PorepC2Error& e) {
    if (c2_label.empty()) {
      std::fprintf(stderr, "error: %s\n", e.what());
    } else {
      std::fprintf(stderr, "error: %.*s: %s\n", int(c2_label.size()), c2_label.data(), e.what());
    }
    ctx.exit_code = e.kind() == PorepC2ErrorKind::kInvalidProof ? kExitInvalid : kExitMalformed;
  }
}

}  // namespace cuzkctl
