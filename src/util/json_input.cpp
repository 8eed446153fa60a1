#include "util/json_input.hpp"

#include <cstring>
#include <utility>

namespace cuzk {

using json = nlohmann::json;

std::string_view to_string(JsonInputErrorKind kind) {
  switch (kind) {
    case JsonInputErrorKind::kSyntax:
      return "syntax";
    case JsonInputErrorKind::kTooDeep:
      return "too-deep";
    case JsonInputErrorKind::kTooLarge:
      return "too-large";
    case JsonInputErrorKind::kNumberRange:
      return "number-range";
  }
  return "unknown";
}

JsonInputError::JsonInputError(JsonInputErrorKind kind, std::uint64_t byte_offset, const std::string& detail)
    : std::runtime_error("JSON " + std::string(to_string(kind)) +
                         (byte_offset == kUnknownOffset ? std::string() : " at byte " + std::to_string(byte_offset)) +
                         ": " + detail),
      kind_(kind),
      byte_offset_(byte_offset) {}

namespace {

// nlohmann's own DOM builder behind a depth gate. Returning false from a SAX
// event stops the parse; the first failure is kept for the typed error.
class BoundedSax : public nlohmann::json_sax<json> {
 public:
  BoundedSax(json& root, std::size_t max_depth) : dom_(root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() override { return dom_.null(); }
  bool boolean(bool v) override { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) override { return dom_.number_float(v, s); }
  bool string(string_t& v) override { return dom_.string(v); }
  bool binary(binary_t& v) override { return dom_.binary(v); }
  bool start_object(std::size_t n) override { return enter() && dom_.start_object(n); }
  bool key(string_t& v) override { return dom_.key(v); }
  bool end_object() override {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) override { return enter() && dom_.start_array(n); }
  bool end_array() override {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // id 406: "number overflow" (out_of_range); every other id is syntax.
    fail(e.id == 406 ? JsonInputErrorKind::kNumberRange : JsonInputErrorKind::kSyntax, position, e.what());
    return false;
  }

  bool failed() const { return failed_; }
  JsonInputError error() const { return JsonInputError(kind_, offset_, detail_); }

 private:
  bool enter() {
    if (++depth_ > max_depth_) {
      fail(JsonInputErrorKind::kTooDeep, JsonInputError::kUnknownOffset,
           "nesting deeper than " + std::to_string(max_depth_));
      return false;
    }
    return true;
  }
  void fail(JsonInputErrorKind kind, std::uint64_t offset, std::string detail) {
    if (failed_) return;
    failed_ = true;
    kind_ = kind;
    offset_ = offset;
    detail_ = std::move(detail);
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  bool failed_ = false;
  JsonInputErrorKind kind_ = JsonInputErrorKind::kSyntax;
  std::uint64_t offset_ = JsonInputError::kUnknownOffset;
  std::string detail_;
};

}  // namespace

json parse_json_input(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    throw JsonInputError(JsonInputErrorKind::kTooLarge, JsonInputError::kUnknownOffset,
                         std::to_string(text.size()) + " bytes, the limit is " + std::to_string(limits.max_bytes));
  }
  // nlohmann reads a NUL byte as the end of input; JSON text never holds one.
  if (const void* nul = std::memchr(text.data(), 0, text.size())) {
    throw JsonInputError(JsonInputErrorKind::kSyntax, std::uint64_t(static_cast<const char*>(nul) - text.data()),
                         "NUL byte");
  }
  json root;
  BoundedSax sax(root, limits.max_depth);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {  // not expected with a non-throwing SAX; typed all the same
    throw JsonInputError(JsonInputErrorKind::kSyntax, JsonInputError::kUnknownOffset, e.what());
  }
  if (sax.failed()) {
    // The partial DOM is destroyed iteratively by nlohmann (no recursion).
    throw sax.error();
  }
  if (!ok) throw JsonInputError(JsonInputErrorKind::kSyntax, JsonInputError::kUnknownOffset, "not a JSON document");
  return root;
}

std::string json_excerpt(const json& value, std::size_t max_chars) {
  if (value.is_array()) return "array of " + std::to_string(value.size());
  if (value.is_object()) return "object of " + std::to_string(value.size());
  std::string s = value.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  if (s.size() > max_chars) {
    s.resize(max_chars);
    s += "...";
  }
  return s;
}

}  // namespace cuzk
