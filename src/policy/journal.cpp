#include "policy/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "policy/crc32c.hpp"
#include "util/file_io.hpp"

namespace cuzk::policy {

std::string_view to_string(JournalErrorKind k) {
  switch (k) {
    case JournalErrorKind::kIo:
      return "io";
    case JournalErrorKind::kBadFileHeader:
      return "bad_file_header";
    case JournalErrorKind::kCorruptHeader:
      return "corrupt_header";
    case JournalErrorKind::kCorruptPayload:
      return "corrupt_payload";
    case JournalErrorKind::kBadPayload:
      return "bad_payload";
    case JournalErrorKind::kTooLarge:
      return "too_large";
  }
  return "?";
}

namespace {

constexpr std::uint8_t kFileMagic[8] = {'C', 'U', 'Z', 'K', 'J', 'R', 'N', 'L'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kRecordMagic = 0x524A5A43;  // "CZJR" as little-endian bytes
constexpr std::uint8_t kDigestTrailerVersion = 2;   // a record's fields followed by its request digest

// ---- little-endian encoding ----

void put_u8(std::vector<std::uint8_t>& out, std::uint8_t v) { out.push_back(v); }
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_i64(std::vector<std::uint8_t>& out, std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}
void put_blob(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> b) {
  CUZK_POLICY_CHECK(b.size() <= kMaxPayloadBytes, "blob of %zu B", b.size());
  put_u32(out, static_cast<std::uint32_t>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
}
void put_str(std::vector<std::uint8_t>& out, const std::string& s) {
  put_blob(out, {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}
std::uint32_t get_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Bounds-checked reader over one payload.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : b_(b) {}
  bool u8(std::uint8_t& v) {
    if (pos_ + 1 > b_.size()) return false;
    v = b_[pos_++];
    return true;
  }
  bool u32(std::uint32_t& v) {
    if (pos_ + 4 > b_.size()) return false;
    v = get_u32(b_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool i64(std::int64_t& v) {
    if (pos_ + 8 > b_.size()) return false;
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<std::uint64_t>(b_[pos_ + i]) << (8 * i);
    v = static_cast<std::int64_t>(u);
    pos_ += 8;
    return true;
  }
  bool blob(std::vector<std::uint8_t>& v) {
    std::uint32_t n = 0;
    if (!u32(n) || pos_ + n > b_.size()) return false;
    v.assign(b_.begin() + static_cast<long>(pos_), b_.begin() + static_cast<long>(pos_ + n));
    pos_ += n;
    return true;
  }
  bool str(std::string& v) {
    std::vector<std::uint8_t> b;
    if (!blob(b)) return false;
    v.assign(b.begin(), b.end());
    return true;
  }
  bool bytes(std::size_t n, const std::uint8_t*& p) {
    if (pos_ + n > b_.size()) return false;
    p = b_.data() + pos_;
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
};

struct Decoded {
  RecordType type{};
  Millis at{0};
  std::string request_id;
  engine::ProofKind kind{};
  engine::Priority priority{};
  JobInput input;                       // kAccepted
  std::vector<std::uint8_t> result;     // kCompleted
  engine::ErrorKind error_kind{};       // kFailed
  std::string message;                  // kFailed
  std::optional<RequestDigest> digest;  // version 2 records
};

bool decode(std::span<const std::uint8_t> payload, Decoded& d) {
  Reader r(payload);
  std::uint8_t type = 0, kind = 0, prio = 0, mode = 0, ek = 0;
  std::int64_t at = 0;
  if (!r.u8(type) || !r.i64(at) || !r.str(d.request_id)) return false;
  d.at = Millis{at};
  if (type < 1 || type > 5) return false;
  d.type = static_cast<RecordType>(type);
  if (d.type != RecordType::kStarted) {
    if (!r.u8(kind) || kind > static_cast<std::uint8_t>(engine::ProofKind::kSnapDeals) || !r.u8(prio) ||
        prio >= engine::kNumPriorities)
      return false;
    d.kind = static_cast<engine::ProofKind>(kind);
    d.priority = static_cast<engine::Priority>(prio);
  }
  switch (d.type) {
    case RecordType::kAccepted:
      if (!r.u8(mode) || mode > 1 || !r.blob(d.input.bytes)) return false;
      d.input.mode = static_cast<JobInput::Mode>(mode);
      break;
    case RecordType::kCompleted:
      if (!r.blob(d.result)) return false;
      break;
    case RecordType::kFailed:
      if (!r.u8(ek) || !r.str(d.message)) return false;
      d.error_kind = static_cast<engine::ErrorKind>(ek);
      break;
    case RecordType::kStarted:
    case RecordType::kCancelled:
      break;
  }
  if (r.done()) return true;  // version 1: no trailer
  std::uint8_t version = 0;
  const std::uint8_t* digest = nullptr;
  if (!r.u8(version) || version != kDigestTrailerVersion || !r.bytes(32, digest)) return false;
  d.digest.emplace();
  std::copy(digest, digest + 32, d.digest->begin());
  return r.done();
}

bool header_valid(const std::uint8_t* h) { return get_u32(h) == kRecordMagic && get_u32(h + 12) == crc32c({h, 12}); }

// Walks every record of a journal image. on_record gets each valid one with
// its file span; errors and the torn tail land in the report.
using RecordFn = std::function<void(const Decoded&, std::uint64_t offset, std::uint64_t bytes)>;

Expected<Ok, JournalError> scan(std::span<const std::uint8_t> file, ReplayReport& report, const RecordFn& on_record) {
  if (file.size() < kJournalFileHeaderBytes || !std::equal(kFileMagic, kFileMagic + 8, file.begin()) ||
      get_u32(file.data() + 12) != crc32c(file.first(12))) {
    return unexpected(JournalError{JournalErrorKind::kBadFileHeader, 0, "not a cuzk journal (bad file header)"});
  }
  if (std::uint32_t v = get_u32(file.data() + 8); v != kVersion) {
    return unexpected(JournalError{JournalErrorKind::kBadFileHeader, 0,
                                   "journal version " + std::to_string(v) + " is not readable by this build"});
  }
  std::uint64_t off = kJournalFileHeaderBytes;
  report.valid_end = off;
  const std::uint64_t size = file.size();
  while (off < size) {
    if (size - off < kJournalRecordHeaderBytes) {
      report.torn_tail_bytes = size - off;  // a header cut short by a crash
      break;
    }
    const std::uint8_t* h = file.data() + off;
    if (!header_valid(h)) {
      // Untrusted length: find the next valid header and go on from there.
      std::uint64_t next = off + 1;
      while (next + kJournalRecordHeaderBytes <= size && !header_valid(file.data() + next)) ++next;
      if (next + kJournalRecordHeaderBytes > size) next = size;
      report.errors.push_back(
          JournalError{JournalErrorKind::kCorruptHeader, off,
                       "record header checksum mismatch; skipped " + std::to_string(next - off) + " B"});
      off = next;
      continue;
    }
    std::uint32_t len = get_u32(h + 4);
    if (len > kMaxPayloadBytes) {
      report.errors.push_back(
          JournalError{JournalErrorKind::kTooLarge, off, "record of " + std::to_string(len) + " B"});
      off += 1;  // the header checksum passed, yet the length is absurd: resync as for a bad header
      continue;
    }
    if (size - off - kJournalRecordHeaderBytes < len) {
      report.torn_tail_bytes = size - off;  // the payload was cut short by a crash
      break;
    }
    std::span<const std::uint8_t> payload = file.subspan(off + kJournalRecordHeaderBytes, len);
    std::uint64_t bytes = kJournalRecordHeaderBytes + len;
    if (crc32c(payload) != get_u32(h + 8)) {
      report.errors.push_back(JournalError{JournalErrorKind::kCorruptPayload, off, "payload checksum mismatch"});
    } else {
      Decoded d;
      if (!decode(payload, d)) {
        report.errors.push_back(JournalError{JournalErrorKind::kBadPayload, off, "undecodable payload"});
      } else {
        ++report.records;
        on_record(d, off, bytes);
      }
    }
    off += bytes;
    report.valid_end = off;
  }
  return Ok{};
}

JournalError io_error(const std::string& what, const std::filesystem::path& path) {
  return JournalError{JournalErrorKind::kIo, 0, what + " " + path.string() + ": " + std::strerror(errno)};
}

using util::fsync_dir;
using util::write_all;

bool read_all(int fd, std::vector<std::uint8_t>& out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out.size()) {
    ssize_t r = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  out.resize(done);
  return true;
}

std::vector<std::uint8_t> kind_priority(engine::ProofKind kind, engine::Priority priority) {
  return {static_cast<std::uint8_t>(kind), static_cast<std::uint8_t>(priority)};
}

}  // namespace

void append_digest(std::vector<std::uint8_t>& fields, const RequestDigest& digest) {
  put_u8(fields, kDigestTrailerVersion);
  fields.insert(fields.end(), digest.begin(), digest.end());
}

std::vector<std::uint8_t> journal_file_header() {
  std::vector<std::uint8_t> h(kFileMagic, kFileMagic + 8);
  put_u32(h, kVersion);
  put_u32(h, crc32c(h));
  return h;
}

std::vector<std::uint8_t> encode_record(RecordType type, Millis at, const std::string& request_id,
                                        std::span<const std::uint8_t> fields) {
  std::vector<std::uint8_t> payload;
  payload.reserve(1 + 8 + 4 + request_id.size() + fields.size());
  put_u8(payload, static_cast<std::uint8_t>(type));
  put_i64(payload, at.count());
  put_str(payload, request_id);
  payload.insert(payload.end(), fields.begin(), fields.end());
  std::vector<std::uint8_t> rec;
  rec.reserve(kJournalRecordHeaderBytes + payload.size());
  put_u32(rec, kRecordMagic);
  put_u32(rec, static_cast<std::uint32_t>(payload.size()));
  put_u32(rec, crc32c(payload));
  put_u32(rec, crc32c(rec));
  rec.insert(rec.end(), payload.begin(), payload.end());
  return rec;
}

Expected<ReplayReport, JournalError> replay_journal(std::span<const std::uint8_t> file, Millis now, Millis retention) {
  ReplayReport report;
  std::uint64_t seq = 0;
  std::map<std::string, std::pair<std::uint64_t, AcceptedJob>> unfinished;
  std::map<std::string, std::pair<std::uint64_t, FinishedJob>> finished;
  auto on_record = [&](const Decoded& d, std::uint64_t, std::uint64_t) {
    switch (d.type) {
      case RecordType::kAccepted: {
        // A request id accepted again after it finished is a new job.
        finished.erase(d.request_id);
        AcceptedJob j{d.request_id, d.kind, d.priority, d.input, d.at, std::nullopt, d.digest};
        unfinished.insert_or_assign(d.request_id, std::make_pair(seq++, std::move(j)));
        break;
      }
      case RecordType::kStarted: {
        auto it = unfinished.find(d.request_id);
        if (it == unfinished.end()) {
          ++report.orphans;
        } else {
          it->second.second.started_at = d.at;
        }
        break;
      }
      case RecordType::kCompleted:
      case RecordType::kFailed:
      case RecordType::kCancelled: {
        unfinished.erase(d.request_id);
        FinishedJob f;
        f.request_id = d.request_id;
        f.kind = d.kind;
        f.priority = d.priority;
        f.ending = d.type == RecordType::kCompleted ? Ending::kCompleted
                   : d.type == RecordType::kFailed  ? Ending::kFailed
                                                    : Ending::kCancelled;
        f.result = d.result;
        f.error_kind = d.error_kind;
        f.error_message = d.message;
        f.finished_at = d.at;
        f.digest = d.digest;
        finished.insert_or_assign(d.request_id, std::make_pair(seq++, std::move(f)));
        break;
      }
    }
  };
  auto scanned = scan(file, report, on_record);
  if (!scanned) return unexpected(scanned.error());
  std::vector<std::pair<std::uint64_t, AcceptedJob>> u;
  for (auto& [id, v] : unfinished) u.push_back(std::move(v));
  std::sort(u.begin(), u.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [s, j] : u) report.unfinished.push_back(std::move(j));
  std::vector<std::pair<std::uint64_t, FinishedJob>> f;
  for (auto& [id, v] : finished) {
    if (now - v.second.finished_at < retention) f.push_back(std::move(v));
  }
  std::sort(f.begin(), f.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [s, j] : f) report.finished.push_back(std::move(j));
  return report;
}

// ---- Journal ------------------------------------------------------------------------

Journal::Journal(JournalConfig config, const Clock& clock, int fd, std::uint64_t file_bytes)
    : config_(std::move(config)), clock_(clock), fd_(fd), file_bytes_(file_bytes) {}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<Journal::Opened, JournalError> Journal::open(JournalConfig config, const Clock& clock) {
  int fd = ::open(config.path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return unexpected(io_error("open", config.path));
  std::vector<std::uint8_t> image;
  if (!read_all(fd, image)) {
    JournalError e = io_error("read", config.path);
    ::close(fd);
    return unexpected(e);
  }
  std::vector<std::uint8_t> header = journal_file_header();
  if (image.size() < header.size() && std::equal(image.begin(), image.end(), header.begin())) {
    // New journal, or one that died while its header was being written.
    image = header;
    if (::ftruncate(fd, 0) != 0 || !write_all(fd, image.data(), image.size()) || ::fdatasync(fd) != 0 ||
        !fsync_dir(config.path.parent_path())) {
      JournalError e = io_error("initialise", config.path);
      ::close(fd);
      return unexpected(e);
    }
  }
  auto report = replay_journal(image, clock.now(), config.result_retention);
  if (!report) {
    ::close(fd);
    return unexpected(report.error());
  }
  auto journal = std::unique_ptr<Journal>(new Journal(std::move(config), clock, fd, image.size()));
  ReplayReport spans_report;  // same walk, to index the spans compaction copies
  (void)scan(image, spans_report, [&](const Decoded& d, std::uint64_t off, std::uint64_t bytes) {
    journal->index(d.request_id, d.type, d.kind, d.priority, d.at, Span{off, bytes}, d.digest);
  });
  if (report->torn_tail_bytes != 0) {
    // Cut the torn record off, so the next append starts on a clean boundary.
    std::uint64_t keep = image.size() - report->torn_tail_bytes;
    if (::ftruncate(fd, static_cast<off_t>(keep)) != 0 || ::fdatasync(fd) != 0) {
      return unexpected(io_error("truncate torn tail of", journal->config_.path));
    }
    journal->file_bytes_ = keep;
  }
  if (::lseek(fd, 0, SEEK_END) < 0) return unexpected(io_error("seek", journal->config_.path));
  return Opened{std::move(journal), std::move(report.value())};
}

void Journal::index(const std::string& request_id, RecordType type, engine::ProofKind kind, engine::Priority priority,
                    Millis at, Span span, const std::optional<RequestDigest>& digest) {
  switch (type) {
    case RecordType::kAccepted:
      live_.insert_or_assign(request_id, Live{next_seq_++, kind, priority, false, Millis{0}, {span}, digest});
      break;
    case RecordType::kStarted: {
      auto it = live_.find(request_id);
      if (it != live_.end() && !it->second.finished) it->second.records.push_back(span);
      break;
    }
    case RecordType::kCompleted:
    case RecordType::kFailed:
    case RecordType::kCancelled:
      // Self-contained: the finished job needs only this record.
      live_.insert_or_assign(request_id, Live{next_seq_++, kind, priority, true, at, {span}, digest});
      break;
  }
}

Expected<Ok, JournalError> Journal::append(RecordType type, const std::string& request_id, engine::ProofKind kind,
                                           engine::Priority priority, std::span<const std::uint8_t> fields, bool sync,
                                           const std::optional<RequestDigest>& digest) {
  Millis at = clock_.now();
  std::vector<std::uint8_t> with_digest;
  if (digest) {
    with_digest.assign(fields.begin(), fields.end());
    append_digest(with_digest, *digest);
    fields = with_digest;
  }
  std::vector<std::uint8_t> record = encode_record(type, at, request_id, fields);
  if (record.size() - kJournalRecordHeaderBytes > kMaxPayloadBytes) {
    return unexpected(
        JournalError{JournalErrorKind::kTooLarge, file_bytes_, "record of " + std::to_string(record.size()) + " B"});
  }
  if (!write_all(fd_, record.data(), record.size())) {
    JournalError e = io_error("append to", config_.path);
    // Leave no half record behind for the next append to follow.
    if (::ftruncate(fd_, static_cast<off_t>(file_bytes_)) == 0) (void)::lseek(fd_, 0, SEEK_END);
    return unexpected(e);
  }
  if ((sync || config_.sync_every_record) && ::fdatasync(fd_) != 0)
    return unexpected(io_error("fdatasync", config_.path));
  Span span{file_bytes_, record.size()};
  file_bytes_ += record.size();
  index(request_id, type, kind, priority, at, span, digest);
  return Ok{};
}

Expected<Ok, JournalError> Journal::accepted(const std::string& request_id, engine::ProofKind kind,
                                             engine::Priority priority, const JobInput& input,
                                             std::optional<RequestDigest> digest) {
  if (input.bytes.size() > kMaxPayloadBytes) {
    return unexpected(JournalError{JournalErrorKind::kTooLarge, file_bytes_,
                                   "input of " + std::to_string(input.bytes.size()) + " B"});
  }
  std::vector<std::uint8_t> f = kind_priority(kind, priority);
  put_u8(f, static_cast<std::uint8_t>(input.mode));
  put_blob(f, input.bytes);
  return append(RecordType::kAccepted, request_id, kind, priority, f, /*sync=*/true, digest);
}

Expected<Ok, JournalError> Journal::started(const std::string& request_id) {
  return append(RecordType::kStarted, request_id, {}, {}, {}, /*sync=*/false, std::nullopt);
}

Expected<Ok, JournalError> Journal::finish(const std::string& request_id, RecordType type,
                                           std::vector<std::uint8_t> extra) {
  // The terminal record repeats kind, priority and digest from the accepted job.
  auto it = live_.find(request_id);
  engine::ProofKind kind = it != live_.end() ? it->second.kind : engine::ProofKind::kGroth16Demo;
  engine::Priority priority = it != live_.end() ? it->second.priority : engine::Priority::kNormal;
  std::optional<RequestDigest> digest = it != live_.end() ? it->second.digest : std::nullopt;
  std::vector<std::uint8_t> f = kind_priority(kind, priority);
  f.insert(f.end(), extra.begin(), extra.end());
  return append(type, request_id, kind, priority, f, /*sync=*/false, digest);
}

Expected<Ok, JournalError> Journal::completed(const std::string& request_id, std::span<const std::uint8_t> result) {
  if (result.size() > kMaxPayloadBytes) {
    return unexpected(
        JournalError{JournalErrorKind::kTooLarge, file_bytes_, "result of " + std::to_string(result.size()) + " B"});
  }
  std::vector<std::uint8_t> f;
  put_blob(f, result);
  return finish(request_id, RecordType::kCompleted, std::move(f));
}

Expected<Ok, JournalError> Journal::failed(const std::string& request_id, engine::ErrorKind error_kind,
                                           const std::string& message) {
  std::vector<std::uint8_t> f;
  put_u8(f, static_cast<std::uint8_t>(error_kind));
  put_str(f, message);
  return finish(request_id, RecordType::kFailed, std::move(f));
}

Expected<Ok, JournalError> Journal::cancelled(const std::string& request_id) {
  return finish(request_id, RecordType::kCancelled, {});
}

std::size_t Journal::unfinished() const {
  return static_cast<std::size_t>(
      std::count_if(live_.begin(), live_.end(), [](const auto& kv) { return !kv.second.finished; }));
}

std::uint64_t Journal::live_bytes() const {
  Millis now = clock_.now();
  std::uint64_t bytes = kJournalFileHeaderBytes;
  for (const auto& [id, l] : live_) {
    if (l.finished && now - l.finished_at >= config_.result_retention) continue;
    for (const Span& s : l.records) bytes += s.bytes;
  }
  return bytes;
}

bool Journal::should_compact() const {
  return file_bytes_ >= config_.compact_min_bytes && live_bytes() * 2 < file_bytes_;
}

Expected<Ok, JournalError> Journal::compact() {
  Millis now = clock_.now();
  std::vector<std::pair<std::uint64_t, const std::string*>> keep;
  for (const auto& [id, l] : live_) {
    if (l.finished && now - l.finished_at >= config_.result_retention) continue;
    keep.emplace_back(l.seq, &id);
  }
  std::sort(keep.begin(), keep.end());

  std::filesystem::path tmp = config_.path;
  tmp += ".compact";
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (out < 0) return unexpected(io_error("create", tmp));
  auto fail = [&](const char* what) {
    JournalError e = io_error(what, tmp);
    ::close(out);
    ::unlink(tmp.c_str());
    return unexpected(e);
  };
  std::vector<std::uint8_t> header = journal_file_header();
  if (!write_all(out, header.data(), header.size())) return fail("write");
  std::uint64_t pos = header.size();
  std::unordered_map<std::string, Live> moved;
  std::vector<std::uint8_t> buf;
  for (const auto& [seq, id] : keep) {
    Live l = live_.at(*id);
    for (Span& s : l.records) {
      buf.resize(s.bytes);
      ssize_t r = ::pread(fd_, buf.data(), buf.size(), static_cast<off_t>(s.offset));
      if (r != static_cast<ssize_t>(buf.size())) return fail("read back for");
      if (!write_all(out, buf.data(), buf.size())) return fail("write");
      s.offset = pos;
      pos += s.bytes;
    }
    moved.emplace(*id, std::move(l));
  }
  if (::fdatasync(out) != 0) return fail("fdatasync");
  if (::rename(tmp.c_str(), config_.path.c_str()) != 0) return fail("rename");
  ::close(out);
  if (!fsync_dir(config_.path.parent_path())) return unexpected(io_error("fsync directory of", config_.path));
  // Append to the new file from now on.
  int fd = ::open(config_.path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return unexpected(io_error("reopen", config_.path));
  if (::lseek(fd, 0, SEEK_END) < 0) {
    ::close(fd);
    return unexpected(io_error("seek", config_.path));
  }
  ::close(fd_);
  fd_ = fd;
  file_bytes_ = pos;
  live_ = std::move(moved);
  return Ok{};
}

}  // namespace cuzk::policy
