#include "runtime/sd_notifier.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace cuzk::runtime {

SdNotifier::SdNotifier() {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return;
  std::size_t len = std::strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof addr_.sun_path) return;
  addr_.sun_family = AF_UNIX;
  std::memcpy(addr_.sun_path, path, len);
  if (path[0] == '@') addr_.sun_path[0] = '\0';  // Linux abstract namespace
  addr_len_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

SdNotifier::~SdNotifier() {
  if (fd_ >= 0) ::close(fd_);
}

bool SdNotifier::send(std::string_view state) {
  if (fd_ < 0) return false;
  ssize_t n = ::sendto(fd_, state.data(), state.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                       reinterpret_cast<const sockaddr*>(&addr_), addr_len_);
  if (n < 0) {
    ++dropped_;
    return false;
  }
  return true;
}

}  // namespace cuzk::runtime
