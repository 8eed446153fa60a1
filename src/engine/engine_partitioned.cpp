// Jobs of the partitioned proof kinds - PoRep C2, WindowPoSt, WinningPoSt and
// SnapDeals - on one path (Engine::run_partitioned_batch): one job, or a batch
// of jobs of one parameter set (PoRep, SnapDeals), through ONE partition
// pipeline (engine/pipeline.hpp), jobs of the set queued meanwhile joining it,
// each member answered as soon as its own partitions are proved. What differs
// by kind is the kind's FilecoinWork (engine/filecoin_work.hpp).
//
//   prepare   prepare_filecoin_work on a CPU worker, per member: parse, checks
//             (the native check of every vanilla proof), public inputs from
//             public data, the partitions' witness synthesizer
//   params    the set's shape and parameters (ParamSets: cached, read, or
//             development-generated), checked against the memory budget,
//             once for the batch
//   partition k of member m: synthesis (on a lane, or on `math_for` for one
//             deadline-bound partition) -> checks (shape, public inputs) ->
//             prove on the first suitable device (by priority) -> verify
//   finish    member m answered (its final check first, if its kind has one)
//             as soon as its own partitions are proved
//
// A WinningPoSt is CRITICAL by default: it runs on a critical worker with its
// own synthesis thread (EngineConfig::critical_workers), and the memory budget
// and the device queue serve it before any PoRep partition.
#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;

namespace {

// prepare_filecoin_work of a request on a CPU worker. `input` is the job's,
// which outlives the call, as the pools do.
asio::awaitable<Result<FilecoinWork>> prepare_on(runtime::WorkerPool& cpu, ThreadPool& math, ProofKind kind,
                                                 const std::string* input) {
  co_return co_await runtime::run_on(cpu, [&math, kind, input]() -> Result<FilecoinWork> {
    try {
      return prepare_filecoin_work(kind, *input, math);
    } catch (const std::exception& e) {
      return Error{ErrorKind::kInternal, std::string("preparing the request: ") + e.what()};
    }
  });
}

// One member's request prepared into *out, its wall time into *ms: the
// members of a batch are prepared at once (a 32 GiB C1 is tens of MB of
// JSON; four queued jobs wait for the slowest parse, not for the sum).
asio::awaitable<void> prepare_into(runtime::WorkerPool* cpu, ThreadPool* math, ProofKind kind, const std::string* input,
                                   std::optional<Result<FilecoinWork>>* out, std::uint64_t* ms) {
  const auto since = steady_clock::now();
  *out = co_await prepare_on(*cpu, *math, kind, input);
  *ms = ms_between(since, steady_clock::now());
}

// The stage a job shows while its request is prepared.
std::string prepare_stage(ProofKind kind) { return kind == ProofKind::kPoRepC2 ? "c1" : "vanilla"; }

}  // namespace

struct Engine::PartitionedMember {
  JobPtr job;
  Timings t;
  std::optional<FilecoinWork> work;
  steady_clock::time_point pipeline_started;
};

// A batch whose pipeline runs: what its members' callbacks and the admission
// of joiners share. In run_partitioned_batch's frame, which outlives the
// pipeline.
struct Engine::PartitionedBatch {
  ProofKind kind = ProofKind::kPoRepC2;
  std::string set_id;
  Priority priority = Priority::kNormal;
  std::shared_ptr<const ParamSets::Ready> ready;
  std::deque<PartitionedMember>& members;  // joiners appended; a deque: callbacks keep pointing at theirs
  BatchRegistration& registration;
  std::vector<JobPtr>& after;  // proved alone once the batch ends (another parameter set)
  std::size_t initial_members = 1;
  bool counted = false;  // in batches_total_
};

// What finish_partitioned needs of one member (its task owns it).
struct Engine::PartitionedFinish {
  JobPtr job;
  std::shared_ptr<const ParamSets::Ready> ready;
  Result<PipelineOutcome> outcome;
  Timings t;
  steady_clock::time_point pipeline_started;
  std::string description;
  FilecoinWork::FinalCheck final_check;
  FilecoinWork::Explain explain_invalid;
  std::size_t batch_size = 1;
};

// Members of a running batch a job of `kind` admits at most (1: no joiners).
std::size_t Engine::batch_joiners_max(ProofKind kind) const {
  switch (kind) {
    case ProofKind::kPoRepC2:
      return config_.porep_join_running_batch ? config_.porep_batch_max_jobs : 1;
    case ProofKind::kSnapDeals:
      return config_.snap_batch_max_jobs;
    default:
      return 1;
  }
}

asio::awaitable<void> Engine::run_partitioned_batch(std::vector<JobPtr> batch) {
  using Member = PartitionedMember;
  const ProofKind kind = batch.front()->request.kind;
  std::deque<Member> members;     // stable: the pipeline's callbacks point at their member
  std::vector<JobPtr> other_set;  // a request of another parameter set: proved alone afterwards
  start_members(batch, members);
  BatchRegistration registration(batch_members_);  // cancel_running(): the worker's view names the head only
  register_batch(members, registration);
  try {
    stage_members(members, prepare_stage(kind));
    std::vector<std::optional<Result<FilecoinWork>>> prepared(members.size());
    {
      runtime::TaskSet tasks(co_await asio::this_coro::executor);
      for (std::size_t i = 0; i < members.size(); ++i) {
        // synthesis_ms: the parse and checks; partition synthesis adds to it below.
        const Priority p = members[i].job->priority;
        tasks.spawn(prepare_into(&prepare_pool(kind, p), &math_for(kind, p), kind, &members[i].job->request.input,
                                 &prepared[i], &members[i].t.synthesis_ms));
      }
      co_await tasks.join();
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      Result<FilecoinWork>& r = *prepared[i];
      if (!r) {
        finish(*members[i].job, JobState::kFailed, r.error());
        continue;
      }
      members[i].work = std::move(r.value());
    }
    if (prune_members(members)) co_return;
    // One parameter set: the first member's.
    const CircuitSetSpec spec = members.front().work->set;
    for (Member& m : members)
      if (m.work->set.id != spec.id) other_set.push_back(m.job);
    std::erase_if(members, [&spec](const Member& m) { return m.work->set.id != spec.id; });

    // Development parameters are generated on first use: on a GPU when the
    // daemon has one (a 32 GiB PoRep setup takes hours on the CPU), with
    // progress in the log.
    stage_members(members, "params");
    const auto since = steady_clock::now();
    const fc::ParamsGenerator& generate = porep_generator_;
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    Result<std::shared_ptr<const ParamSets::Ready>> ready =
        co_await runtime::run_on(cpu_, [this, &spec, &generate, &admit] {
          return porep_call<std::shared_ptr<const ParamSets::Ready>>(
              [&] { return sets_->get(spec, math_, generate, admit); });
        });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    if (!ready) {
      fail_members(members, ready.error());
    } else if (!prune_members(members)) {
      const ParamSets::Ready& r = *ready.value();
      const Priority priority = members.front().job->priority;
      // Held until the batch ends: the set cannot be evicted under it.
      // Charged: the parameters and the R1cs.
      const std::uint64_t set_bytes = params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes();
      policy::SrsLease srs_lease = lease_srs(spec.id, set_bytes, priority);

      // Per partition: synthesis on the synthesis pool (bounded by lanes, the
      // in-flight bound and the memory budget), checks, proving on the GPUs
      // as soon as a partition is ready, verification of each proof. Each
      // member brings its own callbacks (partitioned_plan_member), as a
      // joiner does. Jobs of this set queued meanwhile join the run
      // (admit_partitioned_joiners) so the GPUs do not wait for their first
      // partitions; a run that admits none needs no more lanes than it has
      // partitions.
      const std::size_t max_jobs = batch_joiners_max(kind);
      PartitionPlan plan;
      plan.job = members.front().job->id;
      plan.priority = priority;
      plan.srs_key = spec.id;
      plan.partitions = 0;
      for (const Member& m : members) plan.partitions += m.work->partitions;
      plan.witness_bytes = witness_bytes(*r.r1cs);
      // A WinningPoSt that finds every GPU busy is proved on the CPU too, the
      // first proof answering (PartitionPlan::race_on_cpu).
      plan.race_on_cpu = config_.winning_post_cpu_race && kind == ProofKind::kWinningPost;
      plan.synthesis_lanes = pipeline_lanes();
      plan.max_in_flight = plan.synthesis_lanes + 1;
      if (kind == ProofKind::kPoRepC2 && config_.porep_max_partitions_in_flight != 0)
        plan.max_in_flight = config_.porep_max_partitions_in_flight;
      if (max_jobs <= 1) {
        plan.synthesis_lanes = std::min<std::size_t>(plan.synthesis_lanes, plan.partitions);
        plan.max_in_flight = std::min<std::size_t>(plan.max_in_flight, plan.partitions);
      }
      plan.params = &r.loaded.params;
      plan.host_copy = r.host_copy.get();
      plan.on_host_copy = host_copy_books(spec.id, set_bytes);
      plan.r1cs = r.r1cs.get();
      plan.pvk = &r.pvk;
      plan.satisfaction =
          config_.porep_check_satisfaction ? groth16::SatisfactionCheck::kCheck : groth16::SatisfactionCheck::kSkip;
      PartitionedBatch running{kind,         spec.id,   priority,       ready.value(),     members,
                               registration, other_set, members.size(), members.size() > 1};
      const auto pipeline_started = steady_clock::now();
      std::vector<PlanMember> plan_members;
      for (Member& m : members) {
        m.pipeline_started = pipeline_started;
        plan_members.push_back(partitioned_plan_member(m, running, &m == &members.front()));
      }
      if (members.size() > 1) {
        log_.info(
            "batch",
            {{"kind", to_string(kind)}, {"jobs", members.size()}, {"set", spec.id}, {"partitions", plan.partitions}});
      }
      stage_members(members, "prove");
      BatchAdmitter admit_joiners;
      if (max_jobs > 1)
        admit_joiners = [this, &running](BatchDoor& door) { return admit_partitioned_joiners(&running, &door); };
      const Priority synthesis_priority = members.front().work->critical_synthesis_pool ? priority : Priority::kNormal;
      // Each member is finished by its on_done (a task of its own).
      co_await run_batch_pipeline(pipeline_deps(synthesis_priority), plan, std::move(plan_members),
                                  std::move(admit_joiners));
      members.clear();
      if (plan.race_on_cpu) warm_critical_lanes(ready.value(), r.loaded.params, *r.r1cs, spec.id);
    }
  } catch (const ParamsRefused& e) {
    fail_members(members, e.error());
  } catch (const std::exception& e) {
    bool shutdown = false;
    for (Member& m : members)  // a member answered by the pipeline has given its job to its finish
      if (m.job && !is_finished(m.job->state)) shutdown = finish_from_exception(*m.job, e) || shutdown;
    for (JobPtr& j : other_set)
      if (!is_finished(j->state)) shutdown = finish_from_exception(*j, e) || shutdown;
    if (shutdown) throw;
    co_return;
  }
  for (JobPtr& j : other_set) {
    std::vector<JobPtr> alone{j};
    co_await run_partitioned_batch(std::move(alone));
  }
}

// A member's part of the pipeline: its synthesis, checks and stages by its
// partition index, and its finish (a task of its own, as soon as its
// partitions are proved). The callbacks point at `m` and `b`, which outlive
// the pipeline (run_partitioned_batch's frame).
PlanMember Engine::partitioned_plan_member(PartitionedMember& m, PartitionedBatch& b, bool opens_run) {
  const ParamSets::Ready& r = *b.ready;
  const groth16::WitnessShape shape{r.r1cs->num_inputs(), r.r1cs->num_aux()};
  const FilecoinWork* work = &*m.work;
  PlanMember pm;
  pm.job = m.job->id;
  pm.partitions = work->partitions;
  pm.cancel = &m.job->cancel;
  pm.public_inputs = work->public_inputs;
  // The R1cs's counts: each witness is allocated once at its final size.
  ThreadPool* math = &math_for(m.job->request.kind, m.job->priority);
  // The run's first partition is on the path of every GPU (nothing is
  // proved before it), so it spreads its parts (a PoRep partition's
  // challenges) over the math pool: a 32 GiB PoRep partition on one lane
  // thread took 2.4-3.2 s on fresh memory beside four other lanes (H100
  // host), ~1.1 s alone; the others stay one per lane thread.
  const bool spread_first = opens_run && work->partitions > 1;
  pm.synthesize = [this, work, shape, math, spread_first](std::uint32_t k, groth16::Witness storage) {
    return porep_call<groth16::Witness>([&] {
      if (work->parallel_synthesis || (spread_first && k == 0))
        return work->synthesize(k, math, shape, std::move(storage));
      if (!challenge_pools_) return work->synthesize(k, nullptr, shape, std::move(storage));
      // One pool per lane thread: never waits.
      const ThreadPoolSet::Lease lease = challenge_pools_->acquire();
      return work->synthesize(k, &lease.pool(), shape, std::move(storage));
    });
  };
  // porep_check_satisfaction: every constraint is checked by the prover,
  // fused into its evaluation of a, b, c (one Fr multiplication per row). As
  // a separate pass here it cost ~15 thread-s per 32 GiB PoRep partition
  // (H200 host, 16 cores), as much as the evaluation itself, on a CPU-bound
  // pipeline. The lane keeps the cheap checks (shape, public inputs).
  const groth16::R1cs* r1cs = r.r1cs.get();
  pm.check = [r1cs, work, math](std::uint32_t k, const groth16::Witness& w) -> std::optional<Error> {
    Result<bool> ok = porep_call<bool>([&] {
      fc::check_partition_witness(*r1cs, w, work->public_inputs.at(k), k, *math, /*check_satisfaction=*/false);
      return true;
    });
    if (!ok) return ok.error();
    return std::nullopt;
  };
  Job* job = m.job.get();
  pm.on_stage = [this, job](std::uint32_t k, std::string_view stage) {
    set_stage(*job, JobState::kRunning, "partition " + std::to_string(k) + ": " + std::string(stage));
  };
  PartitionedMember* member = &m;
  PartitionedBatch* batch = &b;
  // Nothing of the member is synthesized after this (it is answered once
  // nothing of it is in flight): its parsed request (a 32 GiB C1, a SnapDeals
  // job's paths) and job go with it, so a batch that keeps admitting joiners
  // holds only its live members'.
  pm.on_done = [this, member, batch](const Result<PipelineOutcome>& out) {
    auto f = std::make_shared<PartitionedFinish>(PartitionedFinish{
        std::move(member->job), batch->ready, out, member->t, member->pipeline_started, member->work->description,
        std::move(member->work->final_check), std::move(member->work->explain_invalid), batch->members.size()});
    member->work.reset();
    // The worker running the batch names a member still proving (status,
    // drain), not one already answered.
    for (WorkerView& w : workers_) {
      if (w.job != f->job->id) continue;
      for (const PartitionedMember& other : batch->members) {
        if (other.job && !is_finished(other.job->state)) {
          w.job = other.job->id;
          break;
        }
      }
    }
    if (!tasks_.spawn(finish_partitioned(f))) {
      finish(*f->job, JobState::kCancelled, Error{ErrorKind::kShuttingDown, "daemon shutting down"});
    }
  };
  return pm;
}

// Joiners of a running batch (batch_joiners_max): while the pipeline's intake
// is open, the job at the head of the queue joins when decide_join
// (policy.hpp) says so.
asio::awaitable<void> Engine::admit_partitioned_joiners(PartitionedBatch* batch, BatchDoor* door) {
  const RunningBatch shape{batch->set_id, batch->priority, 0, batch_joiners_max(batch->kind), batch->kind};
  co_await admit_joiners(shape, door, [this, batch, door](BatchDoor::Hold hold, JobPtr job) {
    return join_partitioned(batch, door, std::move(hold), std::move(job));
  });
}

// A joiner's prepare stage (as run_partitioned_batch's, the parameters
// already loaded), then its partitions after the batch's. `hold` keeps the
// pipeline's intake open meanwhile.
asio::awaitable<void> Engine::join_partitioned(PartitionedBatch* batch, BatchDoor* door, BatchDoor::Hold hold,
                                               JobPtr job) {
  (void)hold;  // held until this returns
  PartitionedMember m = start_joiner<PartitionedMember>(*batch, job);
  const auto started = job->started_at;
  try {
    set_stage(*job, JobState::kRunning, prepare_stage(job->request.kind));
    Result<FilecoinWork> prepared =
        co_await prepare_on(prepare_pool(job->request.kind, job->priority), math_for(job->request.kind, job->priority),
                            job->request.kind, &job->request.input);
    m.t.synthesis_ms = ms_between(started, steady_clock::now());
    if (!prepared) {
      finish(*job, JobState::kFailed, prepared.error());
      co_return;
    }
    m.work = std::move(prepared.value());
    if (m.work->set.id != batch->set_id) {
      batch->after.push_back(job);  // its request said another set: proved alone after the batch
      co_return;
    }
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
                  [this, batch](PartitionedMember& pm) { return partitioned_plan_member(pm, *batch, false); }))
    co_return;
  log_.info("job joined a running batch", {{"job", job->id},
                                           {"kind", to_string(job->request.kind)},
                                           {"set", batch->set_id},
                                           {"queue_ms", queue_ms},
                                           {"unfinished", door->unfinished()}});
}

// A member's end from its pipeline result: every partition proof was
// verified by the pipeline against the public inputs derived from public
// data (FilecoinWork::public_inputs); the kind's final check, if any, runs
// on a CPU worker before the answer.
asio::awaitable<void> Engine::finish_partitioned(std::shared_ptr<PartitionedFinish> f) {
  Job& job = *f->job;
  // The batch's own error path may have finished it (shutdown) meanwhile.
  if (is_finished(job.state)) co_return;
  try {
    const bool input_suspect = !f->outcome && (f->outcome.error().kind == ErrorKind::kInvalidInput ||
                                               f->outcome.error().kind == ErrorKind::kInternal);
    if (input_suspect && f->explain_invalid && !job.cancel.requested()) {
      set_stage(job, JobState::kRunning, "check");
      const FilecoinWork::Explain& explain = f->explain_invalid;
      std::optional<Error> named = co_await runtime::run_on(cpu_, [&explain] { return explain(); });
      if (is_finished(job.state)) co_return;  // finished meanwhile (shutdown)
      if (named) f->outcome = std::move(*named);
    }
    if (finish_unproved(job, f->outcome)) co_return;
    const PipelineOutcome& o = f->outcome.value();
    ProofOutput out = pipeline_output(o, f->ready->vk_bytes, f->t, job.submitted_at);
    const std::uint64_t pipeline_ms = ms_between(f->pipeline_started, steady_clock::now());
    std::uint64_t final_check_ms = 0;
    if (f->final_check) {
      set_stage(job, JobState::kRunning, "verify");
      const auto since = steady_clock::now();
      const FilecoinWork::FinalCheck& check = f->final_check;
      const groth16::PreparedVerifyingKey& pvk = f->ready->pvk;
      const std::vector<std::uint8_t>& proof_bytes = out.proof;
      std::optional<Error> bad =
          co_await runtime::run_on(cpu_, [&check, &pvk, &proof_bytes] { return check(pvk, proof_bytes); });
      final_check_ms = ms_between(since, steady_clock::now());
      out.timings.verify_ms += final_check_ms;
      if (is_finished(job.state)) co_return;
      if (job.cancel.requested()) {
        finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
        co_return;
      }
      if (bad) {
        finish(job, JobState::kFailed, *bad);
        co_return;
      }
    }
    const Timings& t = out.timings;
    log_.info("proof", {{"job", job.id},
                        {"kind", to_string(job.request.kind)},
                        {"what", f->description},
                        {"partitions", o.proofs.size()},
                        {"batch", f->batch_size},
                        {"wall_ms", ms_between(job.started_at, steady_clock::now())},
                        {"params_ms", t.params_ms},
                        {"pipeline_ms", pipeline_ms},
                        {"synthesis_ms_sum", t.synthesis_ms - f->t.synthesis_ms},
                        {"prove_ms_sum", t.prove_ms},
                        {"verify_ms_sum", t.verify_ms - final_check_ms},
                        {"final_check_ms", final_check_ms},
                        {"cpu_retries", o.cpu_retries},
                        {"peak_in_flight", o.peak_in_flight},
                        {"peak_reserved_bytes", memory_->stats().peak_reserved_bytes},
                        {"rss_bytes", resident_bytes()},
                        {"peak_rss_bytes", peak_resident_bytes()}});
    out.timings.total_ms = ms_between(job.submitted_at, steady_clock::now());
    job.output = std::move(out);
    finish(job, JobState::kDone, std::nullopt);
  } catch (const std::exception& e) {
    if (finish_from_exception(job, e)) throw;
  }
}

}  // namespace cuzk::engine
