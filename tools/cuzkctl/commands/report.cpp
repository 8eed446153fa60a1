// report_error (commands.hpp): the one way a cuzkctl command reports failure.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cuzkctl/commands.hpp"

namespace cuzkctl {

void report_error(Context& ctx, std::string_view kind, std::string_view message, int exit_code) {
  if (ctx.json) {
    std::cout << nlohmann::json{{"error", {{"kind", kind}, {"message", message}}}}.dump() << std::endl;
  }
  cuzk::cli::print_error(kind, message);
  ctx.exit_code = exit_code;
}

}  // namespace cuzkctl
