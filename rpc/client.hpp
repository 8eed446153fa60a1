// A synchronous client for cuzkd (cuzkctl and tests): one connection, KJ's own
// event loop on the calling thread (EzRpcClient), calls block until answered.
// Daemon errors come back as engine::Error values; transport failures (no
// daemon, connection lost) throw ClientError.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/types.hpp"
#include "engine/views.hpp"

namespace cuzk::rpc {

class ClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClientStatus {
  engine::EngineStatus engine;
  std::uint32_t schema_version = 0;
  std::uint64_t params_bytes = 0;
  std::uint64_t max_message_bytes = 0;
};

class Client {
 public:
  // addr: unix:///path.sock
  explicit Client(const std::string& addr, std::uint64_t max_message_bytes = 64ull << 20);
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

  // For tests: the raw capability and wait scope (malformed requests, watch).
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::rpc
