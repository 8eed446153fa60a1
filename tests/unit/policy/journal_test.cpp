// Journal: record format, replay of unfinished and retained jobs, torn tails
// at every byte offset, corruption in the middle, compaction.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "policy/crc32c.hpp"
#include "policy/journal.hpp"

namespace cuzk::policy {
namespace {

using namespace std::chrono_literals;
using engine::ErrorKind;
using engine::Priority;
using engine::ProofKind;

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("cuzk-journal-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path file(const char* name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, std::span<const std::uint8_t> bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

JournalConfig config_at(const fs::path& p, Millis retention = 10min) {
  JournalConfig c;
  c.path = p;
  c.result_retention = retention;
  return c;
}

TEST(Crc32c, MatchesTheStandardCheckValue) {
  // CRC-32C check value from the RFC 3720 / "catalogue of CRC algorithms".
  auto v = bytes_of("123456789");
  EXPECT_EQ(crc32c(v), 0xE3069283u);
  // Continuation composes.
  EXPECT_EQ(crc32c(std::span(v).subspan(4), crc32c(std::span(v).first(4))), 0xE3069283u);
  // RFC 3720 B.4: 32 bytes of zeros.
  std::vector<std::uint8_t> zeros(32, 0);
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
}

// The scenario most tests replay: A unfinished (started), B completed, C
// failed, D cancelled, E accepted only.
void write_scenario(Journal& j, FakeClock& clock) {
  ASSERT_TRUE(j.accepted("porep-1-7", ProofKind::kPoRepC2, Priority::kNormal, JobInput::path("/data/c1/7.json")));
  clock.advance(1s);
  ASSERT_TRUE(
      j.accepted("wdpost-1-3", ProofKind::kWindowPost, Priority::kHigh, JobInput::inline_bytes(bytes_of("vanilla"))));
  ASSERT_TRUE(j.started("porep-1-7"));
  clock.advance(1s);
  ASSERT_TRUE(j.accepted("snap-1-9", ProofKind::kSnapDeals, Priority::kLow, JobInput::inline_bytes({})));
  ASSERT_TRUE(j.started("wdpost-1-3"));
  ASSERT_TRUE(j.completed("wdpost-1-3", bytes_of("proof-bytes")));
  ASSERT_TRUE(j.failed("snap-1-9", ErrorKind::kInvalidInput, "bad vanilla proof"));
  ASSERT_TRUE(
      j.accepted("winpost-1", ProofKind::kWinningPost, Priority::kCritical, JobInput::inline_bytes(bytes_of("x"))));
  ASSERT_TRUE(j.cancelled("winpost-1"));
  clock.advance(1s);
  ASSERT_TRUE(
      j.accepted("demo-5", ProofKind::kGroth16Demo, Priority::kNormal, JobInput::inline_bytes(bytes_of("seed"))));
}

void expect_scenario(const ReplayReport& r) {
  ASSERT_EQ(r.unfinished.size(), 2u);
  EXPECT_EQ(r.unfinished[0].request_id, "porep-1-7");
  EXPECT_EQ(r.unfinished[0].kind, ProofKind::kPoRepC2);
  EXPECT_EQ(r.unfinished[0].priority, Priority::kNormal);
  EXPECT_EQ(r.unfinished[0].input.mode, JobInput::Mode::kPath);
  EXPECT_EQ(r.unfinished[0].input.path_string(), "/data/c1/7.json");
  EXPECT_EQ(r.unfinished[0].accepted_at, Millis{0});
  EXPECT_EQ(r.unfinished[0].started_at, Millis{1000});
  EXPECT_EQ(r.unfinished[1].request_id, "demo-5");
  EXPECT_FALSE(r.unfinished[1].started_at.has_value());
  EXPECT_EQ(r.unfinished[1].input, JobInput::inline_bytes(bytes_of("seed")));
  ASSERT_EQ(r.finished.size(), 3u);
  EXPECT_EQ(r.finished[0].request_id, "wdpost-1-3");
  EXPECT_EQ(r.finished[0].ending, Ending::kCompleted);
  EXPECT_EQ(r.finished[0].kind, ProofKind::kWindowPost);
  EXPECT_EQ(r.finished[0].priority, Priority::kHigh);
  EXPECT_EQ(r.finished[0].result, bytes_of("proof-bytes"));
  EXPECT_EQ(r.finished[0].finished_at, Millis{2000});
  EXPECT_EQ(r.finished[1].request_id, "snap-1-9");
  EXPECT_EQ(r.finished[1].ending, Ending::kFailed);
  EXPECT_EQ(r.finished[1].error_kind, ErrorKind::kInvalidInput);
  EXPECT_EQ(r.finished[1].error_message, "bad vanilla proof");
  EXPECT_EQ(r.finished[2].request_id, "winpost-1");
  EXPECT_EQ(r.finished[2].ending, Ending::kCancelled);
  EXPECT_EQ(r.finished[2].priority, Priority::kCritical);
}

TEST(Journal, ReplaysUnfinishedAndFinishedJobsAcrossReopen) {
  TempDir dir;
  FakeClock clock;
  {
    auto o = Journal::open(config_at(dir.file("j")), clock);
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_TRUE(o->replay.unfinished.empty());
    write_scenario(*o->journal, clock);
    EXPECT_EQ(o->journal->unfinished(), 2u);
  }
  auto o = Journal::open(config_at(dir.file("j")), clock);
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->replay.errors.empty());
  EXPECT_EQ(o->replay.torn_tail_bytes, 0u);
  EXPECT_EQ(o->replay.records, 10u);
  expect_scenario(o->replay);
  // Appending after a reopen continues the same file.
  ASSERT_TRUE(o->journal->completed("porep-1-7", bytes_of("p")));
  o->journal.reset();
  auto again = Journal::open(config_at(dir.file("j")), clock);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->replay.unfinished.size(), 1u);
  EXPECT_EQ(again->replay.unfinished[0].request_id, "demo-5");
  EXPECT_EQ(again->replay.finished.back().request_id, "porep-1-7");
}

TEST(Journal, FinishedResultsExpireAfterTheRetention) {
  TempDir dir;
  FakeClock clock;
  {
    auto o = Journal::open(config_at(dir.file("j"), 60s), clock);
    ASSERT_TRUE(o);
    ASSERT_TRUE(o->journal->accepted("a", ProofKind::kGroth16Demo, Priority::kNormal, {}));
    ASSERT_TRUE(o->journal->completed("a", bytes_of("r")));  // finished at 0
  }
  auto image = read_file(dir.file("j"));
  auto r = replay_journal(image, Millis{59'999}, 60s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->finished.size(), 1u);
  r = replay_journal(image, Millis{60'000}, 60s);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->finished.empty());
  EXPECT_TRUE(r->unfinished.empty());  // expired results are not resurrected as work
}

TEST(Journal, ReacceptedRequestIdIsANewJobAndOrphansAreCounted) {
  TempDir dir;
  FakeClock clock;
  auto o = Journal::open(config_at(dir.file("j")), clock);
  ASSERT_TRUE(o);
  Journal& j = *o->journal;
  ASSERT_TRUE(j.accepted("x", ProofKind::kGroth16Demo, Priority::kNormal, {}));
  ASSERT_TRUE(j.failed("x", ErrorKind::kInternal, "gpu"));
  ASSERT_TRUE(j.accepted("x", ProofKind::kGroth16Demo, Priority::kHigh, {}));  // retried
  ASSERT_TRUE(j.started("ghost"));
  auto r = replay_journal(read_file(dir.file("j")), clock.now(), 10min);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->unfinished.size(), 1u);
  EXPECT_EQ(r->unfinished[0].priority, Priority::kHigh);
  EXPECT_TRUE(r->finished.empty());
  EXPECT_EQ(r->orphans, 1u);
}

TEST(Journal, RejectsAFileThatIsNotAJournal) {
  TempDir dir;
  FakeClock clock;
  write_file(dir.file("j"), bytes_of("this is not a journal at all"));
  auto o = Journal::open(config_at(dir.file("j")), clock);
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().kind, JournalErrorKind::kBadFileHeader);
  // A header cut short by a crash while creating the file starts afresh.
  auto header = journal_file_header();
  write_file(dir.file("k"), std::span(header).first(5));
  auto k = Journal::open(config_at(dir.file("k")), clock);
  ASSERT_TRUE(k);
  EXPECT_EQ(read_file(dir.file("k")).size(), kJournalFileHeaderBytes);
}

// A crash mid-append leaves a prefix of the last record. At every cut point,
// replay returns exactly the state before that record, reports the torn
// bytes, and open() cuts them off so that the next append is readable.
TEST(Journal, TornLastRecordAtEveryByteOffset) {
  TempDir dir;
  FakeClock clock;
  std::uint64_t last_start = 0;
  {
    auto o = Journal::open(config_at(dir.file("full")), clock);
    ASSERT_TRUE(o);
    write_scenario(*o->journal, clock);
    last_start = o->journal->file_bytes();
    // The last record: the completion of porep-1-7, with a result.
    ASSERT_TRUE(o->journal->completed("porep-1-7", bytes_of("a 192-byte proof would go here")));
  }
  const auto full = read_file(dir.file("full"));
  ASSERT_GT(full.size(), last_start + kJournalRecordHeaderBytes);
  for (std::uint64_t cut = last_start; cut < full.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::span<const std::uint8_t> prefix(full.data(), cut);
    auto r = replay_journal(prefix, clock.now(), 10min);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->errors.empty());
    EXPECT_EQ(r->torn_tail_bytes, cut - last_start);
    EXPECT_EQ(r->valid_end, last_start);
    EXPECT_EQ(r->records, 10u);
    expect_scenario(*r);  // porep-1-7 still unfinished: it will be resumed

    write_file(dir.file("cut"), prefix);
    {
      auto o = Journal::open(config_at(dir.file("cut")), clock);
      ASSERT_TRUE(o);
      EXPECT_EQ(o->replay.torn_tail_bytes, cut - last_start);
      EXPECT_EQ(o->journal->file_bytes(), last_start);
      ASSERT_TRUE(o->journal->cancelled("demo-5"));
    }
    // The torn bytes are gone: the file is the prefix plus the one new record.
    const std::size_t cancel_bytes =
        encode_record(RecordType::kCancelled, Millis{0}, "demo-5", std::vector<std::uint8_t>{0, 0}).size();
    EXPECT_EQ(read_file(dir.file("cut")).size(), last_start + cancel_bytes);
    auto after = replay_journal(read_file(dir.file("cut")), clock.now(), 10min);
    ASSERT_TRUE(after);
    EXPECT_TRUE(after->errors.empty());
    EXPECT_EQ(after->torn_tail_bytes, 0u);
    ASSERT_EQ(after->unfinished.size(), 1u);
    EXPECT_EQ(after->unfinished[0].request_id, "porep-1-7");
    EXPECT_EQ(after->finished.back().request_id, "demo-5");
  }
  // The complete file has no torn tail.
  auto r = replay_journal(full, clock.now(), 10min);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->torn_tail_bytes, 0u);
  EXPECT_EQ(r->unfinished.size(), 1u);
}

// Any single corrupted byte inside a middle record loses that record only:
// replay reports one typed error at its offset and keeps every other record.
TEST(Journal, CorruptionInTheMiddleSkipsOnlyThatRecord) {
  TempDir dir;
  FakeClock clock;
  std::uint64_t start = 0, end = 0;
  {
    auto o = Journal::open(config_at(dir.file("j")), clock);
    ASSERT_TRUE(o);
    Journal& j = *o->journal;
    ASSERT_TRUE(j.accepted("a", ProofKind::kPoRepC2, Priority::kNormal, JobInput::inline_bytes(bytes_of("in-a"))));
    start = j.file_bytes();
    ASSERT_TRUE(j.accepted("b", ProofKind::kSnapDeals, Priority::kLow, JobInput::inline_bytes(bytes_of("in-b"))));
    end = j.file_bytes();
    ASSERT_TRUE(j.accepted("c", ProofKind::kWindowPost, Priority::kHigh, JobInput::inline_bytes(bytes_of("in-c"))));
    ASSERT_TRUE(j.completed("a", bytes_of("proof-a")));
  }
  const auto good = read_file(dir.file("j"));
  for (std::uint64_t pos = start; pos < end; ++pos) {
    SCOPED_TRACE("flipped byte " + std::to_string(pos));
    auto bad = good;
    bad[pos] ^= 0x5A;
    auto r = replay_journal(bad, clock.now(), 10min);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->errors.size(), 1u);
    EXPECT_EQ(r->errors[0].offset, start);
    bool in_header = pos < start + kJournalRecordHeaderBytes;
    EXPECT_EQ(r->errors[0].kind, in_header ? JournalErrorKind::kCorruptHeader : JournalErrorKind::kCorruptPayload);
    EXPECT_EQ(r->records, 3u);
    EXPECT_EQ(r->torn_tail_bytes, 0u);
    ASSERT_EQ(r->unfinished.size(), 1u);
    EXPECT_EQ(r->unfinished[0].request_id, "c");
    ASSERT_EQ(r->finished.size(), 1u);
    EXPECT_EQ(r->finished[0].request_id, "a");
    EXPECT_EQ(r->finished[0].result, bytes_of("proof-a"));
  }
  // Through open(), too: the corruption is reported, not fatal.
  auto bad = good;
  bad[end - 1] ^= 0xFF;
  write_file(dir.file("j"), bad);
  auto o = Journal::open(config_at(dir.file("j")), clock);
  ASSERT_TRUE(o);
  ASSERT_EQ(o->replay.errors.size(), 1u);
  EXPECT_EQ(o->replay.errors[0].kind, JournalErrorKind::kCorruptPayload);
  EXPECT_EQ(o->replay.unfinished.size(), 1u);
}

TEST(Journal, GarbageBetweenRecordsIsSkipped) {
  FakeClock clock;
  auto image = journal_file_header();
  auto r1 = encode_record(RecordType::kAccepted, Millis{1}, "a", std::vector<std::uint8_t>{0, 1, 1, 0, 0, 0, 0});
  auto r2 = encode_record(RecordType::kAccepted, Millis{2}, "b", std::vector<std::uint8_t>{0, 1, 1, 0, 0, 0, 0});
  image.insert(image.end(), r1.begin(), r1.end());
  for (int i = 0; i < 37; ++i) image.push_back(static_cast<std::uint8_t>(i * 7));
  image.insert(image.end(), r2.begin(), r2.end());
  auto r = replay_journal(image, clock.now(), 10min);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->errors.size(), 1u);
  EXPECT_EQ(r->errors[0].kind, JournalErrorKind::kCorruptHeader);
  ASSERT_EQ(r->unfinished.size(), 2u);
  EXPECT_EQ(r->unfinished[1].request_id, "b");
  // A record with a good checksum but an unknown type is a typed error too.
  auto bad_type = encode_record(static_cast<RecordType>(9), Millis{3}, "z", {});
  image.insert(image.end(), bad_type.begin(), bad_type.end());
  r = replay_journal(image, clock.now(), 10min);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->errors.size(), 2u);
  EXPECT_EQ(r->errors[1].kind, JournalErrorKind::kBadPayload);
}

TEST(Journal, CompactionKeepsExactlyWhatReplayReturns) {
  TempDir dir;
  FakeClock clock;
  JournalConfig cfg = config_at(dir.file("j"), 60s);
  cfg.compact_min_bytes = 1024;
  auto o = Journal::open(cfg, clock);
  ASSERT_TRUE(o);
  Journal& j = *o->journal;
  std::vector<std::uint8_t> big(2000, 0xAB);
  for (int i = 0; i < 20; ++i) {
    std::string id = "job-" + std::to_string(i);
    ASSERT_TRUE(j.accepted(id, ProofKind::kPoRepC2, Priority::kNormal, JobInput::inline_bytes(big)));
    ASSERT_TRUE(j.started(id));
    if (i % 4 != 3) {
      ASSERT_TRUE(j.completed(id, bytes_of("proof-" + std::to_string(i))));
    }
    clock.advance(5s);
  }
  EXPECT_EQ(j.unfinished(), 5u);
  clock.advance(30s);  // jobs finished before t=40 s are past the 60 s retention (now = 130 s)
  auto before = replay_journal(read_file(dir.file("j")), clock.now(), 60s);
  ASSERT_TRUE(before);
  EXPECT_TRUE(j.should_compact());
  std::uint64_t old_bytes = j.file_bytes();
  ASSERT_TRUE(j.compact());
  EXPECT_LT(j.file_bytes(), old_bytes / 2);
  EXPECT_EQ(j.file_bytes(), read_file(dir.file("j")).size());
  EXPECT_FALSE(j.should_compact());
  auto after = replay_journal(read_file(dir.file("j")), clock.now(), 60s);
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->errors.empty());
  ASSERT_EQ(after->unfinished.size(), before->unfinished.size());
  for (std::size_t i = 0; i < after->unfinished.size(); ++i) {
    EXPECT_EQ(after->unfinished[i].request_id, before->unfinished[i].request_id);
    EXPECT_EQ(after->unfinished[i].input, before->unfinished[i].input);
    EXPECT_EQ(after->unfinished[i].started_at, before->unfinished[i].started_at);
  }
  ASSERT_EQ(after->finished.size(), before->finished.size());
  for (std::size_t i = 0; i < after->finished.size(); ++i) {
    EXPECT_EQ(after->finished[i].request_id, before->finished[i].request_id);
    EXPECT_EQ(after->finished[i].result, before->finished[i].result);
  }
  // Appends after compaction land in the new file.
  ASSERT_TRUE(j.completed("job-3", bytes_of("late")));
  o->journal.reset();
  auto re = Journal::open(cfg, clock);
  ASSERT_TRUE(re);
  EXPECT_EQ(re->replay.unfinished.size(), before->unfinished.size() - 1);
  EXPECT_EQ(re->replay.finished.back().result, bytes_of("late"));
  EXPECT_FALSE(fs::exists(dir.file("j.compact")));
}

}  // namespace
}  // namespace cuzk::policy

namespace cuzk::policy {
namespace {

// Request digests (record version 2): kept from kAccepted into the terminal
// record, through a reopen and a compaction; version 1 records (no trailer,
// as written before digests existed) still replay, without a digest.
TEST(Journal, RequestDigestSurvivesFinishReopenAndCompaction) {
  TempDir dir;
  FakeClock clock;
  RequestDigest digest{};
  for (std::size_t i = 0; i < digest.size(); ++i) digest[i] = static_cast<std::uint8_t>(i * 3 + 1);
  {
    auto o = Journal::open(config_at(dir.file("j")), clock);
    ASSERT_TRUE(o);
    ASSERT_TRUE(
        o->journal->accepted("a", ProofKind::kGroth16Demo, Priority::kNormal, JobInput::inline_bytes({1, 2}), digest));
    ASSERT_TRUE(
        o->journal->accepted("b", ProofKind::kGroth16Demo, Priority::kNormal, JobInput::inline_bytes({3}), digest));
    ASSERT_TRUE(o->journal->started("a"));
    ASSERT_TRUE(o->journal->completed("a", bytes_of("proof")));
  }
  {
    auto o = Journal::open(config_at(dir.file("j")), clock);
    ASSERT_TRUE(o);
    ASSERT_EQ(o->replay.finished.size(), 1u);
    ASSERT_TRUE(o->replay.finished[0].digest.has_value());
    EXPECT_EQ(*o->replay.finished[0].digest, digest);
    ASSERT_EQ(o->replay.unfinished.size(), 1u);
    EXPECT_EQ(o->replay.unfinished[0].digest, std::optional<RequestDigest>(digest));
    ASSERT_TRUE(o->journal->compact());
    ASSERT_TRUE(o->journal->failed("b", ErrorKind::kInvalidInput, "bad"));
  }
  auto again = Journal::open(config_at(dir.file("j")), clock);
  ASSERT_TRUE(again);
  ASSERT_EQ(again->replay.finished.size(), 2u);
  for (const FinishedJob& f : again->replay.finished) EXPECT_EQ(f.digest, std::optional<RequestDigest>(digest));
}

TEST(Journal, VersionOneRecordsWithoutDigestStillReplay) {
  FakeClock clock;
  auto image = journal_file_header();
  // kAccepted v1: kind | priority | mode | blob; kCompleted v1: kind | priority | blob.
  auto accepted =
      encode_record(RecordType::kAccepted, Millis{1}, "old-a", std::vector<std::uint8_t>{0, 1, 1, 0, 0, 0, 0});
  auto completed =
      encode_record(RecordType::kCompleted, clock.now(), "old-b", std::vector<std::uint8_t>{0, 1, 2, 0, 0, 0, 7, 8});
  image.insert(image.end(), accepted.begin(), accepted.end());
  image.insert(image.end(), completed.begin(), completed.end());
  auto r = replay_journal(image, clock.now(), 10min);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->errors.empty());
  ASSERT_EQ(r->unfinished.size(), 1u);
  EXPECT_FALSE(r->unfinished[0].digest.has_value());
  ASSERT_EQ(r->finished.size(), 1u);
  EXPECT_FALSE(r->finished[0].digest.has_value());
  EXPECT_EQ(r->finished[0].result, (std::vector<std::uint8_t>{7, 8}));
  // A trailer of an unknown version is a typed error, not a silent digest.
  std::vector<std::uint8_t> fields{0, 1, 1, 0, 0, 0, 0, 9};
  fields.insert(fields.end(), 32, 0xEE);
  auto odd = encode_record(RecordType::kAccepted, Millis{2}, "odd", fields);
  image.insert(image.end(), odd.begin(), odd.end());
  r = replay_journal(image, clock.now(), 10min);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->errors.size(), 1u);
  EXPECT_EQ(r->errors[0].kind, JournalErrorKind::kBadPayload);
}

}  // namespace
}  // namespace cuzk::policy
