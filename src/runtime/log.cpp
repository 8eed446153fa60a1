#include "runtime/log.hpp"

#include <chrono>
#include <ctime>

namespace cuzk::runtime {
namespace {

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

bool needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  for (char c : s)
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20) return true;
  return false;
}

std::string utc_timestamp() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm;
  gmtime_r(&secs, &tm);
  char buf[96];  // generous: -Wformat-truncation assumes int-sized fields
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace

std::string_view to_string(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

std::optional<LogLevel> parse_log_level(std::string_view s) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError})
    if (s == to_string(l)) return l;
  return std::nullopt;
}

std::optional<LogFormat> parse_log_format(std::string_view s) {
  if (s == "text") return LogFormat::kText;
  if (s == "json") return LogFormat::kJson;
  return std::nullopt;
}

LogField::LogField(std::string_view k, double v) : key(k), quoted(false) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  value = buf;
}

void Logger::log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (level < min_level_.load(std::memory_order_relaxed)) return;
  std::string line;
  line.reserve(128);
  if (format_.load(std::memory_order_relaxed) == LogFormat::kJson) {
    line += "{\"ts\":";
    append_json_string(line, utc_timestamp());
    line += ",\"level\":";
    append_json_string(line, to_string(level));
    line += ",\"msg\":";
    append_json_string(line, msg);
    for (const LogField& f : fields) {
      line += ',';
      append_json_string(line, f.key);
      line += ':';
      if (f.quoted)
        append_json_string(line, f.value);
      else
        line += f.value;
    }
    line += "}\n";
  } else {
    line += utc_timestamp();
    line += ' ';
    line += to_string(level);
    line += " msg=";
    if (needs_quotes(msg))
      append_json_string(line, msg);
    else
      line += msg;
    for (const LogField& f : fields) {
      line += ' ';
      line += f.key;
      line += '=';
      if (needs_quotes(f.value))
        append_json_string(line, f.value);
      else
        line += f.value;
    }
    line += '\n';
  }
  std::lock_guard lock(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace cuzk::runtime
