// The zcash serialization of BLS12-381 points, byte for byte as bellperson,
// blstrs and blst read and write it (parameter files, proofs, verifying keys).
//
//   G1 compressed 48 B = x;          uncompressed 96 B  = x || y
//   G2 compressed 96 B = x;          uncompressed 192 B = x || y
//   Fp: 48 bytes big-endian.  Fp2 (c0 + c1 u): c1 first, then c0.
//   Flags in the top 3 bits of byte 0 (free because p < 2^381):
//     0x80 compressed   0x40 point at infinity (every other bit zero)
//     0x20 y is lexicographically largest (compressed form only; for Fp2
//          compare c1, and c0 only when c1 == 0).
//
// Decoding rejects every encoding the writer could not have produced:
// wrong compression flag for the length, sign bit on an uncompressed point,
// infinity with any other bit set, coordinates >= p, points off the curve and
// (unless Subgroup::kSkip) points outside the prime-order subgroup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ec/point.hpp"

namespace cuzk {
class ThreadPool;
}

namespace cuzk::ec {

enum class DecodeError : std::uint8_t {
  kOk,
  kBadFlags,       // compression flag disagrees with the length, or sign bit on an uncompressed point
  kNotCanonical,   // a coordinate >= p
  kNotOnCurve,     // uncompressed (x, y) does not satisfy the curve equation
  kNotInSubgroup,  // on the curve but not in the order-r subgroup
  kBadInfinity,    // infinity flag with any other bit (sign or coordinates) set
  kWrongLength,    // input length is not an encoding length for this group
  kNoSquareRoot,   // compressed x with x^3 + b not a square: no such point
};
std::string_view to_string(DecodeError e);

enum class Subgroup : std::uint8_t { kCheck, kSkip };
enum class PointForm : std::uint8_t { kCompressed, kUncompressed };

inline constexpr std::size_t kG1CompressedBytes = 48;
inline constexpr std::size_t kG1UncompressedBytes = 96;
inline constexpr std::size_t kG2CompressedBytes = 96;
inline constexpr std::size_t kG2UncompressedBytes = 192;

constexpr std::size_t encoded_bytes_g1(PointForm f) {
  return f == PointForm::kCompressed ? kG1CompressedBytes : kG1UncompressedBytes;
}
constexpr std::size_t encoded_bytes_g2(PointForm f) {
  return f == PointForm::kCompressed ? kG2CompressedBytes : kG2UncompressedBytes;
}

// Encoders. The point must be on the curve (not checked).
void encode_g1_compressed(const G1Affine& p, std::span<std::uint8_t, kG1CompressedBytes> out);
void encode_g1_uncompressed(const G1Affine& p, std::span<std::uint8_t, kG1UncompressedBytes> out);
void encode_g2_compressed(const G2Affine& p, std::span<std::uint8_t, kG2CompressedBytes> out);
void encode_g2_uncompressed(const G2Affine& p, std::span<std::uint8_t, kG2UncompressedBytes> out);

// Form picked at run time; out.size() must be encoded_bytes_g*(form) (a
// mismatch is a caller bug and aborts).
void encode_g1(const G1Affine& p, PointForm form, std::span<std::uint8_t> out);
void encode_g2(const G2Affine& p, PointForm form, std::span<std::uint8_t> out);

// Decoders of one form: `in` must have exactly that form's length (else
// kWrongLength). `out` is written only on kOk.
DecodeError decode_g1_compressed(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check = Subgroup::kCheck);
DecodeError decode_g1_uncompressed(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check = Subgroup::kCheck);
DecodeError decode_g2_compressed(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check = Subgroup::kCheck);
DecodeError decode_g2_uncompressed(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check = Subgroup::kCheck);

// Form chosen by the length (48/96 for G1, 96/192 for G2); the compression
// flag must then agree with it.
DecodeError decode_g1(std::span<const std::uint8_t> in, G1Affine& out, Subgroup check = Subgroup::kCheck);
DecodeError decode_g2(std::span<const std::uint8_t> in, G2Affine& out, Subgroup check = Subgroup::kCheck);

// Bulk decoding of out.size() consecutive encodings of one form, spread over
// `pool` (nullptr: on the calling thread). in.size() must be
// out.size() * encoded_bytes(form), else kWrongLength at index 0. On failure
// returns the error of the lowest failing index; `out` is then unspecified.
struct BulkDecodeResult {
  DecodeError error = DecodeError::kOk;
  std::size_t index = 0;  // first failing element when error != kOk
};
BulkDecodeResult decode_g1_many(std::span<const std::uint8_t> in, std::span<G1Affine> out, PointForm form,
                                Subgroup check, ThreadPool* pool);
BulkDecodeResult decode_g2_many(std::span<const std::uint8_t> in, std::span<G2Affine> out, PointForm form,
                                Subgroup check, ThreadPool* pool);

}  // namespace cuzk::ec
