// Client internals, for tests that need the raw capability (malformed
// requests, watch): include after rpc/client.hpp.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <capnp/rpc.h>
#include <kj/async-io.h>
#include <kj/compat/tls.h>

#include <memory>

#include "rpc/client.hpp"
#include "rpc/cuzk.capnp.h"

namespace cuzk::rpc {

// KJ allows one event loop per thread, and a thread may hold several Clients
// (tests, cuzkctl watch): they share the thread's loop, which lives as long
// as the last Client on that thread (EzRpcClient does the same).
struct ThreadIo {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  static std::shared_ptr<ThreadIo> for_this_thread() {
    thread_local std::weak_ptr<ThreadIo> current;
    auto io = current.lock();
    if (!io) {
      io = std::make_shared<ThreadIo>();
      current = io;
    }
    return io;
  }
};

// Members in construction order (destroyed in reverse: the capability and the
// RPC system before the stream, the stream before the TLS context and KJ's
// event loop).
struct Client::Impl {
  std::shared_ptr<ThreadIo> thread_io = ThreadIo::for_this_thread();
  kj::AsyncIoContext& io = thread_io->io;
  kj::Own<kj::TlsContext> tls;
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<capnp::TwoPartyVatNetwork> network;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc;
  schema::ProvingV1::Client cap{nullptr};
  kj::WaitScope& ws() { return io.waitScope; }
};

}  // namespace cuzk::rpc
