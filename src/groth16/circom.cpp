#include "groth16/circom.hpp"

#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>

namespace cuzk::groth16 {

namespace {

constexpr std::size_t kFrBytes = 32;

// Bounds-checked little-endian reader over a byte span; running past the end
// is a truncated file.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> bytes, const char* what) : b_(bytes), what_(what) {}
  std::span<const std::uint8_t> take(std::uint64_t n) {
    if (n > b_.size() - pos_) {
      throw R1csError(R1csErrorKind::kTruncated, std::string(what_) + " ends early");
    }
    auto s = b_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  std::uint32_t u32() {
    std::uint32_t x = 0;
    std::memcpy(&x, take(4).data(), 4);
    return x;
  }
  std::uint64_t u64() {
    std::uint64_t x = 0;
    std::memcpy(&x, take(8).data(), 8);
    return x;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
  const char* what_;
};

// The iden3 container: returns section type -> payload.
std::map<std::uint32_t, std::span<const std::uint8_t>> read_sections(std::span<const std::uint8_t> bytes,
                                                                     const char magic[4], std::uint32_t version,
                                                                     const char* what) {
  Cursor c(bytes, what);
  if (bytes.size() < 4 || std::memcmp(bytes.data(), magic, 4) != 0) {
    throw R1csError(R1csErrorKind::kBadMagic, std::string("not a ") + what + " file");
  }
  c.take(4);
  std::uint32_t v = c.u32();
  if (v != version) {
    throw R1csError(R1csErrorKind::kBadVersion,
                    std::string(what) + " version " + std::to_string(v) + ", expected " + std::to_string(version));
  }
  std::uint32_t n_sections = c.u32();
  std::map<std::uint32_t, std::span<const std::uint8_t>> sections;
  for (std::uint32_t i = 0; i < n_sections; ++i) {
    std::uint32_t type = c.u32();
    std::uint64_t size = c.u64();
    auto payload = c.take(size);
    if (!sections.emplace(type, payload).second) {
      throw R1csError(R1csErrorKind::kMalformed, std::string(what) + ": duplicate section " + std::to_string(type));
    }
  }
  if (!c.done()) throw R1csError(R1csErrorKind::kMalformed, std::string(what) + ": trailing bytes");
  return sections;
}

std::span<const std::uint8_t> section(const std::map<std::uint32_t, std::span<const std::uint8_t>>& s,
                                      std::uint32_t type, const char* what) {
  auto it = s.find(type);
  if (it == s.end()) {
    throw R1csError(R1csErrorKind::kTruncated, std::string(what) + ": section " + std::to_string(type) + " missing");
  }
  return it->second;
}

// n8 and the prime must be BLS12-381's r (32 bytes, little-endian).
void check_prime(Cursor& c, const char* what) {
  std::uint32_t n8 = c.u32();
  if (n8 != kFrBytes) {
    c.take(n8);
    throw R1csError(R1csErrorKind::kWrongPrime, std::string(what) + ": field element size " + std::to_string(n8));
  }
  auto prime = c.take(kFrBytes);
  std::array<std::uint8_t, kFrBytes> r{};
  for (std::size_t i = 0; i < kFrBytes; ++i) {
    r[i] = std::uint8_t(Fr::kModulus.limb[i / 8] >> (8 * (i % 8)));
  }
  if (std::memcmp(prime.data(), r.data(), kFrBytes) != 0) {
    throw R1csError(R1csErrorKind::kWrongPrime,
                    std::string(what) + ": not the BLS12-381 scalar field (compile with --prime bls12381)");
  }
}

Fr read_fr(Cursor& c, const char* what) {
  Fr x;
  if (!Fr::from_bytes_le(c.take(kFrBytes), x)) {
    throw R1csError(R1csErrorKind::kMalformed, std::string(what) + ": value >= r");
  }
  return x;
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw R1csError(R1csErrorKind::kIo, "cannot open " + path.string());
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw R1csError(R1csErrorKind::kIo, "read failed: " + path.string());
  return bytes;
}

}  // namespace

CircomR1cs parse_circom_r1cs(std::span<const std::uint8_t> file_bytes) {
  constexpr const char* kWhat = "circom r1cs";
  auto sections = read_sections(file_bytes, "r1cs", 1, kWhat);
  if (sections.count(4) || sections.count(5)) {
    throw R1csError(R1csErrorKind::kMalformed, "custom gates (PLONK) are not supported");
  }

  Cursor h(section(sections, 1, kWhat), kWhat);
  check_prime(h, kWhat);
  CircomHeader hdr;
  hdr.n_wires = h.u32();
  hdr.n_pub_out = h.u32();
  hdr.n_pub_in = h.u32();
  hdr.n_prv_in = h.u32();
  hdr.n_labels = h.u64();
  hdr.n_constraints = h.u32();
  if (!h.done()) throw R1csError(R1csErrorKind::kMalformed, "r1cs header has trailing bytes");
  const std::uint64_t n_public = std::uint64_t(hdr.n_pub_out) + hdr.n_pub_in;
  if (1 + n_public + hdr.n_prv_in > hdr.n_wires) {
    throw R1csError(R1csErrorKind::kMalformed, "wire counts inconsistent");
  }
  // Every wire costs a variable below: the count is bounded by the file
  // before anything is allocated (circom writes an 8-byte label id per wire
  // in section 3, so a genuine file is always larger than its wire count).
  if (hdr.n_wires > file_bytes.size()) {
    throw R1csError(R1csErrorKind::kMalformed, std::to_string(hdr.n_wires) + " wires declared in a file of " +
                                                   std::to_string(file_bytes.size()) + " bytes");
  }
  if (auto labels = sections.find(3);
      labels != sections.end() && labels->second.size() != std::uint64_t(hdr.n_wires) * 8) {
    throw R1csError(R1csErrorKind::kMalformed, "wire-to-label section holds " + std::to_string(labels->second.size()) +
                                                   " bytes for " + std::to_string(hdr.n_wires) + " wires");
  }

  // Replay the file through the recorder: it normalizes rows, interns
  // coefficients and appends the input constraints exactly as for a native
  // circuit. Wire w is input w for w <= n_public, aux (w - n_public - 1) after.
  RecordingCs cs;
  std::vector<Variable> wire_var(hdr.n_wires);
  for (std::uint32_t w = 1; w < hdr.n_wires; ++w) {
    wire_var[w] = w <= n_public ? cs.alloc_input(Name("wire", w), std::optional<Fr>())
                                : cs.alloc(Name("wire", w), std::optional<Fr>());
  }
  Cursor c(section(sections, 2, kWhat), kWhat);
  auto read_lc = [&] {
    LinearCombination lc;
    std::uint32_t n = c.u32();
    for (std::uint32_t t = 0; t < n; ++t) {
      std::uint32_t wire = c.u32();
      if (wire >= hdr.n_wires) throw R1csError(R1csErrorKind::kMalformed, "wire index out of range");
      lc.add(read_fr(c, kWhat), wire_var[wire]);
    }
    return lc;
  };
  for (std::uint32_t k = 0; k < hdr.n_constraints; ++k) {
    LinearCombination a = read_lc();
    LinearCombination b = read_lc();
    LinearCombination cc = read_lc();
    cs.enforce(Name("constraint", k), std::move(a), std::move(b), std::move(cc));
  }
  if (!c.done()) throw R1csError(R1csErrorKind::kMalformed, "constraint section has trailing bytes");
  return CircomR1cs{hdr, cs.finish()};
}

CircomR1cs load_circom_r1cs(const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes = read_file(path);
  return parse_circom_r1cs(bytes);
}

std::vector<Fr> parse_circom_wtns(std::span<const std::uint8_t> file_bytes) {
  constexpr const char* kWhat = "circom wtns";
  auto sections = read_sections(file_bytes, "wtns", 2, kWhat);
  Cursor h(section(sections, 1, kWhat), kWhat);
  check_prime(h, kWhat);
  std::uint32_t n = h.u32();
  if (!h.done()) throw R1csError(R1csErrorKind::kMalformed, "wtns header has trailing bytes");
  auto values = section(sections, 2, kWhat);
  if (values.size() != std::uint64_t(n) * kFrBytes) {
    throw R1csError(
        values.size() < std::uint64_t(n) * kFrBytes ? R1csErrorKind::kTruncated : R1csErrorKind::kMalformed,
        "wtns: " + std::to_string(n) + " values declared, section holds " + std::to_string(values.size()) + " bytes");
  }
  Cursor c(values, kWhat);
  std::vector<Fr> wires(n);
  for (Fr& w : wires) w = read_fr(c, kWhat);
  return wires;
}

std::vector<Fr> load_circom_wtns(const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes = read_file(path);
  return parse_circom_wtns(bytes);
}

Witness split_wires(const R1cs& r1cs, std::span<const Fr> wires) {
  if (wires.size() != r1cs.num_variables()) {
    throw R1csError(R1csErrorKind::kWrongSize, "witness has " + std::to_string(wires.size()) +
                                                   " values, the constraint system " +
                                                   std::to_string(r1cs.num_variables()));
  }
  if (wires.empty() || wires[0] != Fr::one()) {
    throw R1csError(R1csErrorKind::kMalformed, "wire 0 must be 1");
  }
  Witness w;
  w.inputs.assign(wires.begin(), wires.begin() + long(r1cs.num_inputs()));
  w.aux.assign(wires.begin() + long(r1cs.num_inputs()), wires.end());
  return w;
}

}  // namespace cuzk::groth16
