// Integrity of published parameter files: Filecoin's parameters.json lists,
// per file, the first 32 hex characters of the BLAKE2b-512 digest of the
// whole file (rust-fil-proofs parameter_cache.rs, verify_production_params).
#pragma once

#include <cstdint>
#include <functional>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

namespace cuzk::groth16 {

// Full BLAKE2b-512 of a file, lowercase hex (128 chars). Streams the file;
// throws std::runtime_error on I/O failure.
std::string blake2b_file_hex(const std::filesystem::path& path,
                             const std::function<void(std::uint64_t done, std::uint64_t total)>& progress = {});

// BLAKE2b-512 of a byte string, lowercase hex.
std::string blake2b_hex(std::span<const std::uint8_t> bytes);

struct PublishedParam {
  std::string name, cid, digest;  // digest: 32 hex chars
  std::uint64_t sector_size = 0;
};
// Looks `file_name` up in a parameters.json document (its text). A document
// that is not JSON (util/json_input), or an entry that is not an object, is
// nullopt; mistyped members read as empty / 0.
std::optional<PublishedParam> find_published(const std::string& parameters_json, const std::string& file_name);

}  // namespace cuzk::groth16
