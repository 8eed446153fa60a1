// The engine's durable job journal: accepted jobs survive a crash (kill -9,
// power loss) and resume at the next start with their job and request ids;
// finished jobs stay awaitable for `result_ttl` across a restart.
//
// It puts the engine's vocabulary (ids, requests, proof outputs) on top of
// policy::Journal (the checksummed append-only record file) and keeps the
// inputs beside it, one file per job. Under the state directory:
//   journal       policy::Journal records, one key per job: "<job id>/<request id>"
//                 (the client's request id, empty when the engine named the job);
//                 a terminal record stands alone after compaction, so the key
//                 carries the job id to every record, and the request digest
//                 (engine/request_digest.hpp) to compare a resubmitted request
//                 with once the input file is gone. kAccepted's inline input:
//                 u8 version (1) | u32 interrupted runs | i64 submit wall ms |
//                 u32 n + the input file's path relative to the state directory
//   jobs/<id>.job the job's input (demo: size and seed; PoRep C2: the C1 JSON, tens
//                 of MB for 32 GiB) - too large for a journal record that
//                 compaction copies; written tmp + fdatasync + rename + fsync(dir)
//   job_ids       the first job id never issued, rewritten before each
//                 compaction (which forgets expired jobs, and with them the
//                 largest ids the journal held): ids are never reused
//   journal.lock  flock'ed while a daemon uses the directory
//
// Input file (little-endian): header 40 B = "CUZKJOB1" | u32 version (1) |
//   u8 kind | 3 B zero | u64 job id | u64 body bytes | u32 crc32c(body) |
//   u32 crc32c(first 36 B); body: demo = u32 log2 domain | u64 seed,
//   PoRep C2 = the C1 JSON bytes.
// Completed-record result (little-endian): u8 version (1) | u32 n + proof
//   bytes | u32 count + count x 32 B public inputs | u32 n + vk bytes |
//   6 x u64 timings (queue, params, synthesis, prove, verify, total ms).
//
// Durability: accepted() returns once the input file and the record are on
// disk (fdatasync), so a job id handed to a client survives a power loss.
// Every record is synced (the journal's sync_every_record): a terminal
// record must be durable before the job's input file is deleted. One
// fdatasync per job event is nothing next to a proof of seconds to minutes.
// The engine hands a client the job id only after accepted() returned
// (Engine::submit_durable); start and finish records are queued to the
// writer thread without waiting, so a result can reach an awaiter before its
// terminal record is durable: a crash then re-runs the job (see
// Engine::journal_finished).
//
// A job found running at a restart is resumed, but a job that keeps taking the
// daemon down with it fails after max_interrupted_runs such starts.
//
// Recovery is forgiving, never fatal: a torn last record (a crash mid-append)
// and corrupted records are dropped with a warning (policy::Journal's
// checksums); a job whose input file is missing or corrupted is reported with
// a typed error so that the engine fails that job alone. Only an I/O error on
// the journal itself, or a directory locked by another daemon, stops the start
// (JobJournalError): serving without durability would lie to clients.
//
// Threading: none, blocking file I/O; not thread-safe. open() runs once, on
// the main thread BEFORE the event loop runs (daemon.cpp: the engine recovers
// after the listeners are bound and before they accept or READY is sent), so
// recovery blocks nothing that serves; afterwards the engine calls accepted/started/finished only
// from its single journal writer thread (Engine::journal_writer_), in the
// order it posts them, so the loop never waits on an fdatasync (each costs
// ~10 ms; a submit's input write and checksum up to ~0.2 s for a 50 MB C1).
// input_kept() reads state fixed at open() and may be called from the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/types.hpp"
#include "engine/views.hpp"
#include "policy/clock.hpp"
#include "policy/journal.hpp"
#include "runtime/log.hpp"

namespace cuzk::engine {

// The journal cannot be used (I/O error, directory locked by another daemon).
class JobJournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JobJournalConfig {
  std::filesystem::path dir;  // the daemon's state directory
  std::chrono::milliseconds result_ttl{std::chrono::minutes(10)};
  std::uint64_t compact_min_bytes = 64ull << 20;  // compact only a journal at least this large
  // A job found running at this many starts in a row (the daemon died or was
  // stopped while proving it) fails instead of being resumed again.
  std::uint32_t max_interrupted_runs = 3;
  // Wall time: retention must survive a reboot. nullptr: the system clock.
  const policy::Clock* clock = nullptr;
  // Tests: called on the writing thread before each durable job event
  // ("accepted", "started", "finished"), e.g. to simulate a slow disk.
  std::function<void(std::string_view event)> before_write;
};

// A job found in the journal at start-up.
struct RecoveredJob {
  JobId id = 0;
  std::string request_id;  // as the client gave it; empty: the engine named the job
  Priority priority = Priority::kNormal;
  // Resumed jobs: the complete request. Finished jobs: the kind only (inputs
  // are not kept past a job's end; see JobJournal::input_kept).
  JobRequest request;
  // The digest of its input (request_digest); absent in records written
  // before the journal kept it.
  std::optional<policy::RequestDigest> digest;
  // kQueued: resume it (or, with `error` set, fail it: its input is lost).
  // kDone / kFailed / kCancelled: its outcome, awaitable until it expires.
  JobState state = JobState::kQueued;
  ProofOutput output;                           // kDone
  std::optional<Error> error;                   // kFailed, kCancelled; kQueued: why it cannot resume
  std::chrono::milliseconds since_accepted{0};  // wall time since submit (approximate when finished)
  std::chrono::milliseconds since_finished{0};  // finished jobs: wall time since the end
  std::uint32_t interrupted_runs = 0;           // resumed jobs: starts that found it running
};

struct JournalRecovery {
  std::vector<RecoveredJob> finished;  // within result_ttl, in finishing order
  std::vector<RecoveredJob> resume;    // in acceptance (= id) order
  JobId next_id = 1;                   // the first id never issued
};

class JobJournal {
 public:
  struct Opened;
  // Locks and opens (or creates) the journal under config.dir, recovers its
  // jobs, drops what has expired (compaction) and deletes input files that no
  // unfinished job refers to. Throws JobJournalError.
  static Opened open(JobJournalConfig config, runtime::Logger& log);
  ~JobJournal();
  JobJournal(const JobJournal&) = delete;
  JobJournal& operator=(const JobJournal&) = delete;

  // Records an admitted job durably; an error means it must not be admitted.
  std::optional<Error> accepted(JobId id, const JobRequest& request, Priority priority);
  // Records that a job began running (counted against max_interrupted_runs
  // if the daemon stops before it ends). Failures are logged.
  void started(JobId id);
  // Records a job's end (state kDone with `output`, or kFailed/kCancelled
  // with `error`) and deletes its input. Failures are logged, not returned:
  // the job then stays accepted in the journal and runs again after a
  // restart, which costs time but loses nothing.
  void finished(JobId id, JobState state, const ProofOutput& output, const std::optional<Error>& error);
  // False for a finished job recovered from the journal: its input is gone,
  // so an idempotent resubmit is compared by its digest (RecoveredJob).
  bool input_kept(JobId id) const { return !input_dropped_.count(id); }

  const std::filesystem::path& dir() const { return config_.dir; }
  std::filesystem::path input_path(JobId id) const;
  std::uint64_t journal_bytes() const { return journal_->file_bytes(); }

 private:
  JobJournal(JobJournalConfig config, runtime::Logger& log, int lock_fd);
  const policy::Clock& clock() const { return config_.clock ? *config_.clock : system_clock_; }
  JournalRecovery recover(policy::ReplayReport replay);
  void write_next_id();  // throws JobJournalError
  void compact();        // logs failures
  void remove_orphan_inputs(const JournalRecovery& recovery);

  JobJournalConfig config_;
  runtime::Logger& log_;
  policy::SystemClock system_clock_;
  int lock_fd_ = -1;
  std::unique_ptr<policy::Journal> journal_;
  std::unordered_map<JobId, std::string> keys_;  // journal key of every unfinished job
  std::unordered_set<JobId> input_dropped_;
  JobId next_id_ = 1;  // one above every id seen or recorded
};

struct JobJournal::Opened {
  std::unique_ptr<JobJournal> journal;
  JournalRecovery recovery;
};

// ---- encodings, exposed for tests ----

std::string journal_key(JobId id, const std::string& request_id);
// nullopt: not "<decimal id>/<request id>".
std::optional<std::pair<JobId, std::string>> parse_journal_key(const std::string& key);
std::vector<std::uint8_t> encode_job_input(JobId id, const JobRequest& request);
// The request stored in an input file, or why it cannot be used.
Result<JobRequest> decode_job_input(JobId id, ProofKind kind, const std::vector<std::uint8_t>& file);
std::vector<std::uint8_t> encode_job_result(const ProofOutput& output);
std::optional<ProofOutput> decode_job_result(const std::vector<std::uint8_t>& bytes);

}  // namespace cuzk::engine
