// Structured logs: one line per event, a message plus key=value fields
// (job id, kind, stage, ms ...), as logfmt-style text or JSON lines. Owned by
// main() and passed by reference; thread-safe (pool threads log too).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace cuzk::runtime {

enum class LogLevel : std::uint8_t { kDebug, kInfo, kWarn, kError };
enum class LogFormat : std::uint8_t { kText, kJson };
std::string_view to_string(LogLevel l);
std::optional<LogLevel> parse_log_level(std::string_view s);
std::optional<LogFormat> parse_log_format(std::string_view s);

struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v), quoted(true) {}
  LogField(std::string_view k, const std::string& v) : key(k), value(v), quoted(true) {}
  LogField(std::string_view k, const char* v) : key(k), value(v), quoted(true) {}
  template <class I>
  requires std::is_integral_v<I> LogField(std::string_view k, I v) : key(k), value(std::to_string(v)), quoted(false) {}
  LogField(std::string_view k, double v);
  std::string_view key;
  std::string value;
  bool quoted;  // strings are quoted in JSON; numbers are not
};

class Logger {
 public:
  explicit Logger(LogLevel min_level = LogLevel::kInfo, LogFormat format = LogFormat::kText, std::FILE* out = stderr)
      : min_level_(min_level), format_(format), out_(out) {}
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void debug(std::string_view msg, std::initializer_list<LogField> f = {}) { log(LogLevel::kDebug, msg, f); }
  void info(std::string_view msg, std::initializer_list<LogField> f = {}) { log(LogLevel::kInfo, msg, f); }
  void warn(std::string_view msg, std::initializer_list<LogField> f = {}) { log(LogLevel::kWarn, msg, f); }
  void error(std::string_view msg, std::initializer_list<LogField> f = {}) { log(LogLevel::kError, msg, f); }

  // SIGHUP reload: take effect from the next line, on every thread.
  void set_level(LogLevel l) { min_level_.store(l, std::memory_order_relaxed); }
  void set_format(LogFormat f) { format_.store(f, std::memory_order_relaxed); }
  LogLevel level() const { return min_level_.load(std::memory_order_relaxed); }
  LogFormat format() const { return format_.load(std::memory_order_relaxed); }

 private:
  std::atomic<LogLevel> min_level_;
  std::atomic<LogFormat> format_;
  std::FILE* out_;
  std::mutex mu_;
};

}  // namespace cuzk::runtime
