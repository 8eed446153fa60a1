#include "load_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace cuzk::bench {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

std::optional<std::uint32_t> parse_u32(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return static_cast<std::uint32_t>(std::stoul(s));
}

std::optional<LoadClass> parse_class(const std::string& entry, std::string* why) {
  auto fail = [&](const std::string& msg) -> std::optional<LoadClass> {
    *why = "'" + entry + "': " + msg;
    return std::nullopt;
  };
  LoadClass c;
  std::string body = entry;
  if (std::size_t eq = entry.find('='); eq != std::string::npos) {
    body = entry.substr(0, eq);
    auto w = parse_u32(entry.substr(eq + 1));
    if (!w || *w == 0) return fail("the weight after '=' must be a positive integer");
    c.weight = *w;
  }
  std::vector<std::string> parts = split(body, ':');
  std::size_t next = 1;
  if (parts[0] == "demo") {
    c.kind = engine::ProofKind::kGroth16Demo;
    auto size = parts.size() > 1 ? parse_u32(parts[1]) : std::nullopt;
    if (!size) return fail("demo needs a size: demo:SIZE[:PRIORITY]");
    c.demo_log_domain = *size;
    next = 2;
  } else if (parts[0] == "porep") {
    c.kind = engine::ProofKind::kPoRepC2;
  } else {
    return fail("unknown kind '" + parts[0] + "' (demo or porep)");
  }
  if (parts.size() > next) {
    c.priority = engine::parse_priority(parts[next]);
    if (!c.priority) return fail("unknown priority '" + parts[next] + "' (low, normal, high, critical)");
    ++next;
  }
  if (parts.size() > next) return fail("too many ':' fields");
  return c;
}

double mean(double sum, std::uint64_t n) { return n == 0 ? 0.0 : sum / static_cast<double>(n); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad_right(std::string s, std::size_t w) {
  if (s.size() < w) s.resize(w, ' ');
  return s;
}

std::string pad_left(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

}  // namespace

std::string LoadClass::label() const {
  std::string p = priority ? std::string(engine::to_string(*priority)) : "default";
  if (kind == engine::ProofKind::kPoRepC2) return "porep:" + p;
  return std::string("demo:") + std::to_string(demo_log_domain) + ":" + p;
}

std::optional<std::vector<LoadClass>> parse_mix(const std::string& spec, std::string* why) {
  std::vector<LoadClass> out;
  for (const std::string& entry : split(spec, ',')) {
    auto c = parse_class(entry, why);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::vector<std::size_t> mix_schedule(const std::vector<LoadClass>& classes) {
  // Smooth weighted round-robin (as nginx balances upstreams): each round
  // every class gains its weight, the richest is drawn and pays the total.
  std::int64_t total = 0;
  for (const auto& c : classes) total += c.weight;
  std::vector<std::int64_t> credit(classes.size(), 0);
  std::vector<std::size_t> order;
  for (std::int64_t round = 0; round < total; ++round) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      credit[i] += classes[i].weight;
      if (credit[i] > credit[best]) best = i;
    }
    credit[best] -= total;
    order.push_back(best);
  }
  return order;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // rank = ceil(p/100 * n), 1-based.
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

Report make_report(const std::string& mode, std::uint32_t concurrency, double wall_s,
                   const std::vector<LoadClass>& classes, const std::vector<Sample>& samples) {
  Report r;
  r.mode = mode;
  r.concurrency = concurrency;
  r.wall_s = wall_s;
  const double per_min = wall_s > 0 ? 60.0 / wall_s : 0.0;
  for (std::size_t ci = 0; ci < classes.size(); ++ci) {
    ClassReport c;
    c.label = classes[ci].label();
    std::vector<double> lat;
    double sum_lat = 0;
    engine::Timings sum{};
    for (const Sample& s : samples) {
      if (s.class_index != ci) continue;
      if (!s.ok) {
        ++c.failed;
        continue;
      }
      ++c.completed;
      lat.push_back(s.latency_ms);
      sum_lat += s.latency_ms;
      sum.queue_ms += s.timings.queue_ms;
      sum.params_ms += s.timings.params_ms;
      sum.synthesis_ms += s.timings.synthesis_ms;
      sum.prove_ms += s.timings.prove_ms;
      sum.verify_ms += s.timings.verify_ms;
      sum.total_ms += s.timings.total_ms;
    }
    c.throughput_per_min = static_cast<double>(c.completed) * per_min;
    c.p50_ms = percentile(lat, 50);
    c.p90_ms = percentile(lat, 90);
    c.p99_ms = percentile(lat, 99);
    c.max_ms = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
    c.mean_ms = mean(sum_lat, c.completed);
    c.queue_ms = mean(static_cast<double>(sum.queue_ms), c.completed);
    c.params_ms = mean(static_cast<double>(sum.params_ms), c.completed);
    c.synthesis_ms = mean(static_cast<double>(sum.synthesis_ms), c.completed);
    c.prove_ms = mean(static_cast<double>(sum.prove_ms), c.completed);
    c.verify_ms = mean(static_cast<double>(sum.verify_ms), c.completed);
    c.total_ms = mean(static_cast<double>(sum.total_ms), c.completed);
    r.completed += c.completed;
    r.failed += c.failed;
    r.classes.push_back(std::move(c));
  }
  for (const Sample& s : samples)
    if (!s.ok) ++r.failures[s.error_kind];
  r.throughput_per_min = static_cast<double>(r.completed) * per_min;
  return r;
}

std::vector<std::string> report_table(const Report& r) {
  std::vector<std::string> out;
  out.push_back("cuzk-bench " + r.mode + ": " + std::to_string(r.completed) + " completed, " +
                std::to_string(r.failed) + " failed, concurrency " + std::to_string(r.concurrency) + ", wall " +
                fmt("%.2f", r.wall_s) + " s, throughput " + fmt("%.2f", r.throughput_per_min) + " proofs/min");
  std::size_t w = 5;
  for (const auto& c : r.classes) w = std::max(w, c.label.size());
  out.emplace_back();
  out.push_back("latency (client side, ms)");
  out.push_back(pad_right("class", w) + pad_left("ok", 6) + pad_left("failed", 8) + pad_left("proofs/min", 12) +
                pad_left("p50", 10) + pad_left("p90", 10) + pad_left("p99", 10) + pad_left("max", 10));
  for (const auto& c : r.classes)
    out.push_back(pad_right(c.label, w) + pad_left(std::to_string(c.completed), 6) +
                  pad_left(std::to_string(c.failed), 8) + pad_left(fmt("%.2f", c.throughput_per_min), 12) +
                  pad_left(fmt("%.1f", c.p50_ms), 10) + pad_left(fmt("%.1f", c.p90_ms), 10) +
                  pad_left(fmt("%.1f", c.p99_ms), 10) + pad_left(fmt("%.1f", c.max_ms), 10));
  out.emplace_back();
  out.push_back("stages (daemon timings, mean ms per proof)");
  out.push_back(pad_right("class", w) + pad_left("queue", 10) + pad_left("params", 10) + pad_left("synthesis", 11) +
                pad_left("prove", 10) + pad_left("verify", 10) + pad_left("total", 10));
  for (const auto& c : r.classes)
    out.push_back(pad_right(c.label, w) + pad_left(fmt("%.1f", c.queue_ms), 10) +
                  pad_left(fmt("%.1f", c.params_ms), 10) + pad_left(fmt("%.1f", c.synthesis_ms), 11) +
                  pad_left(fmt("%.1f", c.prove_ms), 10) + pad_left(fmt("%.1f", c.verify_ms), 10) +
                  pad_left(fmt("%.1f", c.total_ms), 10));
  out.emplace_back();
  out.push_back("failures by kind");
  if (r.failures.empty()) out.push_back("  (none)");
  for (const auto& [kind, n] : r.failures) out.push_back("  " + pad_right(kind, 14) + " " + std::to_string(n));
  return out;
}

std::string report_json(const Report& r) {
  using nlohmann::json;
  json classes = json::array();
  for (const auto& c : r.classes)
    classes.push_back(
        {{"class", c.label},
         {"completed", c.completed},
         {"failed", c.failed},
         {"throughput_per_min", c.throughput_per_min},
         {"latency_ms",
          {{"p50", c.p50_ms}, {"p90", c.p90_ms}, {"p99", c.p99_ms}, {"max", c.max_ms}, {"mean", c.mean_ms}}},
         {"stages_ms",
          {{"queue", c.queue_ms},
           {"params", c.params_ms},
           {"synthesis", c.synthesis_ms},
           {"prove", c.prove_ms},
           {"verify", c.verify_ms},
           {"total", c.total_ms}}}});
  json failures = json::object();
  for (const auto& [kind, n] : r.failures) failures[kind] = n;
  return json{{"mode", r.mode},           {"concurrency", r.concurrency}, {"wall_s", r.wall_s},
              {"completed", r.completed}, {"failed", r.failed},           {"throughput_per_min", r.throughput_per_min},
              {"classes", classes},       {"failures", failures}}
      .dump();
}

}  // namespace cuzk::bench
