#include "util/secure_random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace cuzk {

SecureRandom::result_type SecureRandom::operator()() {
  if (left_ == 0) {
    auto* p = reinterpret_cast<unsigned char*>(buf_);
    std::size_t want = sizeof(buf_);
    while (want > 0) {
      ssize_t got = getrandom(p, want, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        std::fputs("cuzk: getrandom failed; refusing to continue without secure randomness\n", stderr);
        std::abort();
      }
      p += got;
      want -= std::size_t(got);
    }
    left_ = sizeof(buf_) / sizeof(buf_[0]);
  }
  return buf_[--left_];
}

}  // namespace cuzk
