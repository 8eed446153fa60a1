// runtime::Signal (callbacks with RAII subscriptions) and runtime::CancelFlag.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "runtime/cancel_flag.hpp"
#include "runtime/signal.hpp"

namespace cuzk::runtime {
namespace {

TEST(Signal, RunsEverySubscriberUntilItsSubscriptionGoes) {
  Signal s;
  std::vector<int> calls;
  Signal::Subscription a = s.subscribe([&] { calls.push_back(1); });
  std::optional<Signal::Subscription> b = s.subscribe([&] { calls.push_back(2); });
  s.emit();
  EXPECT_EQ(calls, (std::vector<int>{1, 2}));
  b.reset();
  EXPECT_EQ(s.subscribers(), 1u);
  s.emit();
  EXPECT_EQ(calls, (std::vector<int>{1, 2, 1}));
  Signal::Subscription moved = std::move(a);  // the moved-from one owns nothing
  a.reset();
  EXPECT_EQ(s.subscribers(), 1u);
  moved.reset();
  EXPECT_EQ(s.subscribers(), 0u);
  s.emit();
  EXPECT_EQ(calls.size(), 3u);
}

TEST(Signal, ASubscriberMayDropItselfWhileRunning) {
  Signal s;
  int first = 0, second = 0;
  Signal::Subscription self;
  self = s.subscribe([&] {
    ++first;
    self.reset();
  });
  Signal::Subscription other = s.subscribe([&] { ++second; });
  s.emit();
  s.emit();
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 2);
}

TEST(SignalDeathTest, DestroyedWithALiveSubscriptionAborts) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "death tests fork a threaded process; not run under ThreadSanitizer";
#endif
  EXPECT_DEATH(
      {
        auto* s = new Signal;
        auto* sub = new Signal::Subscription(s->subscribe([] {}));
        delete s;  // aborts here; the subscription is never touched again
        (void)sub;
      },
      "Signal destroyed with 1 subscriptions");
}

TEST(CancelFlag, AnnouncesTheFirstRequestOnly) {
  CancelFlag f;
  int heard = 0;
  Signal::Subscription sub = f.on_request([&] { ++heard; });
  EXPECT_FALSE(f.requested());
  EXPECT_FALSE(f.flag().load());
  f.request();
  EXPECT_TRUE(f.requested());
  EXPECT_TRUE(f.flag().load());
  f.request();
  EXPECT_EQ(heard, 1);
  // A subscriber after the request is not called back: it checks requested() itself.
  int late = 0;
  Signal::Subscription after = f.on_request([&] { ++late; });
  f.request();
  EXPECT_EQ(late, 0);
}

}  // namespace
}  // namespace cuzk::runtime
