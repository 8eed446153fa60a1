// Subcommand groups of cuzkctl. Each group registers its subcommands on the
// CLI11 app and stores the exit status of the command that ran in ctx.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "cli/cli_contract.hpp"

namespace cuzkctl {

// Exit statuses shared by every command (scripts rely on them; the
// contract of every cuzk binary: cli/cli_contract.hpp).
inline constexpr int kExitOk = cuzk::cli::kExitOk;
inline constexpr int kExitInvalid = cuzk::cli::kExitFailed;           // verification said no / typed failure
inline constexpr int kExitMalformed = cuzk::cli::kExitUsage;          // bad usage, unreadable or malformed input
inline constexpr int kExitUnavailable = cuzk::cli::kExitUnreachable;  // the daemon cannot be reached

struct Context {
  bool json = false;  // --json: machine-readable output on stdout
  int exit_code = kExitOk;
  unsigned threads = 0;  // --threads: CPU threads for offline work (0 = all)
  // Set when a subcommand was fully handled by another group (e.g. `prove
  // --circuit demo` goes to the daemon instead of the offline prover).
  bool handled = false;
  // --addr, --tls-ca, --tls-server-name, --token-file (root options).
  cuzk::cli::ConnectionFlags connection;
};

// Reports a failed command: the one error line on stderr (with --json also
// {"error": {"kind", "message"}} on stdout) and its exit status in ctx.
void report_error(Context& ctx, std::string_view kind, std::string_view message, int exit_code);

void register_offline(CLI::App& app, Context& ctx);  // params, setup, prove, verify, export-vk
void register_daemon(CLI::App& app, Context& ctx);   // prove (daemon side), submit, await, cancel, status, metrics, ...
void register_demo(CLI::App& app, Context& ctx);     // demo prove: the built-in circuit offline (commands/demo.cpp)
void register_circuit(CLI::App& app, Context& ctx);  // circuit info
void register_porep(CLI::App& app, Context& ctx);    // porep setup, prove, verify, verify-golden
void register_post(CLI::App& app, Context& ctx);     // post gen, check, setup, prove, verify (commands/post.cpp)
void register_update(CLI::App& app, Context& ctx);   // update gen, check, setup, prove, verify (SnapDeals)
void register_watch(CLI::App& app, Context& ctx);    // watch: live view (commands/watch.cpp)

}  // namespace cuzkctl
