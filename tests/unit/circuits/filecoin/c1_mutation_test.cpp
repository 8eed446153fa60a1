// Mutations of a genuine 2 KiB C1 output (deterministic seed): truncations,
// byte changes, type swaps, deep nesting, out-of-range numbers and huge
// arrays. Every one must parse or fail with a C1Error, and a parsed one must
// pass or fail verify_c1 / the public-input derivation with a typed error:
// never another exception type, an abort or a crash (which ends this test).
// Each is also parsed with a pool (parse_c1's partitions parsed apart): the
// same C1Output or the same error, every time.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::string genuine_c1_json() {
  SyntheticSealInputs in;
  for (int i = 0; i < 32; ++i) {
    in.prover_id[i] = std::uint8_t(3 * i);
    in.ticket[i] = std::uint8_t(5 + i);
    in.seed[i] = std::uint8_t(7 * i + 1);
  }
  in.sector_id = 77;
  in.data_seed = 11;
  return to_json(make_synthetic_c1(SealProof::StackedDrg2KiBV1_1, in));
}

enum class Outcome { kParsedAndVerified, kTypedError };

// parse_c1's answer as text: the value's JSON, or the error's kind and message.
std::string parse_answer(const std::string& text, ThreadPool* pool) {
  try {
    return "ok " + to_json(parse_c1(text, pool));
  } catch (const C1Error& e) {
    return "error " + std::string(to_string(e.kind())) + " " + e.what();
  }
}

// Parses and, when that succeeds, verifies; fails the test on any exception
// that is not one of the typed input errors.
Outcome run_pipeline(const std::string& text, const std::string& what) {
  static ThreadPool pool(3);
  EXPECT_EQ(parse_answer(text, nullptr), parse_answer(text, &pool)) << what;
  try {
    const C1Output c1 = parse_c1(text);
    // The daemon's order: public inputs straight after the parse.
    porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
    verify_c1(c1, C1VerifyDepth::Full);
    return Outcome::kParsedAndVerified;
  } catch (const C1Error&) {
    return Outcome::kTypedError;
  } catch (const PorepC2Error&) {
    return Outcome::kTypedError;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": untyped exception: " << e.what();
  }
  return Outcome::kTypedError;
}

// Start offsets of the number tokens (candidates for value replacement).
std::vector<std::size_t> number_starts(const std::string& s) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (digit && (i == 0 || s[i - 1] == '[' || s[i - 1] == ',' || s[i - 1] == ':')) out.push_back(i);
  }
  return out;
}

std::size_t number_end(const std::string& s, std::size_t at) {
  while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
  return at;
}

TEST(C1Mutation, EveryMutationIsParsedOrATypedError) {
  const std::string good = genuine_c1_json();
  ASSERT_EQ(run_pipeline(good, "genuine"), Outcome::kParsedAndVerified);
  const std::vector<std::size_t> numbers = number_starts(good);
  ASSERT_GT(numbers.size(), 1000u);

  std::mt19937_64 rng(0xC1C1C1C1ULL);
  auto pick = [&rng](std::size_t n) { return std::size_t(rng() % n); };
  auto replace_number = [&](const std::string& with) {
    const std::size_t at = numbers[pick(numbers.size())];
    return good.substr(0, at) + with + good.substr(number_end(good, at));
  };
  const std::vector<std::string> scalars = {"null",
                                            "true",
                                            "\"s\"",
                                            "{}",
                                            "[]",
                                            "1.5",
                                            "-1",
                                            "1e400",
                                            "-1e400",
                                            "1e308",
                                            "18446744073709551616",
                                            "99999999999999999999999999999",
                                            "-9223372036854775809",
                                            "256",
                                            "4294967296",
                                            "0.0",
                                            "\"\\u0000\""};
  const std::string syntax = "[]{}\",:-.eE0123456789 tfn\\";

  std::size_t parsed = 0, typed = 0;
  auto record = [&](const std::string& text, const std::string& what) {
    (run_pipeline(text, what) == Outcome::kParsedAndVerified ? parsed : typed)++;
  };
  for (int i = 0; i < 80; ++i) {  // truncations
    const std::size_t len = pick(good.size());
    record(good.substr(0, len), "truncated to " + std::to_string(len));
  }
  for (int i = 0; i < 120; ++i) {  // one byte changed: JSON punctuation, or any byte
    std::string t = good;
    const std::size_t at = pick(t.size());
    t[at] = i % 3 == 0 ? char(rng() & 0xff) : syntax[pick(syntax.size())];
    record(t, "byte " + std::to_string(at) + " = " + std::to_string(std::uint8_t(t[at])));
  }
  for (int i = 0; i < 80; ++i) {  // a number replaced by another type or an extreme number
    record(replace_number(scalars[std::size_t(i) % scalars.size()]), "type swap " + std::to_string(i));
  }
  for (std::size_t depth : {63, 64, 65, 1000, 100000, 1000000}) {  // deep nesting where a byte is expected
    record(replace_number(std::string(depth, '[') + std::string(depth, ']')), "depth " + std::to_string(depth));
    record(replace_number(std::string(depth, '[')), "unclosed depth " + std::to_string(depth));
    std::string objects;
    for (std::size_t d = 0; d < depth; ++d) objects += "{\"a\":";
    record(replace_number(objects + "1" + std::string(depth, '}')), "object depth " + std::to_string(depth));
  }
  for (std::size_t n : {1000, 100000, 1000000}) {  // huge arrays where a byte or a domain is expected
    std::string arr = "[0";
    for (std::size_t k = 1; k < n; ++k) arr += ",0";
    arr += "]";
    record(replace_number(arr), "array of " + std::to_string(n));
    const std::size_t at = good.find("\"rows\":[") + 7;
    record(good.substr(0, at) + arr + good.substr(good.find("]]", at) + 2), "rows of " + std::to_string(n));
  }
  // The last byte of a random 32-byte value set high: >= r unless a plain
  // byte string (seed, ticket).
  std::vector<std::size_t> domain_ends;
  for (std::size_t i = 0; i + 1 < good.size(); ++i)
    if (good[i] == ']' && i > 0 && good[i - 1] >= '0' && good[i - 1] <= '9') domain_ends.push_back(i);
  for (int i = 0; i < 40; ++i) {
    const std::size_t end = domain_ends[pick(domain_ends.size())];
    const std::size_t start = good.rfind(',', end) + 1;
    record(good.substr(0, start) + (i % 2 ? "255" : "128") + good.substr(end),
           "high byte before " + std::to_string(end));
  }
  for (const char* field : {"\"replica_id\":[", "\"comm_d\":[", "\"comm_r\":["}) {
    const std::size_t at = good.find(field) + std::strlen(field);
    const std::size_t end = good.find(']', at);
    record(good.substr(0, good.rfind(',', end) + 1) + "255" + good.substr(end), field);
  }
  for (int i = 0; i < 20; ++i) {  // trailing data
    record(good + (i % 2 ? std::string(1, '\0') : std::string(" ")) + good.substr(0, pick(good.size())),
           "trailing " + std::to_string(i));
  }
  // Almost every mutation breaks something a full verification sees.
  EXPECT_GT(typed, 300u);
  std::printf("%zu mutations: %zu parsed and verified, %zu typed errors\n", parsed + typed, parsed, typed);
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
