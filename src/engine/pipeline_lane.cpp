// The partition pipeline's synthesis lanes (declared in
// engine/pipeline_state.hpp): each takes partitions in order, reserves their
// witness memory from the budget, synthesizes and checks them on the
// synthesis pool and hands them to the run's dispatcher (engine/pipeline.cpp).
#include <algorithm>
#include <exception>
#include <optional>
#include <system_error>

#include "engine/pipeline_state.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::engine::pipeline_detail {

using std::chrono::steady_clock;

namespace {

// A synthesis's reservation (one witness: every kind synthesizes into a
// witness sized up front, its parallel parts written in place,
// groth16/witness_parts.hpp), and a spare's witness memory into `storage`
// when one is kept. Otherwise every spare is given back before waiting, so
// that kept memory never holds up a lane. A second witness would only be
// needed to append parts synthesized apart; reserved anyway, it cost a lone
// warm 32 GiB PoRep job on a 125 GiB H100 host 2.3-4.4 s of memory wait
// before most partitions, with 5 of 8 lanes in flight.
asio::awaitable<Result<policy::Reservation>> reserve_synthesis(Ctx c, std::uint32_t m, groth16::Witness& storage) {
  State& st = c.st;
  const std::uint64_t bytes = c.plan.witness_bytes;
  if (st.spares.empty() && st.kept != nullptr) {  // an earlier run's, of this size
    if (std::optional<KeptWitnesses::Entry> e = st.kept->take(bytes)) {
      st.spares.push_back({std::move(e->storage), std::move(e->reservation)});
    }
  }
  if (!st.spares.empty()) {
    State::Spare spare = std::move(st.spares.back());
    st.spares.pop_back();
    const std::uint64_t kept = std::min(bytes, spare.reservation.bytes());
    if (std::optional<policy::Reservation> more = c.deps.memory.try_reserve(bytes - kept, c.plan.priority)) {
      more->absorb(std::move(spare.reservation));
      storage = std::move(spare.storage);
      co_return std::move(*more);
    }
    st.spares.clear();
  }
  // Kept witness memory of other sizes goes before the reservation, which
  // might otherwise wait for it.
  if (st.kept != nullptr) st.kept->take_all();
  ++st.memory_waits;
  Result<policy::Reservation> r = co_await c.deps.memory.reserve(bytes, c.plan.priority, *st.members[m].cancel);
  --st.memory_waits;
  co_return r;
}

}  // namespace

asio::awaitable<void> lane(Ctx c) {
  State& st = c.st;
  const PartitionPlan& plan = c.plan;
  auto skip_stopped = [&st] {
    while (st.next < st.partitions && st.stopped(st.member_of(st.next))) ++st.next;
  };
  try {
    for (;;) {
      st.settle_stopped();
      skip_stopped();
      while (!st.all_stopped() && st.in_flight >= plan.max_in_flight && st.next < st.partitions) {
        co_await changed(st);
        skip_stopped();
      }
      if (st.all_stopped() || st.next >= st.partitions) {
        // Nothing to take: wait for a joiner while one may come, so that its
        // partitions find every lane; else the intake closes and the lane ends.
        if (st.more_may_come()) {
          co_await changed(st);
          continue;
        }
        st.close_intake();
        break;
      }
      const std::uint32_t k = st.next++;
      const std::uint32_t m = st.member_of(k);
      ++st.in_flight;
      ++st.members[m].in_flight;
      st.peak_in_flight = std::max(st.peak_in_flight, st.in_flight);
      // Not yet handed to the prover: every exit from here gives the slot back.
      struct Slot {
        State& st;
        std::uint32_t m;
        bool handed = false;
        ~Slot() {
          if (!handed) st.release(m);
        }
      } slot{st, m};

      // Synthesis holds about twice the witness (the witness and the
      // circuit's transient values); once done, the witness alone.
      c.stage(k, "memory");
      groth16::Witness storage;
      const auto t_memory = steady_clock::now();
      Result<policy::Reservation> r = co_await reserve_synthesis(c, m, storage);
      const double memory_wait_ms = ms_since(t_memory);
      if (st.next >= st.partitions) st.shelve_spares();  // nothing left here to reuse them
      if (!r) {
        if (r.error().kind != ErrorKind::kCancelled) c.fail(k, r.error());
        continue;
      }
      if (st.stopped(m)) continue;
      Item item;
      item.k = k;
      item.timing.partition = c.local(k);
      item.timing.memory_wait_ms = memory_wait_ms + (k == 0 ? st.start_memory_wait_ms : 0.0);
      c.stage(k, "synthesis");
      // The member's own callbacks are read on the pool: pointers taken here,
      // on the loop (members are never erased, and a deque does not move
      // them when one joins).
      const std::uint32_t local = c.local(k);
      const Member& mb = st.members[m];
      const auto* own_synthesize = mb.own ? &mb.synthesize : nullptr;
      const auto* check = mb.own ? (mb.check ? &mb.check : nullptr) : (plan.check ? &plan.check : nullptr);
      const std::uint32_t check_index = mb.own ? local : k;
      auto t0 = steady_clock::now();
      Result<groth16::Witness> w = co_await runtime::run_on(
          c.deps.synthesis, [&plan, k, local, own_synthesize, &storage]() -> Result<groth16::Witness> {
            try {
              return own_synthesize ? (*own_synthesize)(local, std::move(storage))
                                    : plan.synthesize(k, std::move(storage));
            } catch (const std::exception& e) {
              return Error{ErrorKind::kInternal, e.what()};
            }
          });
      item.timing.synthesis_ms = ms_since(t0);
      if (!w) {
        c.fail(k, w.error());
        continue;
      }
      item.reservation = std::move(r.value());
      item.witness = std::move(w.value());
      if (st.stopped(m)) continue;
      if (check) {
        c.stage(k, "check");
        t0 = steady_clock::now();
        const groth16::Witness& wref = item.witness;
        std::optional<Error> bad =
            co_await runtime::run_on(c.deps.synthesis, [check, check_index, &wref]() -> std::optional<Error> {
              try {
                return (*check)(check_index, wref);
              } catch (const std::exception& e) {
                return Error{ErrorKind::kInternal, e.what()};
              }
            });
        item.timing.check_ms = ms_since(t0);
        if (bad) {
          c.fail(k, *bad);
          continue;
        }
        if (st.stopped(m)) continue;
      }
      c.stage(k, "queued for device");
      st.ready.push_back(std::move(item));
      slot.handed = true;
      st.changed.notify_all();
    }
  } catch (const std::system_error& e) {
    --st.lanes_alive;
    st.close_intake();
    st.changed.notify_all();
    if (is_cancellation(e)) throw;
    for (std::uint32_t m = 0; m < st.members.size(); ++m) st.fail(m, Error{ErrorKind::kInternal, e.what()});
    co_return;
  } catch (const std::exception& e) {
    st.close_intake();
    for (std::uint32_t m = 0; m < st.members.size(); ++m) st.fail(m, Error{ErrorKind::kInternal, e.what()});
  }
  --st.lanes_alive;
  st.changed.notify_all();
}

}  // namespace cuzk::engine::pipeline_detail
