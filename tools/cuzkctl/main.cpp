// cuzkctl: the cuzk tools binary. main() only wires the subcommand groups.
#include "cli/cli_contract.hpp"
#include "cuzkctl/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "cuzkctl - cuzk Groth16 proving tools: offline (setup, prove, verify, demo, porep, post, update) and a "
      "client of the cuzkd daemon (prove --circuit/--porep-c1/..., submit, await, status, watch, preload, evict)"};
  app.require_subcommand(1);
  app.fallthrough(true);  // global options (--addr, --json, ...) may follow the subcommand
  cuzkctl::Context ctx;
  app.add_flag("--json", ctx.json, "machine-readable JSON output");
  app.add_option("--threads", ctx.threads, "CPU threads for offline work (default: all cores)");
  cuzk::cli::add_connection_options(app, ctx.connection);
  cuzk::cli::export_connection_flags(argc, argv);
  cuzkctl::register_offline(app, ctx);
  cuzkctl::register_demo(app, ctx);
  cuzkctl::register_daemon(app, ctx);
  cuzkctl::register_circuit(app, ctx);
  cuzkctl::register_porep(app, ctx);
  cuzkctl::register_update(app, ctx);
  cuzkctl::register_watch(app, ctx);
  cuzkctl::register_post(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cuzk::cli::exit_for_parse_error(app, e);
  }
  return ctx.exit_code;
}
