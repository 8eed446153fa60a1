// Host orchestration of the GPU setup: tables, chunked streaming of scalars
// through the fixed-base kernels, unpacking into the host's affine points.
#include "gpu/setup/gpu_setup.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/setup/fixed_base_kernel.hpp"
#include "groth16/fixed_base.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::PinnedBuffer;
using ff::Fr;
using u32 = std::uint32_t;

static_assert(sizeof(Fr) == kernels::kFrBytes && std::is_trivially_copyable_v<Fr>);
static_assert(sizeof(ec::Fp) == 48 && sizeof(ec::Fp2) == 96);

namespace {

template <class F>
struct CurveTraits;
template <>
struct CurveTraits<ec::Fp> {
  static constexpr std::size_t kXyzzBytes = kernels::kG1XyzzBytes;
  static constexpr std::size_t kAffineBytes = kernels::kG1AffineBytes;
  static void launch(cudaStream_t s, const u32* table, const u32* scalars, std::size_t n, u32* scratch, u32* out) {
    kernels::fixed_base_g1(s, table, scalars, n, scratch, out);
  }
};
template <>
struct CurveTraits<ec::Fp2> {
  static constexpr std::size_t kXyzzBytes = kernels::kG2XyzzBytes;
  static constexpr std::size_t kAffineBytes = kernels::kG2AffineBytes;
  static void launch(cudaStream_t s, const u32* table, const u32* scalars, std::size_t n, u32* scratch, u32* out) {
    kernels::fixed_base_g2(s, table, scalars, n, scratch, out);
  }
};

std::size_t chunk_for(std::size_t points, const SetupOptions& options) {
  return std::max<std::size_t>(1, std::min(points, options.chunk_points));
}

template <class F>
std::size_t device_bytes(std::size_t points, const SetupOptions& options) {
  using T = CurveTraits<F>;
  return kernels::kFixedBaseTableEntries * T::kAffineBytes +
         chunk_for(points, options) * (kernels::kFrBytes + T::kXyzzBytes + T::kAffineBytes);
}

void check_options(const SetupOptions& options) {
  if (options.chunk_points == 0) throw Error(ErrorKind::kInvalidArgument, "setup chunk_points must be >= 1");
}

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void require_fits(Device& device, std::size_t bytes, const std::string& what) {
  const std::size_t free_bytes = device.free_memory_bytes();
  if (bytes + detail::kDeviceMemoryReserveBytes > free_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory, what + " needs " + mib(bytes) + " of device memory, " + mib(free_bytes) +
                                                   " free (" + mib(detail::kDeviceMemoryReserveBytes) +
                                                   " kept in reserve); lower SetupOptions::chunk_points");
  }
}

// The table's entries packed as the device's affine points (x, y).
template <class F>
DeviceBuffer<u32> upload_table(cudaStream_t s, const groth16::FixedBaseTable<F>& table) {
  using T = CurveTraits<F>;
  const std::span<const ec::Affine<F>> entries = table.entries();
  std::vector<u32> packed(entries.size() * T::kAffineBytes / 4, 0);  // the identity stays zeros
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].infinity) continue;
    std::memcpy(packed.data() + i * T::kAffineBytes / 4, &entries[i].x, sizeof(F));
    std::memcpy(packed.data() + i * T::kAffineBytes / 4 + sizeof(F) / 4, &entries[i].y, sizeof(F));
  }
  DeviceBuffer<u32> d(packed.size(), "fixed-base table");
  CUZK_CUDA_CHECK(cudaMemcpyAsync(d.get(), packed.data(), packed.size() * 4, cudaMemcpyHostToDevice, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));  // `packed` dies here
  return d;
}

// Waits for the stream when it goes out of scope, so that no copy is still
// reading or writing pinned buffers declared before it (an exception thrown
// by a scalar source unwinds through here).
class StreamDrain {
 public:
  explicit StreamDrain(cudaStream_t s) : s_(s) {}
  ~StreamDrain() { CUZK_CUDA_CHECK(cudaStreamSynchronize(s_)); }
  StreamDrain(const StreamDrain&) = delete;
  StreamDrain& operator=(const StreamDrain&) = delete;

 private:
  cudaStream_t s_;
};

using ScalarSource = std::function<void(std::size_t begin, std::span<Fr> out)>;

ScalarSource from_vector(std::span<const Fr> v, ThreadPool& pool) {
  return [v, &pool](std::size_t begin, std::span<Fr> out) {
    pool.parallel_for(out.size(), [&](std::size_t b, std::size_t e) {
      std::copy(v.begin() + std::ptrdiff_t(begin + b), v.begin() + std::ptrdiff_t(begin + e),
                out.begin() + std::ptrdiff_t(b));
    });
  };
}

// out[i] = scalar_i * base for i < out.size(), scalar_i from `fill`, in
// chunks on one stream. Iteration k fills and enqueues chunk k (upload,
// kernel, download) after unpacking chunk k - 2 out of the same pinned slot,
// so the host's work on chunks k - 1 / k + 1 overlaps the device's on chunk k.
template <class F>
void run_fixed_base(cudaStream_t s, const DeviceBuffer<u32>& table, const ScalarSource& fill,
                    std::span<ec::Affine<F>> out, ThreadPool& pool, const SetupOptions& options,
                    const std::function<void(std::uint64_t)>& tick) {
  using T = CurveTraits<F>;
  const std::size_t count = out.size();
  if (count == 0) return;
  const std::size_t chunk = chunk_for(count, options);
  const std::size_t chunks = (count + chunk - 1) / chunk;
  const std::size_t slots = chunks > 1 ? 2 : 1;
  DeviceBuffer<u32> d_scalars(chunk * kernels::kFrBytes / 4, "setup scalars");
  DeviceBuffer<u32> d_scratch(chunk * T::kXyzzBytes / 4, "setup XYZZ scratch");
  DeviceBuffer<u32> d_out(chunk * T::kAffineBytes / 4, "setup points");
  PinnedBuffer<Fr> h_scalars[2];
  PinnedBuffer<u32> h_out[2];
  for (std::size_t i = 0; i < slots; ++i) {
    h_scalars[i] = PinnedBuffer<Fr>(chunk);
    h_out[i] = PinnedBuffer<u32>(chunk * T::kAffineBytes / 4);
  }
  detail::Event downloaded[2];
  const StreamDrain drain(s);

  auto unpack = [&](std::size_t k) {
    const std::size_t slot = k % 2, begin = k * chunk, n = std::min(chunk, count - begin);
    downloaded[slot].sync();
    const u32* packed = h_out[slot].get();
    pool.parallel_for(n, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        const u32* src = packed + i * T::kAffineBytes / 4;
        ec::Affine<F>& p = out[begin + i];
        std::memcpy(static_cast<void*>(&p.x), src, sizeof(F));
        std::memcpy(static_cast<void*>(&p.y), src + sizeof(F) / 4, sizeof(F));
        // (0, 0) is on neither curve: the device's identity.
        if (p.x.is_zero() && p.y.is_zero()) {
          p = ec::Affine<F>::identity();
        } else {
          p.infinity = false;
        }
      }
    });
    if (tick) tick(n);
  };

  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t slot = k % 2, begin = k * chunk, n = std::min(chunk, count - begin);
    if (k >= 2) unpack(k - 2);  // its download followed its upload: both pinned slots are free again
    fill(begin, std::span<Fr>(h_scalars[slot].get(), n));
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(d_scalars.get(), h_scalars[slot].get(), n * kernels::kFrBytes, cudaMemcpyHostToDevice, s));
    T::launch(s, table.get(), d_scalars.get(), n, d_scratch.get(), d_out.get());
    CUZK_CUDA_CHECK(cudaMemcpyAsync(h_out[slot].get(), d_out.get(), n * T::kAffineBytes, cudaMemcpyDeviceToHost, s));
    downloaded[slot].record(s);
  }
  for (std::size_t k = chunks >= 2 ? chunks - 2 : 0; k < chunks; ++k) unpack(k);
}

template <class F>
std::vector<ec::Affine<F>> fixed_base(Device& device, const ec::Affine<F>& base, std::span<const Fr> scalars,
                                      ThreadPool& pool, const SetupOptions& options) {
  check_options(options);
  DeviceGuard guard(device.info().ordinal);
  require_fits(device, device_bytes<F>(scalars.size(), options), "fixed-base multiplication");
  const groth16::FixedBaseTable<F> table(base);
  detail::Stream stream;
  const DeviceBuffer<u32> d_table = upload_table<F>(stream.get(), table);
  std::vector<ec::Affine<F>> out(scalars.size());
  run_fixed_base<F>(stream.get(), d_table, from_vector(scalars, pool), out, pool, options, {});
  return out;
}

}  // namespace

std::size_t fixed_base_device_bytes(std::size_t points, bool g2, const SetupOptions& options) {
  return g2 ? device_bytes<ec::Fp2>(points, options) : device_bytes<ec::Fp>(points, options);
}

std::vector<ec::G1Affine> fixed_base_g1(Device& device, const ec::G1Affine& base, std::span<const Fr> scalars,
                                        ThreadPool& pool, const SetupOptions& options) {
  return fixed_base<ec::Fp>(device, base, scalars, pool, options);
}

std::vector<ec::G2Affine> fixed_base_g2(Device& device, const ec::G2Affine& base, std::span<const Fr> scalars,
                                        ThreadPool& pool, const SetupOptions& options) {
  return fixed_base<ec::Fp2>(device, base, scalars, pool, options);
}

groth16::Parameters generate_parameters(Device& device, const groth16::R1cs& r1cs, const groth16::ToxicWaste& tw,
                                        ThreadPool& pool,
                                        const std::function<void(std::uint64_t, std::uint64_t)>& progress,
                                        const SetupOptions& options) {
  check_options(options);
  DeviceGuard guard(device.info().ordinal);
  // Before the field work (minutes at the 32 GiB shape): the largest run of
  // each group bounds its chunk, and the G1 and G2 runs never overlap.
  const std::size_t m = std::size_t(groth16::domain_size(r1cs));
  const std::size_t g1_max = std::max(m - 1, r1cs.num_variables());
  require_fits(device,
               std::max(device_bytes<ec::Fp>(g1_max, options), device_bytes<ec::Fp2>(r1cs.num_variables(), options)),
               "GPU setup");

  const groth16::SetupScalars s = groth16::compute_setup_scalars(r1cs, tw, pool);
  const groth16::FixedBaseTable<ec::Fp> g1(ec::kG1Generator);
  const groth16::FixedBaseTable<ec::Fp2> g2(ec::kG2Generator);
  const std::uint64_t total = s.total_multiplications();
  std::uint64_t done = 0;
  const std::function<void(std::uint64_t)> tick = [&](std::uint64_t n) {
    done += n;
    if (progress) progress(done, total);
  };

  groth16::Parameters p;
  // The six verifying-key points on the host, as the CPU generator computes them.
  p.vk.alpha_g1 = ec::to_affine(g1.mul(tw.alpha));
  p.vk.beta_g1 = ec::to_affine(g1.mul(tw.beta));
  p.vk.beta_g2 = ec::to_affine(g2.mul(tw.beta));
  p.vk.gamma_g2 = ec::to_affine(g2.mul(tw.gamma));
  p.vk.delta_g1 = ec::to_affine(g1.mul(tw.delta));
  p.vk.delta_g2 = ec::to_affine(g2.mul(tw.delta));

  detail::Stream stream;
  const cudaStream_t st = stream.get();
  const DeviceBuffer<u32> d_g1 = upload_table<ec::Fp>(st, g1);
  const DeviceBuffer<u32> d_g2 = upload_table<ec::Fp2>(st, g2);
  auto g1_run = [&](std::vector<ec::G1Affine>& out, std::size_t n, const ScalarSource& fill) {
    out.resize(n);
    run_fixed_base<ec::Fp>(st, d_g1, fill, out, pool, options, tick);
  };
  g1_run(p.vk.ic, s.ic.size(), from_vector(s.ic, pool));
  g1_run(p.h, s.num_h, [&](std::size_t begin, std::span<Fr> out) { s.h_range(begin, out, pool); });
  g1_run(p.l, s.l.size(), from_vector(s.l, pool));
  g1_run(p.a, s.a.size(), from_vector(s.a, pool));
  g1_run(p.b_g1, s.b.size(), from_vector(s.b, pool));
  p.b_g2.resize(s.b.size());
  run_fixed_base<ec::Fp2>(st, d_g2, from_vector(s.b, pool), p.b_g2, pool, options, tick);
  return p;
}

}  // namespace cuzk::gpu
