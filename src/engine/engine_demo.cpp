// Demo jobs (ProofKind::kGroth16Demo): one job, or a batch of jobs of one
// domain size, through the partition pipeline like every other kind.
//
//   params    the demo circuit's development parameters (ParamStore), once
//             for the batch
//   member m  one partition: synthesis of its seed's witness -> prove on the
//             first suitable device (by priority) -> verify against the
//             witness's own public inputs (a GPU proof that fails it is
//             proved again on the CPU)
//   finish    member m answered as soon as its partition is proved
//
// A batch's members share the pipeline's lanes, in-flight bound, prover
// working sets and device: on a GPU the SRS stays resident and the host step
// of one member overlaps the device step of the previous one.
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "circuits/demo.hpp"
#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;

struct Engine::DemoMember {
  JobPtr job;
  Timings t;
};

asio::awaitable<void> Engine::run_demo_batch(std::vector<JobPtr> batch) {
  using Member = DemoMember;
  std::deque<Member> members;  // stable: the pipeline's callbacks point at their member
  start_members(batch, members);
  BatchRegistration registration(batch_members_);  // cancel_running(): the worker's view names the head only
  register_batch(members, registration);
  const std::uint32_t log_domain = members.front().job->request.demo_log_domain;
  const Priority priority = members.front().job->priority;
  try {
    stage_members(members, "params");
    const auto since = steady_clock::now();
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    ParamStore::Loaded loaded =
        co_await runtime::run_on(cpu_, [this, log_domain, &admit] { return params_.get_demo(log_domain, admit); });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    // Held until the batch ends: the set cannot be evicted under it.
    policy::SrsLease srs_lease =
        lease_srs(loaded.params->circuit_id,
                  params_host_bytes(loaded.params->params) + loaded.params->r1cs.memory_bytes(), priority);
    if (prune_members(members)) co_return;

    const CircuitParams& cp = *loaded.params;
    const auto n = static_cast<std::uint32_t>(members.size());
    PartitionPlan plan;
    plan.job = members.front().job->id;
    plan.priority = priority;
    plan.srs_key = cp.circuit_id;
    plan.partitions = n;
    plan.witness_bytes = witness_bytes(cp.r1cs);
    plan.synthesis_lanes = std::min<std::size_t>(synthesis_lanes_, n);
    plan.max_in_flight = std::min<std::size_t>(plan.synthesis_lanes + 1, n);
    plan.params = &cp.params;
    plan.r1cs = &cp.r1cs;
    plan.pvk = &cp.pvk;
    std::vector<PlanMember> plan_members;
    for (Member& m : members) plan_members.push_back(demo_plan_member(m, cp));
    stage_members(members, "prove");
    co_await run_batch_pipeline(pipeline_deps(priority), plan, std::move(plan_members));
    members.clear();
  } catch (const ParamsRefused& e) {
    fail_members(members, e.error());
  } catch (const std::exception& e) {
    bool shutdown = false;
    for (Member& m : members)
      if (!is_finished(m.job->state)) shutdown = finish_from_exception(*m.job, e) || shutdown;
    if (shutdown) throw;
  }
}

// A member's one partition: its seed's witness, verified against that
// witness's own public inputs (the demo circuit has no public data to derive
// them from). The callbacks point at `m` and `cp`, which outlive the pipeline
// (run_demo_batch's frame).
PlanMember Engine::demo_plan_member(DemoMember& m, const CircuitParams& cp) {
  PlanMember pm;
  pm.job = m.job->id;
  pm.partitions = 1;
  pm.cancel = &m.job->cancel;
  const std::uint32_t log_domain = m.job->request.demo_log_domain;
  const std::uint64_t seed = m.job->request.demo_seed;
  // Sized from the R1CS up front: the pipeline reserves one witness.
  const groth16::WitnessShape shape{cp.r1cs.num_inputs(), cp.r1cs.num_aux()};
  pm.synthesize = [log_domain, seed, shape](std::uint32_t, groth16::Witness storage) -> Result<groth16::Witness> {
    try {
      const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
      return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)), shape,
                                       std::move(storage));
    } catch (const std::exception& e) {
      return Error{ErrorKind::kInternal, std::string("demo synthesis: ") + e.what()};
    }
  };
  Job* job = m.job.get();
  pm.on_stage = [this, job](std::uint32_t, std::string_view stage) {
    set_stage(*job, JobState::kRunning, std::string(stage));
  };
  DemoMember* member = &m;
  const std::vector<std::uint8_t>* vk_bytes = &cp.vk_bytes;
  pm.on_done = [this, member, vk_bytes](const Result<PipelineOutcome>& out) { finish_demo(*member, *vk_bytes, out); };
  return pm;
}

void Engine::finish_demo(DemoMember& m, const std::vector<std::uint8_t>& vk_bytes,
                         const Result<PipelineOutcome>& outcome) {
  Job& job = *m.job;
  if (is_finished(job.state) || finish_unproved(job, outcome)) return;
  job.output = pipeline_output(outcome.value(), vk_bytes, m.t, job.submitted_at);
  finish(job, JobState::kDone, std::nullopt);
}

}  // namespace cuzk::engine
