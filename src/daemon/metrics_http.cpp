#include "daemon/metrics_http.hpp"

#include <asio/experimental/awaitable_operators.hpp>

#include <stdexcept>
#include <utility>

#include "rpc/server.hpp"

namespace cuzk::daemon {

namespace {

std::string reply(std::string_view status, std::string_view content_type, const std::string& body, bool with_body) {
  std::string out;
  out.reserve(body.size() + 160);
  out += "HTTP/1.1 ";
  out += status;
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: " + std::to_string(body.size());
  out += "\r\nConnection: close\r\n\r\n";
  if (with_body) out += body;
  return out;
}

asio::ip::tcp::endpoint parse_endpoint(const MetricsHttpConfig& config) {
  rpc::TcpAddress where;
  try {
    where = rpc::parse_tcp_address("tcp://" + config.listen);
  } catch (const std::exception&) {
    throw std::runtime_error("metrics.listen: bad address '" + config.listen + "' (want 127.0.0.1:PORT or [::1]:PORT)");
  }
  asio::error_code ec;
  asio::ip::address ip = asio::ip::make_address(where.host, ec);
  if (ec) throw std::runtime_error("metrics.listen needs a numeric IP address, not '" + where.host + "'");
  if (!ip.is_loopback() && !config.allow_non_loopback) {
    throw std::runtime_error("metrics.listen: " + where.host +
                             " is not a loopback address; set metrics.allow_non_loopback = true to serve it there");
  }
  return {ip, where.port};
}

}  // namespace

std::string metrics_http_response(std::string_view head, const std::function<std::string()>& render) {
  constexpr std::string_view kText = "text/plain; charset=utf-8";
  // Request line: METHOD SP TARGET SP HTTP/1.x CRLF
  const std::size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (eol == std::string_view::npos || sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) {
    return reply("400 Bad Request", kText, "bad request\n", true);
  }
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    std::string r = reply("405 Method Not Allowed", kText, "only GET and HEAD\n", true);
    r.insert(r.find("\r\n") + 2, "Allow: GET, HEAD\r\n");
    return r;
  }
  if (target != "/metrics")
    return reply("404 Not Found", kText, "not found: the metrics are at /metrics\n", !head_only);
  // The exposition format's content type (Prometheus text format 0.0.4).
  return reply("200 OK", "text/plain; version=0.0.4; charset=utf-8", render(), !head_only);
}

MetricsHttpServer::MetricsHttpServer(asio::io_context& io, MetricsHttpConfig config, Render render,
                                     runtime::Logger& log)
    : io_(io),
      config_(std::move(config)),
      render_(std::move(render)),
      log_(log),
      endpoint_(parse_endpoint(config_)),
      acceptor_(io),
      tasks_(io.get_executor()) {}

void MetricsHttpServer::bind() {
  asio::error_code ec;
  acceptor_.open(endpoint_.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint_, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("metrics.listen " + config_.listen + ": " + ec.message());
  const asio::ip::tcp::endpoint bound = acceptor_.local_endpoint();
  log_.info("metrics endpoint", {{"address", bound.address().to_string()}, {"port", bound.port()}});
}

void MetricsHttpServer::start() { tasks_.spawn(accept_loop()); }

asio::awaitable<void> MetricsHttpServer::stop() {
  asio::error_code ignored;
  acceptor_.close(ignored);
  tasks_.close();
  tasks_.cancel_all();
  co_await tasks_.join();
}

asio::awaitable<void> MetricsHttpServer::accept_loop() {
  for (;;) {
    asio::error_code ec;
    asio::ip::tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) continue;  // a connection reset before it was accepted, out of fds: keep serving
    if (connections_ >= config_.max_connections) {
      if (refused_total_++ == 0)
        log_.warn("metrics endpoint: connection limit reached", {{"limit", config_.max_connections}});
      socket.close(ec);
      continue;
    }
    ++connections_;  // here, not in serve(): the spawned coroutine may start after the next accept
    if (!tasks_.spawn(serve(std::move(socket)))) {
      --connections_;
      co_return;
    }
  }
}

asio::awaitable<void> MetricsHttpServer::serve(asio::ip::tcp::socket socket) {
  using namespace asio::experimental::awaitable_operators;
  struct Release {  // the slot accept_loop took
    std::size_t& n;
    ~Release() { --n; }
  } release{connections_};
  std::string head;
  asio::error_code read_ec, timer_ec;
  asio::steady_timer deadline(io_, config_.request_timeout);
  auto done = co_await (asio::async_read_until(socket, asio::dynamic_buffer(head, config_.max_request_bytes),
                                               "\r\n\r\n", asio::redirect_error(asio::use_awaitable, read_ec)) ||
                        deadline.async_wait(asio::redirect_error(asio::use_awaitable, timer_ec)));
  asio::error_code ec;
  if (done.index() == 1 || read_ec) {
    // Too slow, too long (not_found: the buffer limit), closed early: no answer.
    socket.close(ec);
    co_return;
  }
  std::string response = metrics_http_response(head, render_);
  deadline.expires_after(config_.request_timeout);
  co_await (asio::async_write(socket, asio::buffer(response), asio::redirect_error(asio::use_awaitable, read_ec)) ||
            deadline.async_wait(asio::redirect_error(asio::use_awaitable, timer_ec)));
  socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

}  // namespace cuzk::daemon
