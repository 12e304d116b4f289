// Middleware (docs/conformance/STATE_MANAGEMENT.md): functions around every reducer a
// Session runs for an event — validation, timing, redaction — installed once instead of
// in every reducer (Session::use), or around the reducers of one slice type only
// (Session::use<S>, inside the session-wide ones). Each gets the reducer's context (the
// event, the slice before, the reducer's name, the session's id, the dispatch's time and
// metadata) and the rest of the chain (next), in the order installed, and may:
//   - call next and return its result (observe: time it, check it);
//   - call next with another event of the same type (transform: redact it first);
//   - not call next and return ctx.previous (skip this reducer, the slice unchanged);
//   - throw DispatchStopped with a reason (stop the whole dispatch: no slice changes).
// typed_middleware<E> is one that acts on events of type E only and lets others pass.
// Middleware runs on the dispatching thread, under the session's lock, like reducers.
//
//   session.use(typed_middleware<ToolInvoked>(
//       [secrets](const ToolInvoked& e, const TypedNext<ToolInvoked>& next) {
//         ToolInvoked clean = e;
//         clean.params = redact(clean.params, secrets);
//         return next(clean);
//       }));
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>

#include "fsnap/error.hpp"
#include "statekit/persistent_vector.hpp"
#include "statekit/slice.hpp"

namespace statekit {

// Facts about a dispatch its caller gives (Session::dispatch(event, metadata)): a call's
// id, the hook that sent it. Middleware reads them; the slices never hold them.
using DispatchMetadata = std::map<std::string, std::string>;

// One reducer about to run for an event. Valid during the call it is passed to.
struct ReducerContext {
  std::type_index event_type;
  const void* event;  // of event_type
  std::type_index slice_type;
  const SliceItems& previous;     // the slice before the reducer
  std::string_view reducer_name;  // "<slice> on <event>", by the types' registered names
  std::string_view session_id;    // the session running it (not the session: see below)
  // When the dispatch began, by the session's clock: the same for all its reducers.
  std::chrono::system_clock::time_point dispatched_at;
  const DispatchMetadata& metadata;  // the dispatch's (empty if its caller gave none)
  // The session itself is not given: reducers and middleware run under its lock, so a
  // call back into it would wait for itself.

  // The event as E, or nullptr if it is of another type.
  template <typename E>
  const E* event_as() const {
    return event_type == typeid(E) ? static_cast<const E*>(event) : nullptr;
  }
};

// The rest of a middleware chain, ending with the reducer: the slice after it.
using ReducerNext = std::function<SliceItems(const ReducerContext&)>;
// A middleware.
using Middleware = std::function<SliceItems(const ReducerContext&, const ReducerNext&)>;

// Thrown by a middleware to stop a dispatch: no slice changes, and dispatch rethrows it.
class DispatchStopped : public fsnap::Error {
 public:
  explicit DispatchStopped(const std::string& reason)
      : fsnap::Error(fsnap::ErrorCode::kInvalidArgument, "dispatch stopped: " + reason),
        reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// The rest of the chain for an event of type E.
template <typename E>
using TypedNext = std::function<SliceItems(const E&)>;

// A middleware for events of type E (others pass untouched): fn(event, next).
template <typename E>
Middleware typed_middleware(std::function<SliceItems(const E&, const TypedNext<E>&)> fn) {
  return [fn = std::move(fn)](const ReducerContext& ctx, const ReducerNext& next) {
    const E* event = ctx.event_as<E>();
    if (event == nullptr) return next(ctx);
    return fn(*event, [&](const E& changed) {
      ReducerContext with_changed = ctx;
      with_changed.event = &changed;
      return next(with_changed);
    });
  };
}

}  // namespace statekit
