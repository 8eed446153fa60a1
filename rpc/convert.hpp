// Translation between the wire schema (rpc/cuzk.capnp) and engine types. The
// only place that knows both; server and client are thin on top of it.
#pragma once

#include <string>

#include "engine/types.hpp"
#include "engine/views.hpp"
#include "rpc/cuzk.capnp.h"

namespace cuzk::rpc {

namespace wire = cuzk::rpc::schema;

wire::ErrorKind to_wire(engine::ErrorKind k);
engine::ErrorKind from_wire(wire::ErrorKind k);
wire::Priority to_wire(engine::Priority p);
wire::JobState to_wire(engine::JobState s);
engine::JobState from_wire(wire::JobState s);

void fill(wire::Error::Builder b, const engine::Error& e);
engine::Error read(wire::Error::Reader r);

// Request decoding can fail (unknown enum values from a newer client, bad
// sizes): returns an invalidInput error then.
engine::Result<engine::JobRequest> read(wire::ProofRequest::Reader r);
void fill(wire::ProofRequest::Builder b, const engine::JobRequest& req);

engine::Result<engine::JobKey> read(wire::JobIdOrRequest::Reader r);
void fill(wire::JobIdOrRequest::Builder b, const engine::JobKey& key);

void fill(wire::JobRef::Builder b, const engine::JobView& v);
engine::JobView read(wire::JobRef::Reader r);

void fill(wire::ProofResult::Builder b, const engine::JobOutcome& o);
engine::JobOutcome read(wire::ProofResult::Reader r);

// One proving back end's status; fill(Status) and the client use these, so
// a device field added to both round-trips (tests/unit/rpc/convert_test.cpp).
void fill(wire::DeviceStatus::Builder b, const engine::DeviceWorkerView& d);
engine::DeviceWorkerView read(wire::DeviceStatus::Reader r);

void fill(wire::Status::Builder b, const engine::EngineStatus& s, std::uint64_t max_message_bytes);
void fill(wire::JobEvent::Builder b, const engine::JobEvent& e);
engine::JobEvent read(wire::JobEvent::Reader r);

}  // namespace cuzk::rpc
