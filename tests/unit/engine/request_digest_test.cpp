// The request digest the journal keeps to compare a resubmitted request with
// once a job's input is gone (engine/request_digest.hpp): it covers exactly
// what JobRequest::same_work compares.
#include <gtest/gtest.h>

#include "engine/request_digest.hpp"
#include "unit/engine/demo_request.hpp"

namespace cuzk::engine {
namespace {

using testing::demo;

TEST(RequestDigest, CoversWhatSameWorkComparesAndNothingElse) {
  JobRequest a = demo(5, 1, "r");
  const policy::RequestDigest d = request_digest(a);
  JobRequest b = a;
  b.request_id = "other";
  b.priority = Priority::kCritical;
  EXPECT_EQ(request_digest(b), d);
  b = a;
  b.demo_seed = 2;
  EXPECT_NE(request_digest(b), d);
  b = a;
  b.demo_log_domain = 6;
  EXPECT_NE(request_digest(b), d);
  b = a;
  b.kind = ProofKind::kPoRepC2;
  EXPECT_NE(request_digest(b), d);
  JobRequest c1 = a;
  c1.kind = ProofKind::kPoRepC2;
  c1.input = "{\"a\":1}";
  JobRequest c2 = c1;
  c2.input = "{\"a\":2}";
  EXPECT_NE(request_digest(c1), request_digest(c2));
}

}  // namespace
}  // namespace cuzk::engine
