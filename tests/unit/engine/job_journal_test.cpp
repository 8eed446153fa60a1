// JobJournal: the engine's jobs through policy::Journal and per-job input
// files - reopen recovers unfinished jobs (exact requests) and finished ones
// (exact outcomes) within the TTL, ids are never reused, a damaged input
// fails only its job, a torn journal tail is dropped with a warning, and one
// daemon holds a state directory at a time. Fake wall clock, temp dirs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/job_journal.hpp"
#include "unit/engine/demo_request.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cuzk-jobjournal-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Log lines land in a temp file the test can read.
struct CapturedLog {
  CapturedLog() : file(std::tmpfile()), log(runtime::LogLevel::kInfo, runtime::LogFormat::kText, file) {}
  ~CapturedLog() { std::fclose(file); }
  std::string text() {
    std::fflush(file);
    std::rewind(file);
    std::string s;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, file)) s.append(buf, n);
    return s;
  }
  std::FILE* file;
  runtime::Logger log;
};

using testing::demo;

JobRequest c2(std::string json, std::string request_id) {
  JobRequest r;
  r.kind = ProofKind::kPoRepC2;
  r.input = std::move(json);
  r.request_id = std::move(request_id);
  return r;
}

ProofOutput some_output(std::uint8_t tag) {
  ProofOutput o;
  o.proof.assign(192, tag);
  o.public_inputs.resize(2);
  for (std::size_t i = 0; i < 32; ++i) {
    o.public_inputs[0][i] = static_cast<std::uint8_t>(i);
    o.public_inputs[1][i] = static_cast<std::uint8_t>(255 - i - tag);
  }
  o.vk_bytes.assign(300, static_cast<std::uint8_t>(tag + 1));
  o.timings = Timings{1, 2, 3, 4, 5, 15};
  return o;
}

void expect_same_output(const ProofOutput& a, const ProofOutput& b) {
  EXPECT_EQ(a.proof, b.proof);
  EXPECT_EQ(a.public_inputs, b.public_inputs);
  EXPECT_EQ(a.vk_bytes, b.vk_bytes);
  EXPECT_EQ(a.timings.total_ms, b.timings.total_ms);
  EXPECT_EQ(a.timings.prove_ms, b.timings.prove_ms);
}

struct Rig {
  explicit Rig(std::chrono::milliseconds ttl = 10min) {
    config.dir = dir.path() / "state";
    config.result_ttl = ttl;
    config.clock = &clock;
  }
  JobJournal::Opened open() { return JobJournal::open(config, log.log); }
  TempDir dir;
  policy::FakeClock clock{policy::Millis{1'700'000'000'000}};
  CapturedLog log;
  JobJournalConfig config;
};

TEST(JobJournalFormat, KeysCarryTheJobIdAndAnyRequestId) {
  EXPECT_EQ(journal_key(7, "porep/sector-1"), "7/porep/sector-1");
  auto k = parse_journal_key("7/porep/sector-1");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->first, 7u);
  EXPECT_EQ(k->second, "porep/sector-1");
  auto empty = parse_journal_key("12/");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->first, 12u);
  EXPECT_EQ(empty->second, "");
  for (const char* bad : {"", "/x", "x/y", "7", "0/x", "-1/x", "7a/x", "99999999999999999999999/x"})
    EXPECT_FALSE(parse_journal_key(bad)) << bad;
}

TEST(JobJournalFormat, InputFilesRoundTripAndEveryFlippedByteIsCaught) {
  JobRequest d = demo(14, 0x0123456789abcdefULL, "r1");
  auto file = encode_job_input(3, d);
  auto back = decode_job_input(3, ProofKind::kGroth16Demo, file);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back.value().same_work(d));
  JobRequest p = c2(R"({"registered_proof":"StackedDrg2KiBV1_1","x":[1,2,3]})", "r2");
  auto pfile = encode_job_input(4, p);
  auto pback = decode_job_input(4, ProofKind::kPoRepC2, pfile);
  ASSERT_TRUE(pback);
  EXPECT_EQ(pback.value().input, p.input);

  // Wrong job, wrong kind, truncated, extended: typed errors.
  EXPECT_FALSE(decode_job_input(5, ProofKind::kGroth16Demo, file));
  EXPECT_FALSE(decode_job_input(3, ProofKind::kPoRepC2, file));
  EXPECT_FALSE(decode_job_input(4, ProofKind::kPoRepC2, {pfile.begin(), pfile.end() - 1}));
  auto longer = pfile;
  longer.push_back('}');
  EXPECT_FALSE(decode_job_input(4, ProofKind::kPoRepC2, longer));
  for (std::size_t i = 0; i < pfile.size(); ++i) {
    auto bad = pfile;
    bad[i] ^= 0x10;
    auto r = decode_job_input(4, ProofKind::kPoRepC2, bad);
    ASSERT_FALSE(r) << "flip at " << i;
    EXPECT_EQ(r.error().kind, ErrorKind::kInternal);
  }
}

TEST(JobJournalFormat, ResultsRoundTripAndTruncationIsRejected) {
  ProofOutput o = some_output(9);
  auto bytes = encode_job_result(o);
  auto back = decode_job_result(bytes);
  ASSERT_TRUE(back);
  expect_same_output(*back, o);
  EXPECT_EQ(back->timings.queue_ms, 1u);
  EXPECT_EQ(back->timings.synthesis_ms, 3u);
  for (std::size_t n = 0; n < bytes.size(); n += 7)
    EXPECT_FALSE(decode_job_result({bytes.begin(), bytes.begin() + static_cast<long>(n)})) << n;
  bytes.push_back(0);
  EXPECT_FALSE(decode_job_result(bytes));
}

// The binary PoSt / SnapDeals requests (every byte value, NULs included).
JobRequest filecoin(ProofKind kind, std::uint8_t salt, std::string request_id) {
  JobRequest r;
  r.kind = kind;
  r.request_id = std::move(request_id);
  for (int i = 0; i < 3 * 256; ++i) r.input.push_back(static_cast<char>((i * 7 + salt) & 0xff));
  return r;
}

TEST(JobJournalFormat, FilecoinKindInputsRoundTripByteForByte) {
  const ProofKind kinds[] = {ProofKind::kWindowPost, ProofKind::kWinningPost, ProofKind::kSnapDeals};
  for (const ProofKind kind : kinds) {
    const JobRequest r = filecoin(kind, static_cast<std::uint8_t>(kind), "fc");
    const auto file = encode_job_input(8, r);
    auto back = decode_job_input(8, kind, file);
    ASSERT_TRUE(back) << to_string(kind) << ": " << back.error().message;
    EXPECT_EQ(back.value().kind, kind);
    EXPECT_EQ(back.value().input, r.input);
    EXPECT_TRUE(back.value().same_work(r));
    for (const ProofKind other : kinds) {
      if (other != kind) {
        EXPECT_FALSE(decode_job_input(8, other, file)) << to_string(kind);
      }
    }
  }
}

TEST(JobJournal, FilecoinJobsResumeWithTheirBinaryInput) {
  Rig rig;
  {
    auto o = rig.open();
    ASSERT_FALSE(o.journal->accepted(1, filecoin(ProofKind::kWindowPost, 1, "window"), Priority::kHigh));
    ASSERT_FALSE(o.journal->accepted(2, filecoin(ProofKind::kWinningPost, 2, "winning"), Priority::kCritical));
    ASSERT_FALSE(o.journal->accepted(3, filecoin(ProofKind::kSnapDeals, 3, "snap"), Priority::kNormal));
  }
  auto o = rig.open();
  const auto& resume = o.recovery.resume;
  ASSERT_EQ(resume.size(), 3u);
  EXPECT_EQ(resume[0].request.kind, ProofKind::kWindowPost);
  EXPECT_EQ(resume[0].request.input, filecoin(ProofKind::kWindowPost, 1, "").input);
  EXPECT_EQ(resume[1].request.kind, ProofKind::kWinningPost);
  EXPECT_EQ(resume[1].priority, Priority::kCritical);
  EXPECT_EQ(resume[1].request.input, filecoin(ProofKind::kWinningPost, 2, "").input);
  EXPECT_EQ(resume[2].request.kind, ProofKind::kSnapDeals);
  EXPECT_EQ(resume[2].request_id, "snap");
  EXPECT_EQ(resume[2].request.input, filecoin(ProofKind::kSnapDeals, 3, "").input);
}

TEST(JobJournalFormat, AKindByteBeyondSnapDealsIsRejected) {
  // kAccepted fields: u8 kind | u8 priority | u8 input mode (inline) | u32 bytes.
  auto image = policy::journal_file_header();
  const std::uint8_t snap = static_cast<std::uint8_t>(ProofKind::kSnapDeals);
  for (const std::uint8_t kind : {snap, static_cast<std::uint8_t>(snap + 1), std::uint8_t{0xff}}) {
    const auto rec =
        policy::encode_record(policy::RecordType::kAccepted, policy::Millis{1}, "kind-" + std::to_string(kind),
                              std::vector<std::uint8_t>{kind, 1, 1, 0, 0, 0, 0});
    image.insert(image.end(), rec.begin(), rec.end());
  }
  auto r = policy::replay_journal(image, policy::Millis{2}, 10min);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->unfinished.size(), 1u);
  EXPECT_EQ(r->unfinished[0].kind, ProofKind::kSnapDeals);
  ASSERT_EQ(r->errors.size(), 2u);
  EXPECT_EQ(r->errors[0].kind, policy::JournalErrorKind::kBadPayload);
  EXPECT_EQ(r->errors[1].kind, policy::JournalErrorKind::kBadPayload);
}

TEST(JobJournal, ReopenResumesUnfinishedJobsAndKeepsFinishedOutcomes) {
  Rig rig;
  ProofOutput out = some_output(1);
  {
    auto o = rig.open();
    EXPECT_TRUE(o.recovery.resume.empty());
    EXPECT_TRUE(o.recovery.finished.empty());
    EXPECT_EQ(o.recovery.next_id, 1u);
    JobJournal& j = *o.journal;
    ASSERT_FALSE(j.accepted(1, demo(10, 11, "done-1"), Priority::kNormal));
    ASSERT_FALSE(j.accepted(2, demo(11, 22), Priority::kHigh));  // engine-named ("job-2")
    ASSERT_FALSE(j.accepted(3, c2("{\"c1\":true}", "porep-3"), Priority::kLow));
    ASSERT_FALSE(j.accepted(4, demo(12, 44, "fails-4"), Priority::kCritical));
    ASSERT_FALSE(j.accepted(5, demo(12, 55, "cancelled-5"), Priority::kNormal));
    EXPECT_TRUE(fs::exists(j.input_path(1)));
    rig.clock.advance(2s);
    j.finished(1, JobState::kDone, out, std::nullopt);
    j.finished(4, JobState::kFailed, {}, Error{ErrorKind::kInvalidInput, "bad C1"});
    j.finished(5, JobState::kCancelled, {}, Error{ErrorKind::kCancelled, "cancelled while queued"});
    // A finished job's input is gone; the others stay until they finish.
    EXPECT_FALSE(fs::exists(j.input_path(1)));
    EXPECT_TRUE(fs::exists(j.input_path(2)));
  }
  rig.clock.advance(3s);
  auto o = rig.open();
  const JournalRecovery& r = o.recovery;
  EXPECT_EQ(r.next_id, 6u);
  ASSERT_EQ(r.resume.size(), 2u);
  EXPECT_EQ(r.resume[0].id, 2u);
  EXPECT_EQ(r.resume[0].request_id, "");
  EXPECT_EQ(r.resume[0].priority, Priority::kHigh);
  EXPECT_EQ(r.resume[0].state, JobState::kQueued);
  EXPECT_FALSE(r.resume[0].error);
  EXPECT_TRUE(r.resume[0].request.same_work(demo(11, 22)));
  EXPECT_EQ(r.resume[0].since_accepted, 5s);
  EXPECT_EQ(r.resume[1].id, 3u);
  EXPECT_EQ(r.resume[1].request_id, "porep-3");
  EXPECT_EQ(r.resume[1].request.request_id, "porep-3");
  EXPECT_EQ(r.resume[1].request.input, "{\"c1\":true}");
  EXPECT_EQ(r.resume[1].priority, Priority::kLow);

  ASSERT_EQ(r.finished.size(), 3u);
  EXPECT_EQ(r.finished[0].id, 1u);
  EXPECT_EQ(r.finished[0].request_id, "done-1");
  EXPECT_EQ(r.finished[0].state, JobState::kDone);
  expect_same_output(r.finished[0].output, out);
  EXPECT_EQ(r.finished[0].since_finished, 3s);
  EXPECT_EQ(r.finished[1].id, 4u);
  EXPECT_EQ(r.finished[1].state, JobState::kFailed);
  ASSERT_TRUE(r.finished[1].error);
  EXPECT_EQ(*r.finished[1].error, (Error{ErrorKind::kInvalidInput, "bad C1"}));
  EXPECT_EQ(r.finished[1].priority, Priority::kCritical);
  EXPECT_EQ(r.finished[2].id, 5u);
  EXPECT_EQ(r.finished[2].state, JobState::kCancelled);
  EXPECT_EQ(r.finished[2].error->kind, ErrorKind::kCancelled);
  EXPECT_FALSE(o.journal->input_kept(1));
  EXPECT_TRUE(o.journal->input_kept(2));

  // A resumed job finishes normally after the restart.
  o.journal->finished(2, JobState::kDone, some_output(2), std::nullopt);
  o.journal.reset();
  auto again = rig.open();
  ASSERT_EQ(again.recovery.resume.size(), 1u);
  EXPECT_EQ(again.recovery.resume[0].id, 3u);
  EXPECT_EQ(again.recovery.finished.size(), 4u);
}

TEST(JobJournal, FinishedJobsExpireAfterTheTtlAndTheirIdsAreNotReused) {
  Rig rig(60s);
  {
    auto o = rig.open();
    for (JobId id = 1; id <= 3; ++id) {
      ASSERT_FALSE(o.journal->accepted(id, demo(10, id, "r" + std::to_string(id)), Priority::kNormal));
      o.journal->finished(id, JobState::kDone, some_output(static_cast<std::uint8_t>(id)), std::nullopt);
    }
  }
  rig.clock.advance(59'999ms);
  {
    auto o = rig.open();
    EXPECT_EQ(o.recovery.finished.size(), 3u);
    EXPECT_EQ(o.recovery.finished[0].since_finished, 59'999ms);
  }
  rig.clock.advance(1ms);  // exactly the TTL: expired
  std::uint64_t before = fs::file_size(rig.config.dir / "journal");
  {
    auto o = rig.open();
    EXPECT_TRUE(o.recovery.finished.empty());
    EXPECT_TRUE(o.recovery.resume.empty());
    // Compacted at open: only the file header is left...
    EXPECT_LT(o.journal->journal_bytes(), before);
    EXPECT_EQ(o.journal->journal_bytes(), policy::kJournalFileHeaderBytes);
    // ...and yet ids continue above the forgotten ones.
    EXPECT_EQ(o.recovery.next_id, 4u);
    ASSERT_FALSE(o.journal->accepted(4, demo(10, 4), Priority::kNormal));
  }
  auto o = rig.open();
  EXPECT_EQ(o.recovery.next_id, 5u);
}

TEST(JobJournal, ADamagedOrMissingInputFailsOnlyThatJob) {
  Rig rig;
  {
    auto o = rig.open();
    for (JobId id = 1; id <= 3; ++id) ASSERT_FALSE(o.journal->accepted(id, demo(10, id * 10), Priority::kNormal));
    auto bytes = read_file(o.journal->input_path(1));
    bytes[bytes.size() - 3] ^= 0x01;  // in the body: the body checksum catches it
    write_file(o.journal->input_path(1), bytes);
    fs::remove(o.journal->input_path(3));
  }
  auto o = rig.open();
  const auto& r = o.recovery.resume;
  ASSERT_EQ(r.size(), 3u);
  ASSERT_TRUE(r[0].error);
  EXPECT_EQ(r[0].error->kind, ErrorKind::kInternal);
  EXPECT_NE(r[0].error->message.find("checksum"), std::string::npos) << r[0].error->message;
  EXPECT_FALSE(r[1].error);
  EXPECT_TRUE(r[1].request.same_work(demo(10, 20)));
  ASSERT_TRUE(r[2].error);
  EXPECT_NE(r[2].error->message.find("missing"), std::string::npos) << r[2].error->message;
  EXPECT_NE(rig.log.text().find("job input unusable"), std::string::npos);
  // The engine fails such a job through finished(): it is then recorded as failed.
  o.journal->finished(1, JobState::kFailed, {}, r[0].error);
  o.journal.reset();
  auto again = rig.open();
  EXPECT_EQ(again.recovery.resume.size(), 2u);
  ASSERT_EQ(again.recovery.finished.size(), 1u);
  EXPECT_EQ(again.recovery.finished[0].state, JobState::kFailed);
}

TEST(JobJournal, ATornJournalTailIsDroppedWithAWarningAndItsInputRemoved) {
  Rig rig;
  std::uint64_t after_first = 0;
  {
    auto o = rig.open();
    ASSERT_FALSE(o.journal->accepted(1, demo(10, 1, "a"), Priority::kNormal));
    after_first = o.journal->journal_bytes();
    ASSERT_FALSE(o.journal->accepted(2, demo(10, 2, "b"), Priority::kNormal));
  }
  fs::path journal = rig.config.dir / "journal";
  std::uint64_t full = fs::file_size(journal);
  // kill -9 in the middle of the second append: a prefix of it remains.
  fs::resize_file(journal, after_first + (full - after_first) / 2);
  auto o = rig.open();
  ASSERT_EQ(o.recovery.resume.size(), 1u);
  EXPECT_EQ(o.recovery.resume[0].request_id, "a");
  EXPECT_NE(rig.log.text().find("torn last record"), std::string::npos) << rig.log.text();
  // Job 2 was never acknowledged: its input file is an orphan, removed.
  EXPECT_FALSE(fs::exists(o.journal->input_path(2)));
  EXPECT_TRUE(fs::exists(o.journal->input_path(1)));
  // The id of the lost record may be issued again only if no client saw it;
  // here the floor written at open keeps ids above 1 at least.
  EXPECT_GE(o.recovery.next_id, 2u);
}

TEST(JobJournal, GarbageInTheJournalSkipsOnlyTheDamagedRecord) {
  Rig rig;
  std::uint64_t second_start = 0;
  {
    auto o = rig.open();
    ASSERT_FALSE(o.journal->accepted(1, demo(10, 1, "a"), Priority::kNormal));
    second_start = o.journal->journal_bytes();
    ASSERT_FALSE(o.journal->accepted(2, demo(10, 2, "b"), Priority::kNormal));
    ASSERT_FALSE(o.journal->accepted(3, demo(10, 3, "c"), Priority::kNormal));
  }
  fs::path journal = rig.config.dir / "journal";
  auto bytes = read_file(journal);
  bytes[second_start + policy::kJournalRecordHeaderBytes + 3] ^= 0xFF;  // inside job 2's payload
  write_file(journal, bytes);
  auto o = rig.open();
  ASSERT_EQ(o.recovery.resume.size(), 2u);
  EXPECT_EQ(o.recovery.resume[0].request_id, "a");
  EXPECT_EQ(o.recovery.resume[1].request_id, "c");
  EXPECT_EQ(o.recovery.next_id, 4u);
  EXPECT_NE(rig.log.text().find("skipped a damaged record"), std::string::npos);
}

TEST(JobJournal, AJobThatKeepsTakingTheDaemonDownIsGivenUp) {
  Rig rig;
  rig.config.max_interrupted_runs = 2;
  {
    auto o = rig.open();
    ASSERT_FALSE(o.journal->accepted(1, demo(10, 1, "poison"), Priority::kNormal));
    ASSERT_FALSE(o.journal->accepted(2, demo(10, 2, "fine"), Priority::kNormal));
    o.journal->started(1);  // ...and the daemon dies while job 1 runs
  }
  rig.clock.advance(10s);
  {
    auto o = rig.open();
    const auto& r = o.recovery.resume;
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].id, 1u);
    EXPECT_EQ(r[0].interrupted_runs, 1u);
    EXPECT_FALSE(r[0].error);
    EXPECT_EQ(r[0].since_accepted, 10s);
    EXPECT_EQ(r[1].interrupted_runs, 0u);
  }
  rig.clock.advance(10s);
  {
    // Stopped before job 1 ran again: the count stands, the order and the
    // submit time survive the re-recorded record.
    auto o = rig.open();
    const auto& r = o.recovery.resume;
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].id, 1u);
    EXPECT_EQ(r[0].interrupted_runs, 1u);
    EXPECT_EQ(r[0].since_accepted, 20s);
    EXPECT_EQ(r[1].id, 2u);
    o.journal->started(1);
  }
  auto o = rig.open();
  const auto& r = o.recovery.resume;
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].error);
  EXPECT_EQ(r[0].error->kind, ErrorKind::kInternal);
  EXPECT_NE(r[0].error->message.find("not resumed again"), std::string::npos) << r[0].error->message;
  EXPECT_FALSE(r[1].error);
  EXPECT_TRUE(r[1].request.same_work(demo(10, 2)));
}

TEST(JobJournal, OneDaemonPerStateDirectory) {
  Rig rig;
  auto first = rig.open();
  EXPECT_THROW(rig.open(), JobJournalError);
  first.journal.reset();  // the lock goes with it
  EXPECT_NO_THROW(rig.open());
}

TEST(JobJournal, StaleInputFilesAreRemovedAtOpen) {
  Rig rig;
  {
    auto o = rig.open();
    ASSERT_FALSE(o.journal->accepted(1, demo(10, 1), Priority::kNormal));
  }
  fs::path jobs = rig.config.dir / "jobs";
  write_file(jobs / "99.job", {1, 2, 3});     // its record never made it
  write_file(jobs / "2.job.tmp", {1, 2, 3});  // died mid-write
  auto o = rig.open();
  EXPECT_TRUE(fs::exists(jobs / "1.job"));
  EXPECT_FALSE(fs::exists(jobs / "99.job"));
  EXPECT_FALSE(fs::exists(jobs / "2.job.tmp"));
  EXPECT_EQ(o.recovery.resume.size(), 1u);
}

TEST(JobJournal, AnUnreadableJournalIsMovedAsideNotFatal) {
  Rig rig;
  fs::create_directories(rig.config.dir);
  const std::string junk = "not a journal, but long enough";
  write_file(rig.config.dir / "journal", {junk.begin(), junk.end()});
  auto o = rig.open();
  EXPECT_TRUE(o.recovery.resume.empty());
  bool moved = false;
  for (const auto& e : fs::directory_iterator(rig.config.dir))
    moved |= e.path().filename().string().starts_with("journal.unreadable-");
  EXPECT_TRUE(moved);
  EXPECT_NE(rig.log.text().find("journal unreadable"), std::string::npos);
}

}  // namespace
}  // namespace cuzk::engine
