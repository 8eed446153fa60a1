// The digest that identifies a job's input: what JobRequest::same_work
// compares (kind, demo size and seed, the C1 bytes), hashed so that a
// journal record can keep it after the input file is gone. A request id
// resubmitted after a restart with a different input is refused by comparing
// digests, exactly as before the restart (engine.cpp, Engine::screen).
//
// SHA-256 (OpenSSL) over a canonical, length-prefixed encoding, little-endian:
//   "cuzk-request-v1" 0x00 | u8 kind | u32 demo log2 domain | u64 demo seed |
//   u64 C1 bytes | the C1 JSON bytes
// Priority and request id are not part of it (same_work ignores them). The
// encoding is fixed: digests live in journals across daemon versions; a
// change needs a new tag.
#pragma once

#include "engine/types.hpp"
#include "policy/journal.hpp"

namespace cuzk::engine {

// Blocking: ~50 MB of C1 hashes in tens of ms (SHA extensions) or ~0.2 s.
policy::RequestDigest request_digest(const JobRequest& request);

}  // namespace cuzk::engine
