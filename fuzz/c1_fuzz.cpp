// PoRep C1 output JSON (circuits/filecoin/c1.cpp parse_c1), the input of
// every PoRep C2 request. Only C1Error may come out; a document that parses
// must survive to_json and a second parse unchanged.
#include "circuits/filecoin/c1.hpp"
#include "fuzz_util.hpp"

using namespace cuzk;
using namespace cuzk::circuits::filecoin;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  C1Output c1;
  try {
    c1 = parse_c1(text);
  } catch (const C1Error&) {
    return 0;
  }
  fuzz::require(parse_c1(to_json(c1)) == c1, "C1 JSON round trip");
  return 0;
}
