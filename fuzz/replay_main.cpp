// Corpus replay: the main() that turns a fuzz target (its
// LLVMFuzzerTestOneInput) into a plain executable of the normal build (gcc,
// no libFuzzer), so that every test run re-checks the committed seeds and the
// saved crashers (ctest fuzz_replay_<target>).
//
//   <target>_replay PATH...
//
// Each PATH is a file or a directory whose regular files (sorted, not
// recursive) are run through the target once each; files ending in .gz are
// inflated first (large findings are stored compressed). A PATH that does
// not exist is noted and skipped: fuzz/findings/<target> exists only for the
// targets that had findings. Exit status: 0 when every input ran, 1 when an
// exception escaped the target, 2 on bad usage, unreadable files or no input
// at all. A violated property (fuzz::require) or a crash aborts; the signal
// handler names the input first.
#include <zlib.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The input being run, for the fatal-signal handler (which may only write).
char g_current[4096];

void on_fatal_signal(int sig) {
  static const char kPrefix[] = "\nfuzz replay: fatal signal while running ";
  (void)!::write(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
  (void)!::write(STDERR_FILENO, g_current, ::strnlen(g_current, sizeof g_current));
  (void)!::write(STDERR_FILENO, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::optional<std::vector<std::uint8_t>> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

// Inflates a gzip member; nullopt when the data is not valid gzip.
std::optional<std::vector<std::uint8_t>> gunzip(const std::vector<std::uint8_t>& packed) {
  z_stream z{};
  if (::inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return std::nullopt;
  z.next_in = const_cast<Bytef*>(packed.data());
  z.avail_in = uInt(packed.size());
  std::vector<std::uint8_t> out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    constexpr std::size_t kChunkBytes = 1 << 16;
    const std::size_t have = out.size();
    out.resize(have + kChunkBytes);
    z.next_out = out.data() + have;
    z.avail_out = uInt(kChunkBytes);
    rc = ::inflate(&z, Z_NO_FLUSH);
    out.resize(have + kChunkBytes - z.avail_out);
  }
  ::inflateEnd(&z);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

// The files a PATH names, sorted so that runs are reproducible.
std::vector<fs::path> inputs_of(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::directory_iterator(path)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_fatal_signal);
  std::size_t runs = 0, input_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path root(argv[i]);
    if (!fs::exists(root)) {
      std::printf("fuzz replay: %s does not exist, skipped\n", root.c_str());
      continue;
    }
    std::size_t here = 0;
    for (const fs::path& file : inputs_of(root)) {
      auto bytes = read_file(file);
      if (bytes && file.extension() == ".gz") bytes = gunzip(*bytes);
      if (!bytes) {
        std::fprintf(stderr, "fuzz replay: cannot read %s\n", file.c_str());
        return 2;
      }
      std::snprintf(g_current, sizeof g_current, "%s", file.c_str());
      try {
        LLVMFuzzerTestOneInput(bytes->data(), bytes->size());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz replay: %s: exception escaped the target: %s\n", file.c_str(), e.what());
        return 1;
      } catch (...) {
        std::fprintf(stderr, "fuzz replay: %s: non-standard exception escaped the target\n", file.c_str());
        return 1;
      }
      ++here;
      input_bytes += bytes->size();
    }
    std::printf("fuzz replay: %s: %zu inputs\n", root.c_str(), here);
    runs += here;
  }
  if (runs == 0) {
    std::fprintf(stderr, "fuzz replay: no input found\n");
    return 2;
  }
  std::printf("fuzz replay: %zu inputs (%zu bytes) ran clean\n", runs, input_bytes);
  return 0;
}
