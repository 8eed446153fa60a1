// PoRep C2 jobs (Engine::run_porep_batch): one job or a batch of jobs of one
// sector shape through the partition pipeline (engine/pipeline.hpp), jobs
// joining a running batch, and each member finished (proofs verified,
// outcome recorded) once its partitions are proved.
#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

// The verifier's public inputs of every partition of a C1, from public data
// only (replica_id, comm_d, comm_r, seed), never from the witness; a worker
// thread's call (porep_call's errors).
Result<std::vector<std::vector<ff::Fr>>> porep_partition_inputs(const fc::C1Output& c1) {
  return porep_call<std::vector<std::vector<ff::Fr>>>([&] {
    if (c1.vanilla_proofs.size() != c1.info().partitions) {
      throw fc::PorepC2Error(fc::PorepC2ErrorKind::kPartitionCount, std::to_string(c1.vanilla_proofs.size()) +
                                                                        " partitions, " + std::string(c1.info().name) +
                                                                        " has " + std::to_string(c1.info().partitions));
    }
    return fc::porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  });
}

}  // namespace

// One job of a PoRep batch, from its C1 to its pipeline member.
struct Engine::PorepMember {
  JobPtr job;
  Timings t;
  std::shared_ptr<const fc::C1Output> c1;
  std::vector<std::vector<ff::Fr>> inputs;    // per partition, ONE excluded (public data only)
  steady_clock::time_point pipeline_started;  // when its partitions entered the pipeline
};

// A PoRep batch whose pipeline runs: what its members' callbacks and the
// admission of joiners share. In run_porep_batch's frame, which outlives
// the pipeline.
struct Engine::PorepBatch {
  std::string srs_key;
  Priority priority = Priority::kNormal;
  std::shared_ptr<const ParamSets::Ready> ready;
  // The batch's members, joiners appended: a deque, so that the pipeline's
  // callbacks keep pointing at their member while others join.
  std::deque<PorepMember>& members;
  BatchRegistration& registration;
  std::vector<JobPtr>& after;  // proved alone once the batch ends (another sector shape)
  std::size_t initial_members = 1;
  bool counted = false;  // in batches_total_
};

// What finish_porep needs of one member (its task owns it).
struct Engine::PorepFinish {
  JobPtr job;
  std::shared_ptr<const ParamSets::Ready> ready;
  std::vector<std::vector<ff::Fr>> inputs;
  Result<PipelineOutcome> outcome;
  Timings t;
  steady_clock::time_point pipeline_started;
  std::size_t batch_size = 1;
};

// PoRep C2 for one job or a batch of jobs of one sector shape (collected by
// the worker, "Batches" below): each member's C1 parsed and its public
// inputs derived, the parameters loaded once, then ONE partition pipeline
// over every member's partitions in order (shared lanes, in-flight bound and
// prover working sets; partitions spread over the GPUs), each member
// finished - its proofs batch-verified - as soon as its own last partition
// is proved.
asio::awaitable<void> Engine::run_porep_batch(std::vector<JobPtr> batch) {
  using Member = PorepMember;
  std::deque<Member> members;       // stable once the pipeline runs (PorepBatch)
  std::vector<JobPtr> other_shape;  // a C1 of another size than the batch's: proved alone afterwards
  start_members(batch, members);
  BatchRegistration registration(batch_members_);  // cancel_running(): the worker's view names the head only
  register_batch(members, registration);
  try {
    stage_members(members, "c1");
    for (Member& m : members) {
      auto t0 = steady_clock::now();
      // The closures given to run_on capture plain references only: gcc 12
      // destroys such a closure temporary twice inside a co_await, so a
      // captured shared_ptr would lose a reference each time (a use-after-free
      // of the job under ASan). This frame outlives every closure (run_on).
      const std::string& c1_json = m.job->request.input;
      Result<std::shared_ptr<const fc::C1Output>> c1 = co_await runtime::run_on(cpu_, [&c1_json] {
        return porep_call<std::shared_ptr<const fc::C1Output>>(
            [&] { return std::make_shared<const fc::C1Output>(fc::parse_c1(c1_json)); });
      });
      m.t.synthesis_ms = ms_between(t0, steady_clock::now());  // parsing; partition synthesis is in the pipeline
      if (!c1) {
        finish(*m.job, JobState::kFailed, c1.error());
        continue;
      }
      m.c1 = std::move(c1.value());
    }
    if (prune_members(members)) co_return;
    // One parameter set: the first member's sector shape.
    const fc::SealProof proof = members.front().c1->registered_proof;
    const std::string srs_key = porep_srs_id(proof);
    for (Member& m : members)
      if (porep_srs_id(m.c1->registered_proof) != srs_key) other_shape.push_back(m.job);
    std::erase_if(members, [&srs_key](const Member& m) { return porep_srs_id(m.c1->registered_proof) != srs_key; });

    // Development parameters are generated on first use: on a GPU when the
    // daemon has one (a 32 GiB setup takes hours on the CPU), with progress
    // in the log.
    stage_members(members, "params");
    auto since = steady_clock::now();
    const fc::ParamsGenerator& generate = porep_generator_;
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    Result<std::shared_ptr<const ParamSets::Ready>> ready =
        co_await runtime::run_on(cpu_, [this, proof, &generate, &admit] {
          return porep_call<std::shared_ptr<const ParamSets::Ready>>(
              [&] { return sets_->get(proof, math_, generate, admit); });
        });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    if (!ready) {
      fail_members(members, ready.error());
    } else if (!prune_members(members)) {
      const ParamSets::Ready& r = *ready.value();
      // Held until the batch ends. Charged: the parameters and the R1cs (the
      // compiled shape itself stays cached in PorepC2 after an eviction).
      const std::uint64_t set_bytes = params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes();
      policy::SrsLease srs_lease = lease_srs(srs_key, set_bytes, members.front().job->priority);

      // The verifier's public inputs, from public data only (replica_id,
      // comm_d, comm_r, seed), never from the witness.
      stage_members(members, "inputs");
      for (Member& m : members) {
        const fc::C1Output& c1_out = *m.c1;
        Result<std::vector<std::vector<ff::Fr>>> inputs =
            co_await runtime::run_on(cpu_, [&c1_out] { return porep_partition_inputs(c1_out); });
        if (!inputs) {
          finish(*m.job, JobState::kFailed, inputs.error());
          continue;
        }
        m.inputs = std::move(inputs.value());
      }
      if (!prune_members(members)) {
        // Per partition: synthesis on the synthesis pool (bounded by lanes,
        // the in-flight bound and the memory budget), checks, proving on the
        // GPUs as soon as a partition is ready, verification of each proof.
        // Each member brings its own callbacks (porep_plan_member), as a
        // joiner does.
        PartitionPlan plan;
        plan.job = members.front().job->id;
        plan.priority = members.front().job->priority;
        plan.srs_key = srs_key;
        plan.witness_bytes = witness_bytes(*r.r1cs);
        plan.synthesis_lanes = pipeline_lanes();
        plan.max_in_flight = config_.porep_max_partitions_in_flight != 0 ? config_.porep_max_partitions_in_flight
                                                                         : plan.synthesis_lanes + 1;
        plan.params = &r.loaded.params;
        plan.host_copy = r.host_copy.get();
        plan.on_host_copy = host_copy_books(srs_key, set_bytes);
        plan.r1cs = r.r1cs.get();
        plan.pvk = &r.pvk;
        plan.satisfaction =
            config_.porep_check_satisfaction ? groth16::SatisfactionCheck::kCheck : groth16::SatisfactionCheck::kSkip;
        PorepBatch running{srs_key,      plan.priority, ready.value(),  members,
                           registration, other_shape,   members.size(), members.size() > 1};
        const auto pipeline_started = steady_clock::now();
        std::vector<PlanMember> plan_members;
        plan.partitions = 0;
        for (Member& m : members) {
          m.pipeline_started = pipeline_started;
          plan_members.push_back(porep_plan_member(m, running));
          plan.partitions += plan_members.back().partitions;
        }
        if (members.size() > 1)
          log_.info("porep batch", {{"jobs", members.size()}, {"srs", srs_key}, {"partitions", plan.partitions}});
        stage_members(members, "prove");
        // A PoRep job of this shape and priority queued meanwhile joins the
        // run (admit_porep_joiners) so the GPUs do not wait for its first wave.
        BatchAdmitter admit;
        if (config_.porep_join_running_batch && config_.porep_batch_max_jobs > 1) {
          admit = [this, &running](BatchDoor& door) { return admit_porep_joiners(&running, &door); };
        }
        // Each member is finished by its on_done (a task of its own).
        co_await run_batch_pipeline(pipeline_deps(), plan, std::move(plan_members), std::move(admit));
        members.clear();
      }
    }
  } catch (const std::exception& e) {
    bool shutdown = false;
    for (Member& m : members)  // a member answered by the pipeline has given its job to its finish
      if (m.job && !is_finished(m.job->state)) shutdown = finish_from_exception(*m.job, e) || shutdown;
    for (JobPtr& j : other_shape)
      if (!is_finished(j->state)) shutdown = finish_from_exception(*j, e) || shutdown;
    if (shutdown) throw;
    co_return;
  }
  for (JobPtr& j : other_shape) {
    std::vector<JobPtr> alone{j};
    co_await run_porep_batch(std::move(alone));
  }
}

// A PoRep member's part of the pipeline: its own synthesis, checks, public
// inputs and stages by its partition index, and its finish (a task of its
// own, as soon as its partitions are proved). The callbacks point at `m`
// and `b`, which outlive the pipeline (run_porep_batch's frame).
PlanMember Engine::porep_plan_member(PorepMember& m, PorepBatch& b) {
  PlanMember pm;
  pm.job = m.job->id;
  pm.partitions = static_cast<std::uint32_t>(m.inputs.size());
  pm.cancel = &m.job->cancel;
  pm.public_inputs = m.inputs;
  const fc::C1Output* c1 = m.c1.get();
  // The R1cs's counts: each witness is allocated once at its final size.
  const groth16::WitnessShape shape{b.ready->r1cs->num_inputs(), b.ready->r1cs->num_aux()};
  pm.synthesize = [this, c1, shape](std::uint32_t i, groth16::Witness storage) {
    return porep_call<groth16::Witness>([&] {
      if (!challenge_pools_) return fc::synthesize_partition(*c1, i, nullptr, shape, std::move(storage));
      // One pool per lane thread: never waits.
      const ThreadPoolSet::Lease lease = challenge_pools_->acquire();
      return fc::synthesize_partition(*c1, i, &lease.pool(), shape, std::move(storage));
    });
  };
  // porep_check_satisfaction: every constraint is checked by the prover,
  // fused into its evaluation of a, b, c (one Fr multiplication per row). As
  // a separate pass here it cost ~15 thread-s per 32 GiB partition (H200
  // host, 16 cores), as much as the evaluation itself, on a CPU-bound
  // pipeline. The lane keeps the cheap checks (shape, public inputs).
  const ParamSets::Ready* r = b.ready.get();
  const std::vector<std::vector<ff::Fr>>* inputs = &m.inputs;
  pm.check = [this, r, inputs](std::uint32_t i, const groth16::Witness& w) -> std::optional<Error> {
    Result<bool> ok = porep_call<bool>([&] {
      fc::check_partition_witness(*r->r1cs, w, inputs->at(i), i, math_, /*check_satisfaction=*/false);
      return true;
    });
    if (!ok) return ok.error();
    return std::nullopt;
  };
  Job* job = m.job.get();
  pm.on_stage = [this, job](std::uint32_t i, std::string_view stage) {
    set_stage(*job, JobState::kRunning, "partition " + std::to_string(i) + ": " + std::string(stage));
  };
  PorepMember* member = &m;
  PorepBatch* batch = &b;
  // Nothing of the member is synthesized after this (it is answered once
  // nothing of it is in flight): its C1 and job go with it, so a batch that
  // keeps admitting joiners holds only its live members' (a 32 GiB C1 is
  // large).
  pm.on_done = [this, member, batch](const Result<PipelineOutcome>& out) {
    auto f =
        std::make_shared<PorepFinish>(PorepFinish{std::move(member->job), batch->ready, std::move(member->inputs), out,
                                                  member->t, member->pipeline_started, batch->members.size()});
    member->c1.reset();
    // The worker running the batch names a member still proving (status,
    // drain), not one already answered.
    for (WorkerView& w : workers_) {
      if (w.job != f->job->id) continue;
      for (const PorepMember& other : batch->members) {
        if (other.job && !is_finished(other.job->state)) {
          w.job = other.job->id;
          break;
        }
      }
    }
    if (!tasks_.spawn(finish_porep(f))) {
      finish(*f->job, JobState::kCancelled, Error{ErrorKind::kShuttingDown, "daemon shutting down"});
    }
  };
  return pm;
}

// Joiners of a running PoRep batch (EngineConfig::porep_join_running_batch):
// while the pipeline's intake is open, the job at the head of the queue
// joins when decide_join (policy.hpp) says so. Polled: a submit wakes an
// idle worker, not this (a worker that is idle takes the job itself).
asio::awaitable<void> Engine::admit_porep_joiners(PorepBatch* batch, BatchDoor* door) {
  const RunningBatch shape{batch->srs_key, batch->priority, 0, config_.porep_batch_max_jobs, ProofKind::kPoRepC2};
  co_await admit_joiners(shape, door, [this, batch, door](BatchDoor::Hold hold, JobPtr job) {
    return join_porep(batch, door, std::move(hold), std::move(job));
  });
}

// A joiner's c1 and inputs stages (as run_porep_batch's, the parameters
// already loaded), then its partitions after the batch's. `hold` keeps the
// pipeline's intake open meanwhile.
asio::awaitable<void> Engine::join_porep(PorepBatch* batch, BatchDoor* door, BatchDoor::Hold hold, JobPtr job) {
  (void)hold;  // held until this returns
  PorepMember m = start_joiner<PorepMember>(*batch, job);
  const auto started = job->started_at;
  try {
    set_stage(*job, JobState::kRunning, "c1");
    const std::string& c1_json = job->request.input;  // plain references: see run_porep_batch
    Result<std::shared_ptr<const fc::C1Output>> c1 = co_await runtime::run_on(cpu_, [&c1_json] {
      return porep_call<std::shared_ptr<const fc::C1Output>>(
          [&] { return std::make_shared<const fc::C1Output>(fc::parse_c1(c1_json)); });
    });
    m.t.synthesis_ms = ms_between(started, steady_clock::now());
    if (!c1) {
      finish(*job, JobState::kFailed, c1.error());
      co_return;
    }
    m.c1 = std::move(c1.value());
    if (porep_srs_id(m.c1->registered_proof) != batch->srs_key) {
      batch->after.push_back(job);  // its C1's key said otherwise: proved alone after the batch
      co_return;
    }
    set_stage(*job, JobState::kRunning, "inputs");
    const fc::C1Output& c1_out = *m.c1;
    Result<std::vector<std::vector<ff::Fr>>> inputs =
        co_await runtime::run_on(cpu_, [&c1_out] { return porep_partition_inputs(c1_out); });
    if (!inputs) {
      finish(*job, JobState::kFailed, inputs.error());
      co_return;
    }
    m.inputs = std::move(inputs.value());
    if (job->cancel.requested()) {
      finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
      co_return;
    }
  } catch (const std::exception& e) {
    if (finish_from_exception(*job, e)) throw;
    co_return;
  }
  const std::uint64_t queue_ms = m.t.queue_ms;
  if (!add_joiner(*batch, *door, std::move(m),
                  [this, batch](PorepMember& pm) { return porep_plan_member(pm, *batch); }))
    co_return;
  log_.info("porep job joined a running batch",
            {{"job", job->id}, {"srs", batch->srs_key}, {"queue_ms", queue_ms}, {"unfinished", door->unfinished()}});
}

// A PoRep member's end, from its pipeline result: all its partitions
// verified together, as a verifier sees them (prove_c2's final check).
asio::awaitable<void> Engine::finish_porep(std::shared_ptr<PorepFinish> f) {
  Job& job = *f->job;
  // The batch's own error path may have finished it (shutdown) meanwhile.
  if (is_finished(job.state)) co_return;
  try {
    if (!f->outcome) {
      if (f->outcome.error().kind == ErrorKind::kCancelled || job.cancel.requested()) {
        finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
      } else {
        finish(job, JobState::kFailed, f->outcome.error());
      }
      co_return;
    }
    Timings t = f->t;
    auto since = steady_clock::now();
    t.prove_ms = ms_between(f->pipeline_started, since);
    const PipelineOutcome& outcome = f->outcome.value();
    double synthesis_ms = 0, prove_ms = 0, verify_ms = 0;
    for (const PartitionTiming& pt : outcome.timings) {
      synthesis_ms += pt.synthesis_ms;
      prove_ms += pt.prove_ms;
      verify_ms += pt.verify_ms;
    }
    set_stage(job, JobState::kRunning, "verify");
    const ParamSets::Ready& r = *f->ready;
    const std::vector<std::vector<ff::Fr>>& all_inputs = f->inputs;
    const std::vector<std::uint8_t> proof_bytes = groth16::encode_proofs(outcome.proofs);
    std::string detail;
    groth16::VerifyResult verdict = co_await runtime::run_on(cpu_, [&r, &proof_bytes, &all_inputs, &detail] {
      return fc::verify_porep_proof(r.pvk, proof_bytes, all_inputs, &detail);
    });
    t.verify_ms = ms_between(since, steady_clock::now());
    if (is_finished(job.state)) co_return;
    if (job.cancel.requested()) {
      finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
      co_return;
    }
    if (verdict != groth16::VerifyResult::kValid) {
      finish(job, JobState::kFailed,
             Error{ErrorKind::kInternal, "the partition proofs do not batch-verify (" + detail + ")"});
      co_return;
    }
    log_.info("porep c2 proved", {{"job", job.id},
                                  {"partitions", outcome.proofs.size()},
                                  {"batch", f->batch_size},
                                  {"wall_ms", ms_between(job.started_at, steady_clock::now())},
                                  {"params_ms", t.params_ms},
                                  {"pipeline_ms", t.prove_ms},
                                  {"synthesis_ms_sum", synthesis_ms},
                                  {"prove_ms_sum", prove_ms},
                                  {"verify_ms_sum", verify_ms},
                                  {"batch_verify_ms", t.verify_ms},
                                  {"cpu_retries", outcome.cpu_retries},
                                  {"peak_in_flight", outcome.peak_in_flight},
                                  {"peak_reserved_bytes", memory_->stats().peak_reserved_bytes},
                                  {"rss_bytes", resident_bytes()},
                                  {"peak_rss_bytes", peak_resident_bytes()}});
    ProofOutput out;
    out.proof = proof_bytes;
    out.vk_bytes = r.vk_bytes;
    t.total_ms = ms_between(job.submitted_at, steady_clock::now());
    out.timings = t;
    job.output = std::move(out);
    finish(job, JobState::kDone, std::nullopt);
  } catch (const std::exception& e) {
    if (finish_from_exception(job, e)) throw;
  }
}

}  // namespace cuzk::engine
