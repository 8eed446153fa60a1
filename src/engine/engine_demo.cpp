// A demo job (ProofKind::kGroth16Demo): the demo circuit of the requested
// domain, its development parameters, and the partition pipeline with one
// partition (synthesis, proving on the job's back end, verification; a GPU
// proof that fails it is proved again on the CPU).
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "circuits/demo.hpp"
#include "engine/engine_internal.hpp"
#include "groth16/proof.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;

asio::awaitable<void> Engine::run_demo_job(JobPtr job) {
  job->started_at = steady_clock::now();
  Timings t;
  t.queue_ms = ms_between(job->submitted_at, job->started_at);
  const std::uint32_t log_domain = job->request.demo_log_domain;
  const std::uint64_t seed = job->request.demo_seed;
  auto stage_done = [](steady_clock::time_point& since) {
    auto now = steady_clock::now();
    std::uint64_t ms = ms_between(since, now);
    since = now;
    return ms;
  };
  // Between stages: a requested cancel ends the job here.
  auto cancelled = [&]() {
    if (!job->cancel_requested) return false;
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
    return true;
  };
  try {
    auto since = steady_clock::now();
    set_stage(*job, JobState::kRunning, "params");
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    ParamStore::Loaded loaded =
        co_await runtime::run_on(cpu_, [this, log_domain, &admit] { return params_.get_demo(log_domain, admit); });
    t.params_ms = stage_done(since);
    // Held until the job ends: the set cannot be evicted under it.
    policy::SrsLease srs_lease =
        lease_srs(loaded.params->circuit_id,
                  params_host_bytes(loaded.params->params) + loaded.params->r1cs.memory_bytes(), job->priority);
    if (cancelled()) co_return;

    // Synthesis, proving on the job's back end, verification (a GPU proof
    // that fails it is proved again on the CPU): the partition pipeline with
    // one partition.
    const CircuitParams& cp = *loaded.params;
    PartitionPlan plan;
    plan.job = job->id;
    plan.priority = job->priority;
    plan.srs_key = cp.circuit_id;
    plan.partitions = 1;
    plan.witness_bytes = witness_bytes(cp.r1cs);
    plan.synthesis_lanes = 1;
    plan.max_in_flight = 1;
    plan.params = &cp.params;
    plan.r1cs = &cp.r1cs;
    plan.pvk = &cp.pvk;
    plan.synthesize = [log_domain, seed](std::uint32_t, groth16::Witness storage) -> Result<groth16::Witness> {
      std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
      return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)), {}, std::move(storage));
    };
    Job& j = *job;
    plan.on_stage = [this, &j](std::uint32_t, std::string_view stage) {
      set_stage(j, JobState::kRunning, std::string(stage));
    };
    Result<PipelineOutcome> outcome =
        co_await run_partition_pipeline(pipeline_deps(job->priority), plan, job->cancel_requested);
    if (!outcome) {
      if (outcome.error().kind == ErrorKind::kCancelled || job->cancel_requested) {
        finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
      } else {
        finish(*job, JobState::kFailed, outcome.error());
      }
      co_return;
    }
    const PartitionTiming& pt = outcome.value().timings.at(0);
    t.synthesis_ms = static_cast<std::uint64_t>(pt.synthesis_ms);
    t.prove_ms = static_cast<std::uint64_t>(pt.device_wait_ms + pt.prove_ms);
    t.verify_ms = static_cast<std::uint64_t>(pt.verify_ms);
    const std::vector<groth16::Proof>& proofs = outcome.value().proofs;
    const std::vector<ff::Fr>& public_inputs = outcome.value().public_inputs.at(0);
    ProofOutput out;
    out.proof = groth16::encode_proofs(proofs);
    for (const ff::Fr& x : public_inputs) {
      std::array<std::uint8_t, 32> le{};
      x.to_bytes_le(le);
      out.public_inputs.push_back(le);
    }
    out.vk_bytes = cp.vk_bytes;
    t.total_ms = ms_between(job->submitted_at, steady_clock::now());
    out.timings = t;
    job->output = std::move(out);
    finish(*job, JobState::kDone, std::nullopt);
  } catch (const ParamsRefused& e) {
    finish(*job, JobState::kFailed, e.error());
  } catch (const std::exception& e) {
    if (finish_from_exception(*job, e)) throw;
  }
}

}  // namespace cuzk::engine
