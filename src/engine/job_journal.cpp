#include "engine/job_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "engine/request_digest.hpp"
#include "policy/crc32c.hpp"
#include "util/file_io.hpp"

namespace cuzk::engine {

namespace fs = std::filesystem;
using policy::Millis;

namespace {

constexpr std::uint8_t kInputMagic[8] = {'C', 'U', 'Z', 'K', 'J', 'O', 'B', '1'};
constexpr std::uint32_t kInputVersion = 1;
constexpr std::size_t kInputHeaderBytes = 40;
constexpr std::uint8_t kResultVersion = 1;
constexpr std::uint32_t kNextIdMagic = 0x44495A43;  // "CZID" as little-endian bytes
constexpr std::size_t kNextIdBytes = 16;            // magic | crc32c(id) | u64 id

// ---- little-endian encoding ----

void put_u8(std::vector<std::uint8_t>& out, std::uint8_t v) { out.push_back(v); }
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_blob(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> b) {
  put_u32(out, static_cast<std::uint32_t>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
}
std::uint32_t get_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::uint64_t get_u64(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(get_u32(p)) | static_cast<std::uint64_t>(get_u32(p + 4)) << 32;
}

// Bounds-checked reader over a result blob.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : b_(b) {}
  bool u8(std::uint8_t& v) {
    if (b_.size() - pos_ < 1) return false;
    v = b_[pos_++];
    return true;
  }
  bool u32(std::uint32_t& v) {
    if (b_.size() - pos_ < 4) return false;
    v = get_u32(b_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool u64(std::uint64_t& v) {
    if (b_.size() - pos_ < 8) return false;
    v = get_u64(b_.data() + pos_);
    pos_ += 8;
    return true;
  }
  bool bytes(std::size_t n, const std::uint8_t*& p) {
    if (b_.size() - pos_ < n) return false;
    p = b_.data() + pos_;
    pos_ += n;
    return true;
  }
  bool blob(std::vector<std::uint8_t>& v) {
    std::uint32_t n = 0;
    const std::uint8_t* p = nullptr;
    if (!u32(n) || !bytes(n, p)) return false;
    v.assign(p, p + n);
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
};

// ---- files ----

std::string errno_text() { return std::strerror(errno); }

using util::fsync_dir;
using util::write_all;

// Replaces `path` atomically with head + body, durably (tmp + fdatasync +
// rename + fsync of the directory). Empty string on success, else what failed.
std::string write_durably(const fs::path& path, std::span<const std::uint8_t> head,
                          std::span<const std::uint8_t> body = {}) {
  fs::path tmp = path;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) return "create " + tmp.string() + ": " + errno_text();
  if (!write_all(fd, head.data(), head.size()) || !write_all(fd, body.data(), body.size()) || ::fdatasync(fd) != 0) {
    std::string why = "write " + tmp.string() + ": " + errno_text();
    ::close(fd);
    ::unlink(tmp.c_str());
    return why;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = "rename to " + path.string() + ": " + errno_text();
    ::unlink(tmp.c_str());
    return why;
  }
  if (!fsync_dir(path.parent_path())) return "fsync " + path.parent_path().string() + ": " + errno_text();
  return {};
}

std::optional<std::vector<std::uint8_t>> read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  std::vector<std::uint8_t> b(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(b.size()))) return std::nullopt;
  return b;
}

// The body of a job's input file: a view of the request (no copy of a C1
// or of vanilla proofs).
std::span<const std::uint8_t> input_body(const JobRequest& request, std::vector<std::uint8_t>& demo_body) {
  if (request.kind == ProofKind::kGroth16Demo) {
    put_u32(demo_body, request.demo_log_domain);
    put_u64(demo_body, request.demo_seed);
    return demo_body;
  }
  return {reinterpret_cast<const std::uint8_t*>(request.input.data()), request.input.size()};
}

std::vector<std::uint8_t> input_header(JobId id, ProofKind kind, std::span<const std::uint8_t> body) {
  std::vector<std::uint8_t> h(kInputMagic, kInputMagic + 8);
  put_u32(h, kInputVersion);
  put_u8(h, static_cast<std::uint8_t>(kind));
  h.insert(h.end(), 3, 0);
  put_u64(h, id);
  put_u64(h, body.size());
  put_u32(h, policy::crc32c(body));
  put_u32(h, policy::crc32c(h));
  return h;
}

std::string input_name(JobId id) { return std::to_string(id) + ".job"; }

// What a kAccepted record holds as its (inline) input: a reference to the
// input file plus what must survive re-recording the job at a restart.
struct InputRef {
  std::uint32_t interrupted_runs = 0;  // restarts that found the job running
  std::int64_t accepted_at_ms = 0;     // wall time of the original submit
  std::string path;                    // relative to the state directory
};
constexpr std::uint8_t kInputRefVersion = 1;

policy::JobInput encode_input_ref(const InputRef& ref) {
  std::vector<std::uint8_t> b;
  put_u8(b, kInputRefVersion);
  put_u32(b, ref.interrupted_runs);
  put_u64(b, static_cast<std::uint64_t>(ref.accepted_at_ms));
  put_blob(b, {reinterpret_cast<const std::uint8_t*>(ref.path.data()), ref.path.size()});
  return policy::JobInput::inline_bytes(std::move(b));
}

std::optional<InputRef> decode_input_ref(const policy::JobInput& input) {
  if (input.mode != policy::JobInput::Mode::kInline) return std::nullopt;
  Reader r(input.bytes);
  InputRef ref;
  std::uint8_t version = 0;
  std::uint64_t at = 0;
  std::vector<std::uint8_t> path;
  if (!r.u8(version) || version != kInputRefVersion || !r.u32(ref.interrupted_runs) || !r.u64(at) || !r.blob(path) ||
      !r.done())
    return std::nullopt;
  ref.accepted_at_ms = static_cast<std::int64_t>(at);
  ref.path.assign(path.begin(), path.end());
  return ref;
}

Millis since(Millis now, Millis then) { return now > then ? now - then : Millis{0}; }

}  // namespace

// ---- encodings ----

std::string journal_key(JobId id, const std::string& request_id) { return std::to_string(id) + "/" + request_id; }

std::optional<std::pair<JobId, std::string>> parse_journal_key(const std::string& key) {
  std::size_t slash = key.find('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  JobId id = 0;
  auto [end, ec] = std::from_chars(key.data(), key.data() + slash, id);
  if (ec != std::errc() || end != key.data() + slash || id == 0) return std::nullopt;
  return std::make_pair(id, key.substr(slash + 1));
}

std::vector<std::uint8_t> encode_job_input(JobId id, const JobRequest& request) {
  std::vector<std::uint8_t> demo_body;
  std::span<const std::uint8_t> body = input_body(request, demo_body);
  std::vector<std::uint8_t> out = input_header(id, request.kind, body);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Result<JobRequest> decode_job_input(JobId id, ProofKind kind, const std::vector<std::uint8_t>& file) {
  auto bad = [](std::string why) { return Error{ErrorKind::kInternal, std::move(why)}; };
  if (file.size() < kInputHeaderBytes || !std::equal(kInputMagic, kInputMagic + 8, file.begin()))
    return bad("not a job input file (" + std::to_string(file.size()) + " B)");
  const std::uint8_t* h = file.data();
  if (get_u32(h + 36) != policy::crc32c(std::span(h, 36))) return bad("header checksum mismatch");
  if (get_u32(h + 8) != kInputVersion) return bad("input file version " + std::to_string(get_u32(h + 8)));
  if (h[12] != static_cast<std::uint8_t>(kind)) return bad("input file is for another proof kind");
  if (get_u64(h + 16) != id) return bad("input file is job " + std::to_string(get_u64(h + 16)) + "'s");
  std::uint64_t body_bytes = get_u64(h + 24);
  if (body_bytes != file.size() - kInputHeaderBytes)
    return bad("truncated: " + std::to_string(file.size() - kInputHeaderBytes) + " of " + std::to_string(body_bytes) +
               " B");
  std::span<const std::uint8_t> body(file.data() + kInputHeaderBytes, body_bytes);
  if (get_u32(h + 32) != policy::crc32c(body)) return bad("body checksum mismatch");
  JobRequest r;
  r.kind = kind;
  switch (kind) {
    case ProofKind::kGroth16Demo:
      if (body.size() != 12) return bad("demo input of " + std::to_string(body.size()) + " B");
      r.demo_log_domain = get_u32(body.data());
      r.demo_seed = get_u64(body.data() + 4);
      break;
    case ProofKind::kPoRepC2:
    case ProofKind::kWindowPost:
    case ProofKind::kWinningPost:
    case ProofKind::kSnapDeals:
      r.input.assign(body.begin(), body.end());
      break;
  }
  return r;
}

std::vector<std::uint8_t> encode_job_result(const ProofOutput& o) {
  std::vector<std::uint8_t> out;
  out.reserve(1 + 4 + o.proof.size() + 4 + 32 * o.public_inputs.size() + 4 + o.vk_bytes.size() + 48);
  put_u8(out, kResultVersion);
  put_blob(out, o.proof);
  put_u32(out, static_cast<std::uint32_t>(o.public_inputs.size()));
  for (const auto& x : o.public_inputs) out.insert(out.end(), x.begin(), x.end());
  put_blob(out, o.vk_bytes);
  const Timings& t = o.timings;
  for (std::uint64_t ms : {t.queue_ms, t.params_ms, t.synthesis_ms, t.prove_ms, t.verify_ms, t.total_ms})
    put_u64(out, ms);
  return out;
}

std::optional<ProofOutput> decode_job_result(const std::vector<std::uint8_t>& bytes) {
  Reader r(bytes);
  ProofOutput o;
  std::uint8_t version = 0;
  std::uint32_t inputs = 0;
  if (!r.u8(version) || version != kResultVersion || !r.blob(o.proof) || !r.u32(inputs)) return std::nullopt;
  if (inputs > bytes.size() / 32) return std::nullopt;
  o.public_inputs.resize(inputs);
  for (auto& x : o.public_inputs) {
    const std::uint8_t* p = nullptr;
    if (!r.bytes(32, p)) return std::nullopt;
    std::copy(p, p + 32, x.begin());
  }
  Timings& t = o.timings;
  if (!r.blob(o.vk_bytes) || !r.u64(t.queue_ms) || !r.u64(t.params_ms) || !r.u64(t.synthesis_ms) ||
      !r.u64(t.prove_ms) || !r.u64(t.verify_ms) || !r.u64(t.total_ms) || !r.done())
    return std::nullopt;
  return o;
}

// ---- JobJournal ----

JobJournal::JobJournal(JobJournalConfig config, runtime::Logger& log, int lock_fd)
    : config_(std::move(config)), log_(log), lock_fd_(lock_fd) {}

JobJournal::~JobJournal() {
  journal_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

fs::path JobJournal::input_path(JobId id) const { return config_.dir / "jobs" / input_name(id); }

JobJournal::Opened JobJournal::open(JobJournalConfig config, runtime::Logger& log) {
  std::error_code ec;
  fs::create_directories(config.dir / "jobs", ec);
  if (ec) throw JobJournalError("create " + (config.dir / "jobs").string() + ": " + ec.message());
  // One daemon per state directory: two appending to one journal would
  // overwrite each other's records. flock is released by the kernel when the
  // process dies, so a kill -9 leaves no stale lock.
  fs::path lock_path = config.dir / "journal.lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (lock_fd < 0) throw JobJournalError("open " + lock_path.string() + ": " + errno_text());
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::string why = errno == EWOULDBLOCK ? "another cuzkd uses the state directory " + config.dir.string()
                                           : "flock " + lock_path.string() + ": " + errno_text();
    ::close(lock_fd);
    throw JobJournalError(why);
  }
  auto self = std::unique_ptr<JobJournal>(new JobJournal(std::move(config), log, lock_fd));
  JobJournal& j = *self;

  policy::JournalConfig jc;
  jc.path = j.config_.dir / "journal";
  jc.result_retention = std::chrono::duration_cast<Millis>(j.config_.result_ttl);
  jc.sync_every_record = true;  // a terminal record must be durable before the input file goes
  jc.compact_min_bytes = j.config_.compact_min_bytes;
  auto opened = policy::Journal::open(jc, j.clock());
  if (!opened && opened.error().kind == policy::JournalErrorKind::kBadFileHeader) {
    // Not a journal this build can read: keep it for a person to look at and
    // start an empty one (clients resubmit what they still need).
    fs::path aside = jc.path;
    aside += ".unreadable-" + std::to_string(j.clock().now().count());
    log.error("journal unreadable, moved aside; its jobs are not resumed",
              {{"path", jc.path.string()}, {"moved_to", aside.string()}, {"error", opened.error().message}});
    fs::rename(jc.path, aside, ec);
    if (ec) throw JobJournalError("move aside " + jc.path.string() + ": " + ec.message());
    opened = policy::Journal::open(jc, j.clock());
  }
  if (!opened) throw JobJournalError("journal " + jc.path.string() + ": " + opened.error().message);
  j.journal_ = std::move(opened->journal);
  policy::ReplayReport& replay = opened->replay;
  if (replay.torn_tail_bytes != 0) {
    log.warn("journal: dropped a torn last record (a crash mid-write)",
             {{"bytes", replay.torn_tail_bytes}, {"offset", replay.valid_end}});
  }
  for (const policy::JournalError& e : replay.errors) {
    log.warn("journal: skipped a damaged record",
             {{"kind", policy::to_string(e.kind)}, {"offset", e.offset}, {"error", e.message}});
  }

  JournalRecovery recovery = j.recover(std::move(replay));
  j.write_next_id();
  if (j.journal_->live_bytes() < j.journal_->file_bytes()) j.compact();
  j.remove_orphan_inputs(recovery);
  log.info("journal recovered", {{"dir", j.config_.dir.string()},
                                 {"resumed", recovery.resume.size()},
                                 {"finished", recovery.finished.size()},
                                 {"next_job_id", recovery.next_id},
                                 {"journal_bytes", j.journal_->file_bytes()}});
  return Opened{std::move(self), std::move(recovery)};
}

JournalRecovery JobJournal::recover(policy::ReplayReport replay) {
  const Millis now = clock().now();
  JournalRecovery rec;
  JobId max_id = 0;
  for (policy::FinishedJob& f : replay.finished) {
    auto key = parse_journal_key(f.request_id);
    if (!key) {
      log_.warn("journal: finished record with a malformed key, skipped", {{"key", f.request_id}});
      continue;
    }
    max_id = std::max(max_id, key->first);
    RecoveredJob r;
    r.id = key->first;
    r.request_id = key->second;
    r.priority = f.priority;
    r.request.kind = f.kind;
    r.request.request_id = r.request_id;
    r.digest = f.digest;
    r.since_finished = since(now, f.finished_at);
    r.since_accepted = r.since_finished;
    switch (f.ending) {
      case policy::Ending::kCompleted: {
        auto out = decode_job_result(f.result);
        if (!out) {
          log_.warn("journal: undecodable result, job forgotten", {{"job", r.id}});
          continue;
        }
        r.state = JobState::kDone;
        r.output = std::move(*out);
        r.since_accepted += Millis{static_cast<Millis::rep>(r.output.timings.total_ms)};
        break;
      }
      case policy::Ending::kFailed:
        r.state = JobState::kFailed;
        r.error = Error{f.error_kind, f.error_message};
        break;
      case policy::Ending::kCancelled:
        r.state = JobState::kCancelled;
        r.error = Error{ErrorKind::kCancelled, "cancelled (before the daemon restarted)"};
        break;
    }
    rec.finished.push_back(std::move(r));
  }
  for (policy::AcceptedJob& a : replay.unfinished) {
    auto key = parse_journal_key(a.request_id);
    if (!key) {
      log_.warn("journal: accepted record with a malformed key, skipped", {{"key", a.request_id}});
      continue;
    }
    max_id = std::max(max_id, key->first);
    RecoveredJob r;
    r.id = key->first;
    r.request_id = key->second;
    r.priority = a.priority;
    r.request.kind = a.kind;
    r.digest = a.digest;
    keys_.emplace(r.id, a.request_id);
    std::optional<InputRef> ref = decode_input_ref(a.input);
    r.since_accepted = since(now, ref ? Millis{ref->accepted_at_ms} : a.accepted_at);
    std::optional<std::vector<std::uint8_t>> file;
    if (ref) file = read_whole(config_.dir / ref->path);
    Result<JobRequest> request = !ref   ? Result<JobRequest>(Error{ErrorKind::kInternal, "undecodable record"})
                                 : file ? decode_job_input(r.id, a.kind, *file)
                                        : Result<JobRequest>(Error{ErrorKind::kInternal, "input file missing"});
    if (request) {
      r.request = std::move(request.value());
    } else {
      r.error =
          Error{ErrorKind::kInternal, "the input of job " + std::to_string(r.id) + " was lost across a restart (" +
                                          request.error().message + "); submit it again"};
      log_.warn("journal: job input unusable, the job will fail",
                {{"job", r.id}, {"input", ref ? ref->path : ""}, {"error", request.error().message}});
    }
    if (ref && !r.error && a.started_at) {
      // It was running when the daemon stopped. A job that brings the daemon
      // down (an abort on a broken invariant, a sticky CUDA error, the OOM
      // killer) would otherwise bring it down again at every start: count
      // such runs in a re-recorded kAccepted (replay keeps the latest) and
      // give up after max_interrupted_runs.
      ++ref->interrupted_runs;
      r.interrupted_runs = ref->interrupted_runs;
      if (auto w = journal_->accepted(a.request_id, a.kind, a.priority, encode_input_ref(*ref), a.digest); !w) {
        log_.error("journal: cannot count an interrupted run", {{"job", r.id}, {"error", w.error().message}});
      }
      if (ref->interrupted_runs >= config_.max_interrupted_runs) {
        r.error = Error{ErrorKind::kInternal, "the daemon stopped " + std::to_string(ref->interrupted_runs) +
                                                  " times while job " + std::to_string(r.id) +
                                                  " was running; it is not resumed again"};
        log_.error("journal: job given up after interrupted runs",
                   {{"job", r.id}, {"interrupted_runs", ref->interrupted_runs}});
      }
    } else if (ref) {
      r.interrupted_runs = ref->interrupted_runs;
    }
    r.request.request_id = r.request_id;
    r.request.priority = r.priority;
    rec.resume.push_back(std::move(r));
  }
  // Acceptance order is id order (a job re-recorded above moved in the file).
  std::sort(rec.resume.begin(), rec.resume.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  // A request id bound to two jobs (a finished one, then a new job after it
  // expired in memory but not yet by the wall clock): the newer one owns it.
  std::map<std::string, JobId> newest;
  for (const auto* list : {&rec.finished, &rec.resume})
    for (const RecoveredJob& r : *list)
      if (!r.request_id.empty()) newest[r.request_id] = std::max(newest[r.request_id], r.id);
  std::erase_if(rec.finished,
                [&](const RecoveredJob& r) { return !r.request_id.empty() && newest[r.request_id] != r.id; });
  for (const RecoveredJob& r : rec.finished) input_dropped_.insert(r.id);

  // Ids: above everything in the journal and above the floor written before
  // the last compaction (which dropped expired jobs with the largest ids).
  JobId floor = 1;
  fs::path ids = config_.dir / "job_ids";
  if (auto b = read_whole(ids); b && !b->empty()) {
    if (b->size() == kNextIdBytes && get_u32(b->data()) == kNextIdMagic &&
        get_u32(b->data() + 4) == policy::crc32c(std::span(b->data() + 8, 8))) {
      floor = get_u64(b->data() + 8);
    } else {
      log_.warn("journal: damaged job id floor, ids continue after the journal's largest", {{"path", ids.string()}});
    }
  }
  next_id_ = std::max({next_id_, floor, max_id + 1});
  rec.next_id = next_id_;
  return rec;
}

void JobJournal::write_next_id() {
  std::vector<std::uint8_t> id_bytes;
  put_u64(id_bytes, next_id_);
  std::vector<std::uint8_t> file;
  put_u32(file, kNextIdMagic);
  put_u32(file, policy::crc32c(id_bytes));
  file.insert(file.end(), id_bytes.begin(), id_bytes.end());
  if (std::string why = write_durably(config_.dir / "job_ids", file); !why.empty())
    throw JobJournalError("job id floor: " + why);
}

void JobJournal::compact() {
  try {
    write_next_id();  // compaction may drop the largest ids issued
  } catch (const JobJournalError& e) {
    log_.error("journal: not compacted", {{"error", e.what()}});
    return;
  }
  std::uint64_t before = journal_->file_bytes();
  if (auto r = journal_->compact(); !r) {
    log_.error("journal: compaction failed", {{"error", r.error().message}});
    return;
  }
  log_.info("journal compacted", {{"bytes_before", before}, {"bytes_after", journal_->file_bytes()}});
}

void JobJournal::remove_orphan_inputs(const JournalRecovery& recovery) {
  // Inputs of finished jobs (deleted after their terminal record, unless the
  // daemon died in between) and of submissions that died before their record.
  std::unordered_set<std::string> keep;
  for (const RecoveredJob& r : recovery.resume) keep.insert(input_name(r.id));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(config_.dir / "jobs", ec)) {
    std::string name = entry.path().filename().string();
    if (keep.count(name)) continue;
    std::error_code rm;
    fs::remove(entry.path(), rm);
    if (rm) log_.warn("journal: cannot remove a stale input file", {{"path", entry.path().string()}});
  }
}

std::optional<Error> JobJournal::accepted(JobId id, const JobRequest& request, Priority priority) {
  if (config_.before_write) config_.before_write("accepted");
  auto fail = [&](const std::string& why) {
    log_.error("journal: cannot record a job", {{"job", id}, {"error", why}});
    return Error{ErrorKind::kInternal, "cannot record the job durably: " + why};
  };
  fs::path input = input_path(id);
  std::vector<std::uint8_t> demo_body;
  std::span<const std::uint8_t> body = input_body(request, demo_body);
  if (std::string why = write_durably(input, input_header(id, request.kind, body), body); !why.empty())
    return fail(why);
  std::string key = journal_key(id, request.request_id);
  InputRef ref{0, clock().now().count(), "jobs/" + input_name(id)};
  auto r = journal_->accepted(key, request.kind, priority, encode_input_ref(ref), request_digest(request));
  if (!r) {
    std::error_code ec;
    fs::remove(input, ec);
    return fail(r.error().message);
  }
  keys_.emplace(id, std::move(key));
  next_id_ = std::max(next_id_, id + 1);
  return std::nullopt;
}

void JobJournal::started(JobId id) {
  if (config_.before_write) config_.before_write("started");
  auto it = keys_.find(id);
  if (it == keys_.end()) return;
  if (auto r = journal_->started(it->second); !r)
    log_.error("journal: cannot record a job's start", {{"job", id}, {"error", r.error().message}});
}

void JobJournal::finished(JobId id, JobState state, const ProofOutput& output, const std::optional<Error>& error) {
  if (config_.before_write) config_.before_write("finished");
  auto it = keys_.find(id);
  if (it == keys_.end()) return;  // not journaled (a restored finished job cannot finish again)
  const std::string& key = it->second;
  policy::Expected<policy::Ok, policy::JournalError> r = policy::Ok{};
  switch (state) {
    case JobState::kDone:
      r = journal_->completed(key, encode_job_result(output));
      break;
    case JobState::kFailed:
      r = journal_->failed(key, error ? error->kind : ErrorKind::kInternal, error ? error->message : "");
      break;
    case JobState::kCancelled:
      r = journal_->cancelled(key);
      break;
    case JobState::kQueued:
    case JobState::kRunning:
      std::fprintf(stderr, "JobJournal::finished: job %llu is %s\n", static_cast<unsigned long long>(id),
                   std::string(to_string(state)).c_str());
      std::abort();
  }
  if (!r) {
    log_.error("journal: cannot record a job's end; it will run again after a restart",
               {{"job", id}, {"error", r.error().message}});
    return;
  }
  std::error_code ec;
  fs::remove(input_path(id), ec);
  keys_.erase(it);
  if (journal_->should_compact()) compact();
}

}  // namespace cuzk::engine
