#include "io/sequential_reader.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace cuzk::io {

SequentialReader::SequentialReader(const std::filesystem::path& path, const FileSourceOptions& source,
                                   std::size_t chunk_bytes, ProgressFn progress)
    : chunks_(open_file_source(path, source), path.string(), chunk_bytes, alloc_), on_progress_(std::move(progress)) {
  progress_.file_bytes = chunks_.source().size_bytes();
}

std::size_t SequentialReader::read(void* dst, std::size_t n) {
  auto* out = static_cast<std::byte*>(dst);
  std::size_t done = 0;
  while (done < n) {
    if (cur_.empty()) {
      std::optional<std::span<const std::byte>> c = chunks_.next();
      if (!c) break;  // end of file
      cur_ = *c;
    }
    const std::size_t take = std::min(cur_.size(), n - done);
    std::memcpy(out + done, cur_.data(), take);
    cur_ = cur_.subspan(take);
    done += take;
    consumed_bytes_ += take;
    if (cur_.empty()) {
      progress_.read_bytes = chunks_.read_bytes();
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
