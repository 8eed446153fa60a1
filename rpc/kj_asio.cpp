#include "rpc/kj_asio.hpp"

namespace cuzk::rpc {

bool AsioEventPort::wait() {
  in_wait_ = true;
  if (io_.stopped()) io_.restart();
  io_.run_one();
  in_wait_ = false;
  return woken_.exchange(false);
}

void AsioEventPort::wake() const {
  woken_ = true;
  auto* self = const_cast<AsioEventPort*>(this);
  asio::post(io_, [self] { self->schedule(); });
}

void AsioEventPort::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  asio::post(io_, [this] { run_slice(); });
}

void AsioEventPort::run_slice() {
  scheduled_ = false;
  if (in_wait_) return;  // an outer promise.wait() is turning the KJ loop itself
  // ws.poll() also drains the kj::Executor queue (cross-thread events), which
  // EventLoop::run() does not.
  if (woken_.exchange(false))
    ws_->poll();
  else
    loop_->run(256);
  // run() does not call setRunnable(true) again for work left over.
  if (loop_->isRunnable()) schedule();
}

AsioStream::AsioStream(Socket socket) : socket_(std::move(socket)) {
  asio::error_code ec;
  socket_.non_blocking(true, ec);  // fails only for a closed socket, whose first read reports it
}

namespace {
// Moves an accepted socket's descriptor into a generic socket (no async
// operation is pending on a freshly accepted socket, so release() is safe).
// (Never throws for a peer that already hung up: a network event must not
// become an exception in the accept loop.)
template <class Proto>
AsioStream::Socket to_generic(asio::basic_stream_socket<Proto> s, asio::generic::stream_protocol proto) {
  auto executor = s.get_executor();
  asio::error_code ec;
  auto fd = s.release(ec);
  if (ec) return AsioStream::Socket(executor);  // closed: the first read reports the failure
  return AsioStream::Socket(executor, proto, fd);
}
asio::generic::stream_protocol tcp_protocol(const asio::ip::tcp::socket& s) {
  asio::error_code ec;
  auto local = s.local_endpoint(ec);
  int family = !ec && local.address().is_v6() ? AF_INET6 : AF_INET;
  return asio::generic::stream_protocol(family, IPPROTO_TCP);
}
AsioStream::Socket tcp_to_generic(asio::ip::tcp::socket s) {
  auto proto = tcp_protocol(s);
  asio::error_code ec;
  s.set_option(asio::ip::tcp::no_delay(true), ec);  // best effort
  return to_generic(std::move(s), proto);
}
}  // namespace

AsioStream::AsioStream(asio::local::stream_protocol::socket socket)
    : AsioStream(to_generic(std::move(socket), asio::generic::stream_protocol(AF_UNIX, 0))) {}
AsioStream::AsioStream(asio::ip::tcp::socket socket) : AsioStream(tcp_to_generic(std::move(socket))) {}

AsioStream::~AsioStream() noexcept(false) {
  asio::error_code ec;
  socket_.close(ec);  // pending waits complete with operation_aborted: no-ops
}

kj::Promise<void> AsioStream::ready(Socket::wait_type what) {
  auto paf = kj::newPromiseAndFulfiller<void>();
  socket_.async_wait(what, [f = kj::mv(paf.fulfiller)](const asio::error_code& ec) mutable {
    if (!f->isWaiting()) return;  // KJ dropped the promise
    if (ec)
      f->reject(KJ_EXCEPTION(DISCONNECTED, "socket wait failed", ec.message()));
    else
      f->fulfill();
  });
  return kj::mv(paf.promise);
}

kj::Promise<size_t> AsioStream::tryRead(void* buffer, size_t min_bytes, size_t max_bytes) {
  return read_loop(static_cast<kj::byte*>(buffer), min_bytes, max_bytes, 0);
}

kj::Promise<size_t> AsioStream::read_loop(kj::byte* buffer, size_t min_bytes, size_t max_bytes, size_t already) {
  while (already < min_bytes) {
    asio::error_code ec;
    size_t n = socket_.read_some(asio::buffer(buffer + already, max_bytes - already), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      return ready(Socket::wait_read).then([this, buffer, min_bytes, max_bytes, already]() {
        return read_loop(buffer, min_bytes, max_bytes, already);
      });
    }
    if (ec == asio::error::eof) return already;  // short read: peer closed
    if (ec) return KJ_EXCEPTION(DISCONNECTED, "read failed", ec.message());
    already += n;
  }
  return already;
}

kj::Promise<void> AsioStream::write(const void* buffer, size_t size) {
  return write_loop({asio::const_buffer(buffer, size)});
}

kj::Promise<void> AsioStream::write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) {
  std::vector<asio::const_buffer> bufs;
  bufs.reserve(pieces.size());
  for (const auto& p : pieces) bufs.emplace_back(p.begin(), p.size());
  return write_loop(std::move(bufs));
}

kj::Promise<void> AsioStream::write_loop(std::vector<asio::const_buffer> pieces) {
  // Gather writes (sendmsg): one syscall for capnp's segment table + segments.
  size_t first = 0;
  while (first < pieces.size()) {
    asio::error_code ec;
    // sendmsg takes at most IOV_MAX pieces; asio caps the sequence it passes.
    size_t n = socket_.write_some(
        std::vector<asio::const_buffer>(pieces.begin() + static_cast<long>(first), pieces.end()), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      pieces.erase(pieces.begin(), pieces.begin() + static_cast<long>(first));
      return ready(Socket::wait_write).then([this, pieces = kj::mv(pieces)]() mutable {
        return write_loop(kj::mv(pieces));
      });
    }
    if (ec) return KJ_EXCEPTION(DISCONNECTED, "write failed", ec.message());
    // Advance past n bytes (partial writes cut a piece in the middle).
    while (n > 0 && first < pieces.size()) {
      size_t take = std::min(n, pieces[first].size());
      pieces[first] += take;
      n -= take;
      if (pieces[first].size() == 0) ++first;
    }
    while (first < pieces.size() && pieces[first].size() == 0) ++first;
  }
  return kj::READY_NOW;
}

void AsioStream::shutdownWrite() {
  asio::error_code ec;
  socket_.shutdown(asio::socket_base::shutdown_send, ec);
}

void AsioStream::abortRead() {
  asio::error_code ec;
  socket_.shutdown(asio::socket_base::shutdown_receive, ec);
}

}  // namespace cuzk::rpc
