#include "ec/point.hpp"

#include <gtest/gtest.h>

namespace cuzk::ec {
namespace {

TEST(Generators, OnCurve) {
  const auto& g = kG1Generator;
  EXPECT_EQ(g.y.square(), g.x.square() * g.x + kG1B);
  const auto& h = kG2Generator;
  EXPECT_EQ(h.y.square(), h.x.square() * h.x + kG2B);
}

}  // namespace
}  // namespace cuzk::ec
