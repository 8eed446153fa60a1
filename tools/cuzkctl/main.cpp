// cuzkctl: the cuzk tools binary. main() only wires the subcommand groups.
#include "cuzkctl/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cuzkctl - cuzk Groth16 proving tools"};
  app.require_subcommand(1);
  app.fallthrough(true);  // global flags (--json, --threads) may follow the subcommand
  cuzkctl::Context ctx;
  app.add_flag("--json", ctx.json, "machine-readable JSON output");
  app.add_option("--threads", ctx.threads, "CPU threads for offline work (default: all cores)");
  cuzkctl::register_offline(app, ctx);
  cuzkctl::register_daemon(app, ctx);
  cuzkctl::register_circuit(app, ctx);
  cuzkctl::register_porep(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : cuzkctl::kExitMalformed;
  }
  return ctx.exit_code;
}
