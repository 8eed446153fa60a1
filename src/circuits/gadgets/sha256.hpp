// SHA-256 in R1CS with bellpepper's exact shape (sha256.rs): message
// schedule and rounds on UInt32 words, additions deferred and merged into
// one addmany per new word, all addmany equalities batched through MultiEq.
//   one compression of 512 allocated bits: 25,840 constraints (+512 bit checks)
//   sha256 of a 512-bit message (two blocks, the second constant): 44,874
// plus rust-fil-proofs' Sha256Function circuit helpers (Fr-packed digests).
#pragma once

#include <span>
#include <vector>

#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/uint32.hpp"

namespace cuzk::circuits::gadgets {

// H' = compress(H, block); `input` is 512 bits, most significant first per word.
std::vector<UInt32> sha256_compression_function(ConstraintSystem& cs, std::span<const Boolean> input,
                                                std::span<const UInt32> current_hash_value);

// One block from the standard IV, no padding: 256 digest bits (big-endian).
std::vector<Boolean> sha256_block_no_padding(ConstraintSystem& cs, std::span<const Boolean> input);

// Full SHA-256 with padding of a whole number of bytes (bits big-endian per
// byte): 256 digest bits, big-endian.
std::vector<Boolean> sha256(ConstraintSystem& cs, std::span<const Boolean> input);

// rfp Sha256Function::hash_circuit: sha256, then bits little-endian per byte,
// first 254 packed into one number (the fr32-trimmed digest as Fr).
AllocatedNum sha256_hash_circuit(ConstraintSystem& cs, std::span<const Boolean> bits);
// rfp hash_leaf_bits_circuit: left and right LE bit strings, each padded to
// whole bytes and reordered to BE per byte, hashed.
AllocatedNum sha256_hash_leaf_bits_circuit(ConstraintSystem& cs, std::span<const Boolean> left,
                                           std::span<const Boolean> right);
// rfp hash2_circuit: to_bits_le (non-strict) of both numbers, then as above.
AllocatedNum sha256_hash2_circuit(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b);
// rfp hash_multi_leaf_circuit: each leaf to_bits_le, byte-reordered, concatenated.
AllocatedNum sha256_hash_multi_leaf_circuit(ConstraintSystem& cs, std::span<const AllocatedNum> leaves);

}  // namespace cuzk::circuits::gadgets
