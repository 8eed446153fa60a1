// find_published reads parameters.json from outside: a mistyped, hostile or
// broken document gives "not published", never an exception.
#include "groth16/digest.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cuzk::groth16 {
namespace {

TEST(FindPublished, ReadsAnEntry) {
  const auto p = find_published(R"({"a.vk": {"cid": "Qm1", "digest": "ab12", "sector_size": 2048}})", "a.vk");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->cid, "Qm1");
  EXPECT_EQ(p->digest, "ab12");
  EXPECT_EQ(p->sector_size, 2048u);
  EXPECT_FALSE(find_published(R"({"a.vk": {}})", "b.vk").has_value());
}

TEST(FindPublished, MistypedOrHostileDocumentsAreNotPublished) {
  // Mistyped members read as empty (nlohmann's value() threw type_error).
  const auto p = find_published(R"({"a.vk": {"cid": 5, "digest": [1], "sector_size": "x"}})", "a.vk");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->cid, "");
  EXPECT_EQ(p->digest, "");
  EXPECT_EQ(p->sector_size, 0u);
  EXPECT_FALSE(find_published(R"({"a.vk": 7})", "a.vk").has_value());
  EXPECT_FALSE(find_published(R"({"a.vk": {"sector_size": 1e400}})", "a.vk").has_value());
  EXPECT_FALSE(
      find_published("{\"a.vk\": " + std::string(100000, '[') + std::string(100000, ']') + "}", "a.vk").has_value());
  EXPECT_FALSE(find_published(std::string("{\"a.vk\": {}}\0{}", 15), "a.vk").has_value());
}

}  // namespace
}  // namespace cuzk::groth16
