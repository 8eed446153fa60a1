#include "groth16/circom.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

namespace cuzk::groth16 {
namespace {

const std::filesystem::path kDir = std::filesystem::path(CUZK_TEST_DATA_DIR) / "circom";

std::vector<std::uint8_t> read(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

Fr dec(std::string_view s) {
  Fr x = Fr::zero();
  for (char ch : s) x = x * Fr::from_u64(10) + Fr::from_u64(std::uint64_t(ch - '0'));
  return x;
}

template <class F>
R1csErrorKind error_of(F&& f) {
  try {
    f();
  } catch (const R1csError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return R1csErrorKind::kIo;
}

// Expected values below come from `snarkjs r1cs export json` and
// `snarkjs wtns export json` (tests/data/circom/README.md), not from our code.
TEST(Circom, ImportsR1csShapeAndCoefficients) {
  CircomR1cs c = load_circom_r1cs(kDir / "small.r1cs");
  EXPECT_EQ(c.header.n_wires, 15u);
  EXPECT_EQ(c.header.n_pub_out, 1u);
  EXPECT_EQ(c.header.n_pub_in, 2u);
  EXPECT_EQ(c.header.n_prv_in, 2u);
  EXPECT_EQ(c.header.n_constraints, 10u);
  const R1cs& r = c.r1cs;
  EXPECT_EQ(r.num_inputs(), 4u);  // ONE, y, b, k
  EXPECT_EQ(r.num_aux(), 11u);
  EXPECT_EQ(r.num_circuit_constraints(), 10u);
  EXPECT_EQ(r.num_constraints(), 14u);
  EXPECT_EQ(domain_size(r), 16u);

  auto row = [&](const CsrMatrix& m, std::size_t i) {
    std::vector<std::pair<std::uint32_t, Fr>> out;
    for (auto k = m.row_start[i]; k < m.row_start[i + 1]; ++k) {
      out.emplace_back(m.col[k], r.coeff(m.coeff_id[k]));
    }
    return out;
  };
  using Row = std::vector<std::pair<std::uint32_t, Fr>>;
  const Fr one = Fr::one();
  // Constraint 0: A = {4: -1}, B = {2: 1}, C = {6: -1}.
  EXPECT_EQ(row(r.a(), 0), (Row{{4, -one}}));
  EXPECT_EQ(row(r.b(), 0), (Row{{2, one}}));
  EXPECT_EQ(row(r.c(), 0), (Row{{6, -one}}));
  // Constraint 1: A = {0: 7, 4: -3, 6: -1}, B = {2: 1, 5: -2}, C = {11: -1}.
  EXPECT_EQ(row(r.a(), 1), (Row{{0, Fr::from_u64(7)}, {4, -Fr::from_u64(3)}, {6, -one}}));
  EXPECT_EQ(row(r.b(), 1), (Row{{2, one}, {5, -Fr::from_u64(2)}}));
  EXPECT_EQ(row(r.c(), 1), (Row{{11, -one}}));
  EXPECT_EQ(r.a().coeff_id[r.a().row_start[0]], R1cs::kCoeffMinusOne);
}

TEST(Circom, WitnessSatisfiesImportedR1cs) {
  CircomR1cs c = load_circom_r1cs(kDir / "small.r1cs");
  std::vector<Fr> wires = load_circom_wtns(kDir / "small.wtns");
  ASSERT_EQ(wires.size(), 15u);
  EXPECT_EQ(wires[0], Fr::one());
  EXPECT_EQ(wires[1], dec("27411960002967409532040535"));
  EXPECT_EQ(wires[2], Fr::from_u64(11));
  EXPECT_EQ(wires[3], Fr::from_u64(2));
  EXPECT_EQ(wires[4], Fr::from_u64(3));
  EXPECT_EQ(wires[5], Fr::from_u64(5));
  Witness w = split_wires(c.r1cs, wires);
  ASSERT_EQ(w.inputs.size(), 4u);
  ThreadPool pool(2);
  EXPECT_TRUE(is_satisfied(c.r1cs, w.inputs, w.aux, pool));
  // y = s[4] * c is the last constraint (9); corrupting y breaks only it.
  Witness bad = w;
  bad.inputs[1] += Fr::one();
  EXPECT_EQ(first_unsatisfied(c.r1cs, bad.inputs, bad.aux, pool), std::optional<std::size_t>(9));
  bad = w;
  bad.aux[0] += Fr::one();  // wire 4 = a, used from constraint 0 on
  EXPECT_EQ(first_unsatisfied(c.r1cs, bad.inputs, bad.aux, pool), std::optional<std::size_t>(0));

  EXPECT_EQ(error_of([&] { split_wires(c.r1cs, std::span<const Fr>(wires).first(14)); }), R1csErrorKind::kWrongSize);
}

TEST(Circom, RejectsWrongPrimeAndDamagedFiles) {
  EXPECT_EQ(error_of([] { load_circom_r1cs(kDir / "small_bn128.r1cs"); }), R1csErrorKind::kWrongPrime);
  EXPECT_EQ(error_of([] { load_circom_r1cs(kDir / "missing.r1cs"); }), R1csErrorKind::kIo);
  std::vector<std::uint8_t> r1cs = read(kDir / "small.r1cs");
  std::vector<std::uint8_t> wtns = read(kDir / "small.wtns");
  ASSERT_EQ(r1cs.size(), 2116u);
  for (std::size_t len :
       {std::size_t{0}, std::size_t{3}, std::size_t{10}, std::size_t{100}, r1cs.size() / 2, r1cs.size() - 1}) {
    std::span<const std::uint8_t> cut(r1cs.data(), len);
    R1csErrorKind k = error_of([&] { parse_circom_r1cs(cut); });
    EXPECT_EQ(k, len < 4 ? R1csErrorKind::kBadMagic : R1csErrorKind::kTruncated) << len;
  }
  for (std::size_t len : {std::size_t{20}, wtns.size() - 1}) {
    std::span<const std::uint8_t> cut(wtns.data(), len);
    EXPECT_EQ(error_of([&] { parse_circom_wtns(cut); }), R1csErrorKind::kTruncated) << len;
  }
  // A .wtns is not a .r1cs and vice versa.
  EXPECT_EQ(error_of([&] { parse_circom_r1cs(wtns); }), R1csErrorKind::kBadMagic);
  EXPECT_EQ(error_of([&] { parse_circom_wtns(r1cs); }), R1csErrorKind::kBadMagic);
  // Version field.
  std::vector<std::uint8_t> v = r1cs;
  v[4] = 2;
  EXPECT_EQ(error_of([&] { parse_circom_r1cs(v); }), R1csErrorKind::kBadVersion);
  // A coefficient >= r: the first constraint's first coefficient (section 2
  // comes first: 12-byte file header, 12-byte section header, u32 n_terms, u32 wire).
  v = r1cs;
  std::memset(v.data() + 12 + 12 + 8, 0xff, 32);
  EXPECT_EQ(error_of([&] { parse_circom_r1cs(v); }), R1csErrorKind::kMalformed);
  // A wire index out of range.
  v = r1cs;
  v[12 + 12 + 4] = 200;
  EXPECT_EQ(error_of([&] { parse_circom_r1cs(v); }), R1csErrorKind::kMalformed);
}

// Offset of section `type`'s payload in an iden3 container (magic, version,
// count, then {u32 type, u64 size, payload}).
std::size_t section_offset(const std::vector<std::uint8_t>& f, std::uint32_t type) {
  std::size_t at = 12;
  while (at + 12 <= f.size()) {
    std::uint32_t t = 0;
    std::uint64_t size = 0;
    std::memcpy(&t, f.data() + at, 4);
    std::memcpy(&size, f.data() + at + 4, 8);
    if (t == type) return at + 12;
    at += 12 + size;
  }
  ADD_FAILURE() << "no section " << type;
  return 0;
}

// A header count is checked against the file before anything is allocated:
// n_wires = 2^32 - 1 once threw bad_alloc, 2^28 took 18 s and 2 GB.
TEST(Circom, WireCountIsBoundedByTheFile) {
  const std::vector<std::uint8_t> r1cs = read(kDir / "small.r1cs");
  const std::size_t n_wires_at = section_offset(r1cs, 1) + 4 + 32;  // after n8 and the prime
  for (std::uint32_t n : {0xffffffffu, 1u << 28, 1u << 20, 16u}) {
    std::vector<std::uint8_t> v = r1cs;
    std::memcpy(v.data() + n_wires_at, &n, 4);
    EXPECT_EQ(error_of([&] { parse_circom_r1cs(v); }), R1csErrorKind::kMalformed) << n;
  }
  // Trailing bytes after the last section.
  std::vector<std::uint8_t> v = r1cs;
  v.push_back(0);
  EXPECT_EQ(error_of([&] { parse_circom_r1cs(v); }), R1csErrorKind::kMalformed);
  v = read(kDir / "small.wtns");
  v.push_back(0);
  EXPECT_EQ(error_of([&] { parse_circom_wtns(v); }), R1csErrorKind::kMalformed);
}

}  // namespace
}  // namespace cuzk::groth16
