// The daemon's pipelined .params loader (io/params_loader.cpp) against the
// reference reader (groth16::read_params) on the same fuzz file: both must
// return the same parameters, or both fail with the same ParamsErrorKind, as
// params_loader.hpp promises. 4 KiB chunks with two reads in flight make
// every vector header and point straddle chunk boundaries; scan_params must
// report the lengths of whatever loads.
#include <optional>

#include "fuzz_util.hpp"
#include "groth16/params.hpp"
#include "io/params_loader.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ThreadPool pool(1);
  static fuzz::MemFile in("params-loader");
  static const io::ParamsLoader loader = [] {
    io::ParamsLoaderOptions o;
    o.source.backend = io::BackendChoice::kThreadPool;
    o.source.direct = io::DirectIo::kOff;
    o.source.queue_depth = 2;
    o.source.pool_threads = 1;
    o.chunk_bytes = io::kDirectAlignmentBytes;
    return io::ParamsLoader(pool, o);
  }();
  in.write({data, size});
  std::optional<groth16::Parameters> want;
  std::optional<groth16::ParamsErrorKind> want_error;
  try {
    want = groth16::read_params(in.path(), pool);
  } catch (const groth16::ParamsError& e) {
    want_error = e.kind();
  }
  try {
    groth16::Parameters got = loader.load_params(in.path());
    fuzz::require(want.has_value(), "loader accepts a file read_params rejects");
    fuzz::require(got == *want, "loader and read_params return different parameters");
    io::ParamsLayout layout = loader.scan_params(in.path());
    fuzz::require(layout.n_ic == got.vk.ic.size() && layout.h == got.h.size() && layout.l == got.l.size() &&
                      layout.a == got.a.size() && layout.b_g1 == got.b_g1.size() && layout.b_g2 == got.b_g2.size(),
                  "scan_params lengths differ from the loaded vectors");
  } catch (const groth16::ParamsError& e) {
    fuzz::require(want_error.has_value(), "loader rejects a file read_params accepts");
    fuzz::require(e.kind() == *want_error, "loader and read_params fail with different kinds");
  }
  return 0;
}
