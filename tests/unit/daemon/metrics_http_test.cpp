// The Prometheus scrape endpoint (src/daemon/metrics_http.*): the pure
// response function, then a server on a real loopback socket driven by a
// client coroutine on the same loop.
#include "daemon/metrics_http.hpp"

#include <gtest/gtest.h>

#include <asio.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::daemon {
namespace {

std::string render_text() { return "# TYPE cuzk_uptime_seconds gauge\ncuzk_uptime_seconds 7\n"; }

TEST(MetricsHttpResponse, GetMetricsIsTheExpositionText) {
  int renders = 0;
  auto render = [&] {
    ++renders;
    return render_text();
  };
  std::string r = metrics_http_response("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", render);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Length: " + std::to_string(render_text().size()) + "\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.find("\r\n\r\n") + 4), render_text());
  EXPECT_EQ(renders, 1);
  // A query string is ignored; HEAD has the headers without the body.
  EXPECT_EQ(metrics_http_response("GET /metrics?x=1 HTTP/1.0\r\n\r\n", render).rfind("HTTP/1.1 200", 0), 0u);
  std::string head = metrics_http_response("HEAD /metrics HTTP/1.1\r\n\r\n", render);
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
}

TEST(MetricsHttpResponse, OtherRequestsAreRefusedWithoutRendering) {
  int renders = 0;
  auto render = [&] {
    ++renders;
    return render_text();
  };
  EXPECT_EQ(metrics_http_response("GET / HTTP/1.1\r\n\r\n", render).rfind("HTTP/1.1 404", 0), 0u);
  std::string post = metrics_http_response("POST /metrics HTTP/1.1\r\n\r\n", render);
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_NE(post.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << post;
  for (const char* bad :
       {"", "GET\r\n\r\n", "GET /metrics\r\n\r\n", "GET /metrics SPDY/3\r\n\r\n", "GET /metrics HTTP/1.1"}) {
    EXPECT_EQ(metrics_http_response(bad, render).rfind("HTTP/1.1 400", 0), 0u) << bad;
  }
  EXPECT_EQ(renders, 0);
}

TEST(MetricsHttpServer, RefusesBadAndNonLoopbackAddresses) {
  asio::io_context io;
  runtime::Logger log(runtime::LogLevel::kError);
  auto make = [&](std::string listen, bool allow) {
    MetricsHttpConfig c;
    c.listen = std::move(listen);
    c.allow_non_loopback = allow;
    MetricsHttpServer s(io, c, render_text, log);
  };
  EXPECT_THROW(make("0.0.0.0:9821", false), std::runtime_error);
  EXPECT_THROW(make("localhost:9821", false), std::runtime_error);  // numeric only
  EXPECT_THROW(make("127.0.0.1", false), std::runtime_error);
  EXPECT_THROW(make("127.0.0.1:99999", false), std::runtime_error);
  EXPECT_NO_THROW(make("127.0.0.1:0", false));
  EXPECT_NO_THROW(make("[::1]:0", false));
  EXPECT_NO_THROW(make("0.0.0.0:0", true));
}

// Sends `request` (possibly nothing) and returns what the server answers
// before it closes the connection.
asio::awaitable<std::string> exchange(asio::ip::tcp::endpoint at, std::string request) {
  asio::ip::tcp::socket s(co_await asio::this_coro::executor);
  co_await s.async_connect(at, asio::use_awaitable);
  if (!request.empty()) co_await asio::async_write(s, asio::buffer(request), asio::use_awaitable);
  std::string out;
  asio::error_code ec;
  co_await asio::async_read(s, asio::dynamic_buffer(out), asio::redirect_error(asio::use_awaitable, ec));
  co_return out;  // ends at eof: the server closes after one reply
}

TEST(MetricsHttpServer, ServesScrapesAndClosesSilentAndOversizedClients) {
  asio::io_context io;
  runtime::Logger log(runtime::LogLevel::kError);
  MetricsHttpConfig c;
  c.listen = "127.0.0.1:0";
  c.max_request_bytes = 256;
  c.request_timeout = std::chrono::milliseconds(200);
  MetricsHttpServer server(io, c, render_text, log);
  server.bind();
  server.start();
  const asio::ip::tcp::endpoint at = server.local_endpoint();
  std::vector<std::string> answers;
  bool finished = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        answers.push_back(co_await exchange(at, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"));
        answers.push_back(co_await exchange(at, "GET /nope HTTP/1.1\r\n\r\n"));
        answers.push_back(co_await exchange(at, ""));  // says nothing: closed at the timeout
        answers.push_back(co_await exchange(at, "GET /metrics HTTP/1.1\r\nX: " + std::string(1000, 'a') + "\r\n\r\n"));
        // Still serving after the bad ones.
        answers.push_back(co_await exchange(at, "GET /metrics HTTP/1.1\r\n\r\n"));
        co_await server.stop();
        finished = true;
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(finished);
  ASSERT_EQ(answers.size(), 5u);
  EXPECT_EQ(answers[0].rfind("HTTP/1.1 200 OK", 0), 0u) << answers[0];
  EXPECT_EQ(answers[0].substr(answers[0].find("\r\n\r\n") + 4), render_text());
  EXPECT_EQ(answers[1].rfind("HTTP/1.1 404", 0), 0u) << answers[1];
  EXPECT_EQ(answers[2], "");
  EXPECT_EQ(answers[3], "");
  EXPECT_EQ(answers[4].rfind("HTTP/1.1 200 OK", 0), 0u) << answers[4];
}

TEST(MetricsHttpServer, ConnectionsBeyondTheLimitAreClosedUnanswered) {
  asio::io_context io;
  runtime::Logger log(runtime::LogLevel::kError);
  MetricsHttpConfig c;
  c.listen = "127.0.0.1:0";
  c.max_connections = 1;
  c.request_timeout = std::chrono::seconds(30);  // the first client's slot stays taken
  MetricsHttpServer server(io, c, render_text, log);
  server.bind();
  server.start();
  const asio::ip::tcp::endpoint at = server.local_endpoint();
  std::string second;
  bool finished = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::ip::tcp::socket holder(io);
        co_await holder.async_connect(at, asio::use_awaitable);
        // The kernel's accept queue is FIFO: the holder is accepted first.
        second = co_await exchange(at, "GET /metrics HTTP/1.1\r\n\r\n");
        co_await server.stop();  // cancels the holder's connection
        finished = true;
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(finished);
  EXPECT_EQ(second, "");
}

}  // namespace
}  // namespace cuzk::daemon
