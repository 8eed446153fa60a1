// SnapDeals (EmptySectorUpdate) jobs made ready for the partition pipeline
// (engine/filecoin_work.hpp): the request decoded, every partition proof
// parsed (bincode PartitionProof) and checked natively against comm_r_old,
// comm_d_new and comm_r_new, one circuit per partition.
#include <memory>
#include <utility>

#include "circuits/filecoin/update_prove.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "engine/work_detail.hpp"

namespace cuzk::engine::work_detail {

CircuitSetSpec snap_spec(fc::UpdateProof proof) {
  CircuitSetSpec s;
  s.id = snap_set_id(proof);
  s.what = "EmptySectorUpdate " + std::string(fc::update_proof_info(proof).name);
  s.expected_inputs = 5;  // ONE, k_and_h_select, comm_r_old, comm_d_new, comm_r_new
  s.compile = [proof] { return fc::compile_update_shape(proof); };
  s.official = fc::update_official_param_names(proof);
  s.dev = fc::update_dev_param_names(proof);
  return s;
}

std::optional<Error> screen_snap(const FilecoinRequestHeader& h) {
  const std::optional<fc::UpdateProof> proof = fc::update_proof_from_id(h.registered_proof);
  if (!proof) return invalid("unknown registered update proof " + std::to_string(h.registered_proof));
  const std::size_t want = fc::update_partition_count(fc::update_proof_info(*proof).nodes);
  if (h.vanilla_proofs != want) {
    return invalid(std::to_string(h.vanilla_proofs) + " partition proofs; " +
                   std::string(fc::update_proof_info(*proof).name) + " has " + std::to_string(want) + " partitions");
  }
  return std::nullopt;
}

Result<FilecoinWork> prepare_snap(std::string_view input) {
  Result<SnapRequest> req = decode_snap_request(input);
  if (!req) return req.error();
  const SnapRequest& r = req.value();
  if (auto bad = screen_snap({r.registered_proof, 0, r.vanilla_proofs.size()})) return *bad;
  const std::optional<fc::UpdateProof> proof = fc::update_proof_from_id(r.registered_proof);
  auto in = std::make_shared<fc::UpdateInputs>();
  if (auto bad = input_errors("", [&] {
        *in = fc::parse_update_inputs(*proof, r.comm_r_old, r.comm_d_new, r.comm_r_new, r.vanilla_proofs);
        fc::check_update(*in);
      }))
    return *bad;

  FilecoinWork w;
  w.set = snap_spec(*proof);
  w.partitions = static_cast<std::uint32_t>(in->partitions.size());
  w.public_inputs = fc::update_public_inputs_all(*in);
  w.parallel_synthesis = w.partitions == 1;
  w.critical_synthesis_pool = critical_pool_kind(ProofKind::kSnapDeals);
  w.description = "EmptySectorUpdate " + std::string(fc::update_proof_info(*proof).name) + ", " +
                  std::to_string(w.partitions) + " partition(s)";
  std::shared_ptr<const fc::UpdateInputs> shared = std::move(in);
  w.synthesize = [shared](std::uint32_t k, ThreadPool* on, groth16::WitnessShape shape, groth16::Witness storage) {
    return fc::synthesize_update_partition(*shared, k, on, shape, std::move(storage));
  };
  return w;
}

}  // namespace cuzk::engine::work_detail

namespace cuzk::engine {

std::string snap_set_id(circuits::filecoin::UpdateProof proof) {
  return "snap-deals-" + work_detail::size_label(circuits::filecoin::update_proof_info(proof).sector_bytes);
}

}  // namespace cuzk::engine
