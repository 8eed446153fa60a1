// Import of iden3 (circom / snarkjs) constraint systems and witnesses, so that
// circuits compiled with `circom --prime bls12381` can be proved and compared
// with snarkjs.
//
// Both formats are the iden3 binary container (all little-endian):
//   magic[4] | u32 version | u32 n_sections | n_sections x {u32 type | u64 bytes | payload}
// with sections in any order (circom writes the constraints before the header).
//
// .r1cs v1: section 1 = u32 n8 | prime (n8 bytes) | u32 n_wires | u32 n_pub_out
//   | u32 n_pub_in | u32 n_prv_in | u64 n_labels | u32 n_constraints;
//   section 2 = n_constraints x (LC_A, LC_B, LC_C), LC = u32 n_terms then
//   n_terms x {u32 wire | n8-byte coefficient, standard form (NOT Montgomery;
//   checked against `snarkjs r1cs export json`: 7 is stored as 07 00 .., -1 as r-1)}.
//   Meaning <A,w> * <B,w> - <C,w> = 0. Section 3 (wire -> label) is ignored;
//   sections 4/5 (PLONK custom gates) are rejected.
// .wtns v2: section 1 = u32 n8 | prime | u32 n_witness; section 2 = the values,
//   n8 bytes each, standard form, in wire order.
//
// Wire order is 0 = ONE, public outputs, public inputs, private inputs, then
// internal wires. Our inputs are wires 0 ..= n_pub_out + n_pub_in and aux the
// rest, so the unified column index of R1cs is the wire index itself. The
// bellperson input constraints (input_i * 0 = 0) are appended, as snarkjs also
// does when it builds the zkey's A query.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "groth16/r1cs.hpp"

namespace cuzk::groth16 {

struct CircomHeader {
  std::uint32_t n_wires = 0;
  std::uint32_t n_pub_out = 0;
  std::uint32_t n_pub_in = 0;
  std::uint32_t n_prv_in = 0;
  std::uint64_t n_labels = 0;
  std::uint32_t n_constraints = 0;  // as in the file, without input constraints
};

struct CircomR1cs {
  CircomHeader header;
  R1cs r1cs;
};

// Errors throw R1csError: kIo, kBadMagic, kBadVersion, kTruncated, kMalformed,
// kWrongPrime (not the BLS12-381 scalar field), kWrongSize.
CircomR1cs parse_circom_r1cs(std::span<const std::uint8_t> file_bytes);
CircomR1cs load_circom_r1cs(const std::filesystem::path& path);

// All wire values, in wire order (wires[0] = 1).
std::vector<Fr> parse_circom_wtns(std::span<const std::uint8_t> file_bytes);
std::vector<Fr> load_circom_wtns(const std::filesystem::path& path);

// Splits wire values into (inputs, aux) for `r1cs`; kWrongSize when the
// count differs from r1cs.num_variables(), kMalformed when wires[0] != 1.
Witness split_wires(const R1cs& r1cs, std::span<const Fr> wires);

}  // namespace cuzk::groth16
