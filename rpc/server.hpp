// The cuzkd RPC server: Cap'n Proto on the asio loop, over a Unix socket and,
// optionally, TCP. Translation only: every method decodes its request, calls
// the engine and encodes the answer (rpc/convert.hpp); operating errors
// travel as data (cuzk.capnp ErrorKind), capnp exceptions only mean
// transport failure.
//
// Owns: the listening sockets, the connections (each a TwoPartyVatNetwork with
// the configured message size limit and its RpcSystem), and a TaskSet of the
// coroutines backing in-flight calls (await, prove, preloadSrs).
//
// TCP (ServerConfig::tcp): TLS is required, then a shared bearer token.
// - TLS is kj-tls (Debian's libkj-tls 0.9.2, OpenSSL underneath) wrapped
//   around our readiness-based AsioStream, not asio::ssl: kj-tls consumes a
//   kj::AsyncIoStream, which we already have, so the TLS records flow through
//   the same non-blocking read/write path as plain connections and KJ keeps
//   owning every buffer. asio::ssl::stream would need completion-based
//   async_read_some into buffers KJ may free on cancellation (the hazard
//   kj_asio.hpp avoids) plus a second adapter from asio's stream to KJ's.
//   TLS 1.2 minimum; the server presents cert+key from config files; clients
//   verify it against a CA file (cuzkctl --tls-ca) and the host name.
// - Auth is a bootstrap-capability gate: a TCP connection's bootstrap is
//   `Login` (cuzk.capnp), not ProvingV1. `login(token)` compares SHA-256
//   digests of the presented and configured tokens with CRYPTO_memcmp
//   (constant time, length hidden) and answers the ProvingV1 capability or
//   a typed `unauthenticated` error. No other method exists before that.
//   A connection that has not logged in within auth_timeout (TLS handshake
//   included) is closed, so idle or stalled peers cannot hold sockets.
// - `insecure_loopback` drops TLS (and, with no token configured, the token
//   check) but is refused unless the listen address is a loopback address.
// Unix sockets bootstrap ProvingV1 directly: the socket's file mode (group
// `cuzk`) is the access control there. The handshake deadline applies to
// them too: a Unix connection that makes no call within auth_timeout (an
// idle or stuck peer) is closed.
//
// Limits (per connection, all listeners):
// - max_message_bytes: Cap'n Proto traversal limit of a received message; a
//   larger (or malformed) message makes capnp drop THAT connection, nothing
//   else. Default 128 MiB: a 32 GiB PoRep C1 JSON is ~51 MB.
// - max_calls_per_connection: calls that hold daemon resources past their
//   return (await, prove, preloadSrs, each live watch) are counted per
//   connection; one beyond the cap is answered `overloaded` at once (watch:
//   an OVERLOADED exception, it has no error arm). Immediate calls (submit,
//   cancel, status, metrics, evictSrs) are not counted: they finish in the
//   same loop turn.
// - a flow limit (RpcSystem::setFlowLimit, 2 x max_message_bytes): a
//   connection whose unanswered calls' parameters exceed it is not read any
//   further until answers go out, which bounds the memory one flooding
//   client pins; other connections are read as usual. The loop itself
//   interleaves connections: KJ runs at most 256 turns per asio slice.
#pragma once

#include <asio.hpp>
#include <capnp/capability.h>
#include <capnp/message.h>
#include <kj/async.h>
#include <kj/compat/tls.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "rpc/kj_asio.hpp"
#include "rpc/recent_events.hpp"
#include "runtime/log.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::rpc {

struct TcpConfig {
  std::string address;                             // "tcp://host:port" (numeric host); empty: no TCP listener
  std::filesystem::path tls_cert_file;             // PEM certificate (chain), required unless insecure_loopback
  std::filesystem::path tls_key_file;              // PEM private key (unencrypted), required unless insecure_loopback
  bool insecure_loopback = false;                  // plain TCP; refused for a non-loopback address
  std::chrono::milliseconds auth_timeout{10'000};  // handshake + login (Unix: the first call) within this
};

// Values SIGHUP may change on a running server (Server::reload).
struct ServerLimits {
  std::uint32_t max_calls_per_connection = 64;
  std::string token;  // shared bearer token; empty only with insecure_loopback
};

struct ServerConfig {
  std::filesystem::path socket_path;               // unix socket to create (stale sockets are replaced)
  int inherited_fd = -1;                           // >= 0: listen on this fd instead (systemd socket activation)
  unsigned socket_mode = 0660;                     // owner + group (the cuzk group) may connect
  std::uint64_t max_message_bytes = 128ull << 20;  // per received message; larger ones drop the connection
  TcpConfig tcp;
  ServerLimits limits;
};

// Minimum length of the bearer token (bytes, after trimming trailing
// whitespace): 16 random bytes, or a 32-character hex/base64 string.
inline constexpr std::size_t kMinTokenBytes = 16;

class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "unix:///run/cuzkd/cuzkd.sock" -> "/run/cuzkd/cuzkd.sock"; throws ServerError
// for other schemes.
std::filesystem::path parse_unix_address(const std::string& addr);

struct TcpAddress {
  std::string host;  // without brackets ("::1")
  std::uint16_t port = 0;
};
// "tcp://127.0.0.1:9820", "tcp://[::1]:9820", "tcp://host.example:9820" ->
// host and port; throws ServerError.
TcpAddress parse_tcp_address(const std::string& addr);

class Server : private kj::TaskSet::ErrorHandler {
 public:
  Server(asio::io_context& io, engine::Engine& engine, runtime::Logger& log, ServerConfig config);
  ~Server() noexcept(false);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Creates and binds the listening socket(s) (TLS context included) without
  // accepting yet, so that every listener error (address in use, bad
  // certificate) surfaces before the engine starts. Throws ServerError.
  void bind();
  // Starts accepting (binds first if bind() was not called). Throws ServerError.
  void start();
  // SIGHUP: new limits apply to calls and logins from now on (connections
  // already logged in stay logged in). Throws ServerError if the token is
  // unusable (then nothing changes).
  void reload(ServerLimits limits);
  const ServerLimits& limits() const { return limits_; }
  // The bound TCP port (useful with port 0), 0 without a TCP listener.
  std::uint16_t tcp_port() const { return tcp_port_; }
  // Closes the listening socket (and removes its file); existing connections stay.
  void stop_accepting();
  // Stops accepting, lets in-flight calls finish for up to `grace` (then
  // cancels them), lets KJ flush the replies, and closes every connection.
  asio::awaitable<void> shutdown(std::chrono::milliseconds grace);

  std::size_t connections() const { return connection_count_; }

 private:
  class Service;
  class WatchHandle;
  class LoginGate;
  struct Connection;
  struct ConnState;
  struct CallSlot;
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> tcp_accept_loop();
  void bind_tcp();
  void serve_tcp(asio::ip::tcp::socket socket);
  // Closes the connection of `state` unless it is marked authenticated
  // (TCP: logged in; Unix: made a call) within tcp.auth_timeout.
  std::shared_ptr<asio::steady_timer> arm_first_call_deadline(const std::shared_ptr<ConnState>& state, const char* why);
  bool token_matches(kj::ArrayPtr<const kj::byte> presented) const;
  void taskFailed(kj::Exception&& exception) override;

  asio::io_context& io_;
  engine::Engine& engine_;
  RecentEvents recent_;             // the engine's last job events (recentEvents)
  std::uint64_t recent_token_ = 0;  // its engine subscription
  runtime::Logger& log_;
  ServerConfig config_;
  asio::local::stream_protocol::acceptor acceptor_;
  asio::ip::tcp::acceptor tcp_acceptor_;
  std::uint16_t tcp_port_ = 0;
  ServerLimits limits_;
  std::array<unsigned char, 32> token_digest_{};  // SHA-256 of limits_.token
  kj::Own<kj::TlsContext> tls_;                   // null: no TLS (no TCP, or insecure loopback)
  capnp::ReaderOptions reader_options_;
  bool owns_socket_file_ = false;
  bool bound_ = false;
  runtime::TaskSet accepts_;
  runtime::TaskSet calls_;  // declared before the objects whose methods spawn into it
  std::size_t connection_count_ = 0;
  kj::Own<kj::TaskSet> connection_tasks_;  // each: onDisconnect() with the connection attached
  bool serving_ = true;                    // false once shutdown() dropped the connections
};

}  // namespace cuzk::rpc
