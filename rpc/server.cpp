#include "rpc/server.hpp"

#include <capnp/rpc-twoparty.h>
#include <capnp/rpc.h>
#include <sys/stat.h>

#include <system_error>

#include "rpc/convert.hpp"

namespace cuzk::rpc {

using std::chrono::milliseconds;

std::filesystem::path parse_unix_address(const std::string& addr) {
  constexpr std::string_view kUnix = "unix://";
  if (addr.rfind(kUnix, 0) == 0 && addr.size() > kUnix.size()) {
    std::string path = addr.substr(kUnix.size());
    if (path.front() != '/') throw ServerError("unix socket path must be absolute: " + addr);
    return path;
  }
  if (addr.rfind("tcp://", 0) == 0) throw ServerError("tcp:// listening is not implemented yet (unix:// only)");
  throw ServerError("unsupported address '" + addr + "' (want unix:///absolute/path.sock)");
}

// A watch subscription: forwards engine events to the client's EventSink
// until the client drops this handle or the sink fails or falls behind.
class Server::WatchHandle final : public wire::WatchHandle::Server, private kj::TaskSet::ErrorHandler {
 public:
  WatchHandle(engine::Engine& engine, wire::EventSink::Client sink)
      : engine_(engine), sink_(kj::mv(sink)), sends_(static_cast<kj::TaskSet::ErrorHandler&>(*this)) {
    token_ = engine_.subscribe([this](const engine::JobEvent& ev) { push(ev); });
  }
  ~WatchHandle() noexcept(false) { stop(); }

 private:
  // Bounded: a sink more than this many events behind is dropped rather than
  // buffering without limit in the daemon.
  static constexpr int kMaxInFlight = 256;
  void push(const engine::JobEvent& ev) {
    if (in_flight_ >= kMaxInFlight) {
      stop();
      return;
    }
    auto req = sink_.eventRequest();
    fill(req.initEvent(), ev);
    ++in_flight_;
    sends_.add(req.send().ignoreResult().then([this]() { --in_flight_; }));
  }
  void stop() {
    if (token_ != 0) engine_.unsubscribe(token_);
    token_ = 0;
  }
  void taskFailed(kj::Exception&&) override { stop(); }

  engine::Engine& engine_;
  wire::EventSink::Client sink_;
  kj::TaskSet sends_;
  std::uint64_t token_ = 0;
  int in_flight_ = 0;
};

class Server::Service final : public wire::ProvingV1::Server {
 public:
  Service(engine::Engine& engine, runtime::TaskSet& calls, std::uint64_t max_message_bytes)
      : engine_(engine), calls_(calls), max_message_bytes_(max_message_bytes) {}

  kj::Promise<void> submit(SubmitContext ctx) override {
    auto response = ctx.getResults().initResponse();
    auto req = read(ctx.getParams().getRequest());
    if (!req) {
      fill(response.initError(), req.error());
      return kj::READY_NOW;
    }
    auto r = engine_.submit(std::move(req.value()));
    if (r) fill(response.initJob(), r.value());
    else fill(response.initError(), r.error());
    return kj::READY_NOW;
  }

  kj::Promise<void> await(AwaitContext ctx) override {
    auto key = read(ctx.getParams().getJob());
    if (!key) {
      fill(ctx.getResults().initResponse().initError(), key.error());
      return kj::READY_NOW;
    }
    return await_job(ctx, std::move(key.value()), milliseconds(ctx.getParams().getTimeoutMs()));
  }

  kj::Promise<void> prove(ProveContext ctx) override {
    auto req = read(ctx.getParams().getRequest());
    if (!req) {
      fill(ctx.getResults().initResponse().initError(), req.error());
      return kj::READY_NOW;
    }
    auto r = engine_.submit(std::move(req.value()));
    if (!r) {
      fill(ctx.getResults().initResponse().initError(), r.error());
      return kj::READY_NOW;
    }
    return await_job(ctx, engine::JobKey(r.value().id), milliseconds(ctx.getParams().getTimeoutMs()));
  }

  kj::Promise<void> cancel(CancelContext ctx) override {
    auto response = ctx.getResults().initResponse();
    auto key = read(ctx.getParams().getJob());
    if (!key) {
      fill(response.initError(), key.error());
      return kj::READY_NOW;
    }
    auto r = engine_.cancel(key.value());
    if (r) fill(response.initJob(), r.value());
    else fill(response.initError(), r.error());
    return kj::READY_NOW;
  }

  kj::Promise<void> status(StatusContext ctx) override {
    fill(ctx.getResults().initStatus(), engine_.status(), max_message_bytes_);
    return kj::READY_NOW;
  }

  kj::Promise<void> metrics(MetricsContext ctx) override {
    ctx.getResults().setText(engine_.metrics());
    return kj::READY_NOW;
  }

  kj::Promise<void> preloadSrs(PreloadSrsContext ctx) override {
    std::string id = ctx.getParams().getCircuitId().cStr();
    return to_kj(calls_, engine_.preload(std::move(id)))
        .then([ctx](kj::Own<engine::Result<engine::ParamsInfo>> boxed) mutable {
          const auto& r = *boxed;
          auto response = ctx.getResults().initResponse();
          if (!r) {
            fill(response.initError(), r.error());
            return;
          }
          auto ok = response.initOk();
          ok.setAlreadyLoaded(r.value().already_loaded);
          ok.setLoadMs(r.value().load_ms);
        });
  }

  kj::Promise<void> evictSrs(EvictSrsContext ctx) override {
    auto response = ctx.getResults().initResponse();
    auto r = engine_.evict(ctx.getParams().getCircuitId().cStr());
    if (r) response.initOk().setAlreadyLoaded(true);
    else fill(response.initError(), r.error());
    return kj::READY_NOW;
  }

  kj::Promise<void> watch(WatchContext ctx) override {
    ctx.getResults().setHandle(kj::heap<WatchHandle>(engine_, ctx.getParams().getSink()));
    return kj::READY_NOW;
  }

 private:
  template <class Ctx>
  kj::Promise<void> await_job(Ctx ctx, engine::JobKey key, milliseconds timeout) {
    return to_kj(calls_, engine_.await(std::move(key), timeout))
        .then([ctx](kj::Own<engine::Result<engine::JobOutcome>> boxed) mutable {
          const auto& r = *boxed;
          auto response = ctx.getResults().initResponse();
          if (r) fill(response.initResult(), r.value());
          else fill(response.initError(), r.error());
        });
  }

  engine::Engine& engine_;
  runtime::TaskSet& calls_;
  std::uint64_t max_message_bytes_;
};

struct Server::Connection {
  Connection(kj::Own<AsioStream> s, capnp::Capability::Client bootstrap, capnp::ReaderOptions options,
             std::size_t& count)
      : stream(kj::mv(s)),
        network(*stream, capnp::rpc::twoparty::Side::SERVER, options),
        rpc(capnp::makeRpcServer(network, kj::mv(bootstrap))),
        count_(count) {
    ++count_;
  }
  ~Connection() { --count_; }
  kj::Own<AsioStream> stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
  std::size_t& count_;
};

Server::Server(asio::io_context& io, engine::Engine& engine, runtime::Logger& log, ServerConfig config)
    : io_(io),
      engine_(engine),
      log_(log),
      config_(std::move(config)),
      acceptor_(io),
      accepts_(io.get_executor()),
      calls_(io.get_executor()),
      connection_tasks_(kj::heap<kj::TaskSet>(static_cast<kj::TaskSet::ErrorHandler&>(*this))) {
  bootstrap_ = capnp::Capability::Client(kj::heap<Service>(engine_, calls_, config_.max_message_bytes));
}

Server::~Server() noexcept(false) {
  connection_tasks_ = nullptr;
  bootstrap_ = nullptr;
}

void Server::start() {
  using Proto = asio::local::stream_protocol;
  if (config_.inherited_fd >= 0) {
    acceptor_.assign(Proto(), config_.inherited_fd);
  } else {
    const std::string path = config_.socket_path.string();
    std::error_code fs_ec;
    if (std::filesystem::is_socket(config_.socket_path, fs_ec)) {
      // A socket file exists: another daemon, or a stale file from a crash.
      Proto::socket probe(io_);
      asio::error_code ec;
      probe.connect(Proto::endpoint(path), ec);
      if (!ec) throw ServerError("another daemon is listening on " + path);
      std::filesystem::remove(config_.socket_path, fs_ec);
      log_.warn("removed stale socket", {{"path", path}});
    } else if (std::filesystem::exists(config_.socket_path, fs_ec)) {
      throw ServerError(path + " exists and is not a socket");
    }
    std::filesystem::create_directories(config_.socket_path.parent_path(), fs_ec);
    try {
      acceptor_.open(Proto());
      acceptor_.bind(Proto::endpoint(path));
      acceptor_.listen(asio::socket_base::max_listen_connections);
    } catch (const std::system_error& e) {
      throw ServerError("cannot listen on " + path + ": " + e.what());
    }
    owns_socket_file_ = true;
    if (::chmod(path.c_str(), config_.socket_mode) != 0) {
      throw ServerError("cannot chmod " + path + ": " + std::strerror(errno));
    }
  }
  accepts_.spawn(accept_loop());
  log_.info("listening", {{"socket", config_.socket_path.string()},
                          {"max_message_bytes", config_.max_message_bytes}});
}

asio::awaitable<void> Server::accept_loop() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = config_.max_message_bytes / sizeof(capnp::word);
  while (acceptor_.is_open()) {
    asio::error_code ec;
    auto socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) {
      log_.warn("accept failed", {{"error", ec.message()}});
      // EMFILE and friends: back off instead of spinning on the loop.
      asio::steady_timer backoff(io_, milliseconds(100));
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    KJ_IF_MAYBE(bootstrap, bootstrap_) {
      auto conn = kj::heap<Connection>(kj::heap<AsioStream>(std::move(socket)), *bootstrap, options,
                                       connection_count_);
      auto disconnected = conn->network.onDisconnect();
      connection_tasks_->add(disconnected.attach(kj::mv(conn)));
    }
  }
}

void Server::stop_accepting() {
  asio::error_code ec;
  acceptor_.close(ec);
  if (owns_socket_file_) {
    std::error_code fs_ec;
    std::filesystem::remove(config_.socket_path, fs_ec);
    owns_socket_file_ = false;
  }
}

asio::awaitable<void> Server::shutdown(milliseconds grace) {
  stop_accepting();
  accepts_.close();
  accepts_.cancel_all();
  co_await accepts_.join();
  calls_.close();
  // Calls still running are awaits of jobs; once the engine has drained they
  // complete at once. Poll (10 ms) rather than add a deadline to join().
  auto deadline = std::chrono::steady_clock::now() + grace;
  asio::steady_timer tick(io_);
  while (calls_.size() > 0 && std::chrono::steady_clock::now() < deadline) {
    tick.expires_after(milliseconds(10));
    co_await tick.async_wait(asio::use_awaitable);
  }
  calls_.cancel_all();
  co_await calls_.join();
  // Let KJ serialise and write the last replies before the sockets close.
  tick.expires_after(milliseconds(100));
  co_await tick.async_wait(asio::use_awaitable);
  // Replacing the set drops (closes) every connection.
  connection_tasks_ = kj::heap<kj::TaskSet>(static_cast<kj::TaskSet::ErrorHandler&>(*this));
  bootstrap_ = nullptr;
  log_.info("rpc server stopped");
}

void Server::taskFailed(kj::Exception&& exception) {
  // A connection ended with an error (peer reset, oversized message...).
  log_.info("connection closed", {{"reason", exception.getDescription().cStr()}});
}

}  // namespace cuzk::rpc
