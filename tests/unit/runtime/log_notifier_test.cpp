// Structured log lines (text and JSON) and the loop's Notifier.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "runtime/event_loop.hpp"
#include "runtime/log.hpp"
#include "runtime/notifier.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::runtime {
namespace {

using namespace std::chrono_literals;

std::string capture(LogFormat format, LogLevel min, auto&& body) {
  std::FILE* f = std::tmpfile();
  {
    Logger log(min, format, f);
    body(log);
  }
  std::rewind(f);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  std::fclose(f);
  return out;
}

TEST(Logger, TextLinesCarryQuotedFields) {
  std::string out = capture(LogFormat::kText, LogLevel::kInfo, [](Logger& log) {
    log.debug("hidden");
    log.info("job done", {{"job", 7}, {"stage", "prove"}, {"error", "a \"b\""}});
  });
  EXPECT_EQ(out.find("hidden"), std::string::npos);
  EXPECT_NE(out.find(" info msg=\"job done\" job=7 stage=prove error=\"a \\\"b\\\"\"\n"), std::string::npos) << out;
}

TEST(Logger, JsonLinesAreEscapedAndTyped) {
  std::string out = capture(LogFormat::kJson, LogLevel::kDebug, [](Logger& log) {
    log.warn("x\ny", {{"ms", 12}, {"path", "/a\\b"}});
  });
  EXPECT_NE(out.find("\"level\":\"warn\",\"msg\":\"x\\ny\",\"ms\":12,\"path\":\"/a\\\\b\"}\n"), std::string::npos)
      << out;
}

asio::awaitable<void> notifier_scenario(Notifier& n, int& woken, bool& timed_out) {
  auto ex = co_await asio::this_coro::executor;
  // Expires: nobody notifies.
  timed_out = !(co_await n.wait_until(Notifier::Clock::now() + 5ms));
  // Two waiters; notify_one wakes exactly one, notify_all the other.
  TaskSet waiters(ex);
  for (int i = 0; i < 2; ++i) {
    waiters.spawn([](Notifier& n, int& woken) -> asio::awaitable<void> {
      if (co_await n.wait()) ++woken;
    }(n, woken));
  }
  co_await asio::post(ex, asio::use_awaitable);  // let both park
  EXPECT_EQ(n.waiters(), 2u);
  n.notify_one();
  co_await asio::post(ex, asio::use_awaitable);
  co_await asio::post(ex, asio::use_awaitable);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(n.waiters(), 1u);
  n.notify_all();
  co_await waiters.join();
}

TEST(Notifier, TimesOutWakesOneOrAll) {
  EventLoop loop;
  Notifier n(loop.executor());
  TaskSet tasks(loop.executor());
  int woken = 0;
  bool timed_out = false;
  tasks.spawn(notifier_scenario(n, woken, timed_out));
  loop.run();
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(woken, 2);
  EXPECT_EQ(n.waiters(), 0u);
}

}  // namespace
}  // namespace cuzk::runtime
