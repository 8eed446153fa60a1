// SequentialReader: a file's bytes in order through a FileSource with many
// large reads in flight (read-ahead of queue_depth chunks), for formats read
// field by field (the R1CS cache file: groth16::load_r1cs over a ByteSource).
// Each chunk is copied out to the caller; the next chunk's read is submitted
// as soon as a chunk is used up, so the disk works while the caller parses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "groth16/r1cs.hpp"
#include "io/buffer.hpp"
#include "io/chunk_reader.hpp"
#include "io/file_source.hpp"
#include "io/params_loader.hpp"

namespace cuzk::io {

class SequentialReader final : public groth16::ByteSource {
 public:
  // Opens `path` (IoError on failure). chunk_bytes: a multiple of
  // kDirectAlignmentBytes. progress (optional) is called after each chunk.
  SequentialReader(const std::filesystem::path& path, const FileSourceOptions& source,
                   std::size_t chunk_bytes = std::size_t{8} << 20, ProgressFn progress = {});

  std::uint64_t size_bytes() const override { return chunks_.source().size_bytes(); }
  // Throws IoError(kRead) when a read fails or the file shrinks.
  std::size_t read(void* dst, std::size_t n) override;
  Backend backend() const { return chunks_.source().backend(); }
  bool direct() const { return chunks_.source().direct(); }

 private:
  AlignedHostAllocator alloc_;  // before chunks_: outlives its buffers
  ChunkReader chunks_;
  std::span<const std::byte> cur_;  // the unread rest of the current chunk
  std::uint64_t consumed_bytes_ = 0;
  LoadProgress progress_;
  ProgressFn on_progress_;
};

// groth16::load_r1cs through a SequentialReader (R1csError on a bad file,
// kIo for a failed read).
groth16::R1cs load_r1cs(const std::filesystem::path& path, const FileSourceOptions& source, ProgressFn progress = {},
                        LoadStats* stats = nullptr);

}  // namespace cuzk::io
