// The cuzkd RPC server: Cap'n Proto over a Unix socket, on the asio loop.
// Translation only: every method decodes its request, calls the engine and
// encodes the answer (rpc/convert.hpp); operating errors travel as data
// (cuzk.capnp ErrorKind), capnp exceptions only mean transport failure.
//
// Owns: the listening socket, the connections (each a TwoPartyVatNetwork with
// the configured message size limit and its RpcSystem), and a TaskSet of the
// coroutines backing in-flight calls (await, prove, preloadSrs).
#pragma once

#include <asio.hpp>
#include <capnp/capability.h>
#include <kj/async.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "rpc/kj_asio.hpp"
#include "runtime/log.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::rpc {

struct ServerConfig {
  std::filesystem::path socket_path;  // unix socket to create (stale sockets are replaced)
  int inherited_fd = -1;              // >= 0: listen on this fd instead (systemd socket activation)
  unsigned socket_mode = 0660;        // owner + group (the cuzk group) may connect
  std::uint64_t max_message_bytes = 64ull << 20;  // per received message; larger ones drop the connection
};

class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "unix:///run/cuzkd/cuzkd.sock" -> "/run/cuzkd/cuzkd.sock"; throws ServerError
// for other schemes (tcp:// is not served yet).
std::filesystem::path parse_unix_address(const std::string& addr);

class Server : private kj::TaskSet::ErrorHandler {
 public:
  Server(asio::io_context& io, engine::Engine& engine, runtime::Logger& log, ServerConfig config);
  ~Server() noexcept(false);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket and starts accepting. Throws ServerError.
  void start();
  // Closes the listening socket (and removes its file); existing connections stay.
  void stop_accepting();
  // Stops accepting, lets in-flight calls finish for up to `grace` (then
  // cancels them), lets KJ flush the replies, and closes every connection.
  asio::awaitable<void> shutdown(std::chrono::milliseconds grace);

  std::size_t connections() const { return connection_count_; }

 private:
  class Service;
  class WatchHandle;
  struct Connection;
  asio::awaitable<void> accept_loop();
  void taskFailed(kj::Exception&& exception) override;

  asio::io_context& io_;
  engine::Engine& engine_;
  runtime::Logger& log_;
  ServerConfig config_;
  asio::local::stream_protocol::acceptor acceptor_;
  bool owns_socket_file_ = false;
  runtime::TaskSet accepts_;
  runtime::TaskSet calls_;  // declared before the objects whose methods spawn into it
  std::size_t connection_count_ = 0;
  kj::Own<kj::TaskSet> connection_tasks_;  // each: onDisconnect() with the connection attached
  kj::Maybe<capnp::Capability::Client> bootstrap_;
};

}  // namespace cuzk::rpc
