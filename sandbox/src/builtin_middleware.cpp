#include "sandbox/builtin_middleware.hpp"

#include "sandbox/builtin_slices.hpp"
#include "sandbox/redaction.hpp"

namespace sandbox {

statekit::Middleware redacting_middleware(std::vector<std::string> secrets) {
  return statekit::typed_middleware<ToolInvoked>(
      [secrets = std::move(secrets)](const ToolInvoked& event,
                                     const statekit::TypedNext<ToolInvoked>& next) {
        ToolInvoked clean = event;
        clean.params = redact(std::move(clean.params), secrets);
        clean.result_summary = redact(std::move(clean.result_summary), secrets);
        return next(clean);
      });
}

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

statekit::Middleware timing_middleware(std::shared_ptr<ReducerTimes> times) {
  return [times = std::move(times)](const statekit::ReducerContext& ctx,
                                    const statekit::ReducerNext& next) {
    auto start = std::chrono::steady_clock::now();
    statekit::SliceItems out = next(ctx);
    times->add(ctx.slice_type, std::chrono::steady_clock::now() - start);
    return out;
  };
}

}  // namespace sandbox
