// The engine's private parts shared by its translation units (engine.cpp,
// engine_partitioned.cpp, ...): the job record, the Filecoin parameter sets, and the
// helpers that turn the circuit libraries' exceptions into typed errors.
// Not part of the engine's interface.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "engine/engine.hpp"
#include "engine/filecoin_work.hpp"
#include "engine/host_srs.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "policy/journal.hpp"
#include "runtime/cancel_flag.hpp"
#include "util/json_input.hpp"

namespace cuzk::engine {

namespace fc = circuits::filecoin;

inline std::uint64_t ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return b > a ? static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count()) : 0;
}

// Whether the request's deadline (JobRequest::deadline_unix_ms) has passed.
inline bool past_deadline(const JobRequest& r) {
  if (r.deadline_unix_ms == 0) return false;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()) >
         r.deadline_unix_ms;
}

struct Engine::Job {
  Job(asio::any_io_executor ex, runtime::LoopClock* clock) : done(std::move(ex), clock) {}
  JobId id = 0;
  std::string request_id;
  JobRequest request;
  Priority priority = Priority::kNormal;
  JobState state = JobState::kQueued;
  std::string stage = "queued";
  std::chrono::steady_clock::time_point submitted_at, started_at;
  runtime::CancelFlag cancel;  // requested on the loop; wakes the job's pipeline run
  std::optional<Error> error;
  ProofOutput output;
  runtime::Notifier done;  // awaiters park here; resubmits too while `accepting`
  // submit_durable: its accept record is being written (not queued yet);
  // accept_failed: that write failed, the job was never admitted.
  bool accepting = false, accept_failed = false;
  // PoRep and SnapDeals batching: the parameter set its request names (""
  // when it names none readable), read once by the collector.
  std::optional<std::string> batch_key;
  // Restored from the journal without its input (finished before the
  // restart, or its input file lost): `request` holds the kind only, and a
  // resubmit is compared by the digest the journal kept (none in records
  // written before digests were kept: then by kind).
  bool input_known = true;
  std::optional<policy::RequestDigest> input_digest;
  // The drain left it queued (journal: it runs at the next start); still
  // kQueued, `error` tells an awaiter why it gets no proof from this run.
  bool left_queued = false;
  // It ended (done or failed) after its request's deadline.
  bool deadline_missed = false;
};

template <class Members>
void Engine::start_members(std::vector<JobPtr>& batch, Members& members) {
  const auto started = std::chrono::steady_clock::now();
  for (JobPtr& j : batch) {
    j->started_at = started;
    typename Members::value_type m;
    m.job = j;
    m.t.queue_ms = ms_between(j->submitted_at, started);
    members.push_back(std::move(m));
  }
}

template <class Member, class Batch>
Member Engine::start_joiner(Batch& batch, const JobPtr& job) {
  const auto started = std::chrono::steady_clock::now();
  job->started_at = started;
  Member m;
  m.job = job;
  m.t.queue_ms = ms_between(job->submitted_at, started);
  batch.registration.add(job->id);
  return m;
}

template <class Member, class Batch, class Plan>
bool Engine::add_joiner(Batch& batch, BatchDoor& door, Member m, Plan plan) {
  m.pipeline_started = std::chrono::steady_clock::now();
  batch.members.push_back(std::move(m));
  Member& member = batch.members.back();
  set_stage(*member.job, JobState::kRunning, "prove");
  if (!door.add(plan(member))) {
    batch.after.push_back(member.job);
    return false;
  }
  count_joiner(batch.counted, batch.initial_members);
  return true;
}

template <class Members>
void Engine::register_batch(Members& members, Engine::BatchRegistration& registration) {
  if (members.size() < 2) return;
  ++batches_total_;
  batched_jobs_total_ += members.size();
  for (const auto& m : members) registration.add(m.job->id);
}

template <class Members>
void Engine::stage_members(Members& members, const std::string& stage) {
  for (auto& m : members) set_stage(*m.job, JobState::kRunning, stage);
}

template <class Members>
bool Engine::prune_members(Members& members) {
  for (auto& m : members) {
    if (m.job->cancel.requested() && !is_finished(m.job->state))
      finish(*m.job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + m.job->stage});
  }
  std::erase_if(members, [](const auto& m) { return is_finished(m.job->state); });
  return members.empty();
}

template <class Members>
void Engine::fail_members(Members& members, const Error& e) {
  for (auto& m : members)
    if (!is_finished(m.job->state)) finish(*m.job, JobState::kFailed, e);
  members.clear();
}

// A member's answer from its pipeline outcome: its partitions' proofs and the
// public inputs each was verified against, in partition order, and `t` with
// the partitions' synthesis (added), device-wait-plus-prove and verify
// times summed; total_ms from `submitted_at` to now (engine.cpp).
ProofOutput pipeline_output(const PipelineOutcome& o, const std::vector<std::uint8_t>& vk_bytes, Timings t,
                            std::chrono::steady_clock::time_point submitted_at);

// A C2 failure caused by the C1 content is the caller's (do not retry); one
// caused by parameters or our own prover is internal.
inline ErrorKind porep_error_kind(fc::PorepC2ErrorKind k) {
  switch (k) {
    case fc::PorepC2ErrorKind::kPartitionCount:
    case fc::PorepC2ErrorKind::kInputMismatch:
    case fc::PorepC2ErrorKind::kUnsatisfied:
    case fc::PorepC2ErrorKind::kSynthesis:
      return ErrorKind::kInvalidInput;
    case fc::PorepC2ErrorKind::kShapeMismatch:
    case fc::PorepC2ErrorKind::kInvalidProof:
    case fc::PorepC2ErrorKind::kWrongVk:
    case fc::PorepC2ErrorKind::kParams:
      return ErrorKind::kInternal;
  }
  return ErrorKind::kInternal;
}

// Runs f (on a worker thread), turning the C2 library's typed exceptions into
// engine errors there: a job's co_awaits then throw only for cancellation.
template <class T, class F>
Result<T> porep_call(F&& f) {
  try {
    return f();
  } catch (const ParamsRefused& e) {
    return e.error();
  } catch (const fc::C1Error& e) {
    return Error{ErrorKind::kInvalidInput, std::string("C1 output: ") + e.what()};
  } catch (const JsonInputError& e) {  // any other outside JSON read in a job
    return Error{ErrorKind::kInvalidInput, e.what()};
  } catch (const fc::PorepC2Error& e) {
    return Error{porep_error_kind(e.kind()), e.what()};
  } catch (const std::exception& e) {
    return Error{ErrorKind::kInternal, e.what()};
  }
}

// Shapes and parameters of the Filecoin circuits (PoRep C2 per sector shape;
// PoSt and SnapDeals per engine/filecoin_work.hpp's set ids). Loads block (files of
// GBs, or a development setup of minutes), so they run on the worker pool;
// each set's load mutex makes concurrent jobs of that set wait for a single
// load, while loads of different sets proceed at once (a WinningPoSt never
// waits for a PoRep set's minutes of loading), and ready_mu (never held
// across a load) lets the loop drop a set at once.
struct Engine::ParamSets {
  // `read_back_pool` decodes a released set read back (HostSrsCopy);
  // `release_host_copies`: [srs] release_host_copy, for sets of at least
  // `host_copy_min_bytes` of bases (EngineConfig::srs_host_copy_min_bytes).
  // Decodes a .params file into existing vectors (ParamStore::read_params_into).
  using ParamsIntoReader =
      std::function<void(const std::filesystem::path& path, ThreadPool& pool, groth16::Parameters& into)>;

  ParamSets(std::filesystem::path params_dir, fc::ParamsReader reader, ParamsIntoReader into_reader,
            fc::R1csReader r1cs_reader, ThreadPool& read_back_pool, bool release_host_copies,
            std::uint64_t host_copy_min_bytes)
      : dir(params_dir),
        read(std::move(reader)),
        read_into(std::move(into_reader)),
        read_r1cs(r1cs_reader),
        read_pool(read_back_pool),
        release_host(release_host_copies),
        release_min_bytes(host_copy_min_bytes),
        shapes(std::move(params_dir), r1cs_reader) {}

  struct Ready {
    std::shared_ptr<const groth16::R1cs> r1cs;
    fc::LoadedParams loaded;
    groth16::PreparedVerifyingKey pvk;
    std::vector<std::uint8_t> vk_bytes;  // bellperson .vk encoding
    // Released while every GPU holds the bases (engine/host_srs.hpp); null:
    // kept. Declared after `loaded`: destroyed (pages restored) first.
    std::unique_ptr<HostSrsCopy> host_copy;
  };

  std::shared_ptr<const Ready> find(const std::string& key) {
    std::lock_guard lock(ready_mu);
    auto it = ready.find(key);
    return it == ready.end() ? nullptr : it->second;
  }
  // The SRS eviction of a set: jobs holding it keep their copy.
  bool drop(const std::string& key) {
    std::lock_guard lock(ready_mu);
    return ready.erase(key) != 0;
  }

  std::shared_ptr<const Ready> get(const CircuitSetSpec& spec, ThreadPool& pool, const fc::ParamsGenerator& generate,
                                   const ParamsAdmit& admit) {
    if (const std::optional<fc::SealProof> proof = spec.porep) {
      return get_or_load(
          spec.id, admit, [&] { return shapes.compiled_shape(*proof); },
          [&](const groth16::R1cs& r1cs) {
            return fc::ensure_dev_params(fc::official_param_names(*proof), fc::dev_param_names(*proof),
                                         fc::seal_proof_info(*proof).name, dir, r1cs, pool, generate, read);
          });
    }
    return get_or_load(
        spec.id, admit,
        [&] {
          const std::string& params = spec.official.params;  // "<stem>.params": the shape caches as "<stem>.r1cs"
          const std::filesystem::path cache = dir / (params.substr(0, params.rfind('.')) + ".r1cs");
          return fc::load_or_compile_shape(cache, spec.expected_inputs, spec.compile, spec.id, read_r1cs);
        },
        [&](const groth16::R1cs& r1cs) {
          return fc::ensure_dev_params(spec.official, spec.dev, spec.what, dir, r1cs, pool, generate, read);
        });
  }

  // The mutex held across loading set `key` (created on first use, kept:
  // there are a few dozen set ids at most).
  std::mutex& load_mutex(const std::string& key) {
    std::lock_guard lock(ready_mu);
    std::unique_ptr<std::mutex>& m = load_mus[key];
    if (!m) m = std::make_unique<std::mutex>();
    return *m;
  }

  // Under the set's load mutex: the shape (compile), the budget check, the
  // parameters (ensure), their prepared key and .vk bytes.
  template <class Compile, class Ensure>
  std::shared_ptr<const Ready> get_or_load(const std::string& key, const ParamsAdmit& admit, Compile compile,
                                           Ensure ensure) {
    if (auto r = find(key)) return r;
    std::lock_guard lock(load_mutex(key));
    if (auto r = find(key)) return r;
    std::filesystem::create_directories(dir);
    auto r = std::make_shared<Ready>();
    r->r1cs = compile();
    if (admit) {
      if (std::optional<Error> refused = admit(*r->r1cs)) throw ParamsRefused(std::move(*refused));
    }
    r->loaded = ensure(*r->r1cs);
    if (release_host && r->loaded.persisted && HostSrsCopy::bases_bytes_of(r->loaded.params) >= release_min_bytes) {
      r->host_copy = std::make_unique<HostSrsCopy>(
          r->loaded.params, r->loaded.params_path,
          [read_into = read_into, &pool = read_pool](const std::filesystem::path& file, groth16::Parameters& into) {
            read_into(file, pool, into);
          });
    }
    r->pvk = groth16::prepare_verifying_key(r->loaded.params.vk);
    r->vk_bytes = groth16::encode_vk(r->loaded.params.vk);  // the .vk file's bytes, also when not persisted
    std::lock_guard ready_lock(ready_mu);
    ready.emplace(key, r);
    return r;
  }

  std::filesystem::path dir;
  fc::ParamsReader read;                                        // the ParamStore's io_uring loader
  ParamsIntoReader read_into;                                   // the same, into a released host copy (HostSrsCopy)
  fc::R1csReader read_r1cs;                                     // the same reads for the compiled shapes' cache files
  ThreadPool& read_pool;                                        // decodes a released set read back (the math pool)
  bool release_host = true;                                     // large sets get a HostSrsCopy
  std::uint64_t release_min_bytes = HostSrsCopy::kMinBytes;     // "large": this many bytes of bases
  fc::PorepC2 shapes;                                           // thread-safe (its own lock across a compile)
  std::mutex ready_mu;                                          // guards ready and load_mus; never held across a load
  std::map<std::string, std::shared_ptr<const Ready>> ready;    // by set id
  std::map<std::string, std::unique_ptr<std::mutex>> load_mus;  // by set id
};

}  // namespace cuzk::engine
