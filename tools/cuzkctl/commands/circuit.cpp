// `cuzkctl circuit info NAME`: the shape of a built-in circuit, counted
// without values and without storing the R1CS (circuits/shape_stats.hpp).
//
//   constraints                        rows the circuit enforces (bellpepper
//                                      TestConstraintSystem::num_constraints)
//   constraints_with_input_constraints + one row per input (the prover's rows)
//   inputs                             including ONE
//   nnz_a                              includes the one A entry per input row
//                                      (as R1cs and cuzk-pce store A)
//   density_*                          variables the prover's A/B MSMs touch
//   fingerprint                        TestCs::hash / R1cs::fingerprint,
//                                      hashed while synthesizing; null for the
//                                      32/64 GiB partitions unless --fingerprint;
//                                      PoSt with --compiled: R1cs::fingerprint of
//                                      the daemon's compile (compile_post_shape)
//
// The 32/64 GiB partitions are counted from the global part and two
// challenges (stacked_shape_stats; --full synthesizes all 18); PoSt shapes
// from three sector slots (post_shape_stats; --full synthesizes all).
#include <bit>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "circuits/demo.hpp"
#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_prove.hpp"
#include "circuits/filecoin/stacked_circuit.hpp"
#include "circuits/filecoin/update_circuit.hpp"
#include "circuits/gadgets/boolean.hpp"
#include "circuits/gadgets/insertion.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/por.hpp"
#include "circuits/gadgets/poseidon.hpp"
#include "circuits/gadgets/sha256.hpp"
#include "circuits/shape_stats.hpp"
#include "cuzkctl/commands.hpp"

namespace cuzkctl {
namespace {

using namespace cuzk;
using namespace cuzk::circuits;
using groth16::ConstraintSystem;

// A circuit given as a synthesis function (blank: every value absent).
class FnCircuit final : public groth16::Circuit {
 public:
  explicit FnCircuit(std::function<void(ConstraintSystem&)> fn) : fn_(std::move(fn)) {}
  void synthesize(ConstraintSystem& cs) const override { fn_(cs); }

 private:
  std::function<void(ConstraintSystem&)> fn_;
};

std::vector<gadgets::Boolean> alloc_bits(ConstraintSystem& cs, std::size_t n) {
  std::vector<gadgets::Boolean> bits;
  for (std::size_t i = 0; i < n; ++i) {
    auto ns = cs.ns("bit", i);
    bits.emplace_back(gadgets::AllocatedBit::alloc(cs, std::nullopt));
  }
  return bits;
}

std::vector<gadgets::AllocatedNum> alloc_nums(ConstraintSystem& cs, std::size_t n) {
  std::vector<gadgets::AllocatedNum> nums;
  for (std::size_t i = 0; i < n; ++i) {
    auto ns = cs.ns("num", i);
    nums.push_back(gadgets::AllocatedNum::alloc(cs, std::nullopt));
  }
  return nums;
}

std::optional<gadgets::TreeShape> por_shape(const std::string& name) {
  if (name == "por-2") return gadgets::TreeShape{2, 0, 0};
  if (name == "por-4") return gadgets::TreeShape{4, 0, 0};
  if (name == "por-8") return gadgets::TreeShape{8, 0, 0};
  if (name == "por-8-2") return gadgets::TreeShape{8, 2, 0};
  if (name == "por-8-4-2") return gadgets::TreeShape{8, 4, 2};
  if (name == "por-8-8") return gadgets::TreeShape{8, 8, 0};
  if (name == "por-8-8-2") return gadgets::TreeShape{8, 8, 2};
  return std::nullopt;
}

// The blank circuit of a small (non-stacked) name, or nullptr.
std::unique_ptr<groth16::Circuit> small_circuit(const std::string& name, unsigned size) {
  if (name == "demo") {
    if (size < 2 || size > 27) throw std::invalid_argument("--size must be a log2 domain size in 2..27");
    return std::make_unique<DemoCircuit>(DemoCircuit::rounds_for_log_domain(size), std::nullopt);
  }
  // bellpepper sha256.rs tests: 512 allocated message bits (512 constraints)
  // plus 25,840 for one block / 44,874 for a padded 512-bit message.
  if (name == "sha256-block") {
    return std::make_unique<FnCircuit>([](ConstraintSystem& cs) {
      auto bits = alloc_bits(cs, 512);
      gadgets::sha256_block_no_padding(cs, bits);
    });
  }
  if (name == "sha256-512") {
    return std::make_unique<FnCircuit>([](ConstraintSystem& cs) {
      auto bits = alloc_bits(cs, 512);
      gadgets::sha256(cs, bits);
    });
  }
  // rfp storage-proofs-core util.rs: 2 x 256 bits + hash_leaf_bits = 45,387.
  if (name == "sha256-hash2-leaf") {
    return std::make_unique<FnCircuit>([](ConstraintSystem& cs) {
      auto left = alloc_bits(cs, 256);
      auto right = alloc_bits(cs, 256);
      gadgets::sha256_hash_leaf_bits_circuit(cs, left, right);
    });
  }
  if (name == "poseidon-2" || name == "poseidon-11") {
    const std::size_t arity = name == "poseidon-2" ? 2 : 11;
    return std::make_unique<FnCircuit>([arity](ConstraintSystem& cs) {
      auto nums = alloc_nums(cs, arity);
      gadgets::hash_single_column(cs, nums);
    });
  }
  // rfp insertion.rs tests: log2(arity) allocated index bits, arity - 1
  // elements, the inserted element, then insert.
  if (name == "insertion-2" || name == "insertion-4" || name == "insertion-8") {
    const std::size_t arity = std::stoul(name.substr(std::string("insertion-").size()));
    return std::make_unique<FnCircuit>([arity](ConstraintSystem& cs) {
      auto bits = alloc_bits(cs, std::size_t(std::countr_zero(arity)));
      auto elements = alloc_nums(cs, arity - 1);
      auto element = gadgets::AllocatedNum::alloc(cs, std::nullopt);
      gadgets::insert(cs, element, bits, elements);
    });
  }
  // rfp tests/por_circuit.rs: Poseidon trees of 64 leaves per base tree,
  // public root.
  if (auto shape = por_shape(name)) {
    const std::uint64_t trees = (shape->sub_arity ? shape->sub_arity : 1) * (shape->top_arity ? shape->top_arity : 1);
    return std::make_unique<gadgets::PorCircuit>(
        gadgets::PorCircuit::blank(*shape, gadgets::TreeHasher::kPoseidon, 64 * trees, false));
  }
  return nullptr;
}

bool is_large(const std::string& name) {
  return name == "porep-32g" || name == "porep-64g" || filecoin::post_shape_is_large(name);
}

void circuit_info(Context& ctx, const std::string& name, unsigned size, bool full, bool force_fingerprint,
                  bool compiled) {
  ShapeStats s;
  std::optional<std::string> fingerprint;
  std::optional<double> compile_s;  // --compiled: wall seconds of the compile
  const bool want_fingerprint = !is_large(name) || force_fingerprint;
  std::uint64_t update_nodes = 0;
  filecoin::UpdateVariant update_variant{};
  if (filecoin::update_circuit_by_name(name, update_nodes, update_variant)) {
    // SnapDeals partitions of 8 MiB and up are counted from three challenges.
    const bool big = update_nodes >= (std::uint64_t(1) << 18);
    s = filecoin::update_shape_stats(
        update_nodes, update_variant,
        big && !full ? filecoin::UpdateCountMode::kExtrapolate : filecoin::UpdateCountMode::kFull);
    if (!big || force_fingerprint) {
      fingerprint = stream_fingerprint(filecoin::UpdateCircuit::blank(update_nodes, update_variant), s);
    }
  } else if (auto shape = filecoin::stacked_shape_by_name(name)) {
    s = filecoin::stacked_shape_stats(*shape, full ? filecoin::CountMode::kFull : filecoin::CountMode::kExtrapolate);
    if (want_fingerprint) {
      fingerprint = stream_fingerprint(filecoin::StackedCircuit::blank(*shape), s);
    }
  } else if (auto post = filecoin::post_shape_by_name(name)) {
    s = filecoin::post_shape_stats(*post, full ? filecoin::CountMode::kFull : filecoin::CountMode::kExtrapolate);
    if (compiled) {
      // The R1cs the daemon proves with (slots after the third copied), hashed.
      const auto t0 = std::chrono::steady_clock::now();
      const groth16::R1cs r1cs = filecoin::compile_post_shape(*post);
      compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fingerprint = r1cs.fingerprint();
    } else if (want_fingerprint) {
      fingerprint = stream_fingerprint(filecoin::FallbackPostCircuit::blank(*post), s);
    }
  } else {
    std::unique_ptr<groth16::Circuit> c;
    try {
      c = small_circuit(name, size);
    } catch (const std::invalid_argument& e) {
      report_error(ctx, cuzk::cli::kind::kInvalidArgument, e.what(), kExitMalformed);
      return;
    }
    if (!c) {
      report_error(ctx, cuzk::cli::kind::kInvalidArgument,
                   "unknown circuit '" + name +
                       "' (demo, sha256-block, sha256-512, sha256-hash2-leaf, "
                       "poseidon-2, poseidon-11, insertion-{2,4,8}, por-{2,4,8,8-2,8-4-2,8-8,8-8-2}, "
                       "stacked-{base-2,base-8,8-4,8-4-2}, porep-{2k,8m,512m,32g,64g}, "
                       "update[-poseidon]-{1k,2k,4k,8k,16k,32k,8m,16m,512m,32g,64g})",
                   kExitMalformed);
      return;
    }
    s = shape_stats(*c);
    fingerprint = stream_fingerprint(*c, s);
  }
  const std::uint64_t nnz_a = s.nnz_a + s.inputs;  // + one A entry per input constraint
  if (ctx.json) {
    nlohmann::ordered_json j = {
        {"constraints", s.constraints},
        {"constraints_with_input_constraints", s.constraints_with_input_constraints()},
        {"inputs", s.inputs},
        {"aux", s.aux},
        {"nnz_a", nnz_a},
        {"nnz_b", s.nnz_b},
        {"nnz_c", s.nnz_c},
        {"density_a_aux", s.density_a_aux},
        {"density_b_input", s.density_b_input},
        {"density_b_aux", s.density_b_aux},
        {"fingerprint", fingerprint ? nlohmann::ordered_json(*fingerprint) : nlohmann::ordered_json(nullptr)}};
    if (compile_s) j["compile_s"] = *compile_s;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("circuit            %s\n", name.c_str());
  std::printf("constraints        %llu (+%llu input constraints = %llu rows)\n",
              static_cast<unsigned long long>(s.constraints), static_cast<unsigned long long>(s.inputs),
              static_cast<unsigned long long>(s.constraints_with_input_constraints()));
  std::printf("inputs             %llu (incl. ONE)\n", static_cast<unsigned long long>(s.inputs));
  std::printf("aux                %llu\n", static_cast<unsigned long long>(s.aux));
  std::printf("nnz A/B/C          %llu / %llu / %llu (A incl. input constraints)\n",
              static_cast<unsigned long long>(nnz_a), static_cast<unsigned long long>(s.nnz_b),
              static_cast<unsigned long long>(s.nnz_c));
  std::printf("density a_aux      %llu\n", static_cast<unsigned long long>(s.density_a_aux));
  std::printf("density b_input    %llu\n", static_cast<unsigned long long>(s.density_b_input));
  std::printf("density b_aux      %llu\n", static_cast<unsigned long long>(s.density_b_aux));
  std::printf("fingerprint        %s\n", fingerprint ? fingerprint->c_str() : "null (use --fingerprint)");
  if (compile_s) std::printf("compile            %.1f s\n", *compile_s);
}

}  // namespace

void register_circuit(CLI::App& app, Context& ctx) {
  auto* circuit = app.add_subcommand("circuit", "built-in circuits");
  circuit->require_subcommand(1);
  auto* info = circuit->add_subcommand("info", "shape of a built-in circuit (counts, nnz, densities, fingerprint)");
  static std::string name;
  static unsigned size = 10;
  static bool full = false, fingerprint = false, compiled = false;
  info->add_option("name", name,
                   "circuit name (demo, sha256-*, poseidon-*, insertion-*, por-*, stacked-*, porep-*, "
                   "update-*, update-poseidon-*)")
      ->required();
  info->add_option("--size", size, "demo: log2 of the domain size (default 10)");
  info->add_flag("--full", full,
                 "porep-32g/64g, update-8m and up: synthesize all challenges instead of "
                 "extrapolating");
  info->add_flag("--fingerprint", fingerprint, "porep-32g/64g: also hash the whole R1CS (minutes)");
  info->add_flag("--compiled", compiled,
                 "PoSt shapes: the fingerprint of the R1CS the daemon compiles (repeated slots), to compare "
                 "with --fingerprint's full synthesis");
  info->callback([&ctx] { circuit_info(ctx, name, size, full, fingerprint, compiled); });
}

}  // namespace cuzkctl
