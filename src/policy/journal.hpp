// Durable job journal: an append-only file of length-prefixed, checksummed
// records, replayed at start-up so that accepted jobs survive a restart
// (resumed) and recent results survive it too (an AwaitProof after a daemon
// restart still gets its proof; Curio retries with deterministic request ids).
//
// File layout (all integers little-endian):
//   file header, 16 B:   "CUZKJRNL" | u32 version (1) | u32 crc32c(first 12 B)
//   record header, 16 B: u32 magic "CZJR" | u32 payload_bytes | u32 crc32c(payload)
//                        | u32 crc32c(first 12 B of this header)
//   payload:             u8 type | i64 at_ms | str request_id | type fields
//     str = u32 length + bytes; blob = u32 length + bytes
//     kAccepted:  u8 kind | u8 priority | u8 input mode (0 path, 1 inline) | blob input
//     kStarted:   -
//     kCompleted: u8 kind | u8 priority | blob result
//     kFailed:    u8 kind | u8 priority | u8 error kind | str message
//     kCancelled: u8 kind | u8 priority
//     then, in every record but kStarted, optionally (record version 2):
//       u8 2 | 32 B request digest (the SHA-256 the engine computes over the
//       job's input, engine/request_digest.hpp). Version 1 records end after
//       the type fields and still replay (digest absent).
// Terminal records repeat kind, priority and the digest, so a finished job
// needs no other record: compaction keeps just that one, and a request id
// reused with a different input after a restart is still told apart.
//
// Durability: kAccepted is fdatasync'ed before accepted() returns (the client
// is told "accepted" only once it would survive a crash); other records are
// synced only with sync_every_record, since losing one means re-proving or
// re-sending a result, never losing a job.
//
// Replay tolerates a torn last record (a crash mid-append: it is reported and
// cut off) and skips corrupted records with a typed error, continuing with the
// records after them: the header has its own checksum, so a trusted length
// skips a bad payload, and a bad header is passed by scanning for the next
// valid header.
//
// Threading: none; blocking file I/O. Call it from a worker thread, not the
// event loop (fdatasync takes milliseconds on a good disk, far more on a bad one).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/types.hpp"
#include "policy/clock.hpp"
#include "policy/expected.hpp"

namespace cuzk::policy {

enum class JournalErrorKind : std::uint8_t {
  kIo,              // open/read/write/fsync/rename failed (message has errno text)
  kBadFileHeader,   // not a journal, or a version this build cannot read: nothing replayed
  kCorruptHeader,   // a record header failed its checksum: skipped up to the next valid header
  kCorruptPayload,  // a payload failed its checksum: that record skipped
  kBadPayload,      // checksum fine but undecodable (unknown type, short fields): skipped
  kTooLarge,        // a record larger than kMaxPayloadBytes: refused on append
};
std::string_view to_string(JournalErrorKind k);

struct JournalError {
  JournalErrorKind kind;
  std::uint64_t offset = 0;  // file offset of the record concerned
  std::string message;
};

enum class RecordType : std::uint8_t { kAccepted = 1, kStarted = 2, kCompleted = 3, kFailed = 4, kCancelled = 5 };

// What identifies a job's input (SHA-256, engine/request_digest.hpp).
using RequestDigest = std::array<std::uint8_t, 32>;

struct JobInput {
  enum class Mode : std::uint8_t { kPath = 0, kInline = 1 };
  Mode mode = Mode::kInline;
  std::vector<std::uint8_t> bytes;  // kPath: the path's UTF-8 bytes
  static JobInput path(const std::string& p) { return {Mode::kPath, {p.begin(), p.end()}}; }
  static JobInput inline_bytes(std::vector<std::uint8_t> b) { return {Mode::kInline, std::move(b)}; }
  std::string path_string() const { return {bytes.begin(), bytes.end()}; }
  bool operator==(const JobInput&) const = default;
};

struct AcceptedJob {
  std::string request_id;
  engine::ProofKind kind = engine::ProofKind::kGroth16Demo;
  engine::Priority priority = engine::Priority::kNormal;
  JobInput input;
  Millis accepted_at{0};
  std::optional<Millis> started_at;     // it had started before the restart
  std::optional<RequestDigest> digest;  // absent in version 1 records
};

enum class Ending : std::uint8_t { kCompleted, kFailed, kCancelled };

struct FinishedJob {
  std::string request_id;
  engine::ProofKind kind = engine::ProofKind::kGroth16Demo;
  engine::Priority priority = engine::Priority::kNormal;
  Ending ending = Ending::kCompleted;
  std::vector<std::uint8_t> result;                             // kCompleted
  engine::ErrorKind error_kind = engine::ErrorKind::kInternal;  // kFailed
  std::string error_message;                                    // kFailed
  Millis finished_at{0};
  std::optional<RequestDigest> digest;  // absent in version 1 records
};

struct ReplayReport {
  std::vector<AcceptedJob> unfinished;  // in acceptance order: resume these
  std::vector<FinishedJob> finished;    // within the retention, in finishing order
  std::vector<JournalError> errors;     // records skipped; replay went on past them
  std::uint64_t records = 0;            // valid records read
  std::uint64_t valid_end = 0;          // offset just past the last valid record
  std::uint64_t torn_tail_bytes = 0;    // an incomplete last record (cut off by open())
  std::uint64_t orphans = 0;            // kStarted for an unknown request id (its kAccepted was lost)
};

inline constexpr std::uint32_t kMaxPayloadBytes = 512u << 20;  // PoRep C1 inline is ~51 MB
inline constexpr std::size_t kJournalFileHeaderBytes = 16;
inline constexpr std::size_t kJournalRecordHeaderBytes = 16;

// Replays a journal image (the whole file). Pure: `now` and `retention`
// decide which finished jobs are still reported. A bad file header is the
// only error that stops everything.
Expected<ReplayReport, JournalError> replay_journal(std::span<const std::uint8_t> file, Millis now, Millis retention);

// Encodes one record (header + payload), as written to the file.
std::vector<std::uint8_t> encode_record(RecordType type, Millis at, const std::string& request_id,
                                        std::span<const std::uint8_t> fields);
// The version 2 trailer of a record's fields (u8 2 | 32 B digest).
void append_digest(std::vector<std::uint8_t>& fields, const RequestDigest& digest);
std::vector<std::uint8_t> journal_file_header();

struct JournalConfig {
  std::filesystem::path path;
  Millis result_retention{10 * 60 * 1000};
  bool sync_every_record = false;
  std::uint64_t compact_min_bytes = 64ull << 20;  // should_compact(): never below this size
};

class Journal {
 public:
  struct Opened;
  // Opens or creates the journal, replays it and cuts off a torn tail.
  // `clock` stamps records and judges retention: give it wall time
  // (SystemClock) so that retention survives a reboot.
  static Expected<Opened, JournalError> open(JournalConfig config, const Clock& clock);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // `digest` (when given) is repeated in the job's terminal record.
  Expected<Ok, JournalError> accepted(const std::string& request_id, engine::ProofKind kind, engine::Priority priority,
                                      const JobInput& input, std::optional<RequestDigest> digest = std::nullopt);
  Expected<Ok, JournalError> started(const std::string& request_id);
  Expected<Ok, JournalError> completed(const std::string& request_id, std::span<const std::uint8_t> result);
  Expected<Ok, JournalError> failed(const std::string& request_id, engine::ErrorKind error_kind,
                                    const std::string& message);
  Expected<Ok, JournalError> cancelled(const std::string& request_id);

  // Worth compacting: at least compact_min_bytes, and under half of it live.
  bool should_compact() const;
  // Rewrites the file with only what replay would return now: unfinished jobs
  // (kAccepted, kStarted) and finished ones within the retention. Atomic
  // (tmp + fsync + rename + fsync of the directory).
  Expected<Ok, JournalError> compact();

  std::uint64_t file_bytes() const { return file_bytes_; }
  std::uint64_t live_bytes() const;
  std::size_t unfinished() const;

 private:
  struct Span {
    std::uint64_t offset = 0, bytes = 0;
  };
  struct Live {
    std::uint64_t seq = 0;  // acceptance (or finishing) order
    engine::ProofKind kind{};
    engine::Priority priority{};
    bool finished = false;
    Millis finished_at{0};
    std::vector<Span> records;  // what compaction copies, in file order
    std::optional<RequestDigest> digest;
  };

  Journal(JournalConfig config, const Clock& clock, int fd, std::uint64_t file_bytes);
  Expected<Ok, JournalError> append(RecordType type, const std::string& request_id, engine::ProofKind kind,
                                    engine::Priority priority, std::span<const std::uint8_t> fields, bool sync,
                                    const std::optional<RequestDigest>& digest);
  void index(const std::string& request_id, RecordType type, engine::ProofKind kind, engine::Priority priority,
             Millis at, Span span, const std::optional<RequestDigest>& digest);
  Expected<Ok, JournalError> finish(const std::string& request_id, RecordType type, std::vector<std::uint8_t> fields);

  JournalConfig config_;
  const Clock& clock_;
  int fd_ = -1;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t next_seq_ = 0;
  std::unordered_map<std::string, Live> live_;
};

struct Journal::Opened {
  std::unique_ptr<Journal> journal;
  ReplayReport replay;
};

}  // namespace cuzk::policy
