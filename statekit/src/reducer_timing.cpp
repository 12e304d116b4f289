#include "statekit/reducer_timing.hpp"

namespace statekit {

void ReducerTimes::add(std::type_index slice, std::chrono::nanoseconds took) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = entries_[slice];
  ++e.runs;
  e.total += took;
}

std::map<std::type_index, ReducerTimes::Entry> ReducerTimes::by_slice() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

Middleware timing_middleware(std::shared_ptr<ReducerTimes> times) {
  return [times = std::move(times)](const ReducerContext& ctx, const ReducerNext& next) {
    auto start = std::chrono::steady_clock::now();
    SliceItems out = next(ctx);
    times->add(ctx.slice_type, std::chrono::steady_clock::now() - start);
    return out;
  };
}

}  // namespace statekit
