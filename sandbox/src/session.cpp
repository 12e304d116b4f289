#include "sandbox/session.hpp"

#include "fsnap/checkpoint.hpp"

namespace sandbox {

Session::Session(std::shared_ptr<const fsnap::Clock> clock, std::shared_ptr<fsnap::IdSource> ids)
    : clock_(clock ? std::move(clock) : std::make_shared<fsnap::SystemClock>()),
      ids_(ids ? std::move(ids) : fsnap::IdSource::shared_random()),
      id_(ids_->hex(32)) {}

Session::~Session() = default;

void Session::draw_ids_from(std::shared_ptr<fsnap::IdSource> ids) {
  if (ids == nullptr) throw Error(ErrorCode::kInvalidArgument, "no id source to draw from");
  std::lock_guard<std::mutex> lock(mutex_);
  ids_ = std::move(ids);
  id_ = ids_->hex(32);
}

void Session::declare(std::type_index slice, std::optional<SlicePolicy> policy) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = slices_.try_emplace(slice);
  if (inserted) it->second.policy = SliceTypes::default_policy(slice);
  if (policy) it->second.policy = *policy;
}

void Session::add_reducer(std::type_index slice, std::type_index event,
                          std::optional<SlicePolicy> policy, ErasedReducer reducer) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (computed_.count(slice) != 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "slice " + SliceTypes::name_of(slice) + " is computed: it takes no reducer");
    }
  }
  declare(slice, policy);
  std::string name = SliceTypes::name_of(slice) + " on " + SliceTypes::name_of(event);
  std::lock_guard<std::mutex> lock(mutex_);
  reducers_.emplace(event, ReducerEntry{slice, policy, std::move(reducer), std::move(name)});
}

Session::SliceState& Session::slice_state(std::type_index slice) {
  auto [it, inserted] = slices_.try_emplace(slice);
  if (inserted) {
    it->second.policy = SliceTypes::default_policy(slice);
    for (const auto& [event, entry] : reducers_) {
      if (entry.slice == slice && entry.policy) it->second.policy = *entry.policy;
    }
  }
  return it->second;
}

Session::Dispatched Session::apply(std::type_index event, const void* value, bool to_children,
                                   bool queue, const statekit::DispatchMetadata& metadata) {
  Session::Dispatched out;
  std::vector<std::shared_ptr<Session>> children;
  std::vector<PendingEviction> evictions;
  statekit::Effects to_perform;  // by runner, once the lock is released
  std::shared_ptr<const statekit::EffectRunner> runner;
  std::function<void(const statekit::EffectOutcome&)> on_outcome;
  {
    // Reducers run under the lock: each sees the newest slice, and the results of one
    // event land together. A reducer that throws leaves every slice as it was, and the
    // effects of the reducers before it are dropped.
    std::lock_guard<std::mutex> lock(mutex_);
    dispatching_.clear();
    auto [first, last] = reducers_.equal_range(event);
    std::map<std::type_index, statekit::SliceItems> results;
    // The clock is read only for those who look: middleware and windows.
    bool timed = !middleware_.empty() || !slice_middleware_.empty() || !windows_.empty();
    const DispatchFacts facts{timed ? clock_->now() : std::chrono::system_clock::time_point{},
                              metadata};
    try {
      for (auto it = first; it != last; ++it) {
        const ReducerEntry& entry = it->second;
        auto pending = results.find(entry.slice);
        const statekit::SliceItems before =
            pending != results.end() ? pending->second : items_locked(entry.slice);
        results[entry.slice] = run_reducer(entry, event, value, before, facts);
        ++out.applied;
      }
    } catch (...) {
      dispatching_.clear();
      throw;
    }
    commit(results, facts.at, evictions);
    if (queue) {
      for (statekit::Effect& e : dispatching_) queued_.push_back(std::move(e));
      if (effect_runner_) {
        to_perform = std::move(queued_);
        queued_.clear();
        runner = effect_runner_;
        on_outcome = on_effect_outcome_;
      }
    } else {
      out.effects = std::move(dispatching_);
    }
    dispatching_.clear();
    if (to_children) {
      for (const std::weak_ptr<Session>& weak : children_) {
        if (std::shared_ptr<Session> child = weak.lock()) children.push_back(std::move(child));
      }
    }
  }
  notify(evictions);
  for (const statekit::Effect& effect : to_perform) {
    statekit::EffectOutcome outcome = runner->run(effect);
    if (on_outcome) on_outcome(outcome);
  }
  for (const std::shared_ptr<Session>& child : children) {
    out.applied += child->apply(event, value, true, true, metadata).applied;
  }
  return out;
}

void Session::set_effect_runner(std::shared_ptr<const statekit::EffectRunner> runner,
                                std::function<void(const statekit::EffectOutcome&)> on_outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  effect_runner_ = std::move(runner);
  on_effect_outcome_ = std::move(on_outcome);
}

void Session::collect_effects(statekit::Effects effects) {
  for (statekit::Effect& e : effects) dispatching_.push_back(std::move(e));
}

statekit::Effects Session::take_effects() {
  std::lock_guard<std::mutex> lock(mutex_);
  statekit::Effects out = std::move(queued_);
  queued_.clear();
  return out;
}

bool Session::has_reducer(std::type_index slice, std::type_index event) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [first, last] = reducers_.equal_range(event);
  for (auto it = first; it != last; ++it) {
    if (it->second.slice == slice) return true;
  }
  return false;
}

statekit::SliceItems Session::items(std::type_index slice) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return items_locked(slice);
}

statekit::SliceItems Session::items_locked(std::type_index slice) const {
  auto it = slices_.find(slice);
  return it == slices_.end() ? statekit::SliceItems() : it->second.items;
}

void Session::set_items(std::type_index slice, statekit::SliceItems items) {
  std::lock_guard<std::mutex> lock(mutex_);
  slice_state(slice).items = std::move(items);
}

SlicePolicy Session::policy_of(std::type_index slice) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slices_.find(slice);
  return it == slices_.end() ? SliceTypes::default_policy(slice) : it->second.policy;
}

SessionSnapshot Session::snapshot(const std::set<SlicePolicy>& policies, bool include_all,
                                  std::map<std::string, std::string> tags) const {
  SessionSnapshot snap;
  snap.id = ids_->hex(32);
  snap.session_id = id_;
  snap.created_at = clock_->now();
  snap.parent_id = parent_id_;
  snap.tags = std::move(tags);
  snap.covered = include_all ? std::set<SlicePolicy>{SlicePolicy::kState, SlicePolicy::kLog,
                                                     SlicePolicy::kCache}
                             : policies;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [type, state] : slices_) {
    if (!include_all && policies.count(state.policy) == 0) continue;
    snap.slices.emplace(type, state.items);
    snap.policies.emplace(type, state.policy);
  }
  for (const std::weak_ptr<Session>& weak : children_) {
    if (std::shared_ptr<Session> child = weak.lock()) snap.children_ids.push_back(child->id());
  }
  return snap;
}

SessionSnapshot Session::snapshot_of(const SliceSelection& which,
                                     std::map<std::string, std::string> tags) const {
  SessionSnapshot snap = snapshot({}, /*include_all=*/true, std::move(tags));
  snap.selection = which;
  for (auto it = snap.slices.begin(); it != snap.slices.end();) {
    if (which.contains(it->first)) {
      ++it;
    } else {
      snap.policies.erase(it->first);
      it = snap.slices.erase(it);
    }
  }
  return snap;
}

void Session::restore(const SessionSnapshot& snapshot, const SliceSelection& slices) {
  SessionSnapshot narrowed = snapshot;
  narrowed.selection = SliceSelection::both(snapshot.selection, slices);
  for (auto it = narrowed.slices.begin(); it != narrowed.slices.end();) {
    if (narrowed.selection.contains(it->first)) {
      ++it;
    } else {
      narrowed.policies.erase(it->first);
      it = narrowed.slices.erase(it);
    }
  }
  rollback(narrowed, /*preserve_logs=*/false);
}

void Session::rollback(const SessionSnapshot& snapshot, bool preserve_logs) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto kept = [&](std::type_index type, SlicePolicy policy) {
    return !snapshot.covers(type, policy) || (preserve_logs && policy == SlicePolicy::kLog);
  };
  // Slices of the covered policies that the snapshot does not hold did not exist then.
  for (auto it = slices_.begin(); it != slices_.end();) {
    if (!kept(it->first, it->second.policy) && snapshot.slices.count(it->first) == 0) {
      it = slices_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [type, items] : snapshot.slices) {
    auto recorded = snapshot.policies.find(type);
    SlicePolicy policy =
        recorded != snapshot.policies.end() ? recorded->second : SliceTypes::default_policy(type);
    auto [it, inserted] = slices_.try_emplace(type);
    // A kept slice keeps its values, unless this session did not have it at all.
    if (!inserted && kept(type, it->second.policy)) continue;
    it->second.policy = policy;
    it->second.items = items;
  }
}

std::shared_ptr<Session> Session::from_snapshot(const SessionSnapshot& snapshot,
                                                std::shared_ptr<const fsnap::Clock> clock,
                                                std::shared_ptr<fsnap::IdSource> ids) {
  auto session = std::make_shared<Session>(std::move(clock), std::move(ids));
  session->rollback(snapshot, /*preserve_logs=*/false);
  return session;
}

std::shared_ptr<Session> Session::create_child() {
  auto child = std::make_shared<Session>(clock_, ids_);
  child->parent_id_ = id_;
  std::lock_guard<std::mutex> lock(mutex_);
  children_.push_back(child);
  return child;
}

SessionSnapshot SessionSnapshot::merge(const SessionSnapshot& earlier,
                                       const SessionSnapshot& later) {
  SessionSnapshot out = later;
  for (const auto& [type, items] : earlier.slices) {
    if (out.slices.emplace(type, items).second) {
      auto policy = earlier.policies.find(type);
      if (policy != earlier.policies.end()) out.policies.emplace(type, policy->second);
    }
  }
  for (const auto& [key, value] : earlier.tags) out.tags.emplace(key, value);
  out.covered.clear();  // a merge is partial: no slice's absence is a fact
  for (SlicePolicy p : earlier.covered) {
    if (later.covered.count(p) != 0) out.covered.insert(p);
  }
  out.selection = SliceSelection::either(earlier.selection, later.selection);
  return out;
}

SliceSelection SliceSelection::either(const SliceSelection& a, const SliceSelection& b) {
  SliceSelection out;
  if (!a.include.empty() && !b.include.empty()) {
    out.include = a.include;
    out.include.insert(b.include.begin(), b.include.end());
  }
  for (const std::set<std::type_index>* excluded : {&a.exclude, &b.exclude}) {
    for (std::type_index t : *excluded) {
      if (!a.contains(t) && !b.contains(t)) out.exclude.insert(t);
    }
  }
  return out;
}

SliceSelection SliceSelection::both(const SliceSelection& a, const SliceSelection& b) {
  SliceSelection out;
  if (a.include.empty()) {
    out.include = b.include;
  } else if (b.include.empty()) {
    out.include = a.include;
  } else {
    for (std::type_index t : a.include) {
      if (b.include.count(t) != 0) out.include.insert(t);
    }
    // Nothing in common: a type no slice has stands for "none".
    if (out.include.empty()) out.include.insert(typeid(void));
  }
  out.exclude = a.exclude;
  out.exclude.insert(b.exclude.begin(), b.exclude.end());
  return out;
}

}  // namespace sandbox
