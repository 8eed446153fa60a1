// Residency policy for SRS (Groth16 parameter sets) and PCE files.
//
// An entry is a file (path + kind) that can be resident in up to three tiers:
//   cold    - on disk, always; costs nothing;
//   pinned  - one copy in pinned host memory, charged to the MemoryBudget;
//   device  - one copy per GPU, charged to that GPU's SRS capacity.
// The manager decides; the caller acts. acquire()/preload()/evict() return the
// actions to perform ("load X into pinned", "evict Y from device 1") in
// order: evictions first, then loads. The budget is charged when a load is
// decided and given back when an eviction is decided, so the caller performs
// evictions right away (a short overlap of a few hundred ms is accepted).
//
// In-use entries (a live SrsLease) are never evicted. Under pressure, idle
// entries are evicted least recently used first, and only once they have been
// idle as long as reloading them would take (bytes at reload_bytes_per_s:
// rent or buy, never more than twice the cost of the best choice made
// knowing the future) and at most eviction_min_idle. Reloading a 44 GiB PoRep
// SRS costs 30-60 s, a 242 MB WinningPoSt set 0.44 s: a fixed 5-minute guard
// made a WindowPoSt job wait 5 minutes behind an idle WinningPoSt set
// (H100, 2026-12-06). Explicit eviction ignores the idle time but refuses in-use entries
// with kBusy and unknown or non-resident ones with kNotFound (the peer's
// EvictSRS returned success and did nothing).
//
// Placement: choose_device() prefers a device where the entry is resident (or
// loading), the least loaded of those; else the least loaded device with room.
//
// Threading: none; the loop owns it. Time from the injected Clock.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/clock.hpp"
#include "policy/expected.hpp"
#include "policy/memory_budget.hpp"

namespace cuzk::policy {

enum class SrsKind : std::uint8_t { kGroth16Params, kPce };
std::string_view to_string(SrsKind k);

struct SrsKey {
  std::string path;
  SrsKind kind = SrsKind::kGroth16Params;
  auto operator<=>(const SrsKey&) const = default;
  bool operator==(const SrsKey&) const = default;
};
std::string to_string(const SrsKey& k);

// Bytes the entry occupies in each tier that costs memory.
struct SrsSizes {
  std::uint64_t pinned_bytes = 0;
  std::uint64_t device_bytes = 0;  // 0: never placed on a device
};

enum class Tier : std::uint8_t { kCold, kPinned, kDevice };
std::string_view to_string(Tier t);

enum class Residency : std::uint8_t { kAbsent, kLoading, kResident };
std::string_view to_string(Residency r);

enum class SrsErrorKind : std::uint8_t {
  kNotFound,   // unknown entry, or not resident where an eviction was asked
  kBusy,       // in use or loading: cannot be evicted now
  kNoRoom,     // not enough free memory even after evicting idle entries: retry later
  kTooLarge,   // larger than the whole budget / device capacity: never fits
  kBadDevice,  // no such device
};
std::string_view to_string(SrsErrorKind k);

struct SrsError {
  SrsErrorKind kind;
  std::string message;
};

struct SrsAction {
  enum class Op : std::uint8_t { kLoadPinned, kEvictPinned, kLoadDevice, kEvictDevice };
  Op op;
  SrsKey key;
  std::optional<std::uint32_t> device;  // kLoadDevice / kEvictDevice
  std::uint64_t bytes = 0;
  bool operator==(const SrsAction&) const = default;
};
std::string to_string(const SrsAction& a);

struct SrsConfig {
  std::vector<std::uint64_t> device_capacity_bytes;  // per GPU ordinal: VRAM set aside for SRS
  Millis eviction_min_idle{5 * 60 * 1000};
  // 0: every entry waits eviction_min_idle.
  std::uint64_t reload_bytes_per_s = std::uint64_t{954} << 20;  // ~1.0 GB/s
};

class SrsManager;

// Holds an entry in use (pinned, and on one device if acquired for one).
// Move-only; releasing it stamps the entry's last use. The manager must
// outlive its leases.
class SrsLease {
 public:
  SrsLease() = default;
  SrsLease(SrsLease&& o) noexcept;
  SrsLease& operator=(SrsLease&& o) noexcept;
  SrsLease(const SrsLease&) = delete;
  SrsLease& operator=(const SrsLease&) = delete;
  ~SrsLease() { release(); }
  void release();
  bool active() const { return manager_ != nullptr; }
  const SrsKey& key() const { return key_; }
  std::optional<std::uint32_t> device() const { return device_; }

 private:
  friend class SrsManager;
  SrsLease(SrsManager* m, SrsKey key, std::optional<std::uint32_t> device)
      : manager_(m), key_(std::move(key)), device_(device) {}
  SrsManager* manager_ = nullptr;
  SrsKey key_;
  std::optional<std::uint32_t> device_;
};

struct SrsAcquisition {
  SrsLease lease;
  std::vector<SrsAction> actions;  // this caller performs them, then calls loaded()
  // Another caller is loading a tier this one needs: wait for its loaded()
  // (watch residency()) before using the entry.
  bool wait_for_other_load = false;
};

struct SrsEntryView {
  SrsKey key;
  SrsSizes sizes;
  Residency pinned = Residency::kAbsent;
  std::uint32_t pinned_refs = 0;
  std::uint64_t idle_ms = 0;                   // since last use (0 while in use)
  bool evictable = false;                      // resident in host memory, unused, idle long enough (see above)
  std::map<std::uint32_t, Residency> devices;  // present copies only
};

class SrsManager {
 public:
  SrsManager(SrsConfig config, MemoryBudget& budget, const Clock& clock);
  ~SrsManager();
  SrsManager(const SrsManager&) = delete;
  SrsManager& operator=(const SrsManager&) = delete;

  // Declares a file and its sizes (cold). Re-registering updates the sizes
  // while nothing is resident; false (unchanged) otherwise.
  bool register_srs(const SrsKey& key, SrsSizes sizes);
  bool known(const SrsKey& key) const { return entries_.count(key) != 0; }

  // Marks the entry in use for one job: pinned, plus `device` if given.
  // `prepaid`: a reservation the caller already waited for (budget.reserve),
  // adopted for the pinned copy instead of charging the budget again.
  Expected<SrsAcquisition, SrsError> acquire(const SrsKey& key, std::optional<std::uint32_t> device, Priority priority,
                                             std::optional<Reservation> prepaid = std::nullopt);
  // Makes the entry resident without holding it (operator PreloadSRS, start-up).
  Expected<std::vector<SrsAction>, SrsError> preload(const SrsKey& key, std::optional<std::uint32_t> device,
                                                     Priority priority);
  // Operator eviction: every tier, or only the copy on `device_only`.
  Expected<std::vector<SrsAction>, SrsError> evict(const SrsKey& key,
                                                   std::optional<std::uint32_t> device_only = std::nullopt);

  // The caller finished a load action: success makes the tier resident; a
  // failure returns it to absent and gives its memory back.
  void loaded(const SrsKey& key, std::optional<std::uint32_t> device);
  void load_failed(const SrsKey& key, std::optional<std::uint32_t> device);
  // A resident host copy now occupies `bytes` (part of it given back to the
  // kernel, or read back): its charge follows, growing even past the
  // budget's total (the memory is in use); its sizes stay (a load after an
  // eviction reads the whole set). False when the entry's host copy is not
  // resident or not charged (nothing changes).
  bool resize_pinned(const SrsKey& key, std::uint64_t bytes);

  // Device for a job needing `key`, among `candidates` (all devices if empty).
  std::optional<std::uint32_t> choose_device(const SrsKey& key, std::span<const std::uint32_t> candidates = {}) const;

  Residency residency(const SrsKey& key, std::optional<std::uint32_t> device) const;
  bool resident_on(const SrsKey& key, std::uint32_t device) const {
    return residency(key, device) == Residency::kResident;
  }
  std::uint64_t pinned_bytes() const { return pinned_bytes_; }
  std::uint64_t device_used_bytes(std::uint32_t device) const { return devices_.at(device).used_bytes; }
  std::uint32_t device_count() const { return static_cast<std::uint32_t>(devices_.size()); }
  std::vector<SrsEntryView> entries() const;

 private:
  friend class SrsLease;
  struct Slot {
    Residency state = Residency::kAbsent;
    std::uint32_t refs = 0;
    Millis last_used{0};
  };
  struct Entry {
    SrsSizes sizes;
    Slot pinned;
    Reservation pinned_charge;
    std::map<std::uint32_t, Slot> devices;  // absent copies are erased
  };
  struct Device {
    std::uint64_t capacity_bytes = 0;
    std::uint64_t used_bytes = 0;
    std::uint32_t active_leases = 0;
  };

  void unref(const SrsKey& key, std::optional<std::uint32_t> device);
  // Idle time after which an unused copy of `bytes` may be evicted.
  Millis min_idle_for(std::uint64_t bytes) const;
  bool evictable(const Slot& s, std::uint64_t bytes, Millis now) const;
  // Idle victims to free `need` bytes, LRU first, excluding `keep`; empty
  // if they would not suffice.
  std::vector<SrsKey> pinned_victims(std::uint64_t need, const SrsKey& keep) const;
  std::vector<SrsKey> device_victims(std::uint32_t device, std::uint64_t need, const SrsKey& keep) const;
  SrsAction drop_pinned(const SrsKey& key, Entry& e);
  SrsAction drop_device(const SrsKey& key, Entry& e, std::uint32_t device);
  bool budget_queue_ahead(Priority p) const;

  std::vector<Device> devices_;
  Millis min_idle_;
  std::uint64_t reload_bytes_per_s_;
  MemoryBudget& budget_;
  const Clock& clock_;
  std::map<SrsKey, Entry> entries_;
  std::uint64_t pinned_bytes_ = 0;
  std::uint32_t live_leases_ = 0;
};

}  // namespace cuzk::policy
