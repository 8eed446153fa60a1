#include "rpc/server.hpp"

#include <capnp/rpc-twoparty.h>
#include <capnp/rpc.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
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
  throw ServerError("unsupported address '" + addr + "' (want unix:///absolute/path.sock)");
}

TcpAddress parse_tcp_address(const std::string& addr) {
  constexpr std::string_view kTcp = "tcp://";
  if (addr.rfind(kTcp, 0) != 0) throw ServerError("unsupported address '" + addr + "' (want tcp://host:port)");
  std::string rest = addr.substr(kTcp.size());
  TcpAddress out;
  std::string port;
  if (!rest.empty() && rest.front() == '[') {  // [v6]:port
    auto close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
      throw ServerError("bad address '" + addr + "' (want tcp://[v6-address]:port)");
    out.host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    auto colon = rest.rfind(':');
    if (colon == std::string::npos || rest.find(':') != colon)
      throw ServerError("bad address '" + addr + "' (want tcp://host:port; IPv6 in brackets)");
    out.host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (out.host.empty()) throw ServerError("bad address '" + addr + "': empty host");
  char* end = nullptr;
  unsigned long p = port.empty() ? 0x10000 : std::strtoul(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p > 65535) throw ServerError("bad address '" + addr + "': bad port");
  out.port = static_cast<std::uint16_t>(p);
  return out;
}

namespace {

std::array<unsigned char, 32> sha256(kj::ArrayPtr<const kj::byte> bytes) {
  std::array<unsigned char, 32> out{};
  ::SHA256(bytes.begin(), bytes.size(), out.data());
  return out;
}

// The wire's u64 timeoutMs as a duration: values past INT64_MAX saturate
// there (the engine saturates the deadline itself) instead of wrapping to a
// negative count.
milliseconds wire_timeout(std::uint64_t timeout_ms) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<milliseconds::rep>::max());
  return milliseconds(static_cast<milliseconds::rep>(std::min(timeout_ms, kMax)));
}

std::string read_text_file(const std::filesystem::path& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ServerError(std::string("cannot read ") + what + " " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// State shared by one connection's capabilities and its first-call timer.
struct Server::ConnState {
  std::string peer;  // for logs
  // TCP: logged in. Unix: made a call. Either way the connection is past its
  // handshake deadline (auth_timeout).
  bool authenticated = false;
  std::uint32_t calls = 0;                   // counted calls in flight (see server.hpp)
  kj::Own<kj::PromiseFulfiller<void>> kill;  // fulfilling it closes the connection
};

// One counted call: holds a slot of its connection's cap until destroyed.
struct Server::CallSlot {
  explicit CallSlot(std::shared_ptr<ConnState> s) : state(std::move(s)) { ++state->calls; }
  ~CallSlot() { --state->calls; }
  CallSlot(const CallSlot&) = delete;
  CallSlot& operator=(const CallSlot&) = delete;
  std::shared_ptr<ConnState> state;
};

// A watch subscription: forwards engine events to the client's EventSink
// until the client drops this handle or the sink fails or falls behind.
class Server::WatchHandle final : public wire::WatchHandle::Server, private kj::TaskSet::ErrorHandler {
 public:
  WatchHandle(engine::Engine& engine, wire::EventSink::Client sink, kj::Own<CallSlot> slot)
      : engine_(engine),
        sink_(kj::mv(sink)),
        sends_(static_cast<kj::TaskSet::ErrorHandler&>(*this)),
        slot_(kj::mv(slot)) {
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
  kj::Own<CallSlot> slot_;  // a live watch counts against its connection's call cap
};

class Server::Service final : public wire::ProvingV1::Server {
 public:
  Service(engine::Engine& engine, const RecentEvents& recent, runtime::TaskSet& calls, std::uint64_t max_message_bytes,
          const ServerLimits& limits, std::shared_ptr<ConnState> state)
      : engine_(engine),
        recent_(recent),
        calls_(calls),
        max_message_bytes_(max_message_bytes),
        limits_(limits),
        state_(std::move(state)) {}

  kj::Promise<void> submit(SubmitContext ctx) override {
    mark_active();
    auto response = ctx.getResults().initResponse();
    auto req = read(ctx.getParams().getRequest());
    if (!req) {
      fill(response.initError(), req.error());
      return kj::READY_NOW;
    }
    // The journal write runs off the loop; the answer comes once it is durable.
    return to_kj(calls_, engine_.submit_durable(std::move(req.value())))
        .then([ctx](kj::Own<engine::Result<engine::JobView>> boxed) mutable {
          const auto& r = *boxed;
          auto response = ctx.getResults().initResponse();
          if (r)
            fill(response.initJob(), r.value());
          else
            fill(response.initError(), r.error());
        });
  }

  kj::Promise<void> await(AwaitContext ctx) override {
    mark_active();
    auto key = read(ctx.getParams().getJob());
    if (!key) {
      fill(ctx.getResults().initResponse().initError(), key.error());
      return kj::READY_NOW;
    }
    auto slot = admit();
    if (slot.get() == nullptr) {
      fill(ctx.getResults().initResponse().initError(), overloaded());
      return kj::READY_NOW;
    }
    return await_job(ctx, std::move(key.value()), wire_timeout(ctx.getParams().getTimeoutMs())).attach(kj::mv(slot));
  }

  kj::Promise<void> prove(ProveContext ctx) override {
    mark_active();
    auto slot = admit();
    if (slot.get() == nullptr) {
      fill(ctx.getResults().initResponse().initError(), overloaded());
      return kj::READY_NOW;
    }
    auto req = read(ctx.getParams().getRequest());
    if (!req) {
      fill(ctx.getResults().initResponse().initError(), req.error());
      return kj::READY_NOW;
    }
    const milliseconds timeout = wire_timeout(ctx.getParams().getTimeoutMs());
    return to_kj(calls_, engine_.submit_durable(std::move(req.value())))
        .then([this, ctx, timeout](kj::Own<engine::Result<engine::JobView>> boxed) mutable -> kj::Promise<void> {
          const auto& r = *boxed;
          if (!r) {
            fill(ctx.getResults().initResponse().initError(), r.error());
            return kj::READY_NOW;
          }
          return await_job(ctx, engine::JobKey(r.value().id), timeout);
        })
        .attach(kj::mv(slot));
  }

  kj::Promise<void> cancel(CancelContext ctx) override {
    mark_active();
    auto response = ctx.getResults().initResponse();
    auto key = read(ctx.getParams().getJob());
    if (!key) {
      fill(response.initError(), key.error());
      return kj::READY_NOW;
    }
    auto r = engine_.cancel(key.value());
    if (r)
      fill(response.initJob(), r.value());
    else
      fill(response.initError(), r.error());
    return kj::READY_NOW;
  }

  kj::Promise<void> status(StatusContext ctx) override {
    mark_active();
    fill(ctx.getResults().initStatus(), engine_.status(), max_message_bytes_);
    return kj::READY_NOW;
  }

  kj::Promise<void> metrics(MetricsContext ctx) override {
    mark_active();
    ctx.getResults().setText(engine_.metrics());
    return kj::READY_NOW;
  }

  kj::Promise<void> preloadSrs(PreloadSrsContext ctx) override {
    mark_active();
    auto slot = admit();
    if (slot.get() == nullptr) {
      fill(ctx.getResults().initResponse().initError(), overloaded());
      return kj::READY_NOW;
    }
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
          ok.setGenerated(r.value().generated);
          ok.setGpus(r.value().gpus);
          ok.setGpusHolding(r.value().gpus_holding);
        })
        .attach(kj::mv(slot));
  }

  kj::Promise<void> evictSrs(EvictSrsContext ctx) override {
    mark_active();
    auto response = ctx.getResults().initResponse();
    auto r = engine_.evict(ctx.getParams().getCircuitId().cStr());
    if (r)
      response.initOk().setAlreadyLoaded(true);
    else
      fill(response.initError(), r.error());
    return kj::READY_NOW;
  }

  kj::Promise<void> watch(WatchContext ctx) override {
    mark_active();
    auto slot = admit();
    if (slot.get() == nullptr) {
      return KJ_EXCEPTION(OVERLOADED, "too many calls in flight on this connection (daemon.max_calls_per_connection)");
    }
    ctx.getResults().setHandle(kj::heap<WatchHandle>(engine_, ctx.getParams().getSink(), kj::mv(slot)));
    return kj::READY_NOW;
  }

  kj::Promise<void> recentEvents(RecentEventsContext ctx) override {
    mark_active();
    const auto& kept = recent_.events();
    const std::uint32_t max = ctx.getParams().getMax();
    const std::size_t n = max == 0 ? kept.size() : std::min<std::size_t>(max, kept.size());
    auto results = ctx.getResults();
    results.setTotal(recent_.total());
    auto list = results.initEvents(static_cast<unsigned>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const KeptEvent& k = kept[kept.size() - n + i];  // the newest n, oldest first
      fill(list[static_cast<unsigned>(i)].initEvent(), k.event);
      list[static_cast<unsigned>(i)].setUnixMs(k.unix_ms);
    }
    return kj::READY_NOW;
  }

 private:
  // A call arrived: a Unix connection is past its first-call deadline
  // (TCP ones passed it at login).
  void mark_active() { state_->authenticated = true; }
  // A slot under the connection's call cap, or null when the cap is reached.
  kj::Own<CallSlot> admit() {
    if (state_->calls >= limits_.max_calls_per_connection) return kj::Own<CallSlot>();
    return kj::heap<CallSlot>(state_);
  }
  engine::Error overloaded() const {
    return {engine::ErrorKind::kOverloaded, "too many calls in flight on this connection (limit " +
                                                std::to_string(limits_.max_calls_per_connection) +
                                                ", daemon.max_calls_per_connection)"};
  }

  template <class Ctx>
  kj::Promise<void> await_job(Ctx ctx, engine::JobKey key, milliseconds timeout) {
    return to_kj(calls_, engine_.await(std::move(key), timeout))
        .then([ctx](kj::Own<engine::Result<engine::JobOutcome>> boxed) mutable {
          const auto& r = *boxed;
          auto response = ctx.getResults().initResponse();
          if (r)
            fill(response.initResult(), r.value());
          else
            fill(response.initError(), r.error());
        });
  }

  engine::Engine& engine_;
  const RecentEvents& recent_;
  runtime::TaskSet& calls_;
  std::uint64_t max_message_bytes_;
  const ServerLimits& limits_;  // the server's, updated by reload()
  std::shared_ptr<ConnState> state_;
};

// The bootstrap of TCP connections (see server.hpp and cuzk.capnp Login).
class Server::LoginGate final : public wire::Login::Server {
 public:
  // (rpc::Server: inside a capnp Server subclass, plain `Server` names the base.)
  LoginGate(rpc::Server& server, std::shared_ptr<ConnState> state) : server_(server), state_(std::move(state)) {}

  kj::Promise<void> login(LoginContext ctx) override {
    auto response = ctx.getResults().initResponse();
    if (!server_.token_matches(ctx.getParams().getToken())) {
      server_.log_.warn("login refused", {{"peer", state_->peer}});
      auto e = response.initError();
      e.setKind(wire::ErrorKind::UNAUTHENTICATED);
      e.setMessage("wrong or missing token");
      return kj::READY_NOW;
    }
    if (!state_->authenticated) server_.log_.info("login", {{"peer", state_->peer}});
    state_->authenticated = true;
    response.setService(kj::heap<Service>(server_.engine_, server_.recent_, server_.calls_,
                                          server_.config_.max_message_bytes, server_.limits_, state_));
    return kj::READY_NOW;
  }

 private:
  rpc::Server& server_;
  std::shared_ptr<ConnState> state_;
};

struct Server::Connection {
  Connection(kj::Own<kj::AsyncIoStream> s, capnp::Capability::Client bootstrap, capnp::ReaderOptions options,
             std::size_t& count)
      : stream(kj::mv(s)),
        network(*stream, capnp::rpc::twoparty::Side::SERVER, options),
        rpc(capnp::makeRpcServer(network, kj::mv(bootstrap))),
        count_(count) {
    ++count_;
    // Twice the largest message, in words: see "flow limit" in server.hpp.
    rpc.setFlowLimit(static_cast<std::size_t>(2 * options.traversalLimitInWords));
  }
  ~Connection() { --count_; }
  kj::Own<kj::AsyncIoStream> stream;
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
      tcp_acceptor_(io),
      accepts_(io.get_executor()),
      calls_(io.get_executor()),
      connection_tasks_(kj::heap<kj::TaskSet>(static_cast<kj::TaskSet::ErrorHandler&>(*this))) {
  reader_options_.traversalLimitInWords = config_.max_message_bytes / sizeof(capnp::word);
  reload(config_.limits);
  recent_token_ = engine_.subscribe([this](const engine::JobEvent& ev) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    recent_.push(ev, static_cast<std::uint64_t>(std::chrono::duration_cast<milliseconds>(now).count()));
  });
}

Server::~Server() noexcept(false) {
  engine_.unsubscribe(recent_token_);
  connection_tasks_ = nullptr;
  stop_accepting();  // closes the sockets, removes the socket file if it is ours
}

void Server::reload(ServerLimits limits) {
  if (limits.max_calls_per_connection == 0) throw ServerError("max_calls_per_connection must be at least 1");
  if (!config_.tcp.address.empty() && !config_.tcp.insecure_loopback && limits.token.size() < kMinTokenBytes) {
    throw ServerError("a TCP listener needs a token of at least " + std::to_string(kMinTokenBytes) + " bytes");
  }
  limits_ = std::move(limits);
  token_digest_ = sha256(kj::arrayPtr(reinterpret_cast<const kj::byte*>(limits_.token.data()), limits_.token.size()));
}

bool Server::token_matches(kj::ArrayPtr<const kj::byte> presented) const {
  // Insecure loopback without a configured token: the gate is open.
  if (limits_.token.empty()) return config_.tcp.insecure_loopback;
  auto digest = sha256(presented);
  return CRYPTO_memcmp(digest.data(), token_digest_.data(), digest.size()) == 0;
}

void Server::bind() {
  using Proto = asio::local::stream_protocol;
  if (bound_) return;
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
  if (!config_.tcp.address.empty()) bind_tcp();
  bound_ = true;
}

void Server::start() {
  bind();
  accepts_.spawn(accept_loop());
  if (tcp_acceptor_.is_open()) accepts_.spawn(tcp_accept_loop());
  log_.info("listening", {{"socket", config_.socket_path.string()},
                          {"max_message_bytes", config_.max_message_bytes},
                          {"max_calls_per_connection", limits_.max_calls_per_connection}});
}

void Server::bind_tcp() {
  const TcpConfig& tcp = config_.tcp;
  TcpAddress where = parse_tcp_address(tcp.address);
  asio::error_code ec;
  asio::ip::address ip = asio::ip::make_address(where.host, ec);
  if (ec) throw ServerError("listen_tcp needs a numeric IP address, not '" + where.host + "'");
  if (tcp.insecure_loopback) {
    if (!ip.is_loopback()) {
      throw ServerError("tcp_insecure_loopback is refused for the non-loopback address " + where.host +
                        ": plain TCP is only allowed on 127.0.0.0/8 or ::1");
    }
    log_.warn("TCP without TLS (tcp_insecure_loopback)", {{"address", tcp.address}});
  } else {
    if (tcp.tls_cert_file.empty() || tcp.tls_key_file.empty()) {
      throw ServerError("listen_tcp needs tls_cert_file and tls_key_file (or tcp_insecure_loopback on loopback)");
    }
    std::string cert_pem = read_text_file(tcp.tls_cert_file, "TLS certificate");
    std::string key_pem = read_text_file(tcp.tls_key_file, "TLS key");
    try {
      kj::TlsKeypair keypair{kj::TlsPrivateKey(kj::StringPtr(key_pem.c_str())),
                             kj::TlsCertificate(kj::StringPtr(cert_pem.c_str()))};
      kj::TlsContext::Options options;
      options.minVersion = kj::TlsVersion::TLS_1_2;
      options.useSystemTrustStore = false;  // we verify no client certificates
      options.defaultKeypair = keypair;     // SSL_CTX takes its own references
      tls_ = kj::heap<kj::TlsContext>(kj::mv(options));
    } catch (const kj::Exception& e) {
      throw ServerError(std::string("TLS setup failed (") + tcp.tls_cert_file.string() + ", " +
                        tcp.tls_key_file.string() + "): " + e.getDescription().cStr());
    }
  }
  try {
    asio::ip::tcp::endpoint ep(ip, where.port);
    tcp_acceptor_.open(ep.protocol());
    tcp_acceptor_.set_option(asio::socket_base::reuse_address(true));
    tcp_acceptor_.bind(ep);
    tcp_acceptor_.listen(asio::socket_base::max_listen_connections);
    tcp_port_ = tcp_acceptor_.local_endpoint().port();
  } catch (const std::system_error& e) {
    throw ServerError("cannot listen on " + tcp.address + ": " + e.what());
  }
  log_.info("listening tcp", {{"address", where.host},
                              {"port", tcp_port_},
                              {"tls", tls_ ? "yes" : "no"},
                              {"token", limits_.token.empty() ? "none" : "required"},
                              {"auth_timeout_ms", tcp.auth_timeout.count()}});
}

asio::awaitable<void> Server::accept_loop() {
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
    if (!serving_) continue;
    auto state = std::make_shared<ConnState>();
    state->peer = "unix";
    auto killed = kj::newPromiseAndFulfiller<void>();
    state->kill = kj::mv(killed.fulfiller);
    // The TCP policy, minus TLS and login: a peer that connects and makes no
    // call within auth_timeout (idle, or stuck half-way through a message)
    // is closed, so such peers cannot hold sockets and memory for good.
    auto timer = arm_first_call_deadline(state, "no call within the auth timeout");
    auto conn =
        kj::heap<Connection>(kj::heap<AsioStream>(std::move(socket)),
                             kj::heap<Service>(engine_, recent_, calls_, config_.max_message_bytes, limits_, state),
                             reader_options_, connection_count_);
    auto disconnected = conn->network.onDisconnect();
    connection_tasks_->add(
        disconnected.attach(kj::mv(conn)).exclusiveJoin(kj::mv(killed.promise)).attach(kj::mv(timer)));
  }
}

asio::awaitable<void> Server::tcp_accept_loop() {
  while (tcp_acceptor_.is_open()) {
    asio::error_code ec;
    auto socket = co_await tcp_acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !tcp_acceptor_.is_open()) co_return;
    if (ec) {
      log_.warn("tcp accept failed", {{"error", ec.message()}});
      asio::steady_timer backoff(io_, milliseconds(100));
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (serving_) serve_tcp(std::move(socket));
  }
}

void Server::serve_tcp(asio::ip::tcp::socket socket) {
  auto state = std::make_shared<ConnState>();
  asio::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  state->peer = ec ? std::string("?") : remote.address().to_string() + ":" + std::to_string(remote.port());
  auto killed = kj::newPromiseAndFulfiller<void>();
  state->kill = kj::mv(killed.fulfiller);

  // Handshake and login must finish within auth_timeout.
  auto timer = arm_first_call_deadline(state, "no login within the auth timeout");

  kj::Own<kj::AsyncIoStream> plain = kj::heap<AsioStream>(std::move(socket));
  kj::Promise<kj::Own<kj::AsyncIoStream>> secured =
      tls_ ? tls_->wrapServer(kj::mv(plain)) : kj::Promise<kj::Own<kj::AsyncIoStream>>(kj::mv(plain));
  auto served = secured.then(
      [this, state](kj::Own<kj::AsyncIoStream> stream) -> kj::Promise<void> {
        auto conn =
            kj::heap<Connection>(kj::mv(stream), kj::heap<LoginGate>(*this, state), reader_options_, connection_count_);
        auto disconnected = conn->network.onDisconnect();
        return disconnected.attach(kj::mv(conn));
      },
      [this, state](kj::Exception&& e) -> kj::Promise<void> {
        // Plain TCP to the TLS port, a client that distrusts our certificate...
        log_.info("TLS handshake failed", {{"peer", state->peer}, {"reason", e.getDescription().cStr()}});
        return kj::READY_NOW;
      });
  connection_tasks_->add(served.exclusiveJoin(kj::mv(killed.promise)).attach(kj::mv(timer)));
}

std::shared_ptr<asio::steady_timer> Server::arm_first_call_deadline(const std::shared_ptr<ConnState>& state,
                                                                    const char* why) {
  // The handler holds only a weak reference, so a finished connection makes
  // it a no-op; the connection's task owns the timer (cancelled with it).
  auto timer = std::make_shared<asio::steady_timer>(io_, config_.tcp.auth_timeout);
  timer->async_wait([this, weak = std::weak_ptr<ConnState>(state), why](const asio::error_code& wait_ec) {
    if (wait_ec) return;  // cancelled: the connection is gone (and maybe the server)
    auto s = weak.lock();
    if (!s || s->authenticated) return;
    log_.warn(std::string("closing connection: ") + why, {{"peer", s->peer}});
    if (s->kill->isWaiting()) s->kill->fulfill();
  });
  return timer;
}

void Server::stop_accepting() {
  asio::error_code ec;
  acceptor_.close(ec);
  tcp_acceptor_.close(ec);
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
  serving_ = false;
  connection_tasks_ = kj::heap<kj::TaskSet>(static_cast<kj::TaskSet::ErrorHandler&>(*this));
  log_.info("rpc server stopped");
}

void Server::taskFailed(kj::Exception&& exception) {
  // A connection ended with an error (peer reset, oversized message...).
  log_.info("connection closed", {{"reason", exception.getDescription().cStr()}});
}

}  // namespace cuzk::rpc
