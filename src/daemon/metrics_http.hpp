// The Prometheus scrape endpoint of cuzkd: `GET /metrics` over plain HTTP/1.1
// on the event loop, serving the same exposition text as `cuzkctl metrics`
// (Engine::metrics()). Off unless [metrics] listen is set; a non-loopback
// address needs [metrics] allow_non_loopback = true, since the text names
// queue depths, job counts and memory figures of the host.
//
// One request per connection (the reply closes it), at most
// max_connections at once (later ones are closed unanswered), a request
// head of at most max_request_bytes that must arrive within
// request_timeout: a slow or hostile scraper holds one slot for at most
// that long and never blocks the loop. Every coroutine (the accept loop and
// one per connection) is owned by the server's task set; stop() closes the
// listener, cancels them and waits for them.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "runtime/log.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::daemon {

struct MetricsHttpConfig {
  std::string listen;  // "127.0.0.1:9821", "[::1]:9821"; port 0 picks a free one; empty: off
  bool allow_non_loopback = false;
  std::size_t max_connections = 16;
  std::size_t max_request_bytes = 8192;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(5)};
};

// A whole HTTP/1.1 response (status line, headers, body) to one request
// head, a pure function of the head and the exposition text `render`
// produces (called only for a scrape): 200 for GET or HEAD of /metrics
// (query ignored), 404 for another path, 405 for another method, 400 for a
// head that is not HTTP/1.x.
std::string metrics_http_response(std::string_view request_head, const std::function<std::string()>& render);

class MetricsHttpServer {
 public:
  using Render = std::function<std::string()>;
  // Throws std::runtime_error for a malformed address or a non-loopback one
  // without allow_non_loopback. Nothing is bound yet.
  MetricsHttpServer(asio::io_context& io, MetricsHttpConfig config, Render render, runtime::Logger& log);
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // Binds the listening socket without accepting yet (so that an address in
  // use stops the daemon before anything runs); throws std::runtime_error.
  void bind();
  // Starts accepting (after bind()).
  void start();
  // Where it listens (after bind()).
  asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  // Stops accepting, cancels the connections in flight, waits for every task.
  asio::awaitable<void> stop();

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);

  asio::io_context& io_;
  MetricsHttpConfig config_;
  Render render_;
  runtime::Logger& log_;
  asio::ip::tcp::endpoint endpoint_;
  asio::ip::tcp::acceptor acceptor_;
  std::size_t connections_ = 0;
  std::uint64_t refused_total_ = 0;  // connections closed unanswered (limit reached)
  runtime::TaskSet tasks_;
};

}  // namespace cuzk::daemon
