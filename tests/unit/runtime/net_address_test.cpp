// rpc::parse_tcp_address (cuzkd listen_tcp, cuzkctl --addr) and the
// Logger's SIGHUP setters.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "rpc/server.hpp"
#include "runtime/log.hpp"

namespace cuzk::rpc {
namespace {

TEST(TcpAddress, ParsesV4V6AndNames) {
  auto a = parse_tcp_address("tcp://127.0.0.1:9820");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9820);
  auto b = parse_tcp_address("tcp://[::1]:0");
  EXPECT_EQ(b.host, "::1");
  EXPECT_EQ(b.port, 0);
  auto c = parse_tcp_address("tcp://prover.example:65535");
  EXPECT_EQ(c.host, "prover.example");
  EXPECT_EQ(c.port, 65535);
}

TEST(TcpAddress, RejectsMalformed) {
  for (const char* bad : {"tcp://", "tcp://host", "tcp://host:", "tcp://:9820", "tcp://host:65536", "tcp://host:12x",
                          "tcp://::1:9820", "tcp://[::1]9820", "unix:///x.sock", "http://host:1"}) {
    EXPECT_THROW(parse_tcp_address(bad), ServerError) << bad;
  }
}

TEST(Logger, LevelAndFormatChangeAtRuntime) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  runtime::Logger log(runtime::LogLevel::kInfo, runtime::LogFormat::kText, out);
  log.debug("hidden");
  log.set_level(runtime::LogLevel::kDebug);
  log.debug("shown");
  log.set_format(runtime::LogFormat::kJson);
  log.info("as json");
  std::rewind(out);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  EXPECT_EQ(text.find("hidden"), std::string::npos);
  EXPECT_NE(text.find("msg=shown"), std::string::npos) << text;
  EXPECT_NE(text.find("\"msg\":\"as json\""), std::string::npos) << text;
}

}  // namespace
}  // namespace cuzk::rpc
