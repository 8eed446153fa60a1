// The one way the project reads JSON that comes from outside (C1 outputs,
// snarkjs keys/proofs/public inputs, parameters.json, seal records):
// nlohmann's DOM is built through a SAX filter that bounds the nesting depth
// and the document size, and every failure is one typed error.
//
// Why: nlohmann parses iteratively, but other code walking the DOM (dump(),
// recursive readers) recurses once per level, so a value nested 100,000 deep
// (a few hundred KB of "[") overflows the stack. Numbers out of double range
// ("1e400") are nlohmann out_of_range exceptions, not parse errors; a NUL byte
// ends nlohmann's input early, so "{...}\0garbage" would be accepted. All three
// are reported here as JsonInputError.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuzk {

struct JsonLimits {
  // Arrays/objects nested deeper than this are refused. The deepest genuine
  // document we read (a C1 output) nests 17 levels.
  std::size_t max_depth = 64;
  // A 32 GiB PoRep C1 output is about 51 MB; 64 GiB about twice that.
  std::size_t max_bytes = std::size_t{256} << 20;
};

enum class JsonInputErrorKind : std::uint8_t {
  kSyntax,       // not one JSON document (including trailing data, NUL bytes)
  kTooDeep,      // nesting beyond JsonLimits::max_depth
  kTooLarge,     // text longer than JsonLimits::max_bytes
  kNumberRange,  // a number outside the double range (e.g. 1e400)
};

std::string_view to_string(JsonInputErrorKind kind);

class JsonInputError : public std::runtime_error {
 public:
  static constexpr std::uint64_t kUnknownOffset = ~std::uint64_t{0};
  JsonInputError(JsonInputErrorKind kind, std::uint64_t byte_offset, const std::string& detail);
  JsonInputErrorKind kind() const { return kind_; }
  // Where the parser stopped, or kUnknownOffset (depth and size limits).
  std::uint64_t byte_offset() const { return byte_offset_; }

 private:
  JsonInputErrorKind kind_;
  std::uint64_t byte_offset_;
};

// Parses exactly one JSON document (surrounding whitespace allowed).
// Throws JsonInputError; never any nlohmann exception.
nlohmann::json parse_json_input(std::string_view text, const JsonLimits& limits = {});

// A value for an error message, at most max_chars long: scalars as JSON text
// (truncated with "..."), arrays and objects as "array of N" / "object of N"
// (never a recursive dump of untrusted content).
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = 48);

}  // namespace cuzk
