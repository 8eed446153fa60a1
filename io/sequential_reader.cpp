#include "io/sequential_reader.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace cuzk::io {

namespace {
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

SequentialReader::SequentialReader(const std::filesystem::path& path, const FileSourceOptions& source,
                                   std::size_t chunk_bytes, ProgressFn progress)
    : path_(path.string()),
      src_(open_file_source(path, source)),
      chunk_bytes_(chunk_bytes),
      n_chunks_((src_->size_bytes() + chunk_bytes - 1) / chunk_bytes),
      on_progress_(std::move(progress)) {
  if (chunk_bytes == 0 || chunk_bytes % kDirectAlignmentBytes != 0) std::abort();  // caller bug
  progress_.file_bytes = src_->size_bytes();
  const std::size_t n_bufs = std::size_t(std::min<std::uint64_t>(src_->queue_depth(), n_chunks_));
  const std::size_t buf_bytes =
      std::size_t(std::min<std::uint64_t>(chunk_bytes, round_up(src_->size_bytes(), kDirectAlignmentBytes)));
  slots_.resize(n_bufs);
  for (Slot& s : slots_) s.buf = IoBuffer(alloc_, buf_bytes, kDirectAlignmentBytes);
  for (; next_submit_ < n_bufs; ++next_submit_) submit(next_submit_);
}

SequentialReader::~SequentialReader() {
  // Reads still write into the slots' buffers until delivered.
  src_->wait(src_->in_flight(), [](const ReadCompletion&) {});
}

void SequentialReader::submit(std::uint64_t c) {
  Slot& s = slots_[c % slots_.size()];
  s.ready = false;
  const std::uint64_t want = std::min<std::uint64_t>(chunk_bytes_, src_->size_bytes() - c * chunk_bytes_);
  src_->submit(ReadRequest{c * chunk_bytes_, std::size_t(round_up(want, src_->alignment_bytes())), s.buf.data(), c});
}

void SequentialReader::advance() {
  const std::uint64_t c = next_chunk_;
  Slot& s = slots_[c % slots_.size()];
  while (!s.ready) {
    src_->wait(1, [this](const ReadCompletion& done) {
      Slot& d = slots_[done.tag % slots_.size()];
      d.ready = true;
      d.bytes_read = done.bytes_read;
      d.error = done.error;
      progress_.read_bytes += done.bytes_read;
    });
  }
  const std::uint64_t want = std::min<std::uint64_t>(chunk_bytes_, src_->size_bytes() - c * chunk_bytes_);
  if (s.error != 0) {
    throw IoError(IoErrorKind::kRead, s.error,
                  "read of " + path_ + " at offset " + std::to_string(c * chunk_bytes_) + " failed: " +
                      std::strerror(s.error));
  }
  if (s.bytes_read < want) {
    throw IoError(IoErrorKind::kRead, 0,
                  path_ + " shrank while being read (offset " + std::to_string(c * chunk_bytes_ + s.bytes_read) + ")");
  }
  cur_ = s.buf.data();
  cur_left_ = std::size_t(want);
  ++next_chunk_;
}

std::size_t SequentialReader::read(void* dst, std::size_t n) {
  auto* out = static_cast<std::byte*>(dst);
  std::size_t done = 0;
  while (done < n) {
    if (cur_left_ == 0) {
      if (next_chunk_ > 0 && next_submit_ < n_chunks_) submit(next_submit_++);  // the used-up chunk's slot
      if (next_chunk_ == n_chunks_) break;  // end of file
      advance();
    }
    const std::size_t take = std::min(cur_left_, n - done);
    std::memcpy(out + done, cur_, take);
    cur_ += take;
    cur_left_ -= take;
    done += take;
    consumed_bytes_ += take;
    if (cur_left_ == 0) {
      progress_.decoded_bytes = consumed_bytes_;
      if (on_progress_) on_progress_(progress_);
    }
  }
  return done;
}

groth16::R1cs load_r1cs(const std::filesystem::path& path, const FileSourceOptions& source, ProgressFn progress,
                        LoadStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<SequentialReader> reader;
  try {
    reader = std::make_unique<SequentialReader>(path, source, std::size_t{8} << 20, std::move(progress));
  } catch (const IoError& e) {
    throw groth16::R1csError(groth16::R1csErrorKind::kIo, e.what());
  }
  groth16::R1cs r1cs = groth16::load_r1cs(*reader, path.string());
  if (stats) {
    stats->backend = reader->backend();
    stats->direct = reader->direct();
    stats->file_bytes = reader->size_bytes();
    stats->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return r1cs;
}

}  // namespace cuzk::io
