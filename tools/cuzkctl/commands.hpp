// Subcommand groups of cuzkctl. Each group registers its subcommands on the
// CLI11 app and stores the exit status of the command that ran in ctx.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace cuzkctl {

// Exit statuses shared by every command (scripts rely on them).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;    // verification said no / typed daemon error
inline constexpr int kExitMalformed = 2;  // unreadable or malformed input

struct Context {
  bool json = false;  // --json: machine-readable output on stdout
  int exit_code = kExitOk;
  unsigned threads = 0;  // --threads: CPU threads for offline work (0 = all)
  // Set when a subcommand was fully handled by another group (e.g. `prove
  // --circuit demo` goes to the daemon instead of the offline prover).
  bool handled = false;
};

void register_offline(CLI::App& app, Context& ctx);  // params, setup, prove, verify, export-vk
void register_daemon(CLI::App& app, Context& ctx);   // --addr; prove-remote, submit, await, cancel, status, metrics, ...
void register_circuit(CLI::App& app, Context& ctx);  // circuit info
void register_porep(CLI::App& app, Context& ctx);    // porep setup, prove, verify, verify-golden
void register_post(CLI::App& app, Context& ctx);     // post gen, check, setup, prove, verify (commands/post.cpp)
void register_update(CLI::App& app, Context& ctx);   // update gen, check, setup, prove, verify (SnapDeals)
void register_watch(CLI::App& app, Context& ctx);    // watch: live view (commands/watch.cpp)

}  // namespace cuzkctl
