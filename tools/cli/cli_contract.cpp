#include "cli/cli_contract.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cuzk::cli {

std::string error_line(std::string_view kind, std::string_view message) {
  std::string line = "error: ";
  line += kind;
  line += ": ";
  // Trailing line breaks go; inner ones become "; " (CLI11's messages and
  // some library errors span lines).
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.remove_suffix(1);
  for (char c : message) {
    if (c == '\n')
      line += "; ";
    else if (c != '\r')
      line += c;
  }
  return line;
}

void print_error(std::string_view kind, std::string_view message) {
  std::fprintf(stderr, "%s\n", error_line(kind, message).c_str());
  std::fflush(stderr);
}

int exit_for_parse_error(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) {
    // --help, --help-all, --version: CLI11 prints them.
    return const_cast<CLI::App&>(app).exit(e);
  }
  std::string message = e.what();
  std::string name = app.get_name();
  if (auto slash = name.rfind('/'); slash != std::string::npos) name.erase(0, slash + 1);
  message += " (" + name + " --help lists the commands and options)";
  print_error(kind::kInvalidArgument, message);
  return kExitUsage;
}

std::string default_daemon_addr() {
  const char* env = std::getenv("CUZK_ADDR");
  return env != nullptr && *env != '\0' ? env : "unix:///run/cuzkd/cuzkd.sock";
}

std::string unreachable_message(std::string_view addr, std::string_view detail) {
  std::string m = "cannot reach cuzkd at ";
  m += addr;
  m += " (set the address with --addr or CUZK_ADDR)";
  if (!detail.empty()) {
    m += ": ";
    m += detail;
  }
  return m;
}

void add_connection_options(CLI::App& app, ConnectionFlags& flags) {
  flags.addr = default_daemon_addr();
  app.add_option("--addr", flags.addr, "daemon address (default: $CUZK_ADDR, else unix:///run/cuzkd/cuzkd.sock)");
  app.add_option("--tls-ca", flags.tls_ca,
                 "tcp:// daemons: PEM CA certificate to trust (default: $CUZK_TLS_CA; absent: plain TCP)");
  app.add_option("--tls-server-name", flags.tls_server_name,
                 "tcp:// daemons: name the certificate must carry (default: the --addr host)");
  app.add_option("--token-file", flags.token_file,
                 "tcp:// daemons: file holding the bearer token (default: $CUZK_TOKEN)");
}

// The RPC client reads its TLS and token settings from the environment.
// Subcommands run inside CLI::App::parse(), before the root's own option
// values are all stored, so the flags are copied into that environment by a
// scan of argv before parsing; CLI11 still declares them (help, validation).
void export_connection_flags(int argc, char** argv) {
  static constexpr struct {
    const char* flag;
    const char* env;
  } kFlags[] = {
      {"--tls-ca", "CUZK_TLS_CA"}, {"--tls-server-name", "CUZK_TLS_SERVER_NAME"}, {"--token-file", "CUZK_TOKEN_FILE"}};
  for (int i = 1; i < argc; ++i) {
    for (const auto& f : kFlags) {
      std::size_t n = std::strlen(f.flag);
      if (std::strcmp(argv[i], f.flag) == 0 && i + 1 < argc) {
        ::setenv(f.env, argv[i + 1], 1);
      } else if (std::strncmp(argv[i], f.flag, n) == 0 && argv[i][n] == '=') {
        ::setenv(f.env, argv[i] + n + 1, 1);
      }
    }
  }
  // An explicit --token-file wins over an inherited CUZK_TOKEN.
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--token-file", 12) == 0) ::unsetenv("CUZK_TOKEN");
}

}  // namespace cuzk::cli
