// zcash encodings of BLS12-381 points (ec/encoding.cpp). Byte 0 picks the
// group and form (bits 0-1: G1 compressed, G1 uncompressed, G2 compressed,
// G2 uncompressed) and bit 2 skips the subgroup check; the rest is the
// encoding, or several concatenated for the bulk decoder. Properties:
//  - an encoding that decodes re-encodes to the same bytes (the decoder
//    rejects whatever the writer could not have produced);
//  - the length-dispatching decoder agrees with the form's own decoder;
//  - the bulk decoder fails exactly at the first element that fails alone.
#include "ec/encoding.hpp"
#include "fuzz_util.hpp"

using namespace cuzk;
using namespace cuzk::ec;

namespace {

template <class Affine>
DecodeError decode_one(std::span<const std::uint8_t> in, Affine& out, PointForm form, Subgroup check) {
  if constexpr (std::is_same_v<Affine, G1Affine>) {
    return form == PointForm::kCompressed ? decode_g1_compressed(in, out, check)
                                          : decode_g1_uncompressed(in, out, check);
  } else {
    return form == PointForm::kCompressed ? decode_g2_compressed(in, out, check)
                                          : decode_g2_uncompressed(in, out, check);
  }
}

DecodeError decode_any(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check) {
  return decode_g1(in, out, check);
}
DecodeError decode_any(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check) {
  return decode_g2(in, out, check);
}
BulkDecodeResult decode_many(std::span<const std::uint8_t> in, std::span<G1Affine> out, PointForm form,
                             Subgroup check) {
  return decode_g1_many(in, out, form, check, nullptr);
}
BulkDecodeResult decode_many(std::span<const std::uint8_t> in, std::span<G2Affine> out, PointForm form,
                             Subgroup check) {
  return decode_g2_many(in, out, form, check, nullptr);
}

template <class Affine>
void check_group(std::span<const std::uint8_t> in, PointForm form, Subgroup check) {
  constexpr bool kG1 = std::is_same_v<Affine, G1Affine>;
  const std::size_t n = kG1 ? encoded_bytes_g1(form) : encoded_bytes_g2(form);
  // Single element: exactly the form's length (the prefix, when longer).
  if (in.size() >= n) {
    auto one = in.first(n);
    Affine p, q;
    DecodeError e = decode_one(one, p, form, check);
    DecodeError e2 = decode_any(one, q, check);
    fuzz::require(e == e2, "length-dispatching decoder disagrees");
    if (e == DecodeError::kOk) {
      fuzz::require(p == q, "decoders return different points");
      std::vector<std::uint8_t> again(n);
      if constexpr (kG1)
        encode_g1(p, form, again);
      else
        encode_g2(p, form, again);
      fuzz::require(std::equal(again.begin(), again.end(), one.begin()), "re-encode differs");
    }
  } else {
    Affine p;
    fuzz::require(decode_one(in, p, form, check) == DecodeError::kWrongLength, "short input not kWrongLength");
  }
  // Bulk: the whole input when it is a whole number of encodings.
  if (in.size() % n == 0 && !in.empty()) {
    std::vector<Affine> out(in.size() / n);
    BulkDecodeResult r = decode_many(in, out, form, check);
    BulkDecodeResult want;
    for (std::size_t i = 0; i < out.size(); ++i) {
      Affine p;
      DecodeError e = decode_one(in.subspan(i * n, n), p, form, check);
      if (e != DecodeError::kOk) {
        want = {e, i};
        break;
      }
      fuzz::require(p == out[i], "bulk decoder returns a different point");
    }
    fuzz::require(r.error == want.error && r.index == want.index, "bulk decoder reports a different failure");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const std::span<const std::uint8_t> in(data + 1, size - 1);
  const PointForm form = (sel & 1) ? PointForm::kUncompressed : PointForm::kCompressed;
  const Subgroup check = (sel & 4) ? Subgroup::kSkip : Subgroup::kCheck;
  if (sel & 2)
    check_group<G2Affine>(in, form, check);
  else
    check_group<G1Affine>(in, form, check);
  return 0;
}
