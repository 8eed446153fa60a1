// C1 (SealCommitPhase1Output) JSON: round trips, every malformed case, and
// vanilla verification of a natively synthesised 2 KiB seal.
//
// There is no published small C1 file (FILECOIN.md §5), so the valid input
// is produced by make_synthetic_c1, whose building blocks are checked against
// external vectors elsewhere (parent-cache digests, rfp label vectors,
// Poseidon vectors); its JSON layout is asserted against the serde layout
// documented from rust-fil-proofs' struct definitions.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/graph.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using json = nlohmann::json;

Digest32 filled(std::uint8_t b) {
  Digest32 d;
  d.fill(b);
  return d;
}

SyntheticSealInputs inputs() {
  SyntheticSealInputs in;
  for (int i = 0; i < 32; ++i) in.prover_id[i] = std::uint8_t(i);
  in.sector_id = 4242;
  in.ticket = filled(0x17);
  in.seed = filled(0x29);
  in.data_seed = 7;
  return in;
}

class C1Fixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    v1_ = new C1Output(make_synthetic_c1(SealProof::StackedDrg2KiBV1, inputs()));
    v11_ = new C1Output(make_synthetic_c1(SealProof::StackedDrg2KiBV1_1, inputs()));
    v11_json_ = new std::string(to_json(*v11_));
  }
  static void TearDownTestSuite() {
    delete v1_;
    delete v11_;
    delete v11_json_;
  }
  static const C1Output& v1() { return *v1_; }
  static const C1Output& v11() { return *v11_; }
  static const std::string& v11_json() { return *v11_json_; }

  // Parses, mutates and re-serialises the valid document; expects parse_c1
  // to fail with `kind` at `path`.
  static void expect_error(const std::function<void(json&)>& mutate, C1ErrorKind kind, const std::string& path) {
    json doc = json::parse(v11_json());
    mutate(doc);
    try {
      parse_c1(doc.dump());
      ADD_FAILURE() << "parse succeeded, expected " << to_string(kind) << " at " << path;
    } catch (const C1Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_EQ(e.json_path(), path) << e.what();
    }
  }
  static json& proof0(json& doc) { return doc["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]; }

 private:
  static inline C1Output* v1_ = nullptr;
  static inline C1Output* v11_ = nullptr;
  static inline std::string* v11_json_ = nullptr;
};

const std::string kP0 = "/vanilla_proofs/StackedDrg2KiBV1/0/0";

TEST_F(C1Fixture, SynthesisedSealVerifies) {
  for (const C1Output* c : {&v1(), &v11()}) {
    EXPECT_NO_THROW(check_structure(*c));
    EXPECT_NO_THROW(verify_c1(*c, C1VerifyDepth::Full));
    EXPECT_EQ(c->vanilla_proofs.size(), 1u);
    EXPECT_EQ(c->vanilla_proofs[0].size(), 2u);
  }
  // The api versions give different DRG parent orders: swapping the proof
  // name makes the parents disagree with the graph.
  C1Output renamed = v1();
  renamed.registered_proof = SealProof::StackedDrg2KiBV1_1;
  try {
    verify_c1(renamed, C1VerifyDepth::PublicData);
    ADD_FAILURE() << "expected ParentMismatch";
  } catch (const C1Error& e) {
    EXPECT_EQ(e.kind(), C1ErrorKind::ParentMismatch) << e.what();
  }
}

TEST_F(C1Fixture, JsonRoundTripIsExact) {
  const C1Output back = parse_c1(v11_json());
  EXPECT_EQ(back, v11());
  EXPECT_EQ(to_json(back), v11_json());
  // nlohmann's own serialiser (compact, insertion order) gives the same
  // bytes: our writer emits plain serde_json compact JSON.
  EXPECT_EQ(nlohmann::ordered_json::parse(v11_json()).dump(), v11_json());
  EXPECT_EQ(parse_c1(to_json(v1())), v1());
}

TEST_F(C1Fixture, JsonLayoutFollowsSerde) {
  const std::string& s = v11_json();
  EXPECT_EQ(s.rfind("{\"registered_proof\":\"StackedDrg2KiBV1_1\",\"vanilla_proofs\":{\"StackedDrg2KiBV1\":"
                    "[[{\"comm_d_proofs\":{\"data\":{\"Single\":{\"root\":[",
                    0),
            0u);
  const auto doc = nlohmann::ordered_json::parse(s);
  std::vector<std::string> top_keys;
  for (const auto& [k, v] : doc.items()) top_keys.push_back(k);
  EXPECT_EQ(top_keys, (std::vector<std::string>{"registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id",
                                                "seed", "ticket"}));
  const auto& p = doc["vanilla_proofs"]["StackedDrg2KiBV1"][0][0];
  std::vector<std::string> proof_keys;
  for (const auto& [k, v] : p.items()) proof_keys.push_back(k);
  EXPECT_EQ(proof_keys, (std::vector<std::string>{"comm_d_proofs", "comm_r_last_proof", "replica_column_proofs",
                                                  "labeling_proofs", "encoding_proof"}));
  const auto& col = p["replica_column_proofs"]["c_x"]["column"];
  EXPECT_TRUE(col.contains("_h") && col["_h"].is_null());
  EXPECT_EQ(p["comm_d_proofs"]["data"]["Single"]["path"]["path"].size(), 6u);      // 64 leaves, binary
  EXPECT_EQ(p["comm_r_last_proof"]["data"]["Single"]["path"]["path"].size(), 2u);  // 8^2
  EXPECT_EQ(p["comm_r_last_proof"]["data"]["Single"]["path"]["path"][0]["hashes"].size(), 7u);
  EXPECT_EQ(p["labeling_proofs"][1]["layer_index"], 2);
  EXPECT_EQ(p["encoding_proof"]["parents"].size(), 37u);
}

TEST_F(C1Fixture, MalformedTopLevel) {
  try {
    parse_c1("{\"registered_proof\": ");
    ADD_FAILURE();
  } catch (const C1Error& e) {
    EXPECT_EQ(e.kind(), C1ErrorKind::JsonSyntax);
  }
  expect_error([](json& d) { d.erase("comm_r"); }, C1ErrorKind::MissingField, "/comm_r");
  expect_error([](json& d) { d["comm_d"].erase(31); }, C1ErrorKind::ByteLength, "/comm_d");
  expect_error([](json& d) { d["seed"][3] = 256; }, C1ErrorKind::ByteValue, "/seed/3");
  expect_error([](json& d) { d["seed"][4] = -1; }, C1ErrorKind::ByteValue, "/seed/4");
  expect_error([](json& d) { d["ticket"] = "00"; }, C1ErrorKind::WrongType, "/ticket");
  expect_error([](json& d) { d["registered_proof"] = "StackedDrg4KiBV1"; }, C1ErrorKind::UnknownProof,
               "/registered_proof");
  expect_error([](json& d) { d["registered_proof"] = 5; }, C1ErrorKind::WrongType, "/registered_proof");
  // The vanilla key must be the V1 name of the declared size.
  expect_error([](json& d) { d["registered_proof"] = "StackedDrg8MiBV1_1"; }, C1ErrorKind::ProofKeyMismatch,
               "/vanilla_proofs/StackedDrg2KiBV1");
  expect_error(
      [](json& d) {
        d["vanilla_proofs"]["StackedDrg2KiBV1_1"] = d["vanilla_proofs"]["StackedDrg2KiBV1"];
        d["vanilla_proofs"].erase("StackedDrg2KiBV1");
      },
      C1ErrorKind::ProofKeyMismatch, "/vanilla_proofs/StackedDrg2KiBV1_1");
  expect_error(
      [](json& d) {
        auto& parts = d["vanilla_proofs"]["StackedDrg2KiBV1"];
        parts.push_back(parts[0]);
      },
      C1ErrorKind::PartitionCount, "/vanilla_proofs/StackedDrg2KiBV1");
  expect_error([](json& d) { d["vanilla_proofs"]["StackedDrg2KiBV1"][0].erase(1); }, C1ErrorKind::ChallengeCount,
               "/vanilla_proofs/StackedDrg2KiBV1/0");
  expect_error([](json& d) { d["comm_r"][0] = int(d["comm_r"][0]) ^ 1; }, C1ErrorKind::RootMismatch, "/comm_r");
}

TEST_F(C1Fixture, MalformedMerkleProofs) {
  const std::string d_path = kP0 + "/comm_d_proofs/data/Single/path/path";
  expect_error([](json& d) { proof0(d)["comm_d_proofs"]["data"]["Single"]["path"]["path"].erase(5); },
               C1ErrorKind::PathLength, d_path);
  expect_error(
      [](json& d) {
        auto& h = proof0(d)["comm_d_proofs"]["data"]["Single"]["path"]["path"][2]["hashes"];
        h.push_back(h[0]);
      },
      C1ErrorKind::PathArity, d_path + "/2/hashes");
  expect_error([](json& d) { proof0(d)["comm_d_proofs"]["data"]["Single"]["path"]["path"][0]["index"] = 2; },
               C1ErrorKind::PathArity, d_path + "/0/index");
  expect_error([](json& d) { proof0(d)["comm_d_proofs"]["data"]["Single"]["root"][0] = 0; }, C1ErrorKind::RootMismatch,
               kP0 + "/comm_d_proofs/data/Single/root");

  const std::string r_path = kP0 + "/comm_r_last_proof/data/Single/path/path";
  expect_error([](json& d) { proof0(d)["comm_r_last_proof"]["data"]["Single"]["path"]["path"][1]["hashes"].erase(0); },
               C1ErrorKind::PathArity, r_path + "/1/hashes");
  expect_error([](json& d) { proof0(d)["comm_r_last_proof"]["data"]["Single"]["path"]["path"][1]["index"] = 8; },
               C1ErrorKind::PathArity, r_path + "/1/index");
  expect_error([](json& d) { proof0(d)["comm_r_last_proof"]["data"]["Single"]["path"]["path"][1]["index"] = -3; },
               C1ErrorKind::IntegerRange, r_path + "/1/index");
  // A Sub proof where the 2 KiB tree R is a single tree.
  expect_error(
      [](json& d) {
        auto& data = proof0(d)["comm_r_last_proof"]["data"];
        json single = data["Single"];
        json sub = {{"base_proof", single["path"]},
                    {"sub_proof", {{"path", json::array()}}},
                    {"root", single["root"]},
                    {"leaf", single["leaf"]}};
        data = {{"Sub", sub}};
      },
      C1ErrorKind::ProofShape, kP0 + "/comm_r_last_proof/data");
  expect_error(
      [](json& d) {
        proof0(d)["comm_r_last_proof"]["data"] = {{"Middle", json::object()}};
      },
      C1ErrorKind::WrongType, kP0 + "/comm_r_last_proof/data/Middle");
  expect_error([](json& d) { proof0(d)["comm_r_last_proof"]["data"]["Single"].erase("leaf"); },
               C1ErrorKind::MissingField, kP0 + "/comm_r_last_proof/data/Single/leaf");
  // The second challenge's tree R root differs from the first one's.
  expect_error(
      [](json& d) {
        auto& root = d["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]["comm_r_last_proof"]["data"]["Single"]["root"];
        root[0] = int(root[0]) ^ 1;
      },
      C1ErrorKind::RootMismatch, "/vanilla_proofs/StackedDrg2KiBV1/0/1/comm_r_last_proof/data/Single/root");
  // A leaf path that opens another node than the challenge.
  expect_error(
      [](json& d) {
        auto& e = proof0(d)["comm_d_proofs"]["data"]["Single"]["path"]["path"][0];
        e["index"] = 1 - int(e["index"]);
      },
      C1ErrorKind::ChallengeMismatch, kP0 + "/comm_d_proofs");
}

TEST_F(C1Fixture, MalformedColumnsAndLabels) {
  const std::string rcp = kP0 + "/replica_column_proofs";
  expect_error([](json& d) { proof0(d)["replica_column_proofs"]["drg_parents"].erase(5); }, C1ErrorKind::ParentCount,
               rcp + "/drg_parents");
  expect_error(
      [](json& d) {
        auto& e = proof0(d)["replica_column_proofs"]["exp_parents"];
        e.push_back(e[0]);
      },
      C1ErrorKind::ParentCount, rcp + "/exp_parents");
  expect_error(
      [](json& d) {
        auto& rows = proof0(d)["replica_column_proofs"]["c_x"]["column"]["rows"];
        rows.push_back(rows[0]);
      },
      C1ErrorKind::LayerCount, rcp + "/c_x/column/rows");
  expect_error([](json& d) { proof0(d)["replica_column_proofs"]["exp_parents"][2]["column"]["index"] = 1ULL << 32; },
               C1ErrorKind::IntegerRange, rcp + "/exp_parents/2/column/index");
  expect_error([](json& d) { proof0(d)["replica_column_proofs"]["c_x"]["column"].erase("rows"); },
               C1ErrorKind::MissingField, rcp + "/c_x/column/rows");
  expect_error(
      [](json& d) {
        auto& c = proof0(d)["replica_column_proofs"]["drg_parents"][1]["column"]["index"];
        c = int(c) ^ 1;
      },
      C1ErrorKind::ChallengeMismatch, rcp + "/drg_parents/1/inclusion_proof");
  expect_error([](json& d) { proof0(d)["labeling_proofs"].erase(1); }, C1ErrorKind::LayerCount,
               kP0 + "/labeling_proofs");
  expect_error([](json& d) { proof0(d)["labeling_proofs"][0]["parents"].erase(36); }, C1ErrorKind::ParentCount,
               kP0 + "/labeling_proofs/0/parents");
  expect_error([](json& d) { proof0(d)["labeling_proofs"][1]["layer_index"] = 1; }, C1ErrorKind::LayerIndex,
               kP0 + "/labeling_proofs/1/layer_index");
  expect_error([](json& d) { proof0(d)["encoding_proof"]["layer_index"] = 1; }, C1ErrorKind::LayerIndex,
               kP0 + "/encoding_proof/layer_index");
  expect_error([](json& d) { proof0(d)["labeling_proofs"][0]["node"] = 3; }, C1ErrorKind::ChallengeMismatch,
               kP0 + "/labeling_proofs/0/node");
  expect_error([](json& d) { proof0(d)["labeling_proofs"][0]["parents"][4][32 - 1] = 300; }, C1ErrorKind::ByteValue,
               kP0 + "/labeling_proofs/0/parents/4/31");
}

C1ErrorKind parse_error_kind(std::string_view text) {
  try {
    parse_c1(text);
  } catch (const C1Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "parse succeeded";
  return C1ErrorKind::JsonSyntax;
}

// rust-fil-proofs' LabelingProof::verify recomputes each label from the
// labeling proof's own parents and compares it with c_x's row; our circuit
// uses the column rows instead. A C1 whose two copies disagree (one parent
// byte) proves and verifies unless the parse compares them.
TEST_F(C1Fixture, LabelingParentsMustEqualColumnRows) {
  expect_error(
      [](json& d) {
        auto& b = proof0(d)["labeling_proofs"][1]["parents"][20][0];
        b = int(b) ^ 1;
      },
      C1ErrorKind::LabelMismatch, kP0 + "/labeling_proofs/1/parents");
  // Layer 1 repeats the 6 DRG parents only.
  expect_error(
      [](json& d) {
        auto& b = proof0(d)["labeling_proofs"][0]["parents"][36][5];
        b = int(b) ^ 0x40;
      },
      C1ErrorKind::LabelMismatch, kP0 + "/labeling_proofs/0/parents");
  expect_error(
      [](json& d) {
        auto& b = proof0(d)["encoding_proof"]["parents"][3][7];
        b = int(b) ^ 2;
      },
      C1ErrorKind::LabelMismatch, kP0 + "/encoding_proof/parents");
  // The same on the in-memory value (second challenge).
  C1Output c = v11();
  c.vanilla_proofs[0][1].labeling_proofs[0].parents[0][31] ^= 1;
  try {
    check_structure(c);
    ADD_FAILURE() << "accepted";
  } catch (const C1Error& e) {
    EXPECT_EQ(e.kind(), C1ErrorKind::LabelMismatch);
    EXPECT_EQ(e.json_path(), "/vanilla_proofs/StackedDrg2KiBV1/0/1/labeling_proofs/0/parents");
  }
}

// Values >= r where the circuit or the public inputs read a field element
// (they abort on one): replica_id of 32 x 0xff crashed cuzkd before any
// proving. Seed and ticket are plain bytes.
TEST_F(C1Fixture, DomainValuesMustBeCanonical) {
  const auto all_ff = json(std::vector<int>(32, 255));
  expect_error([&](json& d) { d["replica_id"] = all_ff; }, C1ErrorKind::NonCanonicalField, "/replica_id");
  expect_error([&](json& d) { d["comm_d"] = all_ff; }, C1ErrorKind::RootMismatch,
               kP0 + "/comm_d_proofs/data/Single/root");
  expect_error(
      [&](json& d) {
        d["comm_d"] = all_ff;
        for (auto& c : d["vanilla_proofs"]["StackedDrg2KiBV1"][0])
          c["comm_d_proofs"]["data"]["Single"]["root"] = all_ff;
      },
      C1ErrorKind::NonCanonicalField, kP0 + "/comm_d_proofs/data/Single/root");
  expect_error([&](json& d) { proof0(d)["replica_column_proofs"]["exp_parents"][4]["column"]["rows"][1][31] = 0x80; },
               C1ErrorKind::NonCanonicalField, kP0 + "/replica_column_proofs/exp_parents/4/column/rows/1");
  expect_error(
      [&](json& d) {
        proof0(d)["replica_column_proofs"]["c_x"]["inclusion_proof"]["data"]["Single"]["path"]["path"][0]["hashes"][2] =
            all_ff;
      },
      C1ErrorKind::NonCanonicalField,
      kP0 + "/replica_column_proofs/c_x/inclusion_proof/data/Single/path/path/0/hashes/2");
  json doc = json::parse(v11_json());
  doc["seed"] = all_ff;
  doc["ticket"] = all_ff;
  EXPECT_NO_THROW(parse_c1(doc.dump()));
}

// Strict JSON: one document, bounded nesting, numbers in range; each is a
// typed JsonSyntax error, never an exception of another type or a crash.
TEST_F(C1Fixture, JsonInputIsStrict) {
  const std::string& good = v11_json();
  EXPECT_NO_THROW(parse_c1(good + "\n  "));
  EXPECT_EQ(parse_error_kind(good + " {}"), C1ErrorKind::JsonSyntax);
  EXPECT_EQ(parse_error_kind(good + std::string(1, '\0') + "garbage"), C1ErrorKind::JsonSyntax);
  EXPECT_EQ(parse_error_kind(good.substr(0, 100) + std::string(1, '\0') + good.substr(100)), C1ErrorKind::JsonSyntax);
  // A commitment replaced by a value nested 100,000 deep: the error message
  // once dumped it recursively (stack overflow).
  const std::size_t at = good.find("\"comm_r\":[") + 9;
  const std::size_t end = good.find(']', at) + 1;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(parse_error_kind(good.substr(0, at) + deep + good.substr(end)), C1ErrorKind::JsonSyntax);
  EXPECT_EQ(parse_error_kind(good.substr(0, at) + "[[[[1]]]]" + good.substr(end)), C1ErrorKind::ByteLength);
  // Numbers: out of double range (nlohmann's out_of_range) and merely large.
  auto with_byte = [&](const std::string& v) {
    const std::size_t b = good.find("\"seed\":[") + 8;
    return good.substr(0, b) + v + good.substr(good.find(',', b));
  };
  EXPECT_EQ(parse_error_kind(with_byte("1e400")), C1ErrorKind::JsonSyntax);
  EXPECT_EQ(parse_error_kind(with_byte("-1e400")), C1ErrorKind::JsonSyntax);
  EXPECT_EQ(parse_error_kind(with_byte("1e300")), C1ErrorKind::ByteValue);
  EXPECT_EQ(parse_error_kind(with_byte("184467440737095516160")), C1ErrorKind::ByteValue);
  EXPECT_EQ(parse_error_kind(with_byte("-9223372036854775809")), C1ErrorKind::ByteValue);
  // Error messages quote at most a short excerpt of the offending value.
  try {
    parse_c1(with_byte("\"" + std::string(100000, 'x') + "\""));
    ADD_FAILURE();
  } catch (const C1Error& e) {
    EXPECT_EQ(e.kind(), C1ErrorKind::ByteValue);
    EXPECT_LT(std::string_view(e.what()).size(), 300u) << e.what();
  }
  expect_error(
      [](json& d) {
        d["vanilla_proofs"] = json{{std::string(100000, 'K'), json::array()}};
      },
      C1ErrorKind::ProofKeyMismatch, "/vanilla_proofs/" + std::string(64, 'K') + "...");
}

void expect_verify_error(const C1Output& c, C1VerifyDepth depth, C1ErrorKind kind, const std::string& path) {
  try {
    verify_c1(c, depth);
    ADD_FAILURE() << "verify succeeded, expected " << to_string(kind);
  } catch (const C1Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(e.json_path(), path) << e.what();
  }
}

TEST_F(C1Fixture, VerifyCatchesWhatStructureCannot) {
  {
    C1Output c = v11();
    c.seed[0] ^= 1;  // challenges no longer derive from (replica_id, seed)
    EXPECT_NO_THROW(check_structure(c));
    expect_verify_error(c, C1VerifyDepth::PublicData, C1ErrorKind::ChallengeMismatch,
                        kP0 + "/replica_column_proofs/c_x/column/index");
  }
  {
    C1Output c = v11();
    auto& drg = c.vanilla_proofs[0][0].replica_column_proofs.drg_parents;
    std::swap(drg[1], drg[2]);
    if (drg[1].column.index != drg[2].column.index) {
      EXPECT_NO_THROW(check_structure(c));
      expect_verify_error(c, C1VerifyDepth::PublicData, C1ErrorKind::ParentMismatch,
                          kP0 + "/replica_column_proofs/drg_parents/1/column/index");
    }
  }
  {
    // A tree R sibling changed (still a canonical Fr): only hashing sees it.
    C1Output c = v11();
    c.vanilla_proofs[0][0].comm_r_last_proof.base[0].hashes[3][0] ^= 1;
    EXPECT_NO_THROW(verify_c1(c, C1VerifyDepth::PublicData));
    expect_verify_error(c, C1VerifyDepth::Full, C1ErrorKind::PathMismatch, kP0 + "/comm_r_last_proof/data/Single/root");
  }
  {
    C1Output c = v11();
    c.vanilla_proofs[0][1].comm_d_proofs.base[2].hashes[0][5] ^= 1;
    expect_verify_error(c, C1VerifyDepth::Full, C1ErrorKind::PathMismatch,
                        "/vanilla_proofs/StackedDrg2KiBV1/0/1/comm_d_proofs/data/Single/root");
  }
  {
    C1Output c = v11();
    c.vanilla_proofs[0][0].labeling_proofs[1].parents[20][0] ^= 1;
    expect_verify_error(c, C1VerifyDepth::Full, C1ErrorKind::LabelMismatch, kP0 + "/labeling_proofs/1/parents");
  }
  {
    C1Output c = v11();
    c.vanilla_proofs[0][0].replica_column_proofs.c_x.column.rows[1][0] ^= 1;  // column hash breaks
    expect_verify_error(c, C1VerifyDepth::Full, C1ErrorKind::PathMismatch,
                        kP0 + "/replica_column_proofs/c_x/inclusion_proof/data/Single/leaf");
  }
  {
    C1Output c = v11();
    c.vanilla_proofs[0][0].comm_r_last_proof.base[1].hashes[0].fill(0xff);  // >= r
    expect_verify_error(c, C1VerifyDepth::Full, C1ErrorKind::NonCanonicalField,
                        kP0 + "/comm_r_last_proof/data/Single/path/path/1/hashes/0");
  }
}

// A structurally valid C1 of a large sector (32 GiB: Sub proofs; 64 GiB:
// Top proofs) with consistent roots but dummy hashes: exercises the Sub/Top
// parsing, shape checks and serialisation without sealing 32 GiB.
C1Output shape_only_c1(SealProof proof) {
  const SealProofInfo& info = seal_proof_info(proof);
  const StackedGraph graph = StackedGraph::for_proof(proof);
  C1Output c1;
  c1.registered_proof = proof;
  c1.comm_d = filled(0x0d);
  c1.replica_id = filled(0x01);
  c1.seed = filled(0x02);
  c1.ticket = filled(0x03);
  const Digest32 root_r = filled(0x11), root_c = filled(0x22);
  c1.comm_r =
      native::fr_to_le_bytes(native::poseidon2(native::fr_from_le_bytes(root_c), native::fr_from_le_bytes(root_r)));
  const MerkleProofKind kind = info.top_arity != 0 ? MerkleProofKind::Top : MerkleProofKind::Sub;
  auto rc_proof = [&](std::uint64_t node, const Digest32& root) {
    MerkleProof m;
    m.kind = kind;
    m.root = root;
    m.leaf = filled(0x05);
    for (std::uint32_t l = 0; l < info.base_levels; ++l, node /= 8) {
      m.base.push_back(PathElement{std::vector<Digest32>(7, filled(0x06)), node % 8});
    }
    m.sub.push_back(PathElement{std::vector<Digest32>(7, filled(0x07)), node % 8});
    node /= 8;
    if (kind == MerkleProofKind::Top) m.top.push_back(PathElement{{filled(0x08)}, node % 2});
    return m;
  };
  auto column = [&](std::uint32_t node) {
    return ColumnProof{Column{node, std::vector<Digest32>(info.layers, filled(0x09))}, rc_proof(node, root_c)};
  };
  c1.vanilla_proofs.resize(info.partitions);
  for (std::uint32_t k = 0; k < info.partitions; ++k) {
    for (std::uint64_t ch :
         interactive_challenges(info.nodes, c1.replica_id, c1.seed, info.challenges_per_partition, k)) {
      ChallengeProof p;
      p.comm_d_proofs.root = c1.comm_d;
      std::uint64_t n = ch;
      for (std::uint32_t l = 0; l < info.comm_d_levels; ++l, n /= 2) {
        p.comm_d_proofs.base.push_back(PathElement{{filled(0x0a)}, n % 2});
      }
      p.comm_r_last_proof = rc_proof(ch, root_r);
      p.replica_column_proofs.c_x = column(std::uint32_t(ch));
      const Parents parents = graph.parents(std::uint32_t(ch));
      for (std::size_t j = 0; j < kDegree; ++j) {
        (j < kBaseDegree ? p.replica_column_proofs.drg_parents : p.replica_column_proofs.exp_parents)
            .push_back(column(parents[j]));
      }
      for (std::uint32_t l = 1; l <= info.layers; ++l) {
        // Every column row is 0x09, so are the expanded parents.
        p.labeling_proofs.push_back(LabelingProof{std::vector<Digest32>(37, filled(0x09)), l, ch});
      }
      p.encoding_proof = p.labeling_proofs.back();
      c1.vanilla_proofs[k].push_back(std::move(p));
    }
  }
  return c1;
}

TEST(C1LargeShapes, SubAndTopProofsRoundTrip) {
  for (SealProof proof : {SealProof::StackedDrg32GiBV1_1, SealProof::StackedDrg64GiBV1}) {
    const C1Output c1 = shape_only_c1(proof);
    EXPECT_NO_THROW(check_structure(c1));
    // Public-data verification (challenges, parents) holds; hashing would not.
    EXPECT_NO_THROW(verify_c1(c1, C1VerifyDepth::PublicData));
    const auto t0 = std::chrono::steady_clock::now();
    const std::string text = to_json(c1);
    const C1Output back = parse_c1(text);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(back, c1);
    std::printf("  %s: C1 JSON %.1f MB, serialise + parse %.0f ms\n", std::string(seal_proof_info(proof).name).c_str(),
                text.size() / 1e6, ms);
    // A Single proof where the shape needs Sub/Top.
    C1Output bad = c1;
    auto& m = bad.vanilla_proofs[9][17].comm_r_last_proof;
    m.kind = MerkleProofKind::Single;
    m.base = m.levels();
    m.sub.clear();
    m.top.clear();
    try {
      check_structure(bad);
      ADD_FAILURE();
    } catch (const C1Error& e) {
      EXPECT_EQ(e.kind(), C1ErrorKind::ProofShape);
      EXPECT_EQ(e.json_path(),
                "/vanilla_proofs/" + std::string(seal_proof_info(proof).v1_name) + "/9/17/comm_r_last_proof/data");
    }
    // A base path one level short.
    bad = c1;
    bad.vanilla_proofs[0][0].replica_column_proofs.exp_parents[7].inclusion_proof.base.pop_back();
    try {
      check_structure(bad);
      ADD_FAILURE();
    } catch (const C1Error& e) {
      EXPECT_EQ(e.kind(), C1ErrorKind::PathLength);
      const std::string kind = proof == SealProof::StackedDrg64GiBV1 ? "Top" : "Sub";
      EXPECT_EQ(e.json_path(), "/vanilla_proofs/" + std::string(seal_proof_info(proof).v1_name) +
                                   "/0/0/replica_column_proofs/exp_parents/7/inclusion_proof/data/" + kind +
                                   "/base_proof/path");
    }
  }
}

TEST(C1Registry, Table) {
  const auto& p32 = seal_proof_info(SealProof::StackedDrg32GiBV1_1);
  EXPECT_EQ(p32.nodes, 1ULL << 30);
  EXPECT_EQ(p32.layers, 11u);
  EXPECT_EQ(p32.partitions, 10u);
  EXPECT_EQ(p32.challenges_per_partition, 18u);  // ceil(176 / 10)
  EXPECT_EQ(p32.registered_id, 8u);
  EXPECT_EQ(p32.v1_name, "StackedDrg32GiBV1");
  for (const auto& info : seal_proofs()) {
    // Tree shape covers every node: 8^base * sub * top = nodes.
    std::uint64_t leaves = 1;
    for (std::uint32_t l = 0; l < info.base_levels; ++l) leaves *= 8;
    if (info.sub_arity) leaves *= info.sub_arity;
    if (info.top_arity) leaves *= info.top_arity;
    EXPECT_EQ(leaves, info.nodes) << info.name;
    EXPECT_EQ(1ULL << info.comm_d_levels, info.nodes) << info.name;
    EXPECT_EQ(seal_proof_from_name(info.name), info.proof);
    EXPECT_EQ(info.api_version, info.registered_id < 5 ? ApiVersion::V1_0_0 : ApiVersion::V1_1_0);
  }
  EXPECT_FALSE(seal_proof_from_name("StackedDrg2KiBV1_1_Feat_SyntheticPoRep"));
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
