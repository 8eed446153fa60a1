#include "rpc/client.hpp"

#include <kj/exception.h>

#include "rpc/client_impl.hpp"
#include "rpc/convert.hpp"
#include "rpc/server.hpp"

namespace cuzk::rpc {

namespace {

// Runs a KJ wait, turning capnp exceptions (transport) into ClientError.
template <class F>
auto transport(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const kj::Exception& e) {
    throw ClientError(std::string("transport: ") + e.getDescription().cStr());
  }
}

template <class Response>
engine::Result<engine::JobOutcome> read_await(Response r) {
  if (r.isError()) return read(r.getError());
  return read(r.getResult());
}

}  // namespace

Client::Client(const std::string& addr, std::uint64_t max_message_bytes) {
  std::filesystem::path path;
  try {
    path = parse_unix_address(addr);
  } catch (const ServerError& e) {
    throw ClientError(e.what());
  }
  capnp::ReaderOptions options;
  options.traversalLimitInWords = max_message_bytes / sizeof(capnp::word);
  impl_ = transport([&] { return std::make_unique<Impl>("unix:" + path.string(), options); });
}

Client::~Client() = default;

engine::Result<engine::JobView> Client::submit(const engine::JobRequest& req) {
  return transport([&]() -> engine::Result<engine::JobView> {
    auto call = impl_->cap.submitRequest();
    fill(call.initRequest(), req);
    auto resp = call.send().wait(impl_->ws());
    auto r = resp.getResponse();
    if (r.isError()) return read(r.getError());
    return read(r.getJob());
  });
}

engine::Result<engine::JobOutcome> Client::await(const engine::JobKey& key, std::uint64_t timeout_ms) {
  return transport([&] {
    auto call = impl_->cap.awaitRequest();
    fill(call.initJob(), key);
    call.setTimeoutMs(timeout_ms);
    auto resp = call.send().wait(impl_->ws());
    return read_await(resp.getResponse());
  });
}

engine::Result<engine::JobOutcome> Client::prove(const engine::JobRequest& req, std::uint64_t timeout_ms) {
  return transport([&] {
    auto call = impl_->cap.proveRequest();
    fill(call.initRequest(), req);
    call.setTimeoutMs(timeout_ms);
    auto resp = call.send().wait(impl_->ws());
    return read_await(resp.getResponse());
  });
}

engine::Result<engine::JobView> Client::cancel(const engine::JobKey& key) {
  return transport([&]() -> engine::Result<engine::JobView> {
    auto call = impl_->cap.cancelRequest();
    fill(call.initJob(), key);
    auto resp = call.send().wait(impl_->ws());
    auto r = resp.getResponse();
    if (r.isError()) return read(r.getError());
    return read(r.getJob());
  });
}

ClientStatus Client::status() {
  return transport([&] {
    auto resp = impl_->cap.statusRequest().send().wait(impl_->ws());
    auto s = resp.getStatus();
    ClientStatus out;
    out.schema_version = s.getSchemaVersion();
    out.params_bytes = s.getParamsBytes();
    out.max_message_bytes = s.getMaxMessageBytes();
    engine::EngineStatus& e = out.engine;
    e.uptime_ms = s.getUptimeMs();
    e.draining = s.getDraining();
    for (auto q : s.getQueues()) {
      auto p = static_cast<unsigned>(q.getPriority());
      // wire LOW..CRITICAL = 1..4, engine kLow..kCritical = 0..3
      if (p >= 1 && p <= engine::kNumPriorities) e.queued[p - 1] = q.getQueued();
    }
    e.queue_capacity = s.getQueueCapacity();
    for (auto j : s.getJobs()) {
      engine::JobView v = read(j.getJob());
      v.stage = j.getStage().cStr();
      v.age_ms = j.getAgeMs();
      std::string kind = j.getKind().cStr();
      for (auto k : {engine::ProofKind::kGroth16Demo, engine::ProofKind::kPoRepC2, engine::ProofKind::kWindowPost,
                     engine::ProofKind::kWinningPost, engine::ProofKind::kSnapDeals})
        if (kind == engine::to_string(k)) v.kind = k;
      e.jobs.push_back(std::move(v));
    }
    for (auto w : s.getWorkers()) {
      engine::WorkerView wv;
      wv.id = w.getWorkerId();
      if (w.getBusy()) wv.job = w.getJobId();
      e.workers.push_back(wv);
    }
    for (auto p : s.getLoadedParams()) e.loaded_params.push_back({p.getCircuitId().cStr(), p.getBytes()});
    e.resident_bytes = s.getResidentBytes();
    e.completed_total = s.getCompletedTotal();
    e.failed_total = s.getFailedTotal();
    e.cancelled_total = s.getCancelledTotal();
    return out;
  });
}

std::string Client::metrics() {
  return transport([&] {
    auto resp = impl_->cap.metricsRequest().send().wait(impl_->ws());
    return std::string(resp.getText().cStr());
  });
}

engine::Result<engine::ParamsInfo> Client::preload(const std::string& circuit_id) {
  return transport([&]() -> engine::Result<engine::ParamsInfo> {
    auto call = impl_->cap.preloadSrsRequest();
    call.setCircuitId(circuit_id);
    auto resp = call.send().wait(impl_->ws());
    auto r = resp.getResponse();
    if (r.isError()) return read(r.getError());
    return engine::ParamsInfo{r.getOk().getAlreadyLoaded(), r.getOk().getLoadMs()};
  });
}

engine::Result<bool> Client::evict(const std::string& circuit_id) {
  return transport([&]() -> engine::Result<bool> {
    auto call = impl_->cap.evictSrsRequest();
    call.setCircuitId(circuit_id);
    auto resp = call.send().wait(impl_->ws());
    auto r = resp.getResponse();
    if (r.isError()) return read(r.getError());
    return true;
  });
}

}  // namespace cuzk::rpc
