// Session's slice windows (statekit/slice_window.hpp) and the observers told what they
// evicted.
#include <exception>

#include "sandbox/session.hpp"

namespace sandbox {

void Session::set_window_erased(std::type_index slice, ErasedWindow window) {
  std::lock_guard<std::mutex> lock(mutex_);
  windows_.insert_or_assign(slice, std::move(window));
}

void Session::set_count_window(std::type_index slice, std::size_t max_items) {
  // A count alone looks at no item: any item type will do.
  struct AnyItem {};
  statekit::SliceWindow<AnyItem> window = statekit::SliceWindow<AnyItem>::count(max_items);
  set_window_erased(
      slice, [window](const statekit::SliceItems& items, std::chrono::system_clock::time_point now,
                      statekit::SliceItems* evicted) {
        return statekit::windowed(window, items, now, evicted);
      });
}

void Session::add_eviction_observer(std::type_index slice, ErasedObserver observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  eviction_observers_.emplace(slice, std::move(observer));
}

std::vector<std::string> Session::take_observer_failures() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out = std::move(observer_failures_);
  observer_failures_.clear();
  return out;
}

void Session::commit(std::map<std::type_index, statekit::SliceItems>& results,
                     std::chrono::system_clock::time_point now,
                     std::vector<PendingEviction>& evictions) {
  for (auto& [slice, items] : results) {
    auto window = windows_.find(slice);
    if (window != windows_.end()) {
      if (eviction_observers_.count(slice) == 0) {
        items = window->second(items, now, nullptr);
      } else {
        statekit::SliceItems evicted;
        statekit::SliceItems kept = window->second(items, now, &evicted);
        if (!evicted.empty()) evictions.push_back({slice, items, kept, std::move(evicted)});
        items = std::move(kept);
      }
    }
    slice_state(slice).items = std::move(items);
  }
}

void Session::notify(const std::vector<PendingEviction>& evictions) {
  for (const PendingEviction& e : evictions) {
    std::vector<ErasedObserver> observers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto [first, last] = eviction_observers_.equal_range(e.slice);
      for (auto it = first; it != last; ++it) observers.push_back(it->second);
    }
    for (const ErasedObserver& observer : observers) {
      std::string failure;
      try {
        observer(e.before, e.after, e.evicted);
      } catch (const std::exception& ex) {
        failure = ex.what();
      } catch (...) {
        failure = "an eviction observer threw a non-standard exception";
      }
      if (!failure.empty()) {
        std::lock_guard<std::mutex> lock(mutex_);
        observer_failures_.push_back(SliceTypes::name_of(e.slice) + ": " + failure);
      }
    }
  }
}

}  // namespace sandbox
