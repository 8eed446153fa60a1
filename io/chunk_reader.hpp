// ChunkReader: a file's chunks in file order through a FileSource, with up to
// queue_depth chunks read ahead into buffers of its own. next() waits for the
// next chunk; the buffer of the chunk before it is then reused for the next
// unread one. Shared by ParamsLoader (which decodes each chunk) and
// SequentialReader (which copies bytes out field by field).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/buffer.hpp"
#include "io/file_source.hpp"

namespace cuzk::io {

class ChunkReader {
 public:
  // chunk_bytes: a multiple of kDirectAlignmentBytes. `alloc` is borrowed and
  // must outlive the reader; `path` names the file in messages.
  ChunkReader(std::unique_ptr<FileSource> src, std::string path, std::size_t chunk_bytes, BufferAllocator& alloc);
  // Waits for the reads still writing into the buffers.
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next chunk's bytes (valid until the following call), or nullopt after
  // the last. Throws IoError(kRead) when its read failed or the file shrank.
  std::optional<std::span<const std::byte>> next();

  const FileSource& source() const { return *src_; }
  std::uint64_t chunks() const { return n_chunks_; }
  std::uint64_t read_bytes() const { return read_bytes_; }  // delivered by the source so far
  double io_wait_s() const { return io_wait_s_; }           // next() blocked on reads

 private:
  struct Slot {
    IoBuffer buf;
    bool ready = false;
    std::size_t bytes_read = 0;
    int error = 0;
  };
  std::uint64_t chunk_len(std::uint64_t c) const;
  void submit(std::uint64_t c);

  std::unique_ptr<FileSource> src_;
  std::string path_;
  std::size_t chunk_bytes_;
  std::uint64_t n_chunks_;
  std::vector<Slot> slots_;
  std::uint64_t next_submit_ = 0;
  std::uint64_t next_chunk_ = 0;
  std::uint64_t read_bytes_ = 0;
  double io_wait_s_ = 0;
};

}  // namespace cuzk::io
