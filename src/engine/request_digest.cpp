#include "engine/request_digest.hpp"

#include <string_view>
#include <vector>

#include "circuits/native/sha256.hpp"

namespace cuzk::engine {

policy::RequestDigest request_digest(const JobRequest& request) {
  constexpr std::string_view kTag{"cuzk-request-v1\0", 16};
  std::vector<std::uint8_t> head(kTag.begin(), kTag.end());
  auto put = [&head](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) head.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  put(static_cast<std::uint8_t>(request.kind), 1);
  put(request.demo_log_domain, 4);
  put(request.demo_seed, 8);
  put(request.c1_json.size(), 8);
  circuits::native::Sha256 h;
  h.update(head);
  h.update({reinterpret_cast<const std::uint8_t*>(request.c1_json.data()), request.c1_json.size()});
  return h.finish();
}

}  // namespace cuzk::engine
