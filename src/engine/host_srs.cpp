#include "engine/host_srs.hpp"

#include <cstring>
#include <exception>
#include <string>

namespace cuzk::engine {

namespace {

template <typename T>
std::uint64_t vec_bytes(const std::vector<T>& v) {
  return static_cast<std::uint64_t>(v.size()) * sizeof(T);
}

template <typename T>
void copy_into(const std::vector<T>& dst, const std::vector<T>& src) {
  // The vector objects are not modified: only the memory they own is
  // refilled (it was allocated writable; released pages were restored).
  if (!src.empty()) std::memcpy(const_cast<T*>(dst.data()), src.data(), vec_bytes(src));
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
    const std::string what = "reading the released parameters back from " + file_.string();
    groth16::Parameters fresh;
    try {
      fresh = read_(file_);
    } catch (const std::exception& e) {
      return Error{ErrorKind::kInternal, what + ": " + e.what()};
    }
    if (!(fresh.vk == params_.vk) || fresh.h.size() != params_.h.size() || fresh.l.size() != params_.l.size() ||
        fresh.a.size() != params_.a.size() || fresh.b_g1.size() != params_.b_g1.size() ||
        fresh.b_g2.size() != params_.b_g2.size()) {
      return Error{ErrorKind::kInternal, what + ": the file no longer holds the parameters in use (changed on disk)"};
    }
    pages_.clear();  // writable again, zero-filled
    copy_into(params_.h, fresh.h);
    copy_into(params_.l, fresh.l);
    copy_into(params_.a, fresh.a);
    copy_into(params_.b_g1, fresh.b_g1);
    copy_into(params_.b_g2, fresh.b_g2);
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
  ++releases_;
  return bytes;
}

}  // namespace cuzk::engine
