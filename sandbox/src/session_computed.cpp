// Session's computed slices (statekit/computed.hpp): installed, read lazily, marked
// stale by a source's change or by invalidate.
#include <algorithm>

#include "sandbox/session.hpp"

namespace sandbox {

void Session::install(statekit::ComputedDefinition definition) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [event, entry] : reducers_) {
    if (entry.slice == definition.type) {
      throw Error(ErrorCode::kInvalidArgument, "slice " + SliceTypes::name_of(definition.type) +
                                                   " has a reducer: it cannot be computed");
    }
  }
  // A computed slice's own slice stays empty: as a source it would read nothing.
  for (const auto& [type, state] : computed_) {
    bool reads_it = std::find(definition.sources.begin(), definition.sources.end(), type) !=
                    definition.sources.end();
    bool read_by_it = std::find(state.definition.sources.begin(), state.definition.sources.end(),
                                definition.type) != state.definition.sources.end();
    if (reads_it || read_by_it) {
      throw Error(ErrorCode::kInvalidArgument,
                  "a computed slice cannot be a source of another: " + SliceTypes::name_of(type) +
                      " and " + SliceTypes::name_of(definition.type));
    }
  }
  std::type_index type = definition.type;
  computed_.insert_or_assign(type, ComputedState{std::move(definition), {}, nullptr, false});
}

bool Session::stale_locked(const ComputedState& state) const {
  if (state.value == nullptr || state.invalidated) return true;
  for (std::size_t i = 0; i < state.definition.sources.size(); ++i) {
    if (!items_locked(state.definition.sources[i]).shares_root_with(state.seen[i])) return true;
  }
  return false;
}

std::shared_ptr<const void> Session::computed_locked(std::type_index type) const {
  auto it = computed_.find(type);
  if (it == computed_.end()) return nullptr;
  ComputedState& state = it->second;
  if (!stale_locked(state)) return state.value;
  std::vector<statekit::SliceItems> now;
  now.reserve(state.definition.sources.size());
  for (std::type_index source : state.definition.sources) now.push_back(items_locked(source));
  state.value = state.definition.compute(now);  // a throw leaves the state as it was
  state.seen = std::move(now);
  state.invalidated = false;
  return state.value;
}

std::shared_ptr<const void> Session::computed_value(std::type_index type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return computed_locked(type);
}

std::shared_ptr<const void> Session::newest(std::type_index type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (computed_.count(type) != 0) return computed_locked(type);
  statekit::SliceItems items = items_locked(type);
  return items.empty() ? nullptr : items.back();
}

bool Session::invalidate(std::type_index type) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = computed_.find(type);
  if (it == computed_.end()) return false;
  it->second.invalidated = true;
  return true;
}

bool Session::stale(std::type_index type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = computed_.find(type);
  return it != computed_.end() && stale_locked(it->second);
}

}  // namespace sandbox
