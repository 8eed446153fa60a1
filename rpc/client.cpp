#include "rpc/client.hpp"

#include <capnp/message.h>
#include <kj/exception.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "rpc/client_impl.hpp"
#include "rpc/convert.hpp"
#include "rpc/server.hpp"
#include "rpc/tls_ip_client.hpp"

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

std::string read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClientError("cannot read token file " + path, ClientErrorKind::kConfig);
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  return token;
}

ClientOptions ClientOptions::from_env() {
  ClientOptions o;
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
  };
  o.tls_ca_file = env("CUZK_TLS_CA");
  o.tls_server_name = env("CUZK_TLS_SERVER_NAME");
  o.token = env("CUZK_TOKEN");
  if (o.token.empty() && !env("CUZK_TOKEN_FILE").empty()) o.token = read_token_file(env("CUZK_TOKEN_FILE"));
  return o;
}

Client::Client(const std::string& addr) : Client(addr, ClientOptions::from_env()) {}

Client::Client(const std::string& addr, ClientOptions options) {
  std::string kj_addr;
  std::optional<TcpAddress> tcp;
  try {
    if (addr.rfind("tcp://", 0) == 0) {
      tcp = parse_tcp_address(addr);
      kj_addr = (tcp->host.find(':') != std::string::npos ? "[" + tcp->host + "]" : tcp->host) + ":" +
                std::to_string(tcp->port);
    } else {
      kj_addr = "unix:" + parse_unix_address(addr).string();
    }
  } catch (const ServerError& e) {
    throw ClientError(e.what(), ClientErrorKind::kConfig);
  }
  std::string ca_pem;
  if (tcp && !options.tls_ca_file.empty()) {
    std::ifstream in(options.tls_ca_file, std::ios::binary);
    if (!in) throw ClientError("cannot read CA file " + options.tls_ca_file, ClientErrorKind::kConfig);
    std::stringstream text;
    text << in.rdbuf();
    ca_pem = text.str();
  }
  capnp::ReaderOptions reader;
  reader.traversalLimitInWords = options.max_message_bytes / sizeof(capnp::word);
  impl_ = transport([&] {
    auto impl = std::make_unique<Impl>();
    auto& ws = impl->ws();
    auto address = impl->io.provider->getNetwork().parseAddress(kj_addr).wait(ws);
    kj::Own<kj::AsyncIoStream> stream = address->connect().wait(ws);
    const std::string name = tcp && options.tls_server_name.empty() ? tcp->host : options.tls_server_name;
    if (!ca_pem.empty() && is_ip_literal(name)) {
      // An IP address: its certificate must carry it as an IP SAN, which
      // kj-tls cannot check (rpc/tls_ip_client.hpp).
      stream = tls_connect_ip(kj::mv(stream), ca_pem, name).wait(ws);
    } else if (!ca_pem.empty()) {
      kj::TlsCertificate ca = [&] {
        try {
          return kj::TlsCertificate(kj::StringPtr(ca_pem.c_str()));
        } catch (const kj::Exception& e) {
          throw ClientError(options.tls_ca_file + ": not a PEM certificate: " + e.getDescription().cStr(),
                            ClientErrorKind::kConfig);
        }
      }();
      kj::TlsContext::Options tls_options;
      tls_options.useSystemTrustStore = false;  // trust exactly the configured CA
      tls_options.trustedCertificates = kj::arrayPtr(&ca, 1);
      tls_options.minVersion = kj::TlsVersion::TLS_1_2;
      impl->tls = kj::heap<kj::TlsContext>(kj::mv(tls_options));
      stream = impl->tls->wrapClient(kj::mv(stream), name).wait(ws);
    }
    impl->stream = kj::mv(stream);
    impl->network = kj::heap<capnp::TwoPartyVatNetwork>(*impl->stream, capnp::rpc::twoparty::Side::CLIENT, reader);
    impl->rpc = kj::heap(capnp::makeRpcClient(*impl->network));
    capnp::MallocMessageBuilder vat_message(8);
    auto vat = vat_message.initRoot<capnp::rpc::twoparty::VatId>();
    vat.setSide(capnp::rpc::twoparty::Side::SERVER);
    auto bootstrap = impl->rpc->bootstrap(vat);
    if (!tcp) {
      impl->cap = bootstrap.castAs<schema::ProvingV1>();
      return impl;
    }
    // TCP: the bootstrap is the Login gate.
    auto login = bootstrap.castAs<schema::Login>().loginRequest();
    login.setToken(kj::arrayPtr(reinterpret_cast<const kj::byte*>(options.token.data()), options.token.size()));
    auto answer = login.send().wait(ws);
    auto response = answer.getResponse();
    if (response.isError()) {
      throw ClientError(std::string("the daemon refused the token: ") + response.getError().getMessage().cStr(),
                        ClientErrorKind::kUnauthenticated);
    }
    impl->cap = response.getService();
    return impl;
  });
}

Client::~Client() = default;

RecentEventsReply Client::recent_events(std::uint32_t max) {
  RecentEventsReply out;
  try {
    auto call = impl_->cap.recentEventsRequest();
    call.setMax(max);
    auto resp = call.send().wait(impl_->ws());
    out.total = resp.getTotal();
    for (auto e : resp.getEvents()) out.events.push_back({read(e.getEvent()), e.getUnixMs()});
  } catch (const kj::Exception& e) {
    if (e.getType() != kj::Exception::Type::UNIMPLEMENTED) {
      throw ClientError(std::string("transport: ") + e.getDescription().cStr());
    }
    out.supported = false;  // an older daemon: no history, the stream only
  }
  return out;
}

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
    for (auto l : s.getLoadingParams()) {
      e.loading_params.push_back(
          {l.getFile().cStr(), l.getFileBytes(), l.getReadBytes(), l.getDecodedBytes(), l.getElapsedMs()});
    }
    e.resident_bytes = s.getResidentBytes();
    e.completed_total = s.getCompletedTotal();
    e.failed_total = s.getFailedTotal();
    e.cancelled_total = s.getCancelledTotal();
    for (auto d : s.getDevices()) e.devices.push_back(read(d));
    for (auto r : s.getSrsResidency()) {
      e.srs.push_back({r.getSrs().cStr(), r.getTier().cStr(), r.getDevice(), r.getBytes()});
    }
    auto m = s.getMemoryBudget();
    e.memory.total_bytes = m.getTotalBytes();
    e.memory.reserved_bytes = m.getReservedBytes();
    e.memory.available_bytes = m.getAvailableBytes();
    e.memory.peak_reserved_bytes = m.getPeakReservedBytes();
    e.memory.waiting = m.getWaiting();
    e.memory.waiting_bytes = m.getWaitingBytes();
    e.memory.kept_witness_bytes = m.getKeptWitnessBytes();
    e.cpu_retries_total = s.getCpuRetriesTotal();
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
    auto ok = r.getOk();
    return engine::ParamsInfo{ok.getAlreadyLoaded(), ok.getLoadMs(), ok.getGenerated(), ok.getGpus(),
                              ok.getGpusHolding()};
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
