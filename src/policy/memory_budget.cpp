#include "policy/memory_budget.hpp"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>

namespace cuzk::policy {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

struct Unit {
  std::string_view name;
  std::uint64_t bytes;
};
constexpr Unit kUnits[] = {
    {"", 1},
    {"b", 1},
    {"kib", kKiB},
    {"mib", kMiB},
    {"gib", kGiB},
    {"tib", kTiB},
    {"k", kKiB},
    {"m", kMiB},
    {"g", kGiB},
    {"t", kTiB},  // shorthand = binary, as in systemd
    {"kb", 1000ull},
    {"mb", 1000'000ull},
    {"gb", 1000'000'000ull},
    {"tb", 1000'000'000'000ull},
};

SizeError size_error(std::string_view text, std::string_view why) {
  return SizeError{"bad size \"" + std::string(text) + "\": " + std::string(why) +
                   " (expected e.g. 512MiB, 64GiB, 1.5TiB, 80GB or a byte count)"};
}

}  // namespace

Expected<std::uint64_t, SizeError> parse_size_bytes(std::string_view text) {
  std::string_view s = trim(text);
  std::size_t i = 0;
  std::uint64_t whole = 0;
  bool any_digit = false;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    std::uint64_t d = static_cast<std::uint64_t>(s[i] - '0');
    if (whole > (kMax - d) / 10) return unexpected(size_error(text, "too large"));
    whole = whole * 10 + d;
    any_digit = true;
  }
  // Fraction digits, kept exactly as numerator / 10^k (at most 9 digits).
  std::uint64_t frac_num = 0, frac_den = 1;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      if (frac_den >= 1000'000'000ull) return unexpected(size_error(text, "too many fraction digits"));
      frac_num = frac_num * 10 + static_cast<std::uint64_t>(s[i] - '0');
      frac_den *= 10;
      any_digit = true;
    }
  }
  if (!any_digit) return unexpected(size_error(text, "no number"));
  std::string_view unit = trim(s.substr(i));
  for (const Unit& u : kUnits) {
    if (!iequals(unit, u.name)) continue;
    if (whole != 0 && u.bytes > kMax / whole) return unexpected(size_error(text, "too large"));
    std::uint64_t bytes = whole * u.bytes;
    // frac_num < frac_den <= 1e9 and u.bytes <= 2^40: the product fits in 128 bits.
    unsigned __int128 frac_bytes = static_cast<unsigned __int128>(frac_num) * u.bytes / frac_den;
    if (frac_bytes > kMax - bytes) return unexpected(size_error(text, "too large"));
    return bytes + static_cast<std::uint64_t>(frac_bytes);
  }
  return unexpected(size_error(text, "unknown unit \"" + std::string(unit) + "\""));
}

Expected<BudgetSetting, SizeError> parse_budget_setting(std::string_view text) {
  if (iequals(trim(text), "auto")) return BudgetSetting{true, 0};
  auto bytes = parse_size_bytes(text);
  if (!bytes) return unexpected(bytes.error());
  if (*bytes == 0) return unexpected(SizeError{"memory budget must not be 0"});
  return BudgetSetting{false, *bytes};
}

Expected<std::uint64_t, SizeError> resolve_budget_bytes(const BudgetSetting& setting, std::uint64_t physical_bytes,
                                                        std::uint64_t margin_bytes) {
  if (!setting.automatic) return setting.explicit_bytes;
  if (physical_bytes <= margin_bytes) {
    std::ostringstream m;
    m << "auto memory budget: the safety margin (" << margin_bytes << " B) leaves nothing of " << physical_bytes
      << " B";
    return unexpected(SizeError{m.str()});
  }
  return physical_bytes - margin_bytes;
}

std::optional<std::uint64_t> physical_memory_bytes() {
  std::optional<std::uint64_t> bytes;
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
  // cgroup v2: "max" or a byte count. A container limit below RAM is the real one.
  std::ifstream f("/sys/fs/cgroup/memory.max");
  std::string limit;
  if (f >> limit && limit != "max") {
    auto l = parse_size_bytes(limit);
    if (l && *l > 0 && (!bytes || *l < *bytes)) bytes = *l;
  }
  return bytes;
}

std::string_view to_string(RefusalKind k) {
  switch (k) {
    case RefusalKind::kTooLarge:
      return "too_large";
    case RefusalKind::kOverloaded:
      return "overloaded";
    case RefusalKind::kWouldWait:
      return "would_wait";
  }
  return "?";
}

std::string Refusal::message() const {
  std::ostringstream m;
  m << "memory budget: " << to_string(kind) << ": requested " << requested_bytes << " B of a " << total_bytes
    << " B budget";
  return m.str();
}

// ---- Reservation ---------------------------------------------------------------

MemoryBudget::Reservation::Reservation(Reservation&& o) noexcept : budget_(o.budget_), bytes_(o.bytes_) {
  o.budget_ = nullptr;
  o.bytes_ = 0;
}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& o) noexcept {
  if (this != &o) {
    release();
    budget_ = o.budget_;
    bytes_ = o.bytes_;
    o.budget_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void MemoryBudget::Reservation::release() {
  if (budget_ == nullptr) return;
  MemoryBudget* b = budget_;
  std::uint64_t n = bytes_;
  budget_ = nullptr;
  bytes_ = 0;
  --b->live_reservations_;
  b->give_back(n);  // last: the ready callback may run and touch anything
}

void MemoryBudget::Reservation::shrink_to(std::uint64_t new_bytes) {
  CUZK_POLICY_CHECK(new_bytes <= bytes_, "shrink_to(%llu) grows a %llu B reservation",
                    static_cast<unsigned long long>(new_bytes), static_cast<unsigned long long>(bytes_));
  if (budget_ == nullptr || new_bytes == bytes_) return;
  std::uint64_t freed = bytes_ - new_bytes;
  bytes_ = new_bytes;
  budget_->give_back(freed);
}

void MemoryBudget::Reservation::settle(std::uint64_t actual_bytes) {
  CUZK_POLICY_CHECK(budget_ != nullptr, "settle() on an empty reservation");
  if (actual_bytes <= bytes_) {
    shrink_to(actual_bytes);
    return;
  }
  budget_->charge(actual_bytes - bytes_);
  bytes_ = actual_bytes;
}

void MemoryBudget::Reservation::absorb(Reservation&& other) {
  if (other.budget_ == nullptr) return;
  if (budget_ == nullptr) {
    *this = std::move(other);
    return;
  }
  CUZK_POLICY_CHECK(budget_ == other.budget_, "absorbing a reservation of another budget");
  bytes_ += other.bytes_;
  --budget_->live_reservations_;
  other.budget_ = nullptr;
  other.bytes_ = 0;
}

// ---- MemoryBudget ----------------------------------------------------------------

MemoryBudget::MemoryBudget(BudgetConfig config)
    : total_bytes_(config.total_bytes),
      max_waiters_(config.max_waiters),
      critical_overdraft_bytes_(config.critical_overdraft_bytes) {
  CUZK_POLICY_CHECK(total_bytes_ > 0, "a memory budget of 0 bytes");
}

MemoryBudget::~MemoryBudget() {
  CUZK_POLICY_CHECK(live_reservations_ == 0, "%zu reservations outlive their budget", live_reservations_);
}

void MemoryBudget::charge(std::uint64_t bytes) {
  reserved_bytes_ += bytes;
  if (reserved_bytes_ > peak_reserved_bytes_) peak_reserved_bytes_ = reserved_bytes_;
}

void MemoryBudget::give_back(std::uint64_t bytes) {
  CUZK_POLICY_CHECK(bytes <= reserved_bytes_, "giving back %llu B with %llu B reserved",
                    static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(reserved_bytes_));
  reserved_bytes_ -= bytes;
  pump();
  if (freed_fn_) freed_fn_();
}

bool MemoryBudget::fits_now(std::uint64_t bytes, Priority priority) const {
  if (bytes <= available_bytes()) return true;
  if (priority != Priority::kCritical) return false;
  // bytes <= total (checked on entry) and both sums far below 2^64.
  return reserved_bytes_ + bytes <= total_bytes_ + critical_overdraft_bytes_;
}

bool MemoryBudget::waiter_at_or_above(Priority p) const {
  for (int i = static_cast<int>(p); i < kNumPriorities; ++i) {
    if (!waiting_[i].empty()) return true;
  }
  return false;
}

Refusal MemoryBudget::refuse(RefusalKind kind, std::uint64_t bytes) {
  ++refused_total_[static_cast<int>(kind)];
  return Refusal{kind, bytes, total_bytes_};
}

Expected<MemoryBudget::Reservation, Refusal> MemoryBudget::try_reserve(std::uint64_t bytes, Priority priority) {
  if (bytes > total_bytes_) return unexpected(refuse(RefusalKind::kTooLarge, bytes));
  // Zero bytes always fit and take nothing from anyone; the reservation is
  // still bound to the budget so that settle() can charge the real size.
  if (bytes != 0 && (!fits_now(bytes, priority) || waiter_at_or_above(priority))) {
    return unexpected(refuse(RefusalKind::kWouldWait, bytes));
  }
  charge(bytes);
  ++live_reservations_;
  ++granted_total_;
  return Reservation{this, bytes};
}

Expected<MemoryBudget::Admission, Refusal> MemoryBudget::reserve(std::uint64_t bytes, Priority priority) {
  if (bytes > total_bytes_) return unexpected(refuse(RefusalKind::kTooLarge, bytes));
  if (bytes == 0 || (fits_now(bytes, priority) && !waiter_at_or_above(priority))) {
    charge(bytes);
    ++live_reservations_;
    ++granted_total_;
    return Admission{Reservation{this, bytes}};
  }
  if (waiting_index_.size() >= max_waiters_) return unexpected(refuse(RefusalKind::kOverloaded, bytes));
  WaitId id = next_wait_id_++;
  waiting_[static_cast<int>(priority)].emplace(id, bytes);
  waiting_index_.emplace(id, priority);
  ++waited_total_;
  return Admission{id};
}

std::optional<Expected<MemoryBudget::Reservation, Refusal>> MemoryBudget::claim(WaitId id) {
  auto it = ready_.find(id);
  if (it == ready_.end()) {
    CUZK_POLICY_CHECK(waiting_index_.count(id) != 0, "claim of unknown wait id %llu",
                      static_cast<unsigned long long>(id));
    return std::nullopt;
  }
  Ready r = it->second;
  ready_.erase(it);
  if (r.refusal) return Expected<Reservation, Refusal>(unexpected(*r.refusal));
  // The bytes were charged when granted; the Reservation now owns them.
  ++live_reservations_;
  return Expected<Reservation, Refusal>(Reservation{this, r.bytes});
}

bool MemoryBudget::cancel(WaitId id) {
  if (auto it = ready_.find(id); it != ready_.end()) {
    bool granted = !it->second.refusal.has_value();
    std::uint64_t bytes = it->second.bytes;
    ready_.erase(it);
    if (granted) give_back(bytes);
    return true;
  }
  auto it = waiting_index_.find(id);
  if (it == waiting_index_.end()) return false;
  waiting_[static_cast<int>(it->second)].erase(id);
  waiting_index_.erase(it);
  // The withdrawn request may have been the head blocking smaller ones.
  pump();
  return true;
}

void MemoryBudget::resize(std::uint64_t total_bytes) {
  CUZK_POLICY_CHECK(total_bytes > 0, "resize to 0 bytes");
  total_bytes_ = total_bytes;
  std::vector<WaitId> became_ready;
  for (auto& queue : waiting_) {
    for (auto it = queue.begin(); it != queue.end();) {
      if (it->second > total_bytes_) {
        ready_.emplace(it->first, Ready{refuse(RefusalKind::kTooLarge, it->second), 0});
        waiting_index_.erase(it->first);
        became_ready.push_back(it->first);
        it = queue.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::vector<WaitId> granted = grant_waiters();
  became_ready.insert(became_ready.end(), granted.begin(), granted.end());
  notify(became_ready);
  if (freed_fn_) freed_fn_();
}

std::vector<MemoryBudget::WaitId> MemoryBudget::grant_waiters() {
  std::vector<WaitId> granted;
  for (int p = kNumPriorities - 1; p >= 0; --p) {
    auto& queue = waiting_[p];
    while (!queue.empty()) {
      auto head = queue.begin();
      // Strict head-of-line: if the first in line does not fit, nobody
      // behind it (same or lower priority) is served either.
      if (!fits_now(head->second, static_cast<Priority>(p))) return granted;
      charge(head->second);
      ++granted_total_;
      ready_.emplace(head->first, Ready{std::nullopt, head->second});
      waiting_index_.erase(head->first);
      granted.push_back(head->first);
      queue.erase(head);
    }
  }
  return granted;
}

void MemoryBudget::notify(const std::vector<WaitId>& ids) {
  if (!ready_fn_) return;
  // State is consistent here: the callback may claim, cancel or reserve.
  ReadyFn fn = ready_fn_;
  for (WaitId id : ids) fn(id);
}

BudgetStats MemoryBudget::stats() const {
  BudgetStats s;
  s.total_bytes = total_bytes_;
  s.reserved_bytes = reserved_bytes_;
  s.available_bytes = available_bytes();
  s.peak_reserved_bytes = peak_reserved_bytes_;
  for (int p = 0; p < kNumPriorities; ++p) {
    s.waiting[p] = static_cast<std::uint32_t>(waiting_[p].size());
    for (const auto& [id, bytes] : waiting_[p]) s.waiting_bytes[p] += bytes;
    if (!waiting_[p].empty()) s.head_bytes[p] = waiting_[p].begin()->second;
  }
  s.ready_unclaimed = static_cast<std::uint32_t>(ready_.size());
  s.granted_total = granted_total_;
  s.waited_total = waited_total_;
  s.refused_total = refused_total_;
  return s;
}

}  // namespace cuzk::policy
