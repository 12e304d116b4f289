// The middleware the runtime installs (statekit/middleware.hpp):
//   redacting_middleware — every ToolInvoked has its parameters and result redacted
//     (config run.secrets and well-known credential shapes) before it reaches a slice;
//     LedgerRun installs it, so no session tree of a run holds them;
//   timing_middleware — counts and times the reducers of each slice type.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <vector>

#include "statekit/middleware.hpp"

namespace sandbox {

// ToolInvoked events with params and result_summary passed through redact(secrets).
statekit::Middleware redacting_middleware(std::vector<std::string> secrets);

// Reducer runs and their time, by slice type.
class ReducerTimes {
 public:
  struct Entry {
    std::size_t runs = 0;
    std::chrono::nanoseconds total{0};
  };
  void add(std::type_index slice, std::chrono::nanoseconds took);
  std::map<std::type_index, Entry> by_slice() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::type_index, Entry> entries_;
};

// Times every reducer (and the middleware after it) into times.
statekit::Middleware timing_middleware(std::shared_ptr<ReducerTimes> times);

}  // namespace sandbox
