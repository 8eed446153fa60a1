#include "rpc/convert.hpp"

#include <algorithm>
#include <cstring>

#include "engine/filecoin_request.hpp"

namespace cuzk::rpc {

using engine::ErrorKind;

namespace {

std::vector<std::uint8_t> to_bytes(capnp::Data::Reader d) { return {d.begin(), d.end()}; }

std::vector<std::vector<std::uint8_t>> to_byte_list(capnp::List<capnp::Data>::Reader list) {
  std::vector<std::vector<std::uint8_t>> out;
  out.reserve(list.size());
  for (capnp::Data::Reader d : list) out.push_back(to_bytes(d));
  return out;
}

void fill_byte_list(capnp::List<capnp::Data>::Builder b, const std::vector<std::vector<std::uint8_t>>& blobs) {
  for (unsigned i = 0; i < b.size(); ++i) b.set(i, kj::arrayPtr(blobs[i].data(), blobs[i].size()));
}

}  // namespace

wire::ErrorKind to_wire(ErrorKind k) {
  switch (k) {
    case ErrorKind::kInvalidInput:
      return wire::ErrorKind::INVALID_INPUT;
    case ErrorKind::kNotFound:
      return wire::ErrorKind::NOT_FOUND;
    case ErrorKind::kOverloaded:
      return wire::ErrorKind::OVERLOADED;
    case ErrorKind::kCancelled:
      return wire::ErrorKind::CANCELLED;
    case ErrorKind::kUnimplemented:
      return wire::ErrorKind::UNIMPLEMENTED;
    case ErrorKind::kInternal:
      return wire::ErrorKind::INTERNAL;
    case ErrorKind::kTimeout:
      return wire::ErrorKind::TIMEOUT;
    case ErrorKind::kShuttingDown:
      return wire::ErrorKind::SHUTTING_DOWN;
  }
  return wire::ErrorKind::INTERNAL;
}

ErrorKind from_wire(wire::ErrorKind k) {
  switch (k) {
    case wire::ErrorKind::INVALID_INPUT:
      return ErrorKind::kInvalidInput;
    case wire::ErrorKind::NOT_FOUND:
      return ErrorKind::kNotFound;
    case wire::ErrorKind::OVERLOADED:
      return ErrorKind::kOverloaded;
    case wire::ErrorKind::CANCELLED:
      return ErrorKind::kCancelled;
    case wire::ErrorKind::UNIMPLEMENTED:
      return ErrorKind::kUnimplemented;
    case wire::ErrorKind::INTERNAL:
      return ErrorKind::kInternal;
    case wire::ErrorKind::TIMEOUT:
      return ErrorKind::kTimeout;
    case wire::ErrorKind::SHUTTING_DOWN:
      return ErrorKind::kShuttingDown;
    // Only Login answers it (the client turns it into ClientError); as a
    // job error it would mean "this request cannot succeed as sent".
    case wire::ErrorKind::UNAUTHENTICATED:
      return ErrorKind::kInvalidInput;
  }
  return ErrorKind::kInternal;  // a newer server's kind: treat as internal
}

wire::Priority to_wire(engine::Priority p) {
  switch (p) {
    case engine::Priority::kLow:
      return wire::Priority::LOW;
    case engine::Priority::kNormal:
      return wire::Priority::NORMAL;
    case engine::Priority::kHigh:
      return wire::Priority::HIGH;
    case engine::Priority::kCritical:
      return wire::Priority::CRITICAL;
  }
  return wire::Priority::NORMAL;
}

wire::JobState to_wire(engine::JobState s) {
  switch (s) {
    case engine::JobState::kQueued:
      return wire::JobState::QUEUED;
    case engine::JobState::kRunning:
      return wire::JobState::RUNNING;
    case engine::JobState::kDone:
      return wire::JobState::DONE;
    case engine::JobState::kFailed:
      return wire::JobState::FAILED;
    case engine::JobState::kCancelled:
      return wire::JobState::CANCELLED;
  }
  return wire::JobState::FAILED;
}

engine::JobState from_wire(wire::JobState s) {
  switch (s) {
    case wire::JobState::QUEUED:
      return engine::JobState::kQueued;
    case wire::JobState::RUNNING:
      return engine::JobState::kRunning;
    case wire::JobState::DONE:
      return engine::JobState::kDone;
    case wire::JobState::FAILED:
      return engine::JobState::kFailed;
    case wire::JobState::CANCELLED:
      return engine::JobState::kCancelled;
  }
  return engine::JobState::kFailed;
}

void fill(wire::Error::Builder b, const engine::Error& e) {
  b.setKind(to_wire(e.kind));
  b.setMessage(e.message);
}

engine::Error read(wire::Error::Reader r) { return {from_wire(r.getKind()), r.getMessage().cStr()}; }

engine::Result<engine::JobRequest> read(wire::ProofRequest::Reader r) {
  engine::JobRequest req;
  req.request_id = r.getRequestId().cStr();
  switch (r.getPriority()) {
    case wire::Priority::UNSPECIFIED:
      break;
    case wire::Priority::LOW:
      req.priority = engine::Priority::kLow;
      break;
    case wire::Priority::NORMAL:
      req.priority = engine::Priority::kNormal;
      break;
    case wire::Priority::HIGH:
      req.priority = engine::Priority::kHigh;
      break;
    case wire::Priority::CRITICAL:
      req.priority = engine::Priority::kCritical;
      break;
    default:
      return engine::Error{ErrorKind::kInvalidInput,
                           "unknown priority value " + std::to_string(static_cast<int>(r.getPriority()))};
  }
  auto kind = r.getKind();
  switch (kind.which()) {
    case wire::ProofRequest::Kind::GROTH16: {
      auto g = kind.getGroth16();
      if (g.getCircuit() != wire::BuiltinCircuit::DEMO) {
        return engine::Error{ErrorKind::kInvalidInput,
                             "unknown builtin circuit " + std::to_string(static_cast<int>(g.getCircuit()))};
      }
      req.kind = engine::ProofKind::kGroth16Demo;
      req.demo_log_domain = g.getSize();
      req.demo_seed = g.getSeed();
      break;
    }
    case wire::ProofRequest::Kind::POREP_C2: {
      auto c2 = kind.getPorepC2();
      req.kind = engine::ProofKind::kPoRepC2;
      auto data = c2.getVanillaProof();
      req.input.assign(reinterpret_cast<const char*>(data.begin()), data.size());
      break;
    }
    case wire::ProofRequest::Kind::WINDOW_POST: {
      auto w = kind.getWindowPost();
      req.kind = engine::ProofKind::kWindowPost;
      engine::PostRequest p;
      p.registered_proof = w.getRegisteredProof();
      p.miner_id = w.getMinerId();
      p.partition_index = w.getPartitionIndex();
      p.randomness = to_bytes(w.getRandomness());
      p.vanilla_proofs = to_byte_list(w.getVanillaProofs());
      req.input = engine::encode_post_request(p);
      break;
    }
    case wire::ProofRequest::Kind::WINNING_POST: {
      auto w = kind.getWinningPost();
      req.kind = engine::ProofKind::kWinningPost;
      engine::PostRequest p;
      p.registered_proof = w.getRegisteredProof();
      p.miner_id = w.getMinerId();
      p.randomness = to_bytes(w.getRandomness());
      p.vanilla_proofs = to_byte_list(w.getVanillaProofs());
      req.input = engine::encode_post_request(p);
      break;
    }
    case wire::ProofRequest::Kind::SNAP_DEALS: {
      auto d = kind.getSnapDeals();
      req.kind = engine::ProofKind::kSnapDeals;
      engine::SnapRequest p;
      p.registered_proof = d.getRegisteredProof();
      struct Field {
        const char* name;
        capnp::Data::Reader data;
        std::array<std::uint8_t, 32>* out;
      };
      for (const Field& f :
           {Field{"commROld", d.getCommROld(), &p.comm_r_old}, Field{"commDNew", d.getCommDNew(), &p.comm_d_new},
            Field{"commRNew", d.getCommRNew(), &p.comm_r_new}}) {
        if (f.data.size() != 32) {
          return engine::Error{ErrorKind::kInvalidInput,
                               std::string(f.name) + " is " + std::to_string(f.data.size()) + " bytes, not 32"};
        }
        std::memcpy(f.out->data(), f.data.begin(), 32);
      }
      p.vanilla_proofs = to_byte_list(d.getVanillaProofs());
      req.input = engine::encode_snap_request(p);
      break;
    }
    default:
      return engine::Error{ErrorKind::kInvalidInput, "unknown proof kind (newer client?)"};
  }
  req.deadline_unix_ms = r.getDeadlineUnixMs();
  return req;
}

void fill(wire::ProofRequest::Builder b, const engine::JobRequest& req) {
  b.setRequestId(req.request_id);
  b.setPriority(req.priority ? to_wire(*req.priority) : wire::Priority::UNSPECIFIED);
  auto kind = b.initKind();
  switch (req.kind) {
    case engine::ProofKind::kGroth16Demo: {
      auto g = kind.initGroth16();
      g.setCircuit(wire::BuiltinCircuit::DEMO);
      g.setSize(req.demo_log_domain);
      g.setSeed(req.demo_seed);
      break;
    }
    case engine::ProofKind::kPoRepC2: {
      auto c2 = kind.initPorepC2();
      c2.setVanillaProof(kj::arrayPtr(reinterpret_cast<const kj::byte*>(req.input.data()), req.input.size()));
      break;
    }
    case engine::ProofKind::kWindowPost: {
      auto w = kind.initWindowPost();
      // The client encoded it (encode_post_request); an undecodable input
      // goes out empty and the daemon refuses it.
      engine::Result<engine::PostRequest> p = engine::decode_post_request(req.input);
      if (!p) break;
      w.setRegisteredProof(p.value().registered_proof);
      w.setMinerId(p.value().miner_id);
      w.setPartitionIndex(p.value().partition_index);
      w.setRandomness(kj::arrayPtr(p.value().randomness.data(), p.value().randomness.size()));
      fill_byte_list(w.initVanillaProofs(static_cast<unsigned>(p.value().vanilla_proofs.size())),
                     p.value().vanilla_proofs);
      break;
    }
    case engine::ProofKind::kWinningPost: {
      auto w = kind.initWinningPost();
      engine::Result<engine::PostRequest> p = engine::decode_post_request(req.input);
      if (!p) break;
      w.setRegisteredProof(p.value().registered_proof);
      w.setMinerId(p.value().miner_id);
      w.setRandomness(kj::arrayPtr(p.value().randomness.data(), p.value().randomness.size()));
      fill_byte_list(w.initVanillaProofs(static_cast<unsigned>(p.value().vanilla_proofs.size())),
                     p.value().vanilla_proofs);
      break;
    }
    case engine::ProofKind::kSnapDeals: {
      auto d = kind.initSnapDeals();
      engine::Result<engine::SnapRequest> p = engine::decode_snap_request(req.input);
      if (!p) break;
      d.setRegisteredProof(p.value().registered_proof);
      d.setCommROld(kj::arrayPtr(p.value().comm_r_old.data(), 32));
      d.setCommDNew(kj::arrayPtr(p.value().comm_d_new.data(), 32));
      d.setCommRNew(kj::arrayPtr(p.value().comm_r_new.data(), 32));
      fill_byte_list(d.initVanillaProofs(static_cast<unsigned>(p.value().vanilla_proofs.size())),
                     p.value().vanilla_proofs);
      break;
    }
  }
  b.setDeadlineUnixMs(req.deadline_unix_ms);
}

engine::Result<engine::JobKey> read(wire::JobIdOrRequest::Reader r) {
  // One JobKey built in place and returned once: moving a temporary
  // variant<uint64, string> holding the integer trips gcc 12's
  // -Wmaybe-uninitialized under -O2 with sanitizers (a false positive).
  engine::JobKey key;
  switch (r.which()) {
    case wire::JobIdOrRequest::JOB_ID:
      key.emplace<engine::JobId>(r.getJobId());
      break;
    case wire::JobIdOrRequest::REQUEST_ID:
      key.emplace<std::string>(r.getRequestId().cStr());
      if (std::get<std::string>(key).empty()) return engine::Error{ErrorKind::kInvalidInput, "empty request id"};
      break;
    default:
      return engine::Error{ErrorKind::kInvalidInput, "unknown job reference (newer client?)"};
  }
  return key;
}

void fill(wire::JobIdOrRequest::Builder b, const engine::JobKey& key) {
  if (const engine::JobId* id = std::get_if<engine::JobId>(&key))
    b.setJobId(*id);
  else
    b.setRequestId(std::get<std::string>(key));
}

void fill(wire::JobRef::Builder b, const engine::JobView& v) {
  b.setJobId(v.id);
  b.setRequestId(v.request_id);
  b.setState(to_wire(v.state));
  b.setQueuePosition(v.queue_position);
  b.setDeduplicated(v.deduplicated);
  b.setDeadlineMissed(v.deadline_missed);
}

engine::JobView read(wire::JobRef::Reader r) {
  engine::JobView v;
  v.id = r.getJobId();
  v.request_id = r.getRequestId().cStr();
  v.state = from_wire(r.getState());
  v.queue_position = r.getQueuePosition();
  v.deduplicated = r.getDeduplicated();
  v.deadline_missed = r.getDeadlineMissed();
  return v;
}

void fill(wire::ProofResult::Builder b, const engine::JobOutcome& o) {
  fill(b.initJob(), o.job);
  b.setProof(kj::arrayPtr(o.output.proof.data(), o.output.proof.size()));
  auto inputs = b.initPublicInputs(static_cast<unsigned>(o.output.public_inputs.size()));
  for (unsigned i = 0; i < inputs.size(); ++i)
    inputs.set(i, kj::arrayPtr(o.output.public_inputs[i].data(), o.output.public_inputs[i].size()));
  b.setVerifyingKey(kj::arrayPtr(o.output.vk_bytes.data(), o.output.vk_bytes.size()));
  auto t = b.initTimings();
  const engine::Timings& ti = o.output.timings;
  t.setQueueMs(ti.queue_ms);
  t.setParamsMs(ti.params_ms);
  t.setSynthesisMs(ti.synthesis_ms);
  t.setProveMs(ti.prove_ms);
  t.setVerifyMs(ti.verify_ms);
  t.setTotalMs(ti.total_ms);
}

engine::JobOutcome read(wire::ProofResult::Reader r) {
  engine::JobOutcome o;
  o.job = read(r.getJob());
  auto proof = r.getProof();
  o.output.proof.assign(proof.begin(), proof.end());
  for (auto x : r.getPublicInputs()) {
    std::array<std::uint8_t, 32> le{};
    // copy_n, not memcpy: an empty (null) Data element has a null begin(),
    // which memcpy must not be given even for 0 bytes.
    std::copy_n(x.begin(), std::min<std::size_t>(x.size(), 32), le.begin());
    o.output.public_inputs.push_back(le);
  }
  auto vk = r.getVerifyingKey();
  o.output.vk_bytes.assign(vk.begin(), vk.end());
  auto t = r.getTimings();
  o.output.timings = {t.getQueueMs(), t.getParamsMs(), t.getSynthesisMs(),
                      t.getProveMs(), t.getVerifyMs(), t.getTotalMs()};
  return o;
}

void fill(wire::DeviceStatus::Builder b, const engine::DeviceWorkerView& d) {
  b.setIndex(d.index);
  b.setName(d.name);
  b.setOrdinal(d.ordinal);
  b.setBusy(d.job.has_value());
  b.setJobId(d.job.value_or(0));
  b.setPartition(d.partition.value_or(0));
  b.setStage(d.stage);
  b.setJobsPlaced(d.jobs_placed);
  b.setProofsDone(d.proofs_done);
  b.setVerifyFailures(d.verify_failures);
  b.setResidentSrs(d.resident_srs);
  b.setResidentSrsBytes(d.resident_srs_bytes);
  b.setR1csMatricesBytes(d.r1cs_matrices_bytes);
  b.setMsmScratchBytes(d.msm_scratch_bytes);
  b.setMsmScratchLimitBytes(d.msm_scratch_limit_bytes);
  b.setMemoryTotalBytes(d.memory_total_bytes);
  b.setMemoryFreeBytes(d.memory_free_bytes);
  b.setProverStage(d.prover_stage);
  b.setProverStageMs(d.prover_stage_ms);
  b.setProverStream(d.prover_stream);
  b.setProverStreams(d.prover_streams);
  b.setProverEvents(d.prover_events);
}

engine::DeviceWorkerView read(wire::DeviceStatus::Reader r) {
  engine::DeviceWorkerView v;
  v.index = r.getIndex();
  v.name = r.getName().cStr();
  v.ordinal = r.getOrdinal();
  if (r.getBusy()) {
    v.job = r.getJobId();
    v.partition = r.getPartition();
  }
  v.stage = r.getStage().cStr();
  v.jobs_placed = r.getJobsPlaced();
  v.proofs_done = r.getProofsDone();
  v.verify_failures = r.getVerifyFailures();
  v.resident_srs = r.getResidentSrs().cStr();
  v.resident_srs_bytes = r.getResidentSrsBytes();
  v.r1cs_matrices_bytes = r.getR1csMatricesBytes();         // 0 from a daemon that predates the field
  v.msm_scratch_bytes = r.getMsmScratchBytes();             // 0 from a daemon that predates the field
  v.msm_scratch_limit_bytes = r.getMsmScratchLimitBytes();  // 0 from a daemon that predates the field
  v.memory_total_bytes = r.getMemoryTotalBytes();
  v.memory_free_bytes = r.getMemoryFreeBytes();
  v.prover_stage = r.getProverStage().cStr();
  v.prover_stage_ms = r.getProverStageMs();
  v.prover_stream = r.getProverStream();
  v.prover_streams = r.getProverStreams();
  v.prover_events = r.getProverEvents();
  return v;
}

void fill(wire::Status::Builder b, const engine::EngineStatus& s, std::uint64_t max_message_bytes) {
  b.setSchemaVersion(wire::SCHEMA_VERSION);
  b.setUptimeMs(s.uptime_ms);
  b.setDraining(s.draining);
  auto queues = b.initQueues(engine::kNumPriorities);
  for (unsigned p = 0; p < engine::kNumPriorities; ++p) {
    queues[p].setPriority(to_wire(static_cast<engine::Priority>(p)));
    queues[p].setQueued(s.queued[p]);
  }
  b.setQueueCapacity(s.queue_capacity);
  auto jobs = b.initJobs(static_cast<unsigned>(s.jobs.size()));
  for (unsigned i = 0; i < jobs.size(); ++i) {
    fill(jobs[i].initJob(), s.jobs[i]);
    jobs[i].setKind(std::string(engine::to_string(s.jobs[i].kind)));
    jobs[i].setStage(s.jobs[i].stage);
    jobs[i].setAgeMs(s.jobs[i].age_ms);
  }
  auto workers = b.initWorkers(static_cast<unsigned>(s.workers.size()));
  for (unsigned i = 0; i < workers.size(); ++i) {
    workers[i].setWorkerId(s.workers[i].id);
    workers[i].setBusy(s.workers[i].job.has_value());
    workers[i].setJobId(s.workers[i].job.value_or(0));
  }
  auto params = b.initLoadedParams(static_cast<unsigned>(s.loaded_params.size()));
  std::uint64_t params_bytes = 0;
  for (unsigned i = 0; i < params.size(); ++i) {
    params[i].setCircuitId(s.loaded_params[i].circuit_id);
    params[i].setBytes(s.loaded_params[i].bytes);
    params_bytes += s.loaded_params[i].bytes;
  }
  auto loading = b.initLoadingParams(static_cast<unsigned>(s.loading_params.size()));
  for (unsigned i = 0; i < loading.size(); ++i) {
    const engine::ParamsLoadView& l = s.loading_params[i];
    loading[i].setFile(l.file);
    loading[i].setFileBytes(l.file_bytes);
    loading[i].setReadBytes(l.read_bytes);
    loading[i].setDecodedBytes(l.decoded_bytes);
    loading[i].setElapsedMs(l.elapsed_ms);
  }
  b.setResidentBytes(s.resident_bytes);
  b.setParamsBytes(params_bytes);
  b.setCompletedTotal(s.completed_total);
  b.setFailedTotal(s.failed_total);
  b.setCancelledTotal(s.cancelled_total);
  b.setMaxMessageBytes(max_message_bytes);
  auto devices = b.initDevices(static_cast<unsigned>(s.devices.size()));
  for (unsigned i = 0; i < devices.size(); ++i) fill(devices[i], s.devices[i]);
  auto srs = b.initSrsResidency(static_cast<unsigned>(s.srs.size()));
  for (unsigned i = 0; i < srs.size(); ++i) {
    srs[i].setSrs(s.srs[i].srs);
    srs[i].setTier(s.srs[i].tier);
    srs[i].setDevice(s.srs[i].device);
    srs[i].setBytes(s.srs[i].bytes);
  }
  auto m = b.initMemoryBudget();
  m.setTotalBytes(s.memory.total_bytes);
  m.setReservedBytes(s.memory.reserved_bytes);
  m.setAvailableBytes(s.memory.available_bytes);
  m.setPeakReservedBytes(s.memory.peak_reserved_bytes);
  m.setWaiting(s.memory.waiting);
  m.setWaitingBytes(s.memory.waiting_bytes);
  m.setKeptWitnessBytes(s.memory.kept_witness_bytes);
  b.setCpuRetriesTotal(s.cpu_retries_total);
}

void fill(wire::JobEvent::Builder b, const engine::JobEvent& e) {
  b.setJobId(e.id);
  b.setRequestId(e.request_id);
  b.setState(to_wire(e.state));
  b.setStage(e.stage);
  b.setElapsedMs(e.elapsed_ms);
  if (e.error) fill(b.initError(), *e.error);
}

engine::JobEvent read(wire::JobEvent::Reader r) {
  engine::JobEvent out;
  out.id = r.getJobId();
  out.request_id = r.getRequestId().cStr();
  out.state = from_wire(r.getState());
  out.stage = r.getStage().cStr();
  out.elapsed_ms = r.getElapsedMs();
  if (r.hasError()) out.error = read(r.getError());
  return out;
}

}  // namespace cuzk::rpc
