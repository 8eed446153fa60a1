// Groth16 parameters in bellperson's file format (the format of Filecoin's
// published v28-*.params / *.vk files).
//
// Layout (all lengths u32 big-endian, points uncompressed zcash encoding):
//   .vk     = alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | u32 n_ic | ic[n_ic]
//             size 868 + 96 n_ic
//   .params = the same vk bytes | u32 |h| h | u32 |l| l | u32 |a| a | u32 |b_g1| b_g1
//             | u32 |b_g2| b_g2   (G2 points 192 B)
//
// Validation follows bellperson: vk points are always checked for curve and
// subgroup membership; the large vectors are checked for curve membership (as
// blst's deserialize does) and, on request, for subgroup membership. Points at
// infinity are rejected everywhere bellperson rejects them (IC and the five
// vectors). Errors name the vector and the index of the offending element.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ec/point.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

struct VerifyingKey {
  ec::G1Affine alpha_g1, beta_g1;
  ec::G2Affine beta_g2, gamma_g2;
  ec::G1Affine delta_g1;
  ec::G2Affine delta_g2;
  std::vector<ec::G1Affine> ic;  // one per public input, ONE included

  bool operator==(const VerifyingKey&) const = default;
};

struct Parameters {
  VerifyingKey vk;
  std::vector<ec::G1Affine> h;     // m - 1 elements
  std::vector<ec::G1Affine> l;     // num_aux elements
  std::vector<ec::G1Affine> a;     // inputs + a_aux density
  std::vector<ec::G1Affine> b_g1;  // b_input density + b_aux density
  std::vector<ec::G2Affine> b_g2;  // same selection as b_g1

  bool operator==(const Parameters&) const = default;
};

enum class ParamsErrorKind : std::uint8_t {
  kIo,               // the file could not be opened or read
  kTruncated,        // the file ends inside a declared vector
  kTrailingBytes,    // bytes after the last vector
  kBadPoint,         // a point failed decoding (detail in the message)
  kPointAtInfinity,  // infinity where bellperson rejects it
  kShapeMismatch,    // vector lengths disagree with the circuit
};
std::string_view to_string(ParamsErrorKind kind);

class ParamsError : public std::runtime_error {
 public:
  ParamsError(ParamsErrorKind kind, const std::string& what)
      : std::runtime_error(std::string(to_string(kind)) + ": " + what), kind_(kind) {}
  ParamsErrorKind kind() const { return kind_; }

 private:
  ParamsErrorKind kind_;
};

enum class SubgroupCheck : std::uint8_t {
  kVkOnly,  // bellperson's default for the large vectors (curve check only)
  kAll,     // also check every vector element for subgroup membership
};

inline constexpr std::size_t kVkFixedBytes = 868;  // six points + u32 n_ic
constexpr std::size_t vk_file_bytes(std::size_t n_ic) { return kVkFixedBytes + 96 * n_ic; }
std::uint64_t params_file_bytes(std::size_t n_ic, std::size_t h, std::size_t l, std::size_t a, std::size_t b);

// Byte encodings (used by the file functions and by tests).
std::vector<std::uint8_t> encode_vk(const VerifyingKey& vk);
VerifyingKey decode_vk(std::span<const std::uint8_t> bytes);  // exact length required

// Files. Reading streams the file in large sequential chunks and decodes each
// chunk's points in parallel on `pool`.
void write_vk(const VerifyingKey& vk, const std::filesystem::path& path);
VerifyingKey read_vk(const std::filesystem::path& path);
void write_params(const Parameters& params, const std::filesystem::path& path);
Parameters read_params(const std::filesystem::path& path, ThreadPool& pool,
                       SubgroupCheck check = SubgroupCheck::kVkOnly);

// Checks vector lengths against a circuit: |ic| = inputs, |h| = m - 1,
// |l| = aux, |a| = inputs + popcount(a_aux), |b| = popcount(b_in) + popcount(b_aux).
struct ExpectedShape {
  std::size_t num_inputs, num_aux, domain_size, a_len, b_len;
};
void check_shape(const Parameters& params, const ExpectedShape& shape);

}  // namespace cuzk::groth16
