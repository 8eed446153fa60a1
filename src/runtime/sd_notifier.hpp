// A non-blocking sender of systemd notifications (sd_notify protocol: one
// datagram to the AF_UNIX socket named by $NOTIFY_SOCKET): READY=1,
// STOPPING=1, RELOADING=1, WATCHDOG=1 from the event loop.
//
// Why not sd_notify(3): libsystemd sends with a blocking sendmsg, so when the
// receiver stops reading (a full datagram queue: a wedged manager, or a test
// that stopped reading) the event loop would block inside the call, and
// every socket and job continuation with it. Here every send is
// MSG_DONTWAIT: a full queue drops that message (the receiver is the one
// stuck) and the loop carries on. One socket for the daemon's lifetime (RAII).
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <string_view>

namespace cuzk::runtime {

class SdNotifier {
 public:
  // Reads $NOTIFY_SOCKET ("/path" or "@abstract"); enabled() is false when it
  // is unset or unusable (then send() does nothing).
  SdNotifier();
  ~SdNotifier();
  SdNotifier(const SdNotifier&) = delete;
  SdNotifier& operator=(const SdNotifier&) = delete;

  bool enabled() const { return fd_ >= 0; }
  // Sends `state` ("READY=1\nSTATUS=serving") without blocking; false when
  // disabled or dropped.
  bool send(std::string_view state);
  std::uint64_t dropped() const { return dropped_; }

 private:
  int fd_ = -1;
  sockaddr_un addr_{};
  socklen_t addr_len_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace cuzk::runtime
