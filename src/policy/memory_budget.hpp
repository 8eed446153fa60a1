// One host-memory budget for the whole daemon, in bytes.
//
// Every large host allocation (synthesis buffers, pinned SRS, PCE) is charged
// here before it is made, through a move-only RAII Reservation that gives its
// bytes back when destroyed. Requests that cannot be served now WAIT BY
// PRIORITY: CRITICAL before HIGH before NORMAL before LOW, FIFO within one
// priority, and strictly head-of-line: while the first waiter does not fit,
// nobody behind it is served, so a large WinningPoSt/WindowPoSt request is
// never starved by a stream of small sealing requests (the peer's budget was
// FIFO with a lost-wakeup notify; a request larger than the budget blocked
// forever - here it is refused at once as kTooLarge).
//
// Threading: none. The event loop owns the budget and calls it from one
// thread. Waiting is either polled (claim(id)) or signalled through the ready
// callback, which the loop turns into a wake-up of the waiting coroutine.
//
// Example (inside the loop):
//   auto r = budget.reserve(13 * kGiB, Priority::kNormal);
//   if (!r) return map(r.error());               // kTooLarge / kOverloaded
//   if (auto* id = std::get_if<MemoryBudget::WaitId>(&*r)) {
//     co_await ready_signal(*id);                // set by the ready callback
//     auto c = budget.claim(*id);                // -> Reservation or Refusal
//   }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/types.hpp"
#include "policy/expected.hpp"

namespace cuzk::policy {

using engine::kNumPriorities;
using engine::Priority;

inline constexpr std::uint64_t kKiB = 1ull << 10;
inline constexpr std::uint64_t kMiB = 1ull << 20;
inline constexpr std::uint64_t kGiB = 1ull << 30;
inline constexpr std::uint64_t kTiB = 1ull << 40;

// ---- configuration parsing -------------------------------------------------

struct SizeError {
  std::string message;
};

// "123", "123B", "512KiB", "64GiB", "1.5TiB" (binary units) and "64GB", "500MB"
// (decimal SI units); the unit is case-insensitive, spaces between number and
// unit are allowed. Anything else is an error - the peer silently turned an
// unparsable size into 50 GiB. Fractions round down to a whole byte.
Expected<std::uint64_t, SizeError> parse_size_bytes(std::string_view text);

// memory.total_budget: "auto" or an explicit size.
struct BudgetSetting {
  bool automatic = true;
  std::uint64_t explicit_bytes = 0;  // when !automatic
};
Expected<BudgetSetting, SizeError> parse_budget_setting(std::string_view text);

// The budget a setting stands for: explicit bytes as given, or "auto" =
// physical_bytes - margin_bytes (an error when the margin eats everything).
Expected<std::uint64_t, SizeError> resolve_budget_bytes(const BudgetSetting& setting, std::uint64_t physical_bytes,
                                                        std::uint64_t margin_bytes);

// The memory this process may use: MemTotal, lowered to the cgroup v2 limit
// (memory.max) when one is set. nullopt if neither can be read. Reads /proc and
// /sys: call it from main(), not from a policy.
std::optional<std::uint64_t> physical_memory_bytes();

// ---- the budget --------------------------------------------------------------

enum class RefusalKind : std::uint8_t {
  kTooLarge,    // larger than the whole budget: can never be served (client error / config)
  kOverloaded,  // the wait queue is full: retry later
  kWouldWait,   // try_reserve only: not servable right now without waiting
};
std::string_view to_string(RefusalKind k);

struct Refusal {
  RefusalKind kind;
  std::uint64_t requested_bytes = 0;
  std::uint64_t total_bytes = 0;  // the budget when refused
  std::string message() const;
  bool operator==(const Refusal&) const = default;
};

struct BudgetStats {
  std::uint64_t total_bytes = 0;
  std::uint64_t reserved_bytes = 0;  // may exceed total after a shrink or settle()
  std::uint64_t available_bytes = 0;
  std::uint64_t peak_reserved_bytes = 0;
  std::array<std::uint32_t, kNumPriorities> waiting{};  // indexed by Priority
  std::array<std::uint64_t, kNumPriorities> waiting_bytes{};
  std::array<std::uint64_t, kNumPriorities> head_bytes{};  // first in line per priority, 0 if none
  std::uint32_t ready_unclaimed = 0;                       // granted to a waiter that has not claimed yet
  std::uint64_t granted_total = 0;                         // monotonic: immediate and queued grants
  std::uint64_t waited_total = 0;                          // monotonic: requests that had to queue
  std::array<std::uint64_t, 3> refused_total{};            // monotonic, indexed by RefusalKind
};

struct BudgetConfig {
  std::uint64_t total_bytes = 0;
  std::size_t max_waiters = 1024;  // bound on the wait queue (all priorities)
  // CRITICAL requests may take the budget this far past its total: a
  // WinningPoSt's small working set then never waits for a running job's
  // partition to give memory back. Others are not affected, except that they
  // wait while the overdraft is in use (a reserve held free for CRITICAL
  // requests instead could leave a job that fits the total waiting for
  // memory that nothing will give back).
  std::uint64_t critical_overdraft_bytes = 0;
};

class MemoryBudget {
 public:
  // Bytes held against the budget; given back on destruction. Move-only.
  class Reservation {
   public:
    Reservation() = default;  // holds nothing
    Reservation(Reservation&& o) noexcept;
    Reservation& operator=(Reservation&& o) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() { release(); }

    std::uint64_t bytes() const { return bytes_; }
    bool holds_budget() const { return budget_ != nullptr; }
    // Gives everything back now.
    void release();
    // Gives back all but new_bytes (two-phase release: after prove_start the
    // a/b/c buffers are freed while the rest lives on). new_bytes <= bytes().
    void shrink_to(std::uint64_t new_bytes);
    // Records the real size once the allocation is made. Shrinking gives bytes
    // back; growing charges the difference at once, even past the total: the
    // memory is already in use, and the books must say so (waiters then wait).
    void settle(std::uint64_t actual_bytes);
    // Takes over the bytes of `other` (same budget) without touching the
    // books: a freed entry's memory handed straight to its replacement, so no
    // waiter can slip in between.
    void absorb(Reservation&& other);

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* budget, std::uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    MemoryBudget* budget_ = nullptr;
    std::uint64_t bytes_ = 0;
  };

  using WaitId = std::uint64_t;
  // Called (on the caller's thread, from inside the call that released memory
  // or resized) once per wait that became claimable: granted or refused.
  using ReadyFn = std::function<void(WaitId)>;

  explicit MemoryBudget(BudgetConfig config);
  // Every Reservation must be gone (a live one would point at freed memory).
  ~MemoryBudget();
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  void set_ready_callback(ReadyFn fn) { ready_fn_ = std::move(fn); }
  // Called (like the ready callback) after bytes went back or the total was
  // resized, once the waiters were served: for those who take memory only
  // when it is free now (try_reserve) and wait for a chance to try again.
  void set_freed_callback(std::function<void()> fn) { freed_fn_ = std::move(fn); }

  // Now or never: kTooLarge, or kWouldWait when the bytes are not free or a
  // waiter of the same or higher priority is ahead (no barging).
  Expected<Reservation, Refusal> try_reserve(std::uint64_t bytes, Priority priority);

  // Now, or queued: a Reservation, or a WaitId to claim later. Refused at once
  // with kTooLarge (bytes > total) or kOverloaded (max_waiters reached).
  using Admission = std::variant<Reservation, WaitId>;
  Expected<Admission, Refusal> reserve(std::uint64_t bytes, Priority priority);

  // nullopt while still waiting; otherwise the grant or the refusal (a budget
  // shrunk below the request refuses it as kTooLarge), and the id is forgotten.
  // Claiming an unknown id is a bug.
  std::optional<Expected<Reservation, Refusal>> claim(WaitId id);
  // Withdraws a wait (the client went away); a grant not yet claimed is given
  // back. False if the id is unknown (already claimed or cancelled).
  bool cancel(WaitId id);

  // SIGHUP reload. Growing serves waiters; shrinking below what is reserved
  // revokes nothing (the holders finish) but serves nobody until the books are
  // back under the total, and refuses queued requests that no longer fit at all.
  void resize(std::uint64_t total_bytes);

  std::uint64_t total_bytes() const { return total_bytes_; }
  std::uint64_t reserved_bytes() const { return reserved_bytes_; }
  std::uint64_t available_bytes() const { return reserved_bytes_ >= total_bytes_ ? 0 : total_bytes_ - reserved_bytes_; }
  std::size_t waiting() const { return waiting_index_.size(); }
  BudgetStats stats() const;

 private:
  struct Ready {
    std::optional<Refusal> refusal;  // nullopt: granted
    std::uint64_t bytes = 0;         // counted in reserved_bytes_ when granted
  };

  void give_back(std::uint64_t bytes);
  void charge(std::uint64_t bytes);
  // Whether `bytes` may be granted to `priority` now (the critical overdraft included).
  bool fits_now(std::uint64_t bytes, Priority priority) const;
  bool waiter_at_or_above(Priority p) const;
  Refusal refuse(RefusalKind kind, std::uint64_t bytes);
  // Serves waiters in order while the head fits; returns who became ready.
  std::vector<WaitId> grant_waiters();
  void notify(const std::vector<WaitId>& ids);
  void pump() { notify(grant_waiters()); }

  std::uint64_t total_bytes_;
  std::size_t max_waiters_;
  std::uint64_t critical_overdraft_bytes_;
  std::uint64_t reserved_bytes_ = 0;
  std::uint64_t peak_reserved_bytes_ = 0;
  std::size_t live_reservations_ = 0;
  // Per priority, FIFO by id (ids only grow): id -> bytes.
  std::array<std::map<WaitId, std::uint64_t>, kNumPriorities> waiting_;
  std::map<WaitId, Priority> waiting_index_;
  std::map<WaitId, Ready> ready_;
  WaitId next_wait_id_ = 1;
  ReadyFn ready_fn_;
  std::function<void()> freed_fn_;
  std::uint64_t granted_total_ = 0, waited_total_ = 0;
  std::array<std::uint64_t, 3> refused_total_{};
};

using Reservation = MemoryBudget::Reservation;

}  // namespace cuzk::policy
