#include "io/params_loader.hpp"
#include "util/huge_pages.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ec/encoding.hpp"
#include "io/chunk_reader.hpp"

namespace cuzk::io {

namespace {

using groth16::ParamsError;
using groth16::ParamsErrorKind;
constexpr std::size_t kG1 = ec::kG1UncompressedBytes;  // 96
constexpr std::size_t kG2 = ec::kG2UncompressedBytes;  // 192
// read_vk refuses larger files (a .vk with 700k IC points is not a vk).
constexpr std::uint64_t kMaxVkFileBytes = std::uint64_t{64} << 20;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::uint32_t get_u32_be(const std::uint8_t* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

[[noreturn]] void throw_point(std::string_view vector, std::uint64_t index, ec::DecodeError e) {
  throw ParamsError(ParamsErrorKind::kBadPoint,
                    std::string(vector) + "[" + std::to_string(index) + "]: " + std::string(ec::to_string(e)));
}
[[noreturn]] void throw_infinity(std::string_view vector, std::uint64_t index) {
  throw ParamsError(ParamsErrorKind::kPointAtInfinity,
                    std::string(vector) + "[" + std::to_string(index) + "] is the point at infinity");
}

enum class FileKind : std::uint8_t { kParams, kVk };
// kDecodeInto: into `out`'s existing vectors, whose lengths and vk the file
// must match (the read-back of a released host copy, engine/host_srs.hpp).
enum class Points : std::uint8_t { kDecode, kDecodeInto, kSkip };

// Incremental parser of the byte stream, fed in file order in pieces of any
// size. Small fields (vk, headers, a point split across two pieces) are
// staged; whole points are decoded in place from the piece.
class StreamParser {
 public:
  StreamParser(FileKind kind, Points points, std::string path, std::uint64_t file_bytes, groth16::SubgroupCheck check,
               ThreadPool& pool, groth16::Parameters& out)
      : kind_(kind),
        points_(points),
        path_(std::move(path)),
        file_bytes_(file_bytes),
        sub_(check == groth16::SubgroupCheck::kAll ? ec::Subgroup::kCheck : ec::Subgroup::kSkip),
        pool_(pool),
        out_(out) {
    if (file_bytes_ < groth16::kVkFixedBytes) {
      // Same message as the synchronous reader's first read.
      throw ParamsError(ParamsErrorKind::kTruncated,
                        kind_ == FileKind::kVk
                            ? "verifying key needs at least 868 bytes, have " + std::to_string(file_bytes_)
                            : "vk: needs 868 bytes, file has " + std::to_string(file_bytes_) + " left");
    }
    stage_.reserve(groth16::kVkFixedBytes);
    want_ = groth16::kVkFixedBytes;
  }

  bool done() const { return state_ == State::kDone; }
  std::uint64_t position() const { return pos_; }
  const ParamsLayout& layout() const { return layout_; }

  void feed(std::span<const std::uint8_t> in) {
    while (!in.empty()) {
      if (state_ == State::kDone) std::abort();  // the loader stops feeding at done (trailing bytes throw)
      std::size_t used = 0;
      switch (state_) {
        case State::kVk:
        case State::kHeader:
          used = fill_stage(in);
          if (stage_.size() == want_) state_ == State::kVk ? vk_staged() : header_staged();
          break;
        case State::kPoints:
          used = points(in);
          break;
        case State::kDone:
          break;
      }
      in = in.subspan(used);
    }
  }

 private:
  enum class State : std::uint8_t { kVk, kHeader, kPoints, kDone };
  static constexpr const char* kNames[5] = {"h", "l", "a", "b_g1", "b_g2"};

  std::uint64_t remaining() const { return file_bytes_ - pos_; }
  std::size_t point_bytes() const { return vector_ == 4 ? kG2 : kG1; }

  std::size_t fill_stage(std::span<const std::uint8_t> in) {
    std::size_t n = std::min(in.size(), want_ - stage_.size());
    stage_.insert(stage_.end(), in.begin(), in.begin() + std::ptrdiff_t(n));
    pos_ += n;
    return n;
  }

  void vk_staged() {
    if (stage_.size() == groth16::kVkFixedBytes) {
      std::uint32_t n_ic = get_u32_be(stage_.data() + 864);
      // Checked against the file before the IC bytes are staged.
      if (std::uint64_t(n_ic) * kG1 > file_bytes_ - groth16::kVkFixedBytes) {
        throw ParamsError(ParamsErrorKind::kTruncated, "vk.ic declares " + std::to_string(n_ic) + " points");
      }
      layout_.n_ic = n_ic;
      want_ = groth16::vk_file_bytes(n_ic);
      stage_.reserve(want_);
      if (want_ > stage_.size()) return;
    }
    groth16::VerifyingKey vk = groth16::decode_vk(stage_);  // checks every vk point (curve + subgroup, IC not infinity)
    if (points_ == Points::kDecodeInto) {
      if (!(vk == out_.vk)) {
        throw ParamsError(ParamsErrorKind::kShapeMismatch,
                          path_ + ": its verifying key is not the one of the parameters in memory");
      }
    } else {
      out_.vk = std::move(vk);
    }
    if (kind_ == FileKind::kVk) {
      finish();
      return;
    }
    vector_ = 0;
    begin_header();
  }

  void begin_header() {
    if (remaining() < 4) {
      throw ParamsError(ParamsErrorKind::kTruncated, std::string(kNames[vector_]) + ": needs 4 bytes, file has " +
                                                         std::to_string(remaining()) + " left");
    }
    stage_.clear();
    want_ = 4;
    state_ = State::kHeader;
  }

  void header_staged() {
    std::uint32_t n = get_u32_be(stage_.data());
    // Never allocate from an unchecked length.
    if (std::uint64_t(n) * point_bytes() > remaining()) {
      throw ParamsError(ParamsErrorKind::kTruncated, std::string(kNames[vector_]) + ": declares " + std::to_string(n) +
                                                         " points, file has room for " +
                                                         std::to_string(remaining() / point_bytes()));
    }
    count_ = n;
    done_points_ = 0;
    stage_.clear();
    std::size_t* lens[5] = {&layout_.h, &layout_.l, &layout_.a, &layout_.b_g1, &layout_.b_g2};
    *lens[vector_] = n;
    if (points_ == Points::kDecode) {
      // Reserved only, advised huge pages, and grown by decode_range chunk by
      // chunk: constructing all n points here (a 32 GiB PoRep's h: 14 GB of
      // first-touch writes on this thread) leaves the disk idle meanwhile.
      // 47.4 GB .params on an H100 host: 710 MiB/s that way, 843 grown per
      // chunk, against dd's 934-995.
      if (vector_ == 4) {
        out_.b_g2.reserve(n);
        advise_huge_pages_for(out_.b_g2);
      } else {
        std::vector<ec::G1Affine>* g1[4] = {&out_.h, &out_.l, &out_.a, &out_.b_g1};
        g1[vector_]->reserve(n);
        advise_huge_pages_for(*g1[vector_]);
      }
    } else if (points_ == Points::kDecodeInto) {
      const std::size_t have = vector_ == 4 ? out_.b_g2.size()
                                            : std::array<std::size_t, 4>{out_.h.size(), out_.l.size(), out_.a.size(),
                                                                         out_.b_g1.size()}[vector_];
      if (have != n) {
        throw ParamsError(ParamsErrorKind::kShapeMismatch, path_ + ": " + kNames[vector_] + " declares " +
                                                               std::to_string(n) +
                                                               " points, the parameters in "
                                                               "memory hold " +
                                                               std::to_string(have));
      }
    }
    state_ = State::kPoints;
    if (n == 0) next_vector();
  }

  void next_vector() {
    if (vector_ == 4) {
      finish();
    } else {
      ++vector_;
      begin_header();
    }
  }

  // Order of the final checks as in read_params: trailing bytes, then
  // |b_g1| == |b_g2|.
  void finish() {
    state_ = State::kDone;
    if (remaining() != 0) {
      const std::string where =
          kind_ == FileKind::kVk ? " bytes after the verifying key" : " bytes after b_g2 in " + path_;
      throw ParamsError(ParamsErrorKind::kTrailingBytes, std::to_string(remaining()) + where);
    }
    if (kind_ == FileKind::kParams && layout_.b_g1 != layout_.b_g2) {
      throw ParamsError(ParamsErrorKind::kShapeMismatch,
                        "|b_g1| = " + std::to_string(layout_.b_g1) + " but |b_g2| = " + std::to_string(layout_.b_g2));
    }
  }

  std::size_t points(std::span<const std::uint8_t> in) {
    const std::size_t size = point_bytes();
    std::size_t used = 0;
    if (!stage_.empty()) {  // finish the point split across the previous piece
      want_ = size;
      used = fill_stage(in);
      if (stage_.size() < size) return used;
      decode_range(stage_.data(), 1);
      stage_.clear();
    }
    std::size_t whole = std::min<std::uint64_t>((in.size() - used) / size, count_ - done_points_);
    if (whole > 0) {
      decode_range(in.data() + used, whole);
      used += whole * size;
      pos_ += whole * size;
    }
    if (done_points_ < count_ && used < in.size()) {  // a point continues in the next piece
      want_ = size;
      used += fill_stage(in.subspan(used));
    }
    if (done_points_ == count_) next_vector();
    return used;
  }

  // Decodes `count` consecutive encodings into the current vector at
  // done_points_; the lowest failing index wins, as in read_params.
  void decode_range(const std::uint8_t* bytes, std::size_t count) {
    const char* name = kNames[vector_];
    if (points_ != Points::kSkip) {
      ec::BulkDecodeResult res;
      if (vector_ == 4) {
        if (points_ == Points::kDecode) out_.b_g2.resize(done_points_ + count);  // within the reserve: no move
        std::span<ec::G2Affine> dst(out_.b_g2.data() + done_points_, count);
        res = ec::decode_g2_many({bytes, count * kG2}, dst, ec::PointForm::kUncompressed, sub_, &pool_);
        if (res.error != ec::DecodeError::kOk) throw_point(name, done_points_ + res.index, res.error);
        for (std::size_t i = 0; i < count; ++i) {
          if (dst[i].infinity) throw_infinity(name, done_points_ + i);
        }
      } else {
        std::vector<ec::G1Affine>* g1[4] = {&out_.h, &out_.l, &out_.a, &out_.b_g1};
        if (points_ == Points::kDecode) g1[vector_]->resize(done_points_ + count);  // within the reserve: no move
        std::span<ec::G1Affine> dst(g1[vector_]->data() + done_points_, count);
        res = ec::decode_g1_many({bytes, count * kG1}, dst, ec::PointForm::kUncompressed, sub_, &pool_);
        if (res.error != ec::DecodeError::kOk) throw_point(name, done_points_ + res.index, res.error);
        for (std::size_t i = 0; i < count; ++i) {
          if (dst[i].infinity) throw_infinity(name, done_points_ + i);
        }
      }
    }
    done_points_ += count;
  }

  FileKind kind_;
  Points points_;
  std::string path_;  // for messages
  std::uint64_t file_bytes_;
  ec::Subgroup sub_;
  ThreadPool& pool_;
  groth16::Parameters& out_;

  State state_ = State::kVk;
  std::uint64_t pos_ = 0;            // file offset of the next byte to parse
  std::vector<std::uint8_t> stage_;  // a small field being assembled
  std::size_t want_ = 0;             // bytes stage_ must reach
  int vector_ = 0;                   // 0..4: h, l, a, b_g1, b_g2
  std::uint64_t count_ = 0;          // points declared in the current vector
  std::uint64_t done_points_ = 0;    // of which parsed
  ParamsLayout layout_;
};

// Reads the whole file in chunk order through a FileSource with up to
// queue_depth chunks in flight and hands each chunk, in order, to the parser.
void run_pipeline(const std::filesystem::path& path, const ParamsLoaderOptions& opts, FileKind kind, Points points,
                  ThreadPool& pool, groth16::Parameters& out, ParamsLayout* layout, LoadStats* stats) {
  const auto t0 = Clock::now();
  if (opts.chunk_bytes == 0 || opts.chunk_bytes % kDirectAlignmentBytes != 0) std::abort();  // caller bug

  std::unique_ptr<FileSource> src;
  try {
    src = open_file_source(path, opts.source);
  } catch (const IoError& e) {
    throw ParamsError(ParamsErrorKind::kIo, e.what());
  }
  const std::uint64_t file_bytes = src->size_bytes();
  if (kind == FileKind::kVk && file_bytes > kMaxVkFileBytes) {
    throw ParamsError(ParamsErrorKind::kTrailingBytes, path.string() + " is too large for a verifying key");
  }
  StreamParser parser(kind, points, path.string(), file_bytes, opts.check, pool, out);

  AlignedHostAllocator default_alloc;
  ChunkReader chunks(std::move(src), path.string(), opts.chunk_bytes, opts.allocator ? *opts.allocator : default_alloc);
  LoadProgress progress{file_bytes, 0, 0};
  double decode_s = 0;
  try {
    while (!parser.done()) {
      std::optional<std::span<const std::byte>> c = chunks.next();
      if (!c) break;
      auto td = Clock::now();
      parser.feed({reinterpret_cast<const std::uint8_t*>(c->data()), c->size()});
      decode_s += seconds_since(td);
      progress.read_bytes = chunks.read_bytes();
      progress.decoded_bytes = parser.position();
      if (opts.progress) opts.progress(progress);
    }
  } catch (const IoError& e) {
    throw ParamsError(ParamsErrorKind::kIo, e.what());
  }
  if (!parser.done()) std::abort();  // every length was checked against the file size: cannot run out
  if (layout) *layout = parser.layout();
  if (stats) {
    *stats = LoadStats{chunks.source().backend(),
                       chunks.source().direct(),
                       file_bytes,
                       std::size_t(chunks.chunks()),
                       0,
                       chunks.io_wait_s(),
                       decode_s};
    stats->wall_s = seconds_since(t0);
  }
}

}  // namespace

ParamsLoader::ParamsLoader(ThreadPool& pool, ParamsLoaderOptions opts) : pool_(pool), opts_(std::move(opts)) {}

groth16::Parameters ParamsLoader::load_params(const std::filesystem::path& path, LoadStats* stats) const {
  groth16::Parameters out;
  run_pipeline(path, opts_, FileKind::kParams, Points::kDecode, pool_, out, nullptr, stats);
  return out;
}

groth16::VerifyingKey ParamsLoader::load_vk(const std::filesystem::path& path, LoadStats* stats) const {
  groth16::Parameters out;
  run_pipeline(path, opts_, FileKind::kVk, Points::kSkip, pool_, out, nullptr, stats);
  return std::move(out.vk);
}

void ParamsLoader::load_params_into(const std::filesystem::path& path, groth16::Parameters& into,
                                    LoadStats* stats) const {
  run_pipeline(path, opts_, FileKind::kParams, Points::kDecodeInto, pool_, into, nullptr, stats);
}

ParamsLayout ParamsLoader::scan_params(const std::filesystem::path& path, LoadStats* stats) const {
  groth16::Parameters out;
  ParamsLayout layout;
  run_pipeline(path, opts_, FileKind::kParams, Points::kSkip, pool_, out, &layout, stats);
  return layout;
}

}  // namespace cuzk::io
