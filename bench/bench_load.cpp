// bench_load: cold-load throughput of the .params loader.
//
//   bench_load gen  FILE SIZE_MIB        synthetic bellperson .params of about
//                                        SIZE_MIB, vector lengths in the 32 GiB
//                                        PoRep proportions (FILECOIN.md §1)
//   bench_load load FILE [--mode decode|scan] [--backend auto|uring|pool]
//                   [--direct auto|off] [--chunk-mib N] [--qd N]
//                   [--threads N] [--check vk|all] [--evict]
//
// Valid points are expensive to make, so gen writes k*G for k = 1..4096 (G1)
// and 1..1024 (G2) over and over: every point decodes and passes the curve
// and subgroup checks, so decode cost is that of a real file.
// --mode scan runs the same read pipeline and header parsing without
// decoding the vectors (the I/O rate); decode is the full load.
// --evict drops the file's page-cache pages first (fsync + POSIX_FADV_DONTNEED)
// so a buffered run is cold too; O_DIRECT runs bypass the cache anyway.
// Prints one line of key=value pairs.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ec/curve.hpp"
#include "ec/encoding.hpp"
#include "groth16/params.hpp"
#include "io/params_loader.hpp"

namespace {

using namespace cuzk;

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: bench_load gen FILE SIZE_MIB\n"
               "       bench_load load FILE [--mode decode|scan] [--backend auto|uring|pool] [--direct auto|off]\n"
               "                            [--chunk-mib N] [--qd N] [--threads N] [--check vk|all] [--evict]\n");
  std::exit(2);
}

template <class F>
using EncodeFn = void (*)(const ec::Affine<F>&, ec::PointForm, std::span<std::uint8_t>);

// Encodings of 1*gen, 2*gen, ..., count*gen.
template <class F>
std::vector<std::uint8_t> multiples_block(std::size_t count, const ec::Affine<F>& gen, std::size_t point_bytes,
                                          EncodeFn<F> encode) {
  std::vector<ec::Jacobian<F>> jac(count);
  ec::Jacobian<F> acc = ec::from_affine(gen);
  for (std::size_t i = 0; i < count; ++i) {
    jac[i] = acc;
    acc = ec::add_mixed(acc, gen);
  }
  std::vector<ec::Affine<F>> aff(count);
  ec::batch_to_affine<F>(jac, aff);
  std::vector<std::uint8_t> out(count * point_bytes);
  for (std::size_t i = 0; i < count; ++i) {
    encode(aff[i], ec::PointForm::kUncompressed, {out.data() + i * point_bytes, point_bytes});
  }
  return out;
}

class Writer {
 public:
  explicit Writer(const std::filesystem::path& p) : fd_(::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)) {
    if (fd_ < 0) {
      std::perror("open");
      std::exit(1);
    }
  }
  ~Writer() { ::close(fd_); }
  void put(const std::uint8_t* p, std::size_t n) {
    buf_.insert(buf_.end(), p, p + n);
    if (buf_.size() >= (std::size_t{32} << 20)) flush();
  }
  void put_u32_be(std::uint32_t v) {
    std::uint8_t b[4] = {std::uint8_t(v >> 24), std::uint8_t(v >> 16), std::uint8_t(v >> 8), std::uint8_t(v)};
    put(b, 4);
  }
  void flush() {
    std::size_t off = 0;
    while (off < buf_.size()) {
      ssize_t w = ::write(fd_, buf_.data() + off, buf_.size() - off);
      if (w < 0) {
        std::perror("write");
        std::exit(1);
      }
      off += std::size_t(w);
    }
    buf_.clear();
  }
  void sync() {
    flush();
    if (::fsync(fd_) != 0) std::perror("fsync");
  }

 private:
  int fd_;
  std::vector<std::uint8_t> buf_;
};

void put_vector(Writer& w, std::uint32_t n, const std::vector<std::uint8_t>& block, std::size_t point_bytes) {
  w.put_u32_be(n);
  const std::size_t per_block = block.size() / point_bytes;
  for (std::uint64_t done = 0; done < n;) {
    std::size_t k = std::size_t(std::min<std::uint64_t>(per_block, n - done));
    w.put(block.data(), k * point_bytes);
    done += k;
  }
}

int gen(const std::filesystem::path& path, std::uint64_t size_mib) {
  // 32 GiB PoRep: h 134217727, l 130169893, a 129753620, b 33112282 (G1 + G2),
  // 47,373,928,632 bytes in all; scale every length by the same factor.
  const double scale = double(size_mib << 20) / 47373928632.0;
  auto n = [&](double full) { return std::uint32_t(full * scale); };
  const std::uint32_t h = n(134217727), l = n(130169893), a = n(129753620), b = n(33112282);
  const std::size_t n_ic = 328;

  auto g1 = multiples_block<ff::Fp>(4096, ec::kG1Generator, 96, &ec::encode_g1);
  auto g2 = multiples_block<ff::Fp2>(1024, ec::kG2Generator, 192, &ec::encode_g2);
  auto point = [](const std::vector<std::uint8_t>& blk, std::size_t sz, std::size_t i) {
    std::vector<std::uint8_t> v(blk.begin() + std::ptrdiff_t(i * sz), blk.begin() + std::ptrdiff_t((i + 1) * sz));
    return v;
  };
  Writer w(path);
  // vk: alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | n_ic | ic
  for (auto& p : {point(g1, 96, 1), point(g1, 96, 2)}) w.put(p.data(), p.size());
  for (auto& p : {point(g2, 192, 3), point(g2, 192, 4)}) w.put(p.data(), p.size());
  auto d1 = point(g1, 96, 5);
  w.put(d1.data(), d1.size());
  auto d2 = point(g2, 192, 6);
  w.put(d2.data(), d2.size());
  w.put_u32_be(std::uint32_t(n_ic));
  w.put(g1.data() + 7 * 96, n_ic * 96);
  put_vector(w, h, g1, 96);
  put_vector(w, l, g1, 96);
  put_vector(w, a, g1, 96);
  put_vector(w, b, g1, 96);
  put_vector(w, b, g2, 192);
  w.sync();
  std::printf("generated=%s bytes=%llu h=%u l=%u a=%u b=%u\n", path.c_str(),
              (unsigned long long)groth16::params_file_bytes(n_ic, h, l, a, b), h, l, a, b);
  return 0;
}

// User + system CPU seconds of this process (all threads). On a shared,
// oversubscribed machine CPU time, not wall time, gives the decode cost.
double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

void evict(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

int load(const std::filesystem::path& path, int argc, char** argv) {
  io::ParamsLoaderOptions o;
  o.source.queue_depth = 16;
  std::string mode = "decode";
  std::size_t threads = 0;
  bool do_evict = false;
  for (int i = 0; i < argc; ++i) {
    std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (k == "--mode") {
      mode = val();
    } else if (k == "--backend") {
      std::string v = val();
      o.source.backend = v == "uring"  ? io::BackendChoice::kIoUring
                         : v == "pool" ? io::BackendChoice::kThreadPool
                                       : io::BackendChoice::kAuto;
    } else if (k == "--direct") {
      o.source.direct = val() == "off" ? io::DirectIo::kOff : io::DirectIo::kAuto;
    } else if (k == "--chunk-mib") {
      o.chunk_bytes = std::size_t(std::stoul(val())) << 20;
    } else if (k == "--qd") {
      o.source.queue_depth = std::stoul(val());
    } else if (k == "--threads") {
      threads = std::stoul(val());
    } else if (k == "--check") {
      o.check = val() == "all" ? groth16::SubgroupCheck::kAll : groth16::SubgroupCheck::kVkOnly;
    } else if (k == "--evict") {
      do_evict = true;
    } else {
      usage();
    }
  }
  if (do_evict) evict(path);
  ThreadPool pool(threads);
  io::ParamsLoader loader(pool, o);
  io::LoadStats st;
  std::size_t points = 0;
  const double cpu0 = cpu_seconds();
  if (mode == "scan") {
    io::ParamsLayout lay = loader.scan_params(path, &st);
    points = lay.h + lay.l + lay.a + lay.b_g1 + lay.b_g2;
  } else {
    groth16::Parameters p = loader.load_params(path, &st);
    points = p.h.size() + p.l.size() + p.a.size() + p.b_g1.size() + p.b_g2.size();
  }
  const double cpu_s = cpu_seconds() - cpu0;
  const double mib = double(st.file_bytes) / double(1 << 20);
  std::printf(
      "mode=%s backend=%s direct=%d threads=%zu chunk_mib=%zu qd=%zu bytes=%llu points=%zu wall_s=%.3f "
      "MiB_s=%.1f io_wait_s=%.3f decode_s=%.3f cpu_s=%.3f MiB_per_cpu_s=%.1f\n",
      mode.c_str(), std::string(io::to_string(st.backend)).c_str(), int(st.direct), pool.size(), o.chunk_bytes >> 20,
      o.source.queue_depth, (unsigned long long)st.file_bytes, points, st.wall_s, mib / st.wall_s, st.io_wait_s,
      st.decode_s, cpu_s, mib / cpu_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) usage();
  std::string cmd = argv[1];
  try {
    if (cmd == "gen" && argc == 4) return gen(argv[2], std::stoull(argv[3]));
    if (cmd == "load") return load(argv[2], argc - 3, argv + 3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_load: %s\n", e.what());
    return 1;
  }
  usage();
}
