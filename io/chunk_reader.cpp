#include "io/chunk_reader.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace cuzk::io {

namespace {
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

ChunkReader::ChunkReader(std::unique_ptr<FileSource> src, std::string path, std::size_t chunk_bytes,
                         BufferAllocator& alloc)
    : src_(std::move(src)),
      path_(std::move(path)),
      chunk_bytes_(chunk_bytes),
      n_chunks_((src_->size_bytes() + chunk_bytes - 1) / chunk_bytes) {
  if (chunk_bytes == 0 || chunk_bytes % kDirectAlignmentBytes != 0) std::abort();  // caller bug
  const std::size_t n_bufs = std::size_t(std::min<std::uint64_t>(src_->queue_depth(), n_chunks_));
  // A file smaller than one chunk gets a buffer of its (aligned) size.
  const std::size_t buf_bytes =
      std::size_t(std::min<std::uint64_t>(chunk_bytes, round_up(src_->size_bytes(), kDirectAlignmentBytes)));
  slots_.resize(n_bufs);
  for (Slot& s : slots_) s.buf = IoBuffer(alloc, buf_bytes, kDirectAlignmentBytes);
  for (; next_submit_ < n_bufs; ++next_submit_) submit(next_submit_);
}

ChunkReader::~ChunkReader() {
  src_->wait(src_->in_flight(), [](const ReadCompletion&) {});
}

std::uint64_t ChunkReader::chunk_len(std::uint64_t c) const {
  return std::min<std::uint64_t>(chunk_bytes_, src_->size_bytes() - c * chunk_bytes_);
}

void ChunkReader::submit(std::uint64_t c) {
  Slot& s = slots_[c % slots_.size()];
  s.ready = false;
  src_->submit(
      ReadRequest{c * chunk_bytes_, std::size_t(round_up(chunk_len(c), src_->alignment_bytes())), s.buf.data(), c});
}

std::optional<std::span<const std::byte>> ChunkReader::next() {
  // The previous chunk is used up: its buffer takes the next unread chunk.
  if (next_chunk_ > 0 && next_submit_ < n_chunks_) submit(next_submit_++);
  if (next_chunk_ == n_chunks_) return std::nullopt;
  const std::uint64_t c = next_chunk_;
  Slot& s = slots_[c % slots_.size()];
  const auto t0 = std::chrono::steady_clock::now();
  while (!s.ready) {
    src_->wait(1, [this](const ReadCompletion& done) {
      Slot& d = slots_[done.tag % slots_.size()];
      d.ready = true;
      d.bytes_read = done.bytes_read;
      d.error = done.error;
      read_bytes_ += done.bytes_read;
    });
  }
  io_wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::uint64_t want = chunk_len(c);
  if (s.error != 0) {
    throw IoError(IoErrorKind::kRead, s.error,
                  path_ + " at offset " + std::to_string(c * chunk_bytes_) + " failed: " + std::strerror(s.error));
  }
  if (s.bytes_read < want) {
    throw IoError(IoErrorKind::kRead, 0,
                  path_ + " shrank while being read (offset " + std::to_string(c * chunk_bytes_ + s.bytes_read) + ")");
  }
  ++next_chunk_;
  return std::span<const std::byte>(s.buf.data(), std::size_t(want));
}

}  // namespace cuzk::io
