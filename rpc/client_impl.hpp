// Client internals, for tests that need the raw capability (malformed
// requests, watch): include after rpc/client.hpp.
#pragma once

#include <capnp/ez-rpc.h>
#include <kj/async-io.h>

#include "rpc/client.hpp"
#include "rpc/cuzk.capnp.h"

namespace cuzk::rpc {

struct Client::Impl {
  Impl(const std::string& kj_addr, capnp::ReaderOptions options)
      : ez(kj_addr, 0, options), cap(ez.getMain<schema::ProvingV1>()) {}
  capnp::EzRpcClient ez;
  schema::ProvingV1::Client cap;
  kj::WaitScope& ws() { return ez.getWaitScope(); }
};

}  // namespace cuzk::rpc
