// What the partitioned kinds' preparation files share (filecoin_work.cpp,
// post_work.cpp, snap_work.cpp): each kind's header screen, its preparation
// and its parameter set, and the helpers their errors use. Engine-internal.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "circuits/filecoin/post_proof.hpp"
#include "circuits/filecoin/update_params.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "engine/filecoin_request.hpp"
#include "engine/filecoin_work.hpp"

namespace cuzk::engine::work_detail {

namespace fc = circuits::filecoin;

inline Error invalid(std::string message) { return Error{ErrorKind::kInvalidInput, std::move(message)}; }

// 2048 -> "2KiB", 34359738368 -> "32GiB".
std::string size_label(std::uint64_t bytes);

// Runs f, turning the parsers' and checkers' typed exceptions into
// kInvalidInput (their messages name the sector or partition and the field).
template <class F>
std::optional<Error> input_errors(const std::string& prefix, F&& f) {
  try {
    f();
    return std::nullopt;
  } catch (const fc::PostError& e) {
    return invalid(prefix + e.what());
  } catch (const fc::UpdateError& e) {
    return invalid(prefix + e.what());
  }
}

// PoRep C2 (porep_work.cpp).
CircuitSetSpec porep_spec(fc::SealProof proof);

// WindowPoSt and WinningPoSt (post_work.cpp). kind: kWindowPost or kWinningPost.
CircuitSetSpec post_spec(fc::PostProof proof);
std::optional<Error> screen_post(ProofKind kind, const FilecoinRequestHeader& h);
Result<FilecoinWork> prepare_post(ProofKind kind, std::string_view input, ThreadPool& pool);

// SnapDeals (snap_work.cpp).
CircuitSetSpec snap_spec(fc::UpdateProof proof);
std::optional<Error> screen_snap(const FilecoinRequestHeader& h);
Result<FilecoinWork> prepare_snap(std::string_view input);

}  // namespace cuzk::engine::work_detail
