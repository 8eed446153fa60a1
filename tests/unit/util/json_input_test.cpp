#include "util/json_input.hpp"

#include <gtest/gtest.h>

namespace cuzk {
namespace {

JsonInputErrorKind error_of(std::string_view text, const JsonLimits& limits = {}) {
  try {
    parse_json_input(text, limits);
  } catch (const JsonInputError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "parsed: " << text.substr(0, 80);
  return JsonInputErrorKind::kSyntax;
}

TEST(JsonInput, ParsesOneDocument) {
  const auto j = parse_json_input(" {\"a\": [1, -2, 3.5, \"x\", null, true]}\n");
  EXPECT_EQ(j["a"].size(), 6u);
  EXPECT_EQ(j["a"][1].get<int>(), -2);
  EXPECT_EQ(parse_json_input("[]").size(), 0u);
  EXPECT_EQ(parse_json_input("7").get<int>(), 7);
}

TEST(JsonInput, TrailingDataAndNulAreSyntaxErrors) {
  EXPECT_EQ(error_of("{} {}"), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of("[1] x"), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of(std::string_view("[1]\0garbage", 11)), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of(std::string_view("[1,\0 2]", 7)), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of(""), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of("{\"a\":"), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of("[1,]"), JsonInputErrorKind::kSyntax);
  EXPECT_EQ(error_of("/* c */ 1"), JsonInputErrorKind::kSyntax);
}

TEST(JsonInput, NestingIsBounded) {
  JsonLimits limits;
  limits.max_depth = 4;
  EXPECT_NO_THROW(parse_json_input("[[[[1]]]]", limits));
  EXPECT_EQ(error_of("[[[[[1]]]]]", limits), JsonInputErrorKind::kTooDeep);
  EXPECT_EQ(error_of("{\"a\":{\"a\":{\"a\":{\"a\":{}}}}}", limits), JsonInputErrorKind::kTooDeep);
  // Far deeper than any stack: refused without recursion, default limit.
  EXPECT_EQ(error_of(std::string(1000000, '[') + std::string(1000000, ']')), JsonInputErrorKind::kTooDeep);
  EXPECT_EQ(error_of(std::string(1000000, '[')), JsonInputErrorKind::kTooDeep);
  EXPECT_NO_THROW(parse_json_input(std::string(64, '[') + std::string(64, ']')));
}

TEST(JsonInput, NumbersOutOfRangeAreTyped) {
  EXPECT_EQ(error_of("1e400"), JsonInputErrorKind::kNumberRange);
  EXPECT_EQ(error_of("[0, -1e400]"), JsonInputErrorKind::kNumberRange);
  // Integers beyond 64 bits become doubles; still JSON.
  EXPECT_TRUE(parse_json_input("184467440737095516160").is_number_float());
}

TEST(JsonInput, SizeIsBounded) {
  JsonLimits limits;
  limits.max_bytes = 8;
  EXPECT_NO_THROW(parse_json_input("[1,2,3]", limits));
  EXPECT_EQ(error_of("[1,2,3,4,5]", limits), JsonInputErrorKind::kTooLarge);
}

TEST(JsonInput, ExcerptIsShortAndFlat) {
  const auto j = parse_json_input("[\"" + std::string(1000, 'x') + "\", [[1]], {\"a\": 1}, 12]");
  EXPECT_LE(json_excerpt(j[0]).size(), 51u);
  EXPECT_EQ(json_excerpt(j[1]), "array of 1");
  EXPECT_EQ(json_excerpt(j[2]), "object of 1");
  EXPECT_EQ(json_excerpt(j[3]), "12");
}

}  // namespace
}  // namespace cuzk
