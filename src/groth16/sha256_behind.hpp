// SHA-256 of a byte stream computed on a thread of its own, behind the
// thread that produces the stream: the producer hands over pieces in order
// and goes on, the hasher thread works through them, digest() waits for the
// last. For the R1CS cache file (groth16::load_r1cs), whose every payload
// byte is hashed: hashed in line on the loading thread, the hash (OpenSSL,
// SHA-NI: ~1.7 GB/s on the dev VM) was a third of that thread's work.
//
// A borrowed piece must stay valid and unchanged until digest() or abandon()
// returns or the hasher is destroyed (which wait for the piece in progress and
// drop the rest); a copied piece is copied at once. At most kMaxPending
// pieces wait at a time: the producer blocks beyond that (the hasher lags by
// at most kMaxPending pieces).
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace cuzk::groth16 {

class Sha256Behind {
 public:
  static constexpr std::size_t kMaxPending = 64;

  Sha256Behind();
  ~Sha256Behind();
  Sha256Behind(const Sha256Behind&) = delete;
  Sha256Behind& operator=(const Sha256Behind&) = delete;

  void update_borrowed(const void* data, std::size_t bytes);
  void update_copied(const void* data, std::size_t bytes);
  // The digest of every piece handed over, in order. Once only.
  std::array<std::uint8_t, 32> digest();
  // Drops the pieces not yet hashed and returns once the hasher no longer
  // reads any (a producer unwinding before its borrowed buffers go). No
  // update or digest may follow.
  void abandon();

 private:
  struct Piece {
    const std::uint8_t* data = nullptr;
    std::size_t bytes = 0;
    std::vector<std::uint8_t> copy;  // owns the bytes of a copied piece
  };
  void push(Piece piece);
  void run();

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Piece> pending_;  // guarded by mu_
  bool closing_ = false;       // guarded by mu_: digest() or the destructor
  bool dropping_ = false;      // guarded by mu_: the destructor (leave the rest)
  bool finished_ = false;      // guarded by mu_: the thread has stopped
  std::array<std::uint8_t, 32> md_{};
  std::thread thread_;  // last: started once the rest is constructed
};

}  // namespace cuzk::groth16
