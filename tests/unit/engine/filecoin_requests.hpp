// Genuine 2 KiB PoSt and SnapDeals requests for the engine tests, built from
// the native generators (post_gen.hpp, update_gen.hpp) the way a client does
// from its files (tools/cuzkctl/commands/filecoin_job.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "circuits/filecoin/post_gen.hpp"
#include "circuits/filecoin/update_gen.hpp"
#include "engine/filecoin_request.hpp"

namespace cuzk::engine::testing {

namespace fc = circuits::filecoin;

// The typed vanilla proofs a request was built from, for tampering.
struct PostFixture {
  fc::PostProof proof = fc::PostProof::Window2KiBV1_2;
  fc::PostGenOutput gen;
  PostRequest request;  // vanilla_proofs = to_bincode(gen.sectors[i])
};

inline PostRequest post_request_of(fc::PostProof proof, const fc::PostGenOutput& g, std::uint64_t actor_id,
                                   std::uint32_t partition = 0) {
  PostRequest r;
  r.registered_proof = fc::post_proof_info(proof).registered_id;
  r.miner_id = actor_id;
  r.partition_index = partition;
  r.randomness.assign(g.randomness.begin(), g.randomness.end());
  for (const auto& s : g.sectors) r.vanilla_proofs.push_back(fc::to_bincode(s));
  return r;
}

// Sealed (genuine) 2 KiB sectors 1..sectors.
inline PostFixture make_post_fixture(fc::PostProof proof, std::size_t sectors, std::uint64_t seed) {
  PostFixture f;
  f.proof = proof;
  fc::PostGenOptions o;
  o.proof = proof;
  o.mode = fc::PostGenMode::kSealed;
  o.seed = seed;
  o.sectors = sectors;
  f.gen = fc::generate_post_vanilla(o);
  f.request = post_request_of(proof, f.gen, o.actor_id);
  return f;
}

inline SnapRequest snap_request_of(const fc::UpdateInputs& in) {
  SnapRequest r;
  r.registered_proof = static_cast<std::uint64_t>(in.proof);  // go-state-types order
  r.comm_r_old = in.comm_r_old;
  r.comm_d_new = in.comm_d_new;
  r.comm_r_new = in.comm_r_new;
  for (const auto& p : in.partitions) r.vanilla_proofs.push_back(fc::serialize_partition_proof(p));
  return r;
}

}  // namespace cuzk::engine::testing
