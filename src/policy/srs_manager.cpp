#include "policy/srs_manager.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace cuzk::policy {

std::string_view to_string(SrsKind k) {
  switch (k) {
    case SrsKind::kGroth16Params:
      return "params";
    case SrsKind::kPce:
      return "pce";
  }
  return "?";
}

std::string to_string(const SrsKey& k) { return std::string(to_string(k.kind)) + ":" + k.path; }

std::string_view to_string(Tier t) {
  switch (t) {
    case Tier::kCold:
      return "cold";
    case Tier::kPinned:
      return "pinned";
    case Tier::kDevice:
      return "device";
  }
  return "?";
}

std::string_view to_string(Residency r) {
  switch (r) {
    case Residency::kAbsent:
      return "absent";
    case Residency::kLoading:
      return "loading";
    case Residency::kResident:
      return "resident";
  }
  return "?";
}

std::string_view to_string(SrsErrorKind k) {
  switch (k) {
    case SrsErrorKind::kNotFound:
      return "not_found";
    case SrsErrorKind::kBusy:
      return "busy";
    case SrsErrorKind::kNoRoom:
      return "no_room";
    case SrsErrorKind::kTooLarge:
      return "too_large";
    case SrsErrorKind::kBadDevice:
      return "bad_device";
  }
  return "?";
}

std::string to_string(const SrsAction& a) {
  std::ostringstream m;
  switch (a.op) {
    case SrsAction::Op::kLoadPinned:
      m << "load " << to_string(a.key) << " into pinned";
      break;
    case SrsAction::Op::kEvictPinned:
      m << "evict " << to_string(a.key) << " from pinned";
      break;
    case SrsAction::Op::kLoadDevice:
      m << "load " << to_string(a.key) << " into device " << a.device.value_or(0);
      break;
    case SrsAction::Op::kEvictDevice:
      m << "evict " << to_string(a.key) << " from device " << a.device.value_or(0);
      break;
  }
  m << " (" << a.bytes << " B)";
  return m.str();
}

namespace {
SrsError error(SrsErrorKind kind, const SrsKey& key, std::string_view what) {
  return SrsError{kind, "srs " + to_string(key) + ": " + std::string(to_string(kind)) + ": " + std::string(what)};
}
}  // namespace

// ---- SrsLease ---------------------------------------------------------------------

SrsLease::SrsLease(SrsLease&& o) noexcept : manager_(o.manager_), key_(std::move(o.key_)), device_(o.device_) {
  o.manager_ = nullptr;
}

SrsLease& SrsLease::operator=(SrsLease&& o) noexcept {
  if (this != &o) {
    release();
    manager_ = o.manager_;
    key_ = std::move(o.key_);
    device_ = o.device_;
    o.manager_ = nullptr;
  }
  return *this;
}

void SrsLease::release() {
  if (manager_ == nullptr) return;
  SrsManager* m = manager_;
  manager_ = nullptr;
  m->unref(key_, device_);
}

// ---- SrsManager -------------------------------------------------------------------

SrsManager::SrsManager(SrsConfig config, MemoryBudget& budget, const Clock& clock)
    : min_idle_(config.eviction_min_idle),
      reload_bytes_per_s_(config.reload_bytes_per_s),
      budget_(budget),
      clock_(clock) {
  for (std::uint64_t cap : config.device_capacity_bytes) devices_.push_back(Device{cap, 0, 0});
}

SrsManager::~SrsManager() { CUZK_POLICY_CHECK(live_leases_ == 0, "%u SRS leases outlive their manager", live_leases_); }

bool SrsManager::register_srs(const SrsKey& key, SrsSizes sizes) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    entries_.emplace(key, Entry{sizes, Slot{}, Reservation{}, {}});
    return true;
  }
  Entry& e = it->second;
  if (e.pinned.state != Residency::kAbsent || e.pinned.refs != 0 || !e.devices.empty()) return false;
  e.sizes = sizes;
  return true;
}

Millis SrsManager::min_idle_for(std::uint64_t bytes) const {
  if (reload_bytes_per_s_ == 0) return min_idle_;
  // Rounded up (a reload never costs 0 ms); 128 bits: bytes * 1000 may not fit 64.
  const auto reload_ms = (static_cast<unsigned __int128>(bytes) * 1000 + reload_bytes_per_s_ - 1) / reload_bytes_per_s_;
  if (reload_ms >= static_cast<unsigned __int128>(min_idle_.count())) return min_idle_;
  return Millis(static_cast<Millis::rep>(reload_ms));
}

bool SrsManager::evictable(const Slot& s, std::uint64_t bytes, Millis now) const {
  return s.state == Residency::kResident && s.refs == 0 && now - s.last_used >= min_idle_for(bytes);
}

bool SrsManager::budget_queue_ahead(Priority p) const {
  BudgetStats s = budget_.stats();
  for (int i = static_cast<int>(p); i < kNumPriorities; ++i) {
    if (s.waiting[i] != 0) return true;
  }
  return false;
}

std::vector<SrsKey> SrsManager::pinned_victims(std::uint64_t need, const SrsKey& keep) const {
  Millis now = clock_.now();
  std::vector<std::tuple<Millis, const SrsKey*, std::uint64_t>> idle;
  for (const auto& [key, e] : entries_) {
    if (key == keep || e.sizes.pinned_bytes == 0 || !evictable(e.pinned, e.sizes.pinned_bytes, now)) continue;
    idle.emplace_back(e.pinned.last_used, &key, e.pinned_charge.bytes());
  }
  // Least recently used first; the key breaks ties so the choice is deterministic.
  std::sort(idle.begin(), idle.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), *std::get<1>(a)) < std::tie(std::get<0>(b), *std::get<1>(b));
  });
  std::vector<SrsKey> victims;
  std::uint64_t freed = 0;
  for (const auto& [used, key, bytes] : idle) {
    if (freed >= need) break;
    victims.push_back(*key);
    freed += bytes;
  }
  if (freed < need) victims.clear();
  return victims;
}

std::vector<SrsKey> SrsManager::device_victims(std::uint32_t device, std::uint64_t need, const SrsKey& keep) const {
  Millis now = clock_.now();
  std::vector<std::tuple<Millis, const SrsKey*, std::uint64_t>> idle;
  for (const auto& [key, e] : entries_) {
    auto d = e.devices.find(device);
    if (key == keep || d == e.devices.end() || !evictable(d->second, e.sizes.device_bytes, now)) continue;
    idle.emplace_back(d->second.last_used, &key, e.sizes.device_bytes);
  }
  std::sort(idle.begin(), idle.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), *std::get<1>(a)) < std::tie(std::get<0>(b), *std::get<1>(b));
  });
  std::vector<SrsKey> victims;
  std::uint64_t freed = 0;
  for (const auto& [used, key, bytes] : idle) {
    if (freed >= need) break;
    victims.push_back(*key);
    freed += bytes;
  }
  if (freed < need) victims.clear();
  return victims;
}

SrsAction SrsManager::drop_pinned(const SrsKey& key, Entry& e) {
  std::uint64_t bytes = e.pinned_charge.bytes();
  pinned_bytes_ -= bytes;
  e.pinned.state = Residency::kAbsent;
  return SrsAction{SrsAction::Op::kEvictPinned, key, std::nullopt, bytes};
}

SrsAction SrsManager::drop_device(const SrsKey& key, Entry& e, std::uint32_t device) {
  auto it = e.devices.find(device);
  CUZK_POLICY_CHECK(it != e.devices.end() && it->second.refs == 0, "dropping a busy or absent device copy");
  std::uint64_t bytes = e.sizes.device_bytes;
  devices_[device].used_bytes -= bytes;
  e.devices.erase(it);
  return SrsAction{SrsAction::Op::kEvictDevice, key, device, bytes};
}

Expected<SrsAcquisition, SrsError> SrsManager::acquire(const SrsKey& key, std::optional<std::uint32_t> device,
                                                       Priority priority, std::optional<Reservation> prepaid) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return unexpected(error(SrsErrorKind::kNotFound, key, "not registered"));
  if (device && *device >= devices_.size()) {
    return unexpected(error(SrsErrorKind::kBadDevice, key, "device " + std::to_string(*device)));
  }
  Entry& e = it->second;

  // Plan first, commit after: a refusal leaves everything as it was.
  const std::uint64_t pinned_need = e.sizes.pinned_bytes;
  const bool load_pinned = e.pinned.state == Residency::kAbsent;
  const bool use_prepaid = load_pinned && prepaid && prepaid->holds_budget();
  std::vector<SrsKey> pinned_out;
  std::uint64_t pinned_from_budget = 0;
  if (load_pinned && !use_prepaid && pinned_need > 0) {
    if (pinned_need > budget_.total_bytes()) {
      return unexpected(error(SrsErrorKind::kTooLarge, key, "larger than the memory budget"));
    }
    if (budget_queue_ahead(priority)) {
      return unexpected(error(SrsErrorKind::kNoRoom, key, "budget requests of equal or higher priority wait"));
    }
    std::uint64_t free = budget_.available_bytes();
    if (free < pinned_need) {
      pinned_out = pinned_victims(pinned_need - free, key);
      if (pinned_out.empty()) {
        return unexpected(error(SrsErrorKind::kNoRoom, key, "memory budget full of entries in use or recently used"));
      }
    }
  }
  const bool load_device = device && e.sizes.device_bytes > 0 &&
                           (!e.devices.count(*device) || e.devices.at(*device).state == Residency::kAbsent);
  std::vector<SrsKey> device_out;
  if (load_device) {
    const Device& d = devices_[*device];
    if (e.sizes.device_bytes > d.capacity_bytes) {
      return unexpected(error(SrsErrorKind::kTooLarge, key, "larger than device " + std::to_string(*device)));
    }
    std::uint64_t free = d.capacity_bytes - std::min(d.capacity_bytes, d.used_bytes);
    if (free < e.sizes.device_bytes) {
      device_out = device_victims(*device, e.sizes.device_bytes - free, key);
      if (device_out.empty()) {
        return unexpected(error(SrsErrorKind::kNoRoom, key, "device " + std::to_string(*device) + " full"));
      }
    }
  }

  SrsAcquisition out;
  for (const SrsKey& v : device_out) out.actions.push_back(drop_device(v, entries_.at(v), *device));
  if (load_pinned) {
    Reservation charge;
    if (use_prepaid) {
      charge = std::move(*prepaid);
      if (pinned_need > 0)
        charge.settle(pinned_need);
      else
        charge.release();
    } else {
      // The evicted entries' bytes pass straight to this one (absorb), so a
      // waiter of lower priority cannot take them in between.
      for (const SrsKey& v : pinned_out) {
        Entry& victim = entries_.at(v);
        out.actions.push_back(drop_pinned(v, victim));
        charge.absorb(std::move(victim.pinned_charge));
      }
      if (charge.bytes() > pinned_need) {
        charge.shrink_to(pinned_need);
      } else if (charge.bytes() < pinned_need) {
        pinned_from_budget = pinned_need - charge.bytes();
        auto more = budget_.try_reserve(pinned_from_budget, priority);
        CUZK_POLICY_CHECK(more.has_value(), "planned %llu B for %s but the budget refused: %s",
                          static_cast<unsigned long long>(pinned_from_budget), to_string(key).c_str(),
                          more.error().message().c_str());
        charge.absorb(std::move(more.value()));
      }
    }
    e.pinned_charge = std::move(charge);
    pinned_bytes_ += e.pinned_charge.bytes();
    e.pinned.state = Residency::kLoading;
    out.actions.push_back(SrsAction{SrsAction::Op::kLoadPinned, key, std::nullopt, e.pinned_charge.bytes()});
  } else if (e.pinned.state == Residency::kLoading) {
    out.wait_for_other_load = true;
  }
  if (load_device) {
    Slot& s = e.devices[*device];
    s.state = Residency::kLoading;
    devices_[*device].used_bytes += e.sizes.device_bytes;
    out.actions.push_back(SrsAction{SrsAction::Op::kLoadDevice, key, device, e.sizes.device_bytes});
  } else if (device && e.devices.count(*device) && e.devices.at(*device).state == Residency::kLoading) {
    out.wait_for_other_load = true;
  }

  ++e.pinned.refs;
  if (device) {
    ++devices_[*device].active_leases;
    if (auto d = e.devices.find(*device); d != e.devices.end()) ++d->second.refs;
  }
  ++live_leases_;
  out.lease = SrsLease(this, key, device);
  return out;
}

void SrsManager::unref(const SrsKey& key, std::optional<std::uint32_t> device) {
  Entry& e = entries_.at(key);
  Millis now = clock_.now();
  CUZK_POLICY_CHECK(e.pinned.refs > 0, "lease release without a reference on %s", to_string(key).c_str());
  --e.pinned.refs;
  e.pinned.last_used = now;
  if (device) {
    --devices_[*device].active_leases;
    if (auto d = e.devices.find(*device); d != e.devices.end()) {
      --d->second.refs;
      d->second.last_used = now;
      if (d->second.refs == 0 && d->second.state == Residency::kAbsent) e.devices.erase(d);
    }
  }
  --live_leases_;
}

Expected<std::vector<SrsAction>, SrsError> SrsManager::preload(const SrsKey& key, std::optional<std::uint32_t> device,
                                                               Priority priority) {
  auto a = acquire(key, device, priority);
  if (!a) return unexpected(a.error());
  return std::move(a->actions);  // the lease ends here: resident, idle from now
}

Expected<std::vector<SrsAction>, SrsError> SrsManager::evict(const SrsKey& key,
                                                             std::optional<std::uint32_t> device_only) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return unexpected(error(SrsErrorKind::kNotFound, key, "not registered"));
  Entry& e = it->second;
  if (device_only && *device_only >= devices_.size()) {
    return unexpected(error(SrsErrorKind::kBadDevice, key, "device " + std::to_string(*device_only)));
  }
  std::vector<std::uint32_t> device_targets;
  for (const auto& [d, slot] : e.devices) {
    if (device_only && d != *device_only) continue;
    if (slot.state == Residency::kAbsent) continue;
    if (slot.refs != 0 || slot.state == Residency::kLoading) {
      return unexpected(error(SrsErrorKind::kBusy, key, "in use or loading on device " + std::to_string(d)));
    }
    device_targets.push_back(d);
  }
  bool pinned_target = !device_only && e.pinned.state != Residency::kAbsent;
  if (pinned_target && (e.pinned.refs != 0 || e.pinned.state == Residency::kLoading)) {
    return unexpected(error(SrsErrorKind::kBusy, key, "in use or loading in pinned memory"));
  }
  if (device_targets.empty() && !pinned_target) {
    return unexpected(error(SrsErrorKind::kNotFound, key, "not resident there"));
  }
  std::vector<SrsAction> actions;
  for (std::uint32_t d : device_targets) actions.push_back(drop_device(key, e, d));
  if (pinned_target) {
    actions.push_back(drop_pinned(key, e));
    e.pinned_charge.release();
  }
  return actions;
}

void SrsManager::loaded(const SrsKey& key, std::optional<std::uint32_t> device) {
  Entry& e = entries_.at(key);
  Slot& s = device ? e.devices.at(*device) : e.pinned;
  CUZK_POLICY_CHECK(s.state == Residency::kLoading, "loaded() for %s which is %s", to_string(key).c_str(),
                    std::string(to_string(s.state)).c_str());
  s.state = Residency::kResident;
  s.last_used = clock_.now();
}

void SrsManager::load_failed(const SrsKey& key, std::optional<std::uint32_t> device) {
  Entry& e = entries_.at(key);
  if (device) {
    auto d = e.devices.find(*device);
    CUZK_POLICY_CHECK(d != e.devices.end() && d->second.state == Residency::kLoading, "load_failed() without a load");
    devices_[*device].used_bytes -= e.sizes.device_bytes;
    d->second.state = Residency::kAbsent;
    if (d->second.refs == 0) e.devices.erase(d);
    return;
  }
  CUZK_POLICY_CHECK(e.pinned.state == Residency::kLoading, "load_failed() without a load");
  pinned_bytes_ -= e.pinned_charge.bytes();
  e.pinned.state = Residency::kAbsent;
  e.pinned_charge.release();
}

bool SrsManager::resize_pinned(const SrsKey& key, std::uint64_t bytes) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.pinned.state != Residency::kResident) return false;
  Entry& e = it->second;
  if (!e.pinned_charge.holds_budget()) return false;
  // sizes stay: a later load after an eviction reads the whole set again.
  pinned_bytes_ -= e.pinned_charge.bytes();
  e.pinned_charge.settle(bytes);
  pinned_bytes_ += e.pinned_charge.bytes();
  return true;
}

Residency SrsManager::residency(const SrsKey& key, std::optional<std::uint32_t> device) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return Residency::kAbsent;
  if (!device) return it->second.pinned.state;
  auto d = it->second.devices.find(*device);
  return d == it->second.devices.end() ? Residency::kAbsent : d->second.state;
}

std::optional<std::uint32_t> SrsManager::choose_device(const SrsKey& key,
                                                       std::span<const std::uint32_t> candidates) const {
  auto it = entries_.find(key);
  if (it == entries_.end() || devices_.empty()) return std::nullopt;
  const Entry& e = it->second;
  std::vector<std::uint32_t> all;
  if (candidates.empty()) {
    for (std::uint32_t d = 0; d < devices_.size(); ++d) all.push_back(d);
    candidates = all;
  }
  // 1. Where it already is (or is arriving): the least loaded such device.
  std::optional<std::uint32_t> best;
  for (std::uint32_t d : candidates) {
    CUZK_POLICY_CHECK(d < devices_.size(), "candidate device %u of %zu", d, devices_.size());
    auto s = e.devices.find(d);
    if (s == e.devices.end() || s->second.state == Residency::kAbsent) continue;
    if (!best || devices_[d].active_leases < devices_[*best].active_leases) best = d;
  }
  if (best) return best;
  // 2. Else the least loaded device with room (free, or freeable from idle
  // entries); more free bytes breaks a tie (fewer evictions).
  auto free_of = [&](std::uint32_t d) {
    return devices_[d].capacity_bytes - std::min(devices_[d].capacity_bytes, devices_[d].used_bytes);
  };
  for (std::uint32_t d : candidates) {
    std::uint64_t need = e.sizes.device_bytes;
    std::uint64_t free = free_of(d);
    bool room = need <= free || (need <= devices_[d].capacity_bytes && !device_victims(d, need - free, key).empty());
    if (!room) continue;
    if (!best || std::make_pair(devices_[d].active_leases, ~free) <
                     std::make_pair(devices_[*best].active_leases, ~free_of(*best))) {
      best = d;
    }
  }
  return best;
}

std::vector<SrsEntryView> SrsManager::entries() const {
  Millis now = clock_.now();
  std::vector<SrsEntryView> out;
  for (const auto& [key, e] : entries_) {
    SrsEntryView v;
    v.key = key;
    v.sizes = e.sizes;
    v.pinned = e.pinned.state;
    v.pinned_refs = e.pinned.refs;
    v.idle_ms =
        e.pinned.refs != 0 ? 0 : static_cast<std::uint64_t>(std::max<long long>(0, (now - e.pinned.last_used).count()));
    v.evictable = evictable(e.pinned, e.sizes.pinned_bytes, now);
    for (const auto& [d, s] : e.devices) {
      if (s.state != Residency::kAbsent) v.devices.emplace(d, s.state);
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace cuzk::policy
