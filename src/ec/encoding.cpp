#include "ec/encoding.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <type_traits>

#include "ec/subgroup.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::ec {

std::string_view to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kOk:
      return "ok";
    case DecodeError::kBadFlags:
      return "bad flags";
    case DecodeError::kNotCanonical:
      return "coordinate not canonical (>= p)";
    case DecodeError::kNotOnCurve:
      return "point not on curve";
    case DecodeError::kNotInSubgroup:
      return "point not in the prime-order subgroup";
    case DecodeError::kBadInfinity:
      return "infinity flag with other bits set";
    case DecodeError::kWrongLength:
      return "wrong encoding length";
    case DecodeError::kNoSquareRoot:
      return "compressed x has no point on the curve";
  }
  return "unknown decode error";
}

namespace {

constexpr std::uint8_t kFlagCompressed = 0x80;
constexpr std::uint8_t kFlagInfinity = 0x40;
constexpr std::uint8_t kFlagSign = 0x20;
constexpr std::uint8_t kFlagBits = kFlagCompressed | kFlagInfinity | kFlagSign;
constexpr std::size_t kFpBytes = Fp::kBytes;  // 48

// Bytes of one coordinate: an Fp, or an Fp2 as two Fp.
template <class F>
constexpr std::size_t kCoordBytes = std::is_same_v<F, Fp> ? kFpBytes : 2 * kFpBytes;
static_assert(kCoordBytes<Fp> == 48 && kCoordBytes<Fp2> == 96);

void put(const Fp& a, std::uint8_t* out) { a.to_bytes_be({out, kFpBytes}); }
void put(const Fp2& a, std::uint8_t* out) {
  put(a.c1, out);  // zcash order: imaginary part first
  put(a.c0, out + kFpBytes);
}
// False when the value is >= p.
bool get(const std::uint8_t* in, Fp& a) { return Fp::from_bytes_be({in, kFpBytes}, a); }
bool get(const std::uint8_t* in, Fp2& a) { return get(in, a.c1) && get(in + kFpBytes, a.c0); }

template <class F>
constexpr std::size_t encoded_bytes(PointForm form) {
  return (form == PointForm::kCompressed ? 1 : 2) * kCoordBytes<F>;
}

template <class F>
void encode(const Affine<F>& p, PointForm form, std::span<std::uint8_t> out) {
  const bool compressed = form == PointForm::kCompressed;
  if (p.infinity) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    out[0] = std::uint8_t(kFlagInfinity | (compressed ? kFlagCompressed : 0));
    return;
  }
  put(p.x, out.data());  // x < p < 2^381 leaves the three flag bits clear
  if (compressed) {
    out[0] |= kFlagCompressed;
    if (p.y.is_lexicographically_largest()) out[0] |= kFlagSign;
  } else {
    put(p.y, out.data() + kCoordBytes<F>);
  }
}

template <class F>
DecodeError decode(std::span<const std::uint8_t> in, PointForm form, Affine<F>& out, Subgroup check) {
  if (in.size() != encoded_bytes<F>(form)) return DecodeError::kWrongLength;
  const std::uint8_t flags = in[0] & kFlagBits;
  const bool compressed = (flags & kFlagCompressed) != 0;
  const bool infinity = (flags & kFlagInfinity) != 0;
  const bool sign = (flags & kFlagSign) != 0;
  if (compressed != (form == PointForm::kCompressed)) return DecodeError::kBadFlags;
  if (infinity) {
    // The only encoding of infinity: its flags and zeros everywhere else.
    if (sign || (in[0] & ~kFlagBits) != 0) return DecodeError::kBadInfinity;
    if (std::any_of(in.begin() + 1, in.end(), [](std::uint8_t b) { return b != 0; })) {
      return DecodeError::kBadInfinity;
    }
    out = Affine<F>::identity();
    return DecodeError::kOk;
  }
  if (!compressed && sign) return DecodeError::kBadFlags;

  std::uint8_t xbytes[kCoordBytes<F>];
  std::copy_n(in.begin(), kCoordBytes<F>, xbytes);
  xbytes[0] &= std::uint8_t(~kFlagBits);
  Affine<F> p;
  p.infinity = false;
  if (!get(xbytes, p.x)) return DecodeError::kNotCanonical;
  if (compressed) {
    const F rhs = p.x.square() * p.x + kCurveB<F>;  // y^2 = x^3 + b
    if (!rhs.sqrt(p.y)) return DecodeError::kNoSquareRoot;
    if (p.y.is_lexicographically_largest() != sign) p.y = -p.y;
  } else {
    if (!get(in.data() + kCoordBytes<F>, p.y)) return DecodeError::kNotCanonical;
    if (!is_on_curve(p)) return DecodeError::kNotOnCurve;
  }
  if (check == Subgroup::kCheck && !in_subgroup(p)) return DecodeError::kNotInSubgroup;
  out = p;
  return DecodeError::kOk;
}

template <class F>
BulkDecodeResult decode_many(std::span<const std::uint8_t> in, std::span<Affine<F>> out, PointForm form, Subgroup check,
                             ThreadPool* pool) {
  const std::size_t stride = encoded_bytes<F>(form);
  if (in.size() != out.size() * stride) return {DecodeError::kWrongLength, 0};
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  // Lowest failing index seen so far; chunks stop once they pass it.
  std::atomic<std::size_t> first_bad{kNone};
  std::mutex mu;
  BulkDecodeResult result;
  auto body = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end && i < first_bad.load(std::memory_order_relaxed); ++i) {
      DecodeError e = decode<F>(in.subspan(i * stride, stride), form, out[i], check);
      if (e == DecodeError::kOk) continue;
      std::lock_guard lock(mu);
      if (i < first_bad.load(std::memory_order_relaxed)) {
        first_bad.store(i, std::memory_order_relaxed);
        result = {e, i};
      }
      return;
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(out.size(), body);
  } else {
    body(0, out.size());
  }
  return result;
}

}  // namespace

void encode_g1_compressed(const G1Affine& p, std::span<std::uint8_t, kG1CompressedBytes> out) {
  encode(p, PointForm::kCompressed, out);
}
void encode_g1_uncompressed(const G1Affine& p, std::span<std::uint8_t, kG1UncompressedBytes> out) {
  encode(p, PointForm::kUncompressed, out);
}
void encode_g2_compressed(const G2Affine& p, std::span<std::uint8_t, kG2CompressedBytes> out) {
  encode(p, PointForm::kCompressed, out);
}
void encode_g2_uncompressed(const G2Affine& p, std::span<std::uint8_t, kG2UncompressedBytes> out) {
  encode(p, PointForm::kUncompressed, out);
}

void encode_g1(const G1Affine& p, PointForm form, std::span<std::uint8_t> out) {
  if (out.size() != encoded_bytes<Fp>(form)) std::abort();  // caller bug: wrong buffer size
  encode(p, form, out);
}
void encode_g2(const G2Affine& p, PointForm form, std::span<std::uint8_t> out) {
  if (out.size() != encoded_bytes<Fp2>(form)) std::abort();
  encode(p, form, out);
}

DecodeError decode_g1_compressed(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check) {
  return decode(in, PointForm::kCompressed, out, check);
}
DecodeError decode_g1_uncompressed(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check) {
  return decode(in, PointForm::kUncompressed, out, check);
}
DecodeError decode_g2_compressed(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check) {
  return decode(in, PointForm::kCompressed, out, check);
}
DecodeError decode_g2_uncompressed(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check) {
  return decode(in, PointForm::kUncompressed, out, check);
}

DecodeError decode_g1(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check) {
  if (in.size() == kG1CompressedBytes) return decode_g1_compressed(in, out, check);
  if (in.size() == kG1UncompressedBytes) return decode_g1_uncompressed(in, out, check);
  return DecodeError::kWrongLength;
}
DecodeError decode_g2(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check) {
  if (in.size() == kG2CompressedBytes) return decode_g2_compressed(in, out, check);
  if (in.size() == kG2UncompressedBytes) return decode_g2_uncompressed(in, out, check);
  return DecodeError::kWrongLength;
}

BulkDecodeResult decode_g1_many(std::span<const std::uint8_t> in, std::span<G1Affine> out, PointForm form,
                                Subgroup check, ThreadPool* pool) {
  return decode_many<Fp>(in, out, form, check, pool);
}
BulkDecodeResult decode_g2_many(std::span<const std::uint8_t> in, std::span<G2Affine> out, PointForm form,
                                Subgroup check, ThreadPool* pool) {
  return decode_many<Fp2>(in, out, form, check, pool);
}

}  // namespace cuzk::ec
