// Session — typed, immutable slices of agent state, changed only by reducers.
//
// Each slice holds the values of one C++ type S as a PersistentVector, so a snapshot
// copies a pointer per slice (never the items) and appending to a LOG slice copies one
// trie path. Events of type E change slices through reducers registered per (S, E):
// a reducer receives the slice and the event and returns the new slice. `dispatch`
// applies the reducers of one event in this session; `broadcast` also applies them in
// every child session. Every slice has a policy (STATE, LOG, CACHE; the default comes
// from SliceTypes) that decides what snapshots include and what rollbacks keep.
//
// A reducer may also return effects (statekit/effects.hpp;
// docs/conformance/STATE_MANAGEMENT.md): side effects as data, which reducers never
// perform. dispatch_effects returns them to its caller. dispatch and broadcast hand
// them to the session's effect runner (set_effect_runner), which performs them right
// after the dispatch stored its slices, on the dispatching thread and outside the
// session's lock (a handler may dispatch again), each outcome going to the observer
// given with the runner; a session without a runner queues them for take_effects. Either way a
// dispatch that throws leaves no effect behind.
//
// Snapshot times and ids come from the injected clock and id source, so a seeded run
// gives the same ids every time.
//
// Thread-safety: every method may be called from any thread. Dispatches are
// serialised, so a reducer always sees the newest slice and no update is lost.
// Reducers must not call back into the session.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <typeindex>
#include <vector>

#include "fsnap/clock.hpp"
#include "fsnap/id_source.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/slice_types.hpp"
#include "statekit/computed.hpp"
#include "statekit/effects.hpp"
#include "statekit/middleware.hpp"
#include "statekit/persistent_vector.hpp"
#include "statekit/slice.hpp"
#include "statekit/slice_window.hpp"

namespace sandbox {

struct SessionSnapshot;

// What differs between two session snapshots, slice by slice (selective snapshots:
// docs/conformance/STATE_MANAGEMENT.md). Slices compare by their items' encodings (equal
// items at equal positions), so snapshots read back from the ledger compare like live
// ones.
//
//   SnapshotDiff d = SessionSnapshot::diff(at_call_3, at_call_9);
//   if (d.modified.count(typeid(Plan))) { ... d.modified.at(typeid(Plan)).second ... }
struct SnapshotDiff {
  std::map<std::type_index, statekit::SliceItems> added;    // in the later snapshot only
  std::map<std::type_index, statekit::SliceItems> removed;  // in the earlier one only
  std::map<std::type_index, std::pair<statekit::SliceItems, statekit::SliceItems>>
      modified;  // earlier, later
  bool empty() const { return added.empty() && removed.empty() && modified.empty(); }
};

// The slice types a selective snapshot takes or a restore puts back (selective
// snapshots: docs/conformance/STATE_MANAGEMENT.md): those of include (every type when
// include is empty) that exclude does not name.
//
//   SessionSnapshot plan_only = session.snapshot_of(SliceSelection::of<Plan, Config>());
//   session.restore(plan_only, SliceSelection::of<Plan>());  // Config stays as it is
struct SliceSelection {
  std::set<std::type_index> include;  // empty: every type
  std::set<std::type_index> exclude;

  template <typename... S>
  static SliceSelection of() {
    return SliceSelection{{std::type_index(typeid(S))...}, {}};
  }
  // Every type but S...
  template <typename... S>
  static SliceSelection all_but() {
    return SliceSelection{{}, {std::type_index(typeid(S))...}};
  }
  bool contains(std::type_index type) const {
    return (include.empty() || include.count(type) != 0) && exclude.count(type) == 0;
  }
  bool everything() const { return include.empty() && exclude.empty(); }
  // The types both contain.
  static SliceSelection both(const SliceSelection& a, const SliceSelection& b);
  // The types either contains.
  static SliceSelection either(const SliceSelection& a, const SliceSelection& b);
};

// The captured state of a session's slices. Immutable and cheap to copy.
struct SessionSnapshot {
  std::string id;          // unique per snapshot
  std::string session_id;  // the session it was taken of
  std::chrono::system_clock::time_point created_at;
  std::string parent_id;                  // the parent session's id, or ""
  std::vector<std::string> children_ids;  // child sessions at the time
  std::map<std::string, std::string> tags;
  std::map<std::type_index, statekit::SliceItems> slices;  // the slices included
  std::map<std::type_index, SlicePolicy> policies;         // policy of each included slice
  // The policies the snapshot captured: every slice of these policies the session had
  // is in slices, so a slice of them that is not there did not exist.
  std::set<SlicePolicy> covered = {SlicePolicy::kState, SlicePolicy::kLog, SlicePolicy::kCache};
  // The slice types it captured (every type, unless taken by Session::snapshot_of): a
  // type outside it says nothing of that slice, which rollback and restore leave alone.
  SliceSelection selection;
  // True if the snapshot speaks for slice type of policy: holding it, or not holding it
  // because the session had none.
  bool covers(std::type_index type, SlicePolicy policy) const {
    return covered.count(policy) != 0 && selection.contains(type);
  }

  // Typed access to an included slice (empty if it is not included).
  template <typename T>
  statekit::Slice<T> slice() const {
    auto it = slices.find(typeid(T));
    return it == slices.end() ? statekit::Slice<T>() : statekit::Slice<T>(it->second);
  }

  // JSON with every slice encoded by its registered codec. A slice type without a
  // codec is Error kInvalidArgument naming it.
  std::string to_json() const;
  // Parses to_json's output. A slice type name this process has not registered is a
  // SnapshotMismatchError; malformed JSON is Error kInvalidArgument.
  static SessionSnapshot from_json(const std::string& json);

  // True if both hold the same slices with equal encoded contents and policies.
  bool equivalent(const SessionSnapshot& other) const;

  // The slices added, removed and modified from before to after.
  static SnapshotDiff diff(const SessionSnapshot& before, const SessionSnapshot& after);
  // later with the slices (and tags) only earlier has: later's values win. The merge
  // covers only the policies both cover (Session::rollback then removes no slice of
  // another), and the slice types either selected.
  static SessionSnapshot merge(const SessionSnapshot& earlier, const SessionSnapshot& later);
};

// The policies of STATE slices only: what a transaction snapshot takes by default.
inline const std::set<SlicePolicy> kStatePolicies = {SlicePolicy::kState};

// Typed slices of state with reducers, snapshots and rollback.
class Session {
 public:
  // What one dispatch did.
  struct Dispatched {
    std::size_t applied = 0;    // reducers run
    statekit::Effects effects;  // the effects they returned, in order
  };

  // Snapshot times come from clock, ids from ids (the system clock and random ids if
  // not given).
  explicit Session(std::shared_ptr<const fsnap::Clock> clock = nullptr,
                   std::shared_ptr<fsnap::IdSource> ids = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& id() const { return id_; }
  // Draws its id again, and its snapshots' ids from now on, from ids: a session given
  // to a seeded ExecutionState gets the id its seed makes. Before the session is shared
  // (id() is read without a lock).
  void draw_ids_from(std::shared_ptr<fsnap::IdSource> ids);

  // Declares slice S (with its registered default policy unless policy is given).
  // Declaring again may change the policy.
  template <typename S>
  void register_slice(std::optional<SlicePolicy> policy = std::nullopt) {
    declare(typeid(S), policy);
  }

  // Registers a reducer of slice S for events E (declaring S).
  template <typename S, typename E>
  void register_reducer(statekit::Reducer<S, E> reducer,
                        std::optional<SlicePolicy> policy = std::nullopt) {
    add_reducer(
        typeid(S), typeid(E), policy,
        [reducer = std::move(reducer)](const statekit::SliceItems& items, const void* event) {
          return reducer(statekit::Slice<S>(items), *static_cast<const E*>(event)).items();
        });
  }

  // Registers a reducer of slice S for events E that returns effects besides the slice.
  template <typename S, typename E>
  void register_effect_reducer(statekit::EffectReducer<S, E> reducer,
                               std::optional<SlicePolicy> policy = std::nullopt) {
    add_reducer(
        typeid(S), typeid(E), policy,
        [this, reducer = std::move(reducer)](const statekit::SliceItems& items, const void* event) {
          statekit::Reduced<S> reduced =
              reducer(statekit::Slice<S>(items), *static_cast<const E*>(event));
          collect_effects(std::move(reduced.effects));
          return reduced.slice.items();
        });
  }

  // True if a reducer of slice S for events E is registered.
  template <typename S, typename E>
  bool has_reducer() const {
    return has_reducer(typeid(S), typeid(E));
  }

  // Applies every reducer registered for E, atomically; returns how many ran. The
  // effects they return are queued for take_effects. Middleware sees metadata
  // (ReducerContext::metadata); the slices do not.
  template <typename E>
  std::size_t dispatch(const E& event, const statekit::DispatchMetadata& metadata = {}) {
    return apply(typeid(E), &event, false, true, metadata).applied;
  }
  // dispatch in this session and in every child session.
  template <typename E>
  std::size_t broadcast(const E& event, const statekit::DispatchMetadata& metadata = {}) {
    return apply(typeid(E), &event, true, true, metadata).applied;
  }
  // dispatch, returning the effects the reducers returned instead of queueing them:
  // the caller performs them (an EffectRunner) or inspects them (a test).
  template <typename E>
  Dispatched dispatch_effects(const E& event, const statekit::DispatchMetadata& metadata = {}) {
    return apply(typeid(E), &event, false, false, metadata);
  }
  // The effects dispatch and broadcast queued, oldest first; the queue is then empty.
  // (Only a session without an effect runner queues any.)
  statekit::Effects take_effects();
  // From now on, dispatch and broadcast perform the effects their reducers return with
  // runner, as soon as their slices are stored, and give each outcome to on_outcome (if
  // given); effects queued before are performed first, by the next dispatch. A null
  // runner queues them again. A child session has a runner of its own.
  void set_effect_runner(std::shared_ptr<const statekit::EffectRunner> runner,
                         std::function<void(const statekit::EffectOutcome&)> on_outcome = {});

  // The clock the session stamps snapshots (and state machines their moves) with.
  std::shared_ptr<const fsnap::Clock> clock() const { return clock_; }

  // The values of slice S (empty if S is unknown).
  template <typename S>
  statekit::Slice<S> all() const {
    return statekit::Slice<S>(items(typeid(S)));
  }
  // The newest value of S, or nullopt. For a computed slice S (install_computed), its
  // value, recomputed first if it is stale.
  template <typename S>
  std::optional<S> latest() const {
    std::shared_ptr<const void> value = newest(typeid(S));
    return value ? std::optional<S>(*static_cast<const S*>(value.get())) : std::nullopt;
  }
  // Replaces the values of S (declaring it).
  template <typename S>
  void seed(std::vector<S> values) {
    statekit::Slice<S> s;
    for (S& v : values) s = s.append(std::move(v));
    set_items(typeid(S), s.items());
  }
  // The policy of slice S (its default if S is not declared).
  template <typename S>
  SlicePolicy policy() const {
    return policy_of(typeid(S));
  }

  // Bounds slice S from now on (statekit/slice_window.hpp): after each dispatch that
  // changes S, the items the window does not keep go. Replaces S's window.
  template <typename S>
  void set_window(statekit::SliceWindow<S> window) {
    set_window_erased(typeid(S),
                      [window = std::move(window)](const statekit::SliceItems& items,
                                                   std::chrono::system_clock::time_point now,
                                                   statekit::SliceItems* evicted) {
                        return statekit::windowed(window, items, now, evicted);
                      });
  }
  // A window of exactly the newest max_items items of the slice type (by type alone, as
  // the config names it); the items left keep their leaves (and session-tree chunks).
  void set_count_window(std::type_index slice, std::size_t max_items);
  // Tells observer what S's window evicted, after each dispatch that evicted something:
  // once the dispatch's slices are in place, on the dispatching thread, outside the
  // session's lock (it may read the session). An observer that throws changes nothing
  // of the dispatch, which returns as usual; the observers after it still run, and its
  // message is kept for take_observer_failures.
  template <typename S>
  void on_evict(statekit::EvictionObserver<S> observer) {
    add_eviction_observer(
        typeid(S), [observer = std::move(observer)](const statekit::SliceItems& before,
                                                    const statekit::SliceItems& after,
                                                    const statekit::SliceItems& evicted) {
          observer(statekit::Eviction<S>{statekit::Slice<S>(before), statekit::Slice<S>(after),
                                         statekit::Slice<S>(evicted)});
        });
  }
  // The messages of the eviction observers that threw, oldest first; then none.
  std::vector<std::string> take_observer_failures();

  // Adds middleware around every reducer of every dispatch (statekit/middleware.hpp),
  // after those added before (the first added is the outermost).
  void use(statekit::Middleware middleware);
  // Adds middleware around the reducers of slice S only, inside the session-wide ones
  // and after those added for S before.
  template <typename S>
  void use(statekit::Middleware middleware) {
    use_for(typeid(S), std::move(middleware));
  }

  // Installs the computed slice compute defines (statekit/computed.hpp: a function of
  // `const Slice<S>&`s returning the value), replacing one of the same type. Error
  // kInvalidArgument if a reducer writes that type (a computed slice is read-only), or
  // if a source is computed or the type is another computed slice's source (the sources
  // are ordinary slices).
  template <typename F>
  void install_computed(F compute) {
    install(statekit::define_computed(std::move(compute)));
  }
  // The value of computed slice T — recomputed first if it is stale — or nullptr if T
  // is not installed; latest<T>() reads the same value as a copy. Not in snapshots: it
  // is derived from them.
  template <typename T>
  std::shared_ptr<const T> computed() const {
    return std::static_pointer_cast<const T>(computed_value(typeid(T)));
  }
  // Marks computed slice T stale: the next read computes it again, even if no source
  // changed (the function read something besides them). False if T is not installed.
  template <typename T>
  bool invalidate() {
    return invalidate(typeid(T));
  }
  // True if reading computed slice T would compute it: never read yet, a source changed
  // since it was computed, or invalidated. False if T is not installed.
  template <typename T>
  bool stale() const {
    return stale(typeid(T));
  }

  // Captures the slices whose policy is in policies (all slices with include_all).
  // O(number of slices): items are shared, never copied.
  SessionSnapshot snapshot(const std::set<SlicePolicy>& policies = kStatePolicies,
                           bool include_all = false,
                           std::map<std::string, std::string> tags = {}) const;
  // Captures the slices of the types which selects, whatever their policy, and covers
  // exactly those types (a selected type the session lacks is recorded as absent).
  SessionSnapshot snapshot_of(const SliceSelection& which,
                              std::map<std::string, std::string> tags = {}) const;
  // Makes the slices of the types slices selects that snapshot covers exactly as
  // captured — one it lacks is removed, a LOG slice too — and leaves every other slice
  // as it is. Atomic.
  void restore(const SessionSnapshot& snapshot, const SliceSelection& slices = {});
  // Makes every slice of the policies the snapshot covers exactly as captured: the
  // slices it holds get its items (and its policies; slices this session lacks are
  // declared), and the slices it lacks are removed, so what happened since leaves no
  // trace. With preserve_logs, LOG slices keep their current values. Atomic.
  void rollback(const SessionSnapshot& snapshot, bool preserve_logs = true);

  // A session holding exactly the slices of snapshot, with their recorded policies
  // (for rebuilding a run's session from the ledger).
  static std::shared_ptr<Session> from_snapshot(const SessionSnapshot& snapshot,
                                                std::shared_ptr<const fsnap::Clock> clock = nullptr,
                                                std::shared_ptr<fsnap::IdSource> ids = nullptr);

  // A new session whose parent is this one; broadcasts reach it.
  std::shared_ptr<Session> create_child();
  const std::string& parent_id() const { return parent_id_; }

 private:
  using ErasedReducer =
      std::function<statekit::SliceItems(const statekit::SliceItems&, const void*)>;
  struct SliceState {
    SlicePolicy policy = SlicePolicy::kState;
    statekit::SliceItems items;
  };

  void declare(std::type_index slice, std::optional<SlicePolicy> policy);
  void add_reducer(std::type_index slice, std::type_index event, std::optional<SlicePolicy> policy,
                   ErasedReducer reducer);
  // The state of slice, declared (with its reducers' policy, else its default) if a
  // rollback removed it. Called with mutex_ held.
  SliceState& slice_state(std::type_index slice);
  Dispatched apply(std::type_index event, const void* value, bool to_children, bool queue,
                   const statekit::DispatchMetadata& metadata);
  // Adds effects of the reducer running now. Called with mutex_ held.
  void collect_effects(statekit::Effects effects);
  struct ReducerEntry;
  // What every reducer of one dispatch is told besides its event and slice.
  struct DispatchFacts {
    std::chrono::system_clock::time_point at;
    const statekit::DispatchMetadata& metadata;
  };
  // entry's reducer for the event, inside the middleware. Called with mutex_ held.
  statekit::SliceItems run_reducer(const ReducerEntry& entry, std::type_index event,
                                   const void* value, const statekit::SliceItems& before,
                                   const DispatchFacts& facts) const;
  void use_for(std::type_index slice, statekit::Middleware middleware);
  // What a window evicted, for the observers of its slice.
  struct PendingEviction {
    std::type_index slice;
    statekit::SliceItems before, after, evicted;
  };
  // Puts the dispatch's results in place, each through its slice's window at now; what
  // the windows evicted, if its slice is observed, goes to evictions. With mutex_ held.
  void commit(std::map<std::type_index, statekit::SliceItems>& results,
              std::chrono::system_clock::time_point now, std::vector<PendingEviction>& evictions);
  // Tells the observers of each eviction (without mutex_ held).
  void notify(const std::vector<PendingEviction>& evictions);
  bool has_reducer(std::type_index slice, std::type_index event) const;
  statekit::SliceItems items(std::type_index slice) const;
  statekit::SliceItems items_locked(std::type_index slice) const;  // with mutex_ held
  void set_items(std::type_index slice, statekit::SliceItems items);
  SlicePolicy policy_of(std::type_index slice) const;
  void install(statekit::ComputedDefinition definition);
  // A window: the items it keeps at a time; those it evicts appended to the last
  // argument if it is not null.
  using ErasedWindow = std::function<statekit::SliceItems(
      const statekit::SliceItems&, std::chrono::system_clock::time_point, statekit::SliceItems*)>;
  void set_window_erased(std::type_index slice, ErasedWindow window);
  using ErasedObserver =
      std::function<void(const statekit::SliceItems&, const statekit::SliceItems&,
                         const statekit::SliceItems&)>;  // before, after, evicted
  void add_eviction_observer(std::type_index slice, ErasedObserver observer);
  // The value of computed slice type (nullptr if not installed).
  std::shared_ptr<const void> computed_value(std::type_index type) const;
  std::shared_ptr<const void> computed_locked(std::type_index type) const;  // mutex_ held
  // The newest value of slice type, computed or not, or nullptr.
  std::shared_ptr<const void> newest(std::type_index type) const;
  bool invalidate(std::type_index type);
  bool stale(std::type_index type) const;

  struct ReducerEntry {
    std::type_index slice;
    std::optional<SlicePolicy> policy;  // as registered
    ErasedReducer reducer;
    std::string name;  // "<slice> on <event>", for middleware
  };

  std::shared_ptr<const fsnap::Clock> clock_;
  std::shared_ptr<fsnap::IdSource> ids_;
  std::string id_;
  std::string parent_id_;
  mutable std::mutex mutex_;
  std::map<std::type_index, SliceState> slices_;
  std::multimap<std::type_index, ReducerEntry> reducers_;  // by event type
  std::vector<std::weak_ptr<Session>> children_;
  std::vector<statekit::Middleware> middleware_;  // outermost first
  std::map<std::type_index, std::vector<statekit::Middleware>> slice_middleware_;
  std::map<std::type_index, ErasedWindow> windows_;
  std::multimap<std::type_index, ErasedObserver> eviction_observers_;
  std::vector<std::string> observer_failures_;
  statekit::Effects dispatching_;  // the effects of the dispatch under way
  statekit::Effects queued_;       // for take_effects, or the runner's next turn
  std::shared_ptr<const statekit::EffectRunner> effect_runner_;  // null: queue them
  std::function<void(const statekit::EffectOutcome&)> on_effect_outcome_;
  // A computed slice, with the sources' items its value was computed from.
  struct ComputedState {
    statekit::ComputedDefinition definition;
    std::vector<statekit::SliceItems> seen;
    std::shared_ptr<const void> value;
    bool invalidated = false;  // by invalidate, since value was computed
  };
  // True if state's value is to be computed again. With mutex_ held.
  bool stale_locked(const ComputedState& state) const;
  mutable std::map<std::type_index, ComputedState> computed_;
};

}  // namespace sandbox
