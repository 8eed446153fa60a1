#include "groth16/sha256_behind.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

namespace cuzk::groth16 {

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "cuzk: %s failed\n", what);
  std::abort();
}

struct CtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

}  // namespace

Sha256Behind::Sha256Behind() : thread_([this] { run(); }) {}

Sha256Behind::~Sha256Behind() {
  abandon();
  thread_.join();
}

void Sha256Behind::abandon() {
  std::unique_lock lock(mu_);
  closing_ = true;
  dropping_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this] { return finished_; });
}

void Sha256Behind::update_borrowed(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  push(Piece{static_cast<const std::uint8_t*>(data), bytes, {}});
}

void Sha256Behind::update_copied(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  Piece piece;
  const auto* p = static_cast<const std::uint8_t*>(data);
  piece.copy.assign(p, p + bytes);
  piece.data = piece.copy.data();  // a vector's buffer does not move with the vector
  piece.bytes = bytes;
  push(std::move(piece));
}

void Sha256Behind::push(Piece piece) {
  std::unique_lock lock(mu_);
  if (closing_) std::abort();  // a piece after digest(): a bug
  changed_.wait(lock, [this] { return pending_.size() < kMaxPending; });
  pending_.push_back(std::move(piece));
  lock.unlock();
  changed_.notify_all();
}

std::array<std::uint8_t, 32> Sha256Behind::digest() {
  std::unique_lock lock(mu_);
  if (closing_) std::abort();  // digest() twice, or after abandon(): a bug
  closing_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this] { return finished_; });
  return md_;
}

void Sha256Behind::run() {
  const std::unique_ptr<EVP_MD_CTX, CtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) die("SHA-256 init");
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [this] { return !pending_.empty() || closing_; });
    if (dropping_) break;
    if (pending_.empty()) {  // closing_, everything hashed
      unsigned len = 0;
      if (EVP_DigestFinal_ex(ctx.get(), md_.data(), &len) != 1 || len != md_.size()) die("SHA-256 final");
      break;
    }
    Piece piece = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    changed_.notify_all();  // room for the producer
    if (EVP_DigestUpdate(ctx.get(), piece.data, piece.bytes) != 1) die("SHA-256 update");
    lock.lock();
  }
  finished_ = true;
  lock.unlock();
  changed_.notify_all();
}

}  // namespace cuzk::groth16
