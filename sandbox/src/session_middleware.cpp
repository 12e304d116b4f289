// Session's middleware (statekit/middleware.hpp): the session-wide chain and each slice
// type's own, around every reducer a dispatch runs.
#include "sandbox/session.hpp"

namespace sandbox {

void Session::use(statekit::Middleware middleware) {
  std::lock_guard<std::mutex> lock(mutex_);
  middleware_.push_back(std::move(middleware));
}

void Session::use_for(std::type_index slice, statekit::Middleware middleware) {
  std::lock_guard<std::mutex> lock(mutex_);
  slice_middleware_[slice].push_back(std::move(middleware));
}

statekit::SliceItems Session::run_reducer(const ReducerEntry& entry, std::type_index event,
                                          const void* value, const statekit::SliceItems& before,
                                          const DispatchFacts& facts) const {
  auto own = slice_middleware_.find(entry.slice);
  const std::size_t wide = middleware_.size();
  const std::size_t all = wide + (own == slice_middleware_.end() ? 0 : own->second.size());
  if (all == 0) return entry.reducer(before, value);
  // The session-wide middleware first (outermost), then the slice's own.
  auto at = [&](std::size_t i) -> const statekit::Middleware& {
    return i < wide ? middleware_[i] : own->second[i - wide];
  };
  // The chain from middleware i on: middleware i, then the rest, the reducer last.
  std::function<statekit::SliceItems(std::size_t, const statekit::ReducerContext&)> from =
      [&](std::size_t i, const statekit::ReducerContext& ctx) -> statekit::SliceItems {
    if (i == all) return entry.reducer(ctx.previous, ctx.event);
    return at(i)(ctx, [&](const statekit::ReducerContext& next) { return from(i + 1, next); });
  };
  return from(0, statekit::ReducerContext{event, value, entry.slice, before, entry.name, id_,
                                          facts.at, facts.metadata});
}

}  // namespace sandbox
