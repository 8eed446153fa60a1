// Batch collection (jobs of one parameter set that share one prover pass or
// one partition pipeline) and the demo-circuit jobs.
#include <algorithm>
#include <string>

#include "circuits/demo.hpp"
#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Batches: demo jobs of one size share parameters and R1cs, so their witnesses
// go through ONE prover call (one pass over the SRS per MSM for all of them;
// on a GPU the SRS upload and the launches amortize). Each member still gets
// its own verified proof, its own timings and its own outcome.

// A PoRep or SnapDeals job's parameter set from its request's header ("" when
// it names none readable), read once.
const std::string& Engine::batch_key_of(Job& j) {
  if (!j.batch_key) {
    j.batch_key = (j.request.kind == ProofKind::kPoRepC2 ? porep_srs_of_c1_json(j.request.input)
                                                         : filecoin_set_of_request(j.request.kind, j.request.input))
                      .value_or("");
  }
  return *j.batch_key;
}

bool Engine::batchable_with(Job& head, Job& other) {
  if (head.request.kind != other.request.kind) return false;
  switch (head.request.kind) {
    case ProofKind::kGroth16Demo:
      return other.request.demo_log_domain == head.request.demo_log_domain;
    case ProofKind::kPoRepC2:
    case ProofKind::kSnapDeals:
      return !batch_key_of(head).empty() && batch_key_of(other) == batch_key_of(head);
    default:
      return false;
  }
}

// A joiner in the batch metrics: the batch counted once it has two members
// (its initial ones then), each joiner as a batched job.
void Engine::count_joiner(bool& counted, std::size_t initial_members) {
  if (!counted) {
    ++batches_total_;
    batched_jobs_total_ += initial_members;
    counted = true;
  }
  ++batched_jobs_total_;
}

// Takes queue heads into a running batch while decide_join says so: each
// through `join` (its own preparation, then BatchDoor::add), with the
// intake held open meanwhile.
asio::awaitable<void> Engine::admit_joiners(RunningBatch shape, BatchDoor* door, JoinFn join) {
  constexpr std::chrono::milliseconds kJoinPoll{50};
  while (door->open() && !draining_ && !stopping_) {
    std::optional<QueueHead> head;
    JobPtr next;
    if (std::optional<JobId> id = queue_.front()) {
      next = jobs_.at(*id);
      const bool keyed = next->request.kind == ProofKind::kPoRepC2 || next->request.kind == ProofKind::kSnapDeals;
      head = QueueHead{next->request.kind, next->priority, keyed ? std::string_view(batch_key_of(*next)) : ""};
    }
    shape.unfinished = door->unfinished();
    const JoinDecision decision = decide_join(shape, head);
    if (decision == JoinDecision::kClose) {
      log_.info("batch closed to joiners", {{"set", std::string(shape.srs_key)}, {"waiting_job", next->id},
                                            {"waiting_priority", std::string(to_string(next->priority))}});
      co_return;
    }
    if (decision == JoinDecision::kWait) {
      co_await door->wait(kJoinPoll);
      continue;
    }
    queue_.remove(next->id);
    co_await join(door->hold(), std::move(next));
  }
}

asio::awaitable<void> Engine::collect_batch(std::vector<JobPtr>& batch, std::size_t max_size,
                                            std::chrono::milliseconds max_wait) {
  const JobPtr head = batch.front();
  auto take = [this, &batch, &head, max_size] {
    if (batch.size() >= max_size) return;
    auto fits = [this, &head](JobId id) { return batchable_with(*head, *jobs_.at(id)); };
    for (JobId id : queue_.take_matching(head->priority, max_size - batch.size(), fits))
      batch.push_back(jobs_.at(id));
  };
  take();
  // A CRITICAL job (a deadline) never waits for company.
  if (max_wait.count() <= 0 || head->priority == Priority::kCritical) co_return;
  const auto deadline = steady_clock::now() + max_wait;
  // Waits only while nothing else is queued: a job this batch cannot take (a
  // higher priority, another circuit) flushes it, so the wait never holds
  // other work, and a more urgent job runs right after this batch (or on
  // another idle worker, woken here).
  while (batch.size() < max_size && queue_.empty() && !draining_ && !stopping_) {
    const auto now = steady_clock::now();
    if (now >= deadline) break;
    // Polled: submit() wakes one worker, which need not be this one.
    co_await work_available_.wait_until(std::min(deadline, now + std::chrono::milliseconds(5)));
    take();
  }
  // What is left may have consumed the wake-up meant for an idle worker.
  if (!queue_.empty()) work_available_.notify_one();
}

asio::awaitable<void> Engine::run_demo_batch(std::vector<JobPtr> batch) {
  struct Member {
    JobPtr job;
    Timings t;
    std::optional<groth16::Proof> proof;
    std::vector<ff::Fr> inputs;  // ONE excluded, what the proof was verified against
  };
  std::vector<Member> members;
  start_members(batch, members);
  // Registered for cancel_running() (the worker's view names the head only).
  BatchRegistration registration(batch_members_);
  for (const Member& m : members) registration.add(m.job->id);
  auto stage_all = [this, &members](const std::string& stage) {
    for (Member& m : members) set_stage(*m.job, JobState::kRunning, stage);
  };
  // Members finished along the way (cancelled, failed) leave the batch.
  auto prune = [&members] {
    std::erase_if(members, [](const Member& m) { return is_finished(m.job->state); });
    return members.empty();
  };
  auto drop_cancelled = [this, &members, &prune] {
    for (Member& m : members) {
      if (m.job->cancel_requested && !is_finished(m.job->state))
        finish(*m.job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + m.job->stage});
    }
    return prune();
  };
  auto fail_all = [this, &members](const Error& e) {
    for (Member& m : members)
      if (!is_finished(m.job->state)) finish(*m.job, JobState::kFailed, e);
    members.clear();
  };
  const std::uint32_t log_domain = members.front().job->request.demo_log_domain;
  const Priority priority = members.front().job->priority;
  try {
    auto since = steady_clock::now();
    stage_all("params");
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    ParamStore::Loaded loaded =
        co_await runtime::run_on(cpu_, [this, log_domain, &admit] { return params_.get_demo(log_domain, admit); });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    // Held until the batch ends (SRS residency): not evicted under it.
    policy::SrsLease srs_lease = lease_srs(
        loaded.params->circuit_id, params_host_bytes(loaded.params->params) + loaded.params->r1cs.memory_bytes(),
        priority);
    if (drop_cancelled()) co_return;
    const CircuitParams& cp = *loaded.params;

    // Host memory of the whole batch at once: every witness and the prover's
    // per-instance working set (held until the batch is proved).
    const std::uint64_t per_member_bytes = witness_bytes(cp.r1cs) + devices_->host_bytes_per_prove(cp.r1cs);
    stage_all("memory");
    const std::atomic<bool> not_cancelled{false};  // members' cancels are handled at stage boundaries
    Result<policy::Reservation> memory =
        co_await memory_->reserve(per_member_bytes * members.size(), priority, not_cancelled);
    if (!memory) {
      fail_all(memory.error());
      co_return;
    }
    if (drop_cancelled()) co_return;

    std::vector<groth16::Witness> witnesses;
    for (Member& m : members) {
      set_stage(*m.job, JobState::kRunning, "synthesis");
      auto t0 = steady_clock::now();
      const std::uint64_t seed = m.job->request.demo_seed;
      Result<groth16::Witness> w =
          co_await runtime::run_on(*synthesis_, [log_domain, seed]() -> Result<groth16::Witness> {
            try {
              std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
              return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)));
            } catch (const std::exception& e) {
              return Error{ErrorKind::kInternal, e.what()};
            }
          });
      m.t.synthesis_ms = ms_between(t0, steady_clock::now());
      if (!w) {
        finish(*m.job, JobState::kFailed, w.error());
        continue;
      }
      witnesses.push_back(std::move(w.value()));
    }
    prune();  // members[i] <-> witnesses[i] from here on
    if (members.empty()) co_return;

    // Cancels requested from here on take effect after the prover call (the
    // witnesses are already part of it).
    // Staging slots before the device (a device holder must never wait for
    // one): the second, for overlapping the instances' host and device
    // steps, only when free now.
    stage_all("staging wait");
    StagingPool::Lease first_staging = co_await stagings_->acquire();
    std::optional<StagingPool::Lease> second_staging;
    if (members.size() > 1) second_staging = stagings_->try_acquire();
    stage_all("device wait");
    auto t0 = steady_clock::now();
    // One prover call: a single "partition" for the dispatch rule.
    DeviceSet::Request request;
    request.job = members.front().job->id;
    request.priority = priority;
    request.srs_key = cp.circuit_id;
    request.params = &cp.params;
    DeviceSet::Lock lock = co_await devices_->acquire(request);
    DeviceSet::Slot& slot = lock.slot();
    DeviceSet::Placement placement(&slot);
    DeviceBackend& backend = *slot.backend;
    const std::string n = std::to_string(members.size());
    slot.job = members.front().job->id;
    slot.partition.reset();
    slot.stage = "prove (batch of " + n + ")";
    stage_all(std::string(backend.ordinal() ? "prove (gpu" : "prove (cpu") + ", batch of " + n + ")");
    std::vector<groth16::Blinding> blindings;
    for (std::size_t i = 0; i < witnesses.size(); ++i) blindings.push_back(groth16::random_blinding());
    struct Out {
      std::vector<groth16::Proof> proofs;
      std::string error;
    };
    // The members one after the other, each in three steps (the host step
    // of the next overlapping the device step of this one; no thread waits
    // for the device): engine/staged_prove.hpp.
    Out out;
    {
      Result<std::vector<groth16::Proof>> proved =
          co_await prove_instances(cpu_, backend, first_staging, second_staging ? &*second_staging : nullptr,
                                   cp.params, cp.r1cs, witnesses, blindings);
      if (proved) {
        out.proofs = std::move(proved.value());
      } else {
        out.error = proved.error().message;
      }
    }
    first_staging.release();
    second_staging.reset();
    const std::uint64_t prove_ms = ms_between(t0, steady_clock::now());  // device wait included, as for one job
    slot.job.reset();
    slot.stage = "idle";
    if (!out.error.empty() || out.proofs.size() != witnesses.size()) {
      ++slot.prove_errors;
      fail_all(Error{ErrorKind::kInternal,
                     "batch of " + n + ": " +
                         (out.error.empty() ? "the back end returned " + std::to_string(out.proofs.size()) + " proofs"
                                            : out.error)});
      co_return;
    }
    if (backend.keeps_srs_resident()) note_resident_srs(slot, cp.circuit_id, cp.params, *memory_);
    lock.unlock();
    ++batches_total_;
    batched_jobs_total_ += members.size();
    log_.info("batch proved", {{"jobs", members.size()}, {"device", backend.name()}, {"prove_ms", prove_ms}});

    // Every proof verified on its own; a GPU proof that does not verify is
    // proved again, alone, on the CPU (as in the partition pipeline).
    stage_all("verify");
    for (std::size_t i = 0; i < members.size(); ++i) {
      Member& m = members[i];
      m.t.prove_ms = prove_ms;
      const groth16::Witness& w = witnesses[i];
      m.inputs.assign(w.inputs.begin() + (w.inputs.empty() ? 0 : 1), w.inputs.end());
      const std::vector<ff::Fr>& inputs = m.inputs;
      auto tv = steady_clock::now();
      const groth16::Proof& proof = out.proofs[i];
      groth16::VerifyResult v =
          co_await runtime::run_on(cpu_, [&cp, &proof, &inputs] { return groth16::verify(cp.pvk, proof, inputs); });
      if (v == groth16::VerifyResult::kValid) {
        m.proof = proof;
        ++slot.proofs_done;
      } else {
        ++slot.verify_failures;
        DeviceSet::Slot& cpu_slot = devices_->cpu();
        if (&slot != &cpu_slot) {
          log_.warn("gpu proof of a batch member failed, proving it again on the CPU",
                    {{"job", m.job->id}, {"device", backend.name()}, {"reason", groth16::to_string(v)}});
          devices_->count_cpu_retry();
          DeviceSet::Lock cpu_lock = co_await devices_->lock(cpu_slot);
          DeviceBackend& cpu_backend = *cpu_slot.backend;
          const groth16::Blinding blinding = groth16::random_blinding();
          Out retry = co_await runtime::run_on(cpu_backend.runner(), [&cpu_backend, &cp, &w, &blinding] {
            Out o;
            try {
              o.proofs = cpu_backend.prove(cp.params, cp.r1cs, std::span(&w, 1), std::span(&blinding, 1), nullptr);
            } catch (const std::exception& e) {
              o.error = e.what();
            }
            return o;
          });
          cpu_lock.unlock();
          if (retry.error.empty() && retry.proofs.size() == 1) {
            const groth16::Proof& again = retry.proofs[0];
            v = co_await runtime::run_on(cpu_,
                                         [&cp, &again, &inputs] { return groth16::verify(cp.pvk, again, inputs); });
            if (v == groth16::VerifyResult::kValid) {
              m.proof = again;
              ++cpu_slot.proofs_done;
            } else {
              ++cpu_slot.verify_failures;
            }
          }
        }
      }
      m.t.verify_ms = ms_between(tv, steady_clock::now());
    }

    for (Member& m : members) {
      Job& job = *m.job;
      if (job.cancel_requested) {
        finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
        continue;
      }
      if (!m.proof) {
        finish(job, JobState::kFailed, Error{ErrorKind::kInternal, "the proof does not verify (batch of " + n + ")"});
        continue;
      }
      ProofOutput o;
      o.proof = groth16::encode_proofs(std::span(&*m.proof, 1));
      for (const ff::Fr& x : m.inputs) {
        std::array<std::uint8_t, 32> le{};
        x.to_bytes_le(le);
        o.public_inputs.push_back(le);
      }
      o.vk_bytes = cp.vk_bytes;
      m.t.total_ms = ms_between(job.submitted_at, steady_clock::now());
      o.timings = m.t;
      job.output = std::move(o);
      finish(job, JobState::kDone, std::nullopt);
    }
    members.clear();
  } catch (const std::system_error& e) {
    if (!is_cancellation(e)) {
      fail_all(Error{ErrorKind::kInternal, e.what()});
      co_return;
    }
    // The engine's coroutines are being torn down: record, then unwind.
    for (Member& m : members)
      if (!is_finished(m.job->state))
        finish(*m.job, JobState::kCancelled, Error{ErrorKind::kCancelled, "daemon shutting down"});
    throw;
  } catch (const ParamsRefused& e) {
    fail_all(e.error());
  } catch (const std::exception& e) {
    fail_all(Error{ErrorKind::kInternal, std::string(e.what())});
  }
}

}  // namespace cuzk::engine
