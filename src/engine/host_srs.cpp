#include "engine/host_srs.hpp"

#include <exception>
#include <string>

namespace cuzk::engine {

namespace {

template <typename T>
std::uint64_t vec_bytes(const std::vector<T>& v) {
  return static_cast<std::uint64_t>(v.size()) * sizeof(T);
}

}  // namespace

std::uint64_t HostSrsCopy::bases_bytes_of(const groth16::Parameters& p) {
  return vec_bytes(p.h) + vec_bytes(p.l) + vec_bytes(p.a) + vec_bytes(p.b_g1) + vec_bytes(p.b_g2);
}

HostSrsCopy::HostSrsCopy(const groth16::Parameters& params, std::filesystem::path file, Reader read)
    : params_(params), file_(std::move(file)), read_(std::move(read)), bases_bytes_(bases_bytes_of(params)) {}

HostSrsCopy::~HostSrsCopy() {
  std::lock_guard lock(mu_);
  pages_.clear();  // restores access before the vectors are freed
}

std::optional<Error> HostSrsCopy::acquire() {
  std::lock_guard lock(mu_);
  if (!pages_.empty()) {
    pages_.clear();  // writable again, zero-filled
    const std::string what = "reading the released parameters back from " + file_.string() + ": ";
    try {
      // The vector objects keep their addresses and lengths (holders keep
      // `const Parameters&`); only the memory they own is refilled.
      read_(file_, const_cast<groth16::Parameters&>(params_));
    } catch (const groth16::ParamsError& e) {
      release_locked();  // nothing reads a partial read-back
      const bool changed = e.kind() == groth16::ParamsErrorKind::kShapeMismatch;
      return Error{
          ErrorKind::kInternal,
          what + e.what() + (changed ? " (the file no longer holds the parameters in use: changed on disk)" : "")};
    } catch (const std::exception& e) {
      release_locked();
      return Error{ErrorKind::kInternal, what + e.what()};
    }
    released_.store(false, std::memory_order_release);
    ++reloads_;
  }
  ++users_;
  return std::nullopt;
}

void HostSrsCopy::end_use() {
  std::lock_guard lock(mu_);
  if (users_ == 0) std::abort();  // unbalanced: a bug
  --users_;
}

std::uint64_t HostSrsCopy::release_if_unused() {
  std::lock_guard lock(mu_);
  if (users_ != 0 || !pages_.empty()) return 0;
  const std::uint64_t bytes = release_locked();
  if (bytes != 0) ++releases_;
  return bytes;
}

std::uint64_t HostSrsCopy::release_locked() {
  std::uint64_t bytes = 0;
  auto release = [&](const auto& v) {
    if (v.empty()) return;
    pages_.push_back(ReleasedPages::release(v.data(), vec_bytes(v)));
    bytes += pages_.back().bytes();
  };
  release(params_.h);
  release(params_.l);
  release(params_.a);
  release(params_.b_g1);
  release(params_.b_g2);
  if (bytes == 0) {
    pages_.clear();
    return 0;
  }
  released_.store(true, std::memory_order_release);
  return bytes;
}

}  // namespace cuzk::engine
