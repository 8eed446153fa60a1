// The error line and messages every cuzk binary prints (tools/cli/cli_contract.hpp).
#include "cli/cli_contract.hpp"

#include <gtest/gtest.h>

namespace cuzk::cli {
namespace {

TEST(CliContract, ErrorLineIsOneLineWithItsKind) {
  EXPECT_EQ(error_line(kind::kNotFound, "no such file: x.bin"), "error: not_found: no such file: x.bin");
  // CLI11's messages span lines; so do some library errors.
  EXPECT_EQ(error_line(kind::kInvalidArgument, "bad --size\nRun with --help\n"),
            "error: invalid_argument: bad --size; Run with --help");
  EXPECT_EQ(error_line("overloaded", "queue full\r\n"), "error: overloaded: queue full");
}

TEST(CliContract, UnreachableNamesTheAddressAndHowToSetIt) {
  const std::string m = unreachable_message("unix:///run/x.sock", "transport: connect(): refused");
  EXPECT_NE(m.find("unix:///run/x.sock"), std::string::npos) << m;
  EXPECT_NE(m.find("--addr"), std::string::npos) << m;
  EXPECT_NE(m.find("CUZK_ADDR"), std::string::npos) << m;
  EXPECT_NE(m.find("connect(): refused"), std::string::npos) << m;
}

TEST(CliContract, ParseErrorsAreUsageAndHelpIsNot) {
  CLI::App app{"t", "tool"};
  app.add_option(
      "--n", [](const CLI::results_t&) { return true; }, "n");
  try {
    app.parse(std::vector<std::string>{"--bogus"});
    FAIL() << "parsed an unknown option";
  } catch (const CLI::ParseError& e) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(exit_for_parse_error(app, e), kExitUsage);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.rfind("error: invalid_argument: ", 0), 0u) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;  // one line
  }
  try {
    app.parse(std::vector<std::string>{"--help"});
    FAIL() << "--help did not stop the parse";
  } catch (const CLI::ParseError& e) {
    testing::internal::CaptureStdout();
    EXPECT_EQ(exit_for_parse_error(app, e), kExitOk);
    EXPECT_NE(testing::internal::GetCapturedStdout().find("--n"), std::string::npos);
  }
}

}  // namespace
}  // namespace cuzk::cli
