// bellperson .params files (groth16/params.cpp read_params): the fuzz bytes
// are the whole file. A file that reads must write back byte for byte (the
// decoder accepts only what the writer produces), and reading with subgroup
// checks on every vector may only reject more, never accept something else.
#include "fuzz_util.hpp"
#include "groth16/params.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ThreadPool pool(1);
  static fuzz::MemFile in("params-in"), out("params-out");
  const std::span<const std::uint8_t> bytes(data, size);
  in.write(bytes);
  groth16::Parameters p;
  try {
    p = groth16::read_params(in.path(), pool, groth16::SubgroupCheck::kVkOnly);
  } catch (const groth16::ParamsError&) {
    return 0;
  }
  groth16::write_params(p, out.path());
  const std::vector<std::uint8_t> again = out.read();
  fuzz::require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()), "params re-encode differs");
  try {
    fuzz::require(groth16::read_params(in.path(), pool, groth16::SubgroupCheck::kAll) == p,
                  "kAll read differs from kVkOnly read");
  } catch (const groth16::ParamsError& e) {
    fuzz::require(e.kind() == groth16::ParamsErrorKind::kBadPoint, "kAll failed other than on a point");
  }
  return 0;
}
