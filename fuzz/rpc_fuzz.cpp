// Cap'n Proto messages of the RPC interface (rpc/cuzk.capnp), decoded from
// the fuzz bytes with the limits a daemon connection uses, converted by
// rpc/convert.hpp and, for requests, handed to a fresh (not started) Engine:
// its admission checks, request-id deduplication and cancellation run; no
// proof does. Byte 0 picks the root type:
//   0 ProofRequest   (submit/prove)     -> read() -> submit twice, cancel
//   1 JobIdOrRequest (await/cancel)     -> read() -> cancel
//   2 ProofResult    (client side)      -> read()
//   3 Status         (client side)      -> read() of each device
// The rest, zero-padded to whole words, is the message in the standard
// (unpacked) stream framing. Malformed messages surface as kj::Exception,
// which the RPC layer turns into a failed call.
#include <unistd.h>

#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstring>
#include <memory>

#include "engine/engine.hpp"
#include "fuzz_util.hpp"
#include "rpc/convert.hpp"

using namespace cuzk;
namespace wire = cuzk::rpc::schema;

namespace {

// Collaborators that outlive every input (an unstarted engine never uses
// them for work); the engine and its loop are made per input so that each
// input runs alone.
struct Rig {
  Rig() : log(runtime::LogLevel::kError), math(1), cpu(1) {
    char tmpl[] = "/tmp/cuzk-rpc-fuzz-XXXXXX";
    fuzz::require(::mkdtemp(tmpl) != nullptr, "mkdtemp");
    dir = tmpl;
    params = std::make_unique<engine::ParamStore>(dir, math, log);
  }
  ~Rig() {
    params.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  runtime::Logger log;
  ThreadPool math;
  runtime::WorkerPool cpu;
  std::filesystem::path dir;
  std::unique_ptr<engine::ParamStore> params;
};

void submit(Rig& rig, const engine::JobRequest& req) {
  runtime::EventLoop loop;
  engine::EngineConfig cfg;
  cfg.admission.capacity = 4;
  cfg.admission.reserved_for_urgent = 1;
  engine::Engine eng(loop.executor(), rig.cpu, rig.math, *rig.params, rig.log, cfg);
  auto first = eng.submit(req);
  if (!first) return;
  if (!req.request_id.empty()) {
    auto again = eng.submit(req);
    fuzz::require(again && again.value().id == first.value().id && again.value().deduplicated,
                  "resubmitting the same request did not deduplicate");
  }
  auto by_name = eng.cancel(engine::JobKey(first.value().request_id));
  fuzz::require(static_cast<bool>(by_name), "cancel by request id of a queued job failed");
  fuzz::require(by_name.value().state == engine::JobState::kCancelled, "cancelled job not in state cancelled");
}

void cancel(Rig& rig, const engine::JobKey& key) {
  runtime::EventLoop loop;
  engine::Engine eng(loop.executor(), rig.cpu, rig.math, *rig.params, rig.log, engine::EngineConfig{});
  auto r = eng.cancel(key);
  fuzz::require(!r && r.error().kind == engine::ErrorKind::kNotFound, "cancel on an empty engine found a job");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Rig rig;
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const std::size_t n = size - 1;
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>((n + 7) / 8);
  std::memset(words.begin(), 0, words.size() * sizeof(capnp::word));
  if (n) std::memcpy(words.begin(), data + 1, n);
  capnp::ReaderOptions opts;
  opts.traversalLimitInWords = 1u << 16;  // 512 KiB of reads per message
  opts.nestingLimit = 16;
  try {
    capnp::FlatArrayMessageReader msg(words, opts);
    switch (sel % 4) {
      case 0: {
        auto req = rpc::read(msg.getRoot<wire::ProofRequest>());
        if (req) submit(rig, req.value());
        break;
      }
      case 1: {
        auto key = rpc::read(msg.getRoot<wire::JobIdOrRequest>());
        if (key) cancel(rig, key.value());
        break;
      }
      case 2: {
        engine::JobOutcome o = rpc::read(msg.getRoot<wire::ProofResult>());
        (void)o;
        break;
      }
      case 3: {
        for (auto d : msg.getRoot<wire::Status>().getDevices()) (void)rpc::read(d);
        break;
      }
    }
  } catch (const kj::Exception&) {
  }
  return 0;
}
