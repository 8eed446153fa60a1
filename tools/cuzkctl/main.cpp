// cuzkctl: the cuzk tools binary. main() only wires the subcommand groups.
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuzkctl/commands.hpp"

namespace {

// The daemon client reads its TLS and token settings from the environment
// (rpc::ClientOptions::from_env: CUZK_TLS_CA, CUZK_TLS_SERVER_NAME,
// CUZK_TOKEN, CUZK_TOKEN_FILE). Subcommands run inside app.parse(), so the
// global flags are copied into that environment by a scan of argv BEFORE
// parsing; CLI11 still declares them (help, validation).
void export_connection_flags(int argc, char** argv) {
  static constexpr struct {
    const char* flag;
    const char* env;
  } kFlags[] = {{"--tls-ca", "CUZK_TLS_CA"},
                {"--tls-server-name", "CUZK_TLS_SERVER_NAME"},
                {"--token-file", "CUZK_TOKEN_FILE"}};
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuzkctl - cuzk Groth16 proving tools"};
  app.require_subcommand(1);
  app.fallthrough(true);  // global flags (--json, --threads) may follow the subcommand
  cuzkctl::Context ctx;
  app.add_flag("--json", ctx.json, "machine-readable JSON output");
  app.add_option("--threads", ctx.threads, "CPU threads for offline work (default: all cores)");
  std::string tls_ca, tls_server_name, token_file;
  app.add_option("--tls-ca", tls_ca, "tcp:// daemons: PEM CA certificate to trust (default: $CUZK_TLS_CA; absent: plain TCP)");
  app.add_option("--tls-server-name", tls_server_name,
                 "tcp:// daemons: name the certificate must carry (default: the --addr host)");
  app.add_option("--token-file", token_file, "tcp:// daemons: file holding the bearer token (default: $CUZK_TOKEN)");
  export_connection_flags(argc, argv);
  cuzkctl::register_offline(app, ctx);
  cuzkctl::register_daemon(app, ctx);
  cuzkctl::register_circuit(app, ctx);
  cuzkctl::register_porep(app, ctx);
  cuzkctl::register_update(app, ctx);
  cuzkctl::register_watch(app, ctx);
  cuzkctl::register_post(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : cuzkctl::kExitMalformed;
  }
  return ctx.exit_code;
}
