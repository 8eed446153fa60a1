// A synchronous client for cuzkd (cuzkctl and tests): one connection, KJ's own
// event loop on the calling thread, calls block until answered. Daemon errors
// come back as engine::Error values; transport failures (no daemon,
// connection lost, TLS refused) and a refused login throw ClientError.
//
// Addresses: unix:///path.sock, or tcp://host:port. Over TCP the client
// speaks TLS when a CA file is given (it verifies the daemon's certificate
// against that CA and the host name - a DNS SAN, or for an IP address such
// as tcp://127.0.0.1:9820 an IP SAN), else plain TCP (only a daemon with
// tcp_insecure_loopback accepts that), then logs in with the bearer token
// (cuzk.capnp Login) before any other call.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/types.hpp"
#include "engine/views.hpp"

namespace cuzk::rpc {

enum class ClientErrorKind : std::uint8_t {
  kTransport,        // unreachable, disconnected, TLS handshake or certificate failure
  kUnauthenticated,  // the daemon refused the token (typed `unauthenticated` answer)
  kConfig,           // bad address, unreadable CA or token file
};

class ClientError : public std::runtime_error {
 public:
  explicit ClientError(const std::string& what, ClientErrorKind kind = ClientErrorKind::kTransport)
      : std::runtime_error(what), kind_(kind) {}
  ClientErrorKind kind() const { return kind_; }

 private:
  ClientErrorKind kind_;
};

struct ClientOptions {
  std::uint64_t max_message_bytes = 128ull << 20;  // largest answer accepted
  std::string tls_ca_file;      // tcp://: PEM CA (or the self-signed cert) to trust; empty: plain TCP
  std::string tls_server_name;  // name the certificate must carry; empty: the address's host
  std::string token;            // tcp://: bearer token sent in Login
  // CUZK_TLS_CA, CUZK_TLS_SERVER_NAME, CUZK_TOKEN, else the first line of
  // the file named by CUZK_TOKEN_FILE. Throws ClientError(kConfig) for an
  // unreadable token file.
  static ClientOptions from_env();
};

// The token in a token file: its content without trailing whitespace.
std::string read_token_file(const std::string& path);

struct ClientStatus {
  engine::EngineStatus engine;
  std::uint32_t schema_version = 0;
  std::uint64_t params_bytes = 0;
  std::uint64_t max_message_bytes = 0;
};

// A job event the daemon kept (cuzk.capnp recentEvents).
struct DaemonEvent {
  engine::JobEvent event;
  std::uint64_t unix_ms = 0;  // the daemon's wall clock when it happened
};

struct RecentEventsReply {
  std::vector<DaemonEvent> events;  // oldest first
  std::uint64_t total = 0;          // events since the daemon started
  bool supported = true;            // false: a daemon older than recentEvents
};

class Client {
 public:
  // addr: unix:///path.sock or tcp://host:port; TLS and token from the
  // environment (ClientOptions::from_env).
  explicit Client(const std::string& addr);
  Client(const std::string& addr, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  engine::Result<engine::JobView> submit(const engine::JobRequest& req);
  engine::Result<engine::JobOutcome> await(const engine::JobKey& key, std::uint64_t timeout_ms);
  engine::Result<engine::JobOutcome> prove(const engine::JobRequest& req, std::uint64_t timeout_ms);
  engine::Result<engine::JobView> cancel(const engine::JobKey& key);
  ClientStatus status();
  std::string metrics();
  engine::Result<engine::ParamsInfo> preload(const std::string& circuit_id);
  engine::Result<bool> evict(const std::string& circuit_id);
  // The daemon's last job events, at most `max` (0: all it keeps).
  RecentEventsReply recent_events(std::uint32_t max);

  // For tests: the raw capability and wait scope (malformed requests, watch).
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::rpc
