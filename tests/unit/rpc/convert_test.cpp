// Status conversion between the engine's views and the wire schema
// (rpc/convert.hpp): what the daemon fills, serialized and read back as the
// client reads it, arrives whole.
#include <gtest/gtest.h>

#include <array>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "rpc/convert.hpp"

namespace cuzk::rpc {
namespace {

engine::DeviceWorkerView sample_gpu() {
  engine::DeviceWorkerView d;
  d.index = 1;
  d.name = "cuda:1 NVIDIA H200";
  d.ordinal = 1;
  d.job = 42;
  d.partition = 7;
  d.stage = "prove";
  d.jobs_placed = 3;
  d.proofs_done = 99;
  d.verify_failures = 2;
  d.resident_srs = "porep-32g";
  d.resident_srs_bytes = 47'350'000'000;
  d.r1cs_matrices_bytes = 7'340'032'000;       // a 32 GiB PoRep's matrices
  d.msm_scratch_bytes = 58'091'372'544;        // its MSM arena on an H200 (~54.1 GiB)
  d.msm_scratch_limit_bytes = 62'491'774'976;  // ~58.2 GiB
  d.memory_total_bytes = 150'000'000'000;
  d.memory_free_bytes = 80'000'000'000;
  d.prover_stage = "h_msm";
  d.prover_stage_ms = 120;
  d.prover_stream = 0x5a00;
  d.prover_streams = 3;
  d.prover_events = 8;
  return d;
}

// The status as bytes on the wire, decoded again.
kj::Array<capnp::word> status_words(const engine::EngineStatus& s) {
  capnp::MallocMessageBuilder msg;
  fill(msg.initRoot<wire::Status>(), s, 1u << 20);
  return capnp::messageToFlatArray(msg);
}

TEST(RpcConvert, DeviceStatusRoundTripsThroughTheWire) {
  engine::EngineStatus s;
  engine::DeviceWorkerView cpu;
  cpu.index = 2;
  cpu.name = "cpu";
  s.devices = {sample_gpu(), cpu};
  kj::Array<capnp::word> words = status_words(s);
  capnp::FlatArrayMessageReader reader(words);
  auto devices = reader.getRoot<wire::Status>().getDevices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].getR1csMatricesBytes(), 7'340'032'000u);
  EXPECT_EQ(devices[1].getR1csMatricesBytes(), 0u);
  EXPECT_EQ(devices[0].getMsmScratchBytes(), 58'091'372'544u);
  EXPECT_EQ(devices[0].getMsmScratchLimitBytes(), 62'491'774'976u);
  EXPECT_EQ(devices[1].getMsmScratchBytes(), 0u);

  const engine::DeviceWorkerView want = sample_gpu();
  engine::DeviceWorkerView got = read(devices[0]);
  EXPECT_EQ(got.index, want.index);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.ordinal, want.ordinal);
  EXPECT_EQ(got.job, want.job);
  EXPECT_EQ(got.partition, want.partition);
  EXPECT_EQ(got.stage, want.stage);
  EXPECT_EQ(got.jobs_placed, want.jobs_placed);
  EXPECT_EQ(got.proofs_done, want.proofs_done);
  EXPECT_EQ(got.verify_failures, want.verify_failures);
  EXPECT_EQ(got.resident_srs, want.resident_srs);
  EXPECT_EQ(got.resident_srs_bytes, want.resident_srs_bytes);
  EXPECT_EQ(got.r1cs_matrices_bytes, want.r1cs_matrices_bytes);
  EXPECT_EQ(got.msm_scratch_bytes, want.msm_scratch_bytes);
  EXPECT_EQ(got.msm_scratch_limit_bytes, want.msm_scratch_limit_bytes);
  EXPECT_EQ(got.memory_total_bytes, want.memory_total_bytes);
  EXPECT_EQ(got.memory_free_bytes, want.memory_free_bytes);
  EXPECT_EQ(got.prover_stage, want.prover_stage);
  EXPECT_EQ(got.prover_stage_ms, want.prover_stage_ms);
  EXPECT_EQ(got.prover_stream, want.prover_stream);
  EXPECT_EQ(got.prover_streams, want.prover_streams);
  EXPECT_EQ(got.prover_events, want.prover_events);

  // An idle back end: no job, and the CPU's matrices and arena stay 0.
  engine::DeviceWorkerView idle = read(devices[1]);
  EXPECT_FALSE(idle.job.has_value());
  EXPECT_FALSE(idle.partition.has_value());
  EXPECT_EQ(idle.name, "cpu");
  EXPECT_EQ(idle.r1cs_matrices_bytes, 0u);
  EXPECT_EQ(idle.msm_scratch_bytes, 0u);
  EXPECT_EQ(idle.msm_scratch_limit_bytes, 0u);
}

TEST(RpcConvert, ParameterFilesBeingReadRoundTripThroughTheWire) {
  engine::EngineStatus s;
  s.loading_params = {{"a.params", 1000, 600, 500, 42}, {"b.params", 7, 0, 0, 1}};
  kj::Array<capnp::word> words = status_words(s);
  capnp::FlatArrayMessageReader reader(words);
  auto loading = reader.getRoot<wire::Status>().getLoadingParams();
  ASSERT_EQ(loading.size(), 2u);
  EXPECT_EQ(std::string(loading[0].getFile().cStr()), "a.params");
  EXPECT_EQ(loading[0].getFileBytes(), 1000u);
  EXPECT_EQ(loading[0].getReadBytes(), 600u);
  EXPECT_EQ(loading[0].getDecodedBytes(), 500u);
  EXPECT_EQ(loading[0].getElapsedMs(), 42u);
  EXPECT_EQ(std::string(loading[1].getFile().cStr()), "b.params");
}

// Found by fuzz/rpc_fuzz.cpp: an empty public input (a null Data pointer on
// the wire) was passed to memcpy; it reads as 32 zero bytes, and a longer one
// is cut to 32 bytes, as before.
TEST(RpcConvert, ProofResultWithEmptyAndLongPublicInputs) {
  capnp::MallocMessageBuilder msg;
  auto b = msg.initRoot<wire::ProofResult>();
  auto inputs = b.initPublicInputs(2);
  std::array<kj::byte, 40> long_input{};
  long_input[0] = 7;
  long_input[39] = 9;
  inputs.set(1, kj::arrayPtr(long_input.data(), long_input.size()));  // element 0 stays null
  kj::Array<capnp::word> words = capnp::messageToFlatArray(msg);
  capnp::FlatArrayMessageReader reader(words);
  engine::JobOutcome o = read(reader.getRoot<wire::ProofResult>());
  ASSERT_EQ(o.output.public_inputs.size(), 2u);
  EXPECT_EQ(o.output.public_inputs[0], (std::array<std::uint8_t, 32>{}));
  EXPECT_EQ(o.output.public_inputs[1][0], 7);
  EXPECT_EQ(o.output.public_inputs[1][31], 0);
}

}  // namespace
}  // namespace cuzk::rpc
