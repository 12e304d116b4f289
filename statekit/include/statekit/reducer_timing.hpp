// Timing middleware (statekit/middleware.hpp): counts the reducer runs of each slice type
// and adds up their time, for a program that wants to know where a dispatch spends it.
//
// Thread-safety: ReducerTimes is safe to share between sessions and threads.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <typeindex>

#include "statekit/middleware.hpp"

namespace statekit {

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
Middleware timing_middleware(std::shared_ptr<ReducerTimes> times);

}  // namespace statekit
