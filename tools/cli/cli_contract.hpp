// The command-line contract every cuzk binary keeps (cuzkctl, cuzk-bench):
// how an error is printed, which exit status it gives, and the connection
// options a daemon client takes.
//
// An error is exactly one line on stderr:
//   error: <kind>: <message>
// where <kind> is one of the snake_case kinds of rpc/cuzk.capnp ErrorKind
// (invalid_input, not_found, overloaded, cancelled, unimplemented, internal,
// timeout, shutting_down, unauthenticated) or one of the client-side kinds
//   invalid_argument  the command line is wrong (usage)
//   io                a file exists but cannot be read or written
//   invalid_proof     a proof did not verify
//   unavailable       the daemon cannot be reached
// Exit statuses: 0 ok; 1 a typed failure or an invalid proof; 2 usage or
// malformed input; 3 daemon unreachable.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace cuzk::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;       // typed failure, invalid proof
inline constexpr int kExitUsage = 2;        // bad usage, malformed or missing input
inline constexpr int kExitUnreachable = 3;  // the daemon cannot be reached

namespace kind {
inline constexpr std::string_view kInvalidArgument = "invalid_argument";
inline constexpr std::string_view kInvalidInput = "invalid_input";
inline constexpr std::string_view kNotFound = "not_found";
inline constexpr std::string_view kIo = "io";
inline constexpr std::string_view kInvalidProof = "invalid_proof";
inline constexpr std::string_view kUnavailable = "unavailable";
inline constexpr std::string_view kInternal = "internal";
}  // namespace kind

// "error: <kind>: <message>", on one line: line breaks inside the message
// become "; " so that scripts can rely on one line per error.
std::string error_line(std::string_view kind, std::string_view message);

// Writes error_line() and a newline to stderr.
void print_error(std::string_view kind, std::string_view message);

// A parse error of the command line: --help / --version print what they
// print and give 0; anything else is one invalid_argument line and 2.
int exit_for_parse_error(const CLI::App& app, const CLI::ParseError& e);

// The default daemon address: $CUZK_ADDR, else the systemd socket.
std::string default_daemon_addr();

// The message for a daemon that cannot be reached: names the address tried
// and how to set it; `detail` is the transport's own reason.
std::string unreachable_message(std::string_view addr, std::string_view detail);

// The options of a daemon client, accepted in the same places by every
// binary: on the root command, before or after the subcommand. --tls-ca,
// --tls-server-name and --token-file are copied into the environment the
// RPC client reads (rpc::ClientOptions::from_env) by export_connection_flags,
// which main() calls before parsing.
struct ConnectionFlags {
  std::string addr;  // --addr (default: default_daemon_addr())
  std::string tls_ca, tls_server_name, token_file;
};
void add_connection_options(CLI::App& app, ConnectionFlags& flags);
void export_connection_flags(int argc, char** argv);

}  // namespace cuzk::cli
