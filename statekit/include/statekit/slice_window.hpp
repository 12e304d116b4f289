// Slice windows (docs/conformance/STATE_MANAGEMENT.md): which items of a slice a Session
// keeps after each dispatch that changed it — the newest max_items, those younger than
// max_age, and always those keep says — so a long run's LOG slices stay bounded in
// memory (and in each new session tree). Evicted items are gone from the session; the
// ledger's earlier session trees still hold them. By default nothing is evicted.
//
//   SliceWindow<ToolInvoked> w = SliceWindow<ToolInvoked>::count(500);
//   w.keep = [](const ToolInvoked& t) { return !t.success; };  // keep failures
//   session.set_window(w);
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "statekit/persistent_vector.hpp"
#include "statekit/slice.hpp"

namespace statekit {

// Oldest items go first (FIFO) unless newest_first.
template <typename T>
struct SliceWindow {
  std::size_t max_items = 0;        // 0: no limit
  std::chrono::seconds max_age{0};  // 0: no limit (needs time_of)
  std::function<std::chrono::system_clock::time_point(const T&)> time_of;
  std::function<bool(const T&)> keep;  // items never evicted
  bool newest_first = false;           // LIFO: the newest items go first
  // Evict the oldest items 32 at a time (one leaf of the slice's vector), down to at
  // most max_items: the items left keep their chunks in the ledger's session trees,
  // which are then shared objects instead of all new ones. Count limit only.
  bool whole_leaves = false;

  static SliceWindow count(std::size_t n) {
    SliceWindow w;
    w.max_items = n;
    return w;
  }
  static SliceWindow age(std::chrono::seconds a,
                         std::function<std::chrono::system_clock::time_point(const T&)> time) {
    SliceWindow w;
    w.max_age = a;
    w.time_of = std::move(time);
    return w;
  }
};

// The items of a slice of S that window keeps at now (items itself if it keeps all).
template <typename S>
SliceItems windowed(const SliceWindow<S>& window, const SliceItems& items,
                    std::chrono::system_clock::time_point now) {
  auto value = [&](std::size_t i) -> const S& { return *static_cast<const S*>(items[i].get()); };
  auto kept = [&](std::size_t i) { return window.keep && window.keep(value(i)); };
  std::vector<bool> stays(items.size(), true);
  std::size_t left = items.size();
  if (window.max_age.count() > 0 && window.time_of) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!kept(i) && now - window.time_of(value(i)) > window.max_age) {
        stays[i] = false;
        --left;
      }
    }
  }
  if (window.max_items > 0 && left > window.max_items) {
    std::size_t excess = left - window.max_items;
    if (window.whole_leaves && !window.keep && left == items.size() && !window.newest_first) {
      std::size_t leaf = SliceItems::kLeafSize;
      excess = std::min(items.size(), (excess + leaf - 1) / leaf * leaf);
    }
    for (std::size_t n = 0; n < items.size() && excess > 0; ++n) {
      std::size_t i = window.newest_first ? items.size() - 1 - n : n;
      if (stays[i] && !kept(i)) {
        stays[i] = false;
        --excess;
        --left;
      }
    }
  }
  if (left == items.size()) return items;
  SliceItems out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (stays[i]) out = out.push_back(items[i]);
  }
  return out;
}

}  // namespace statekit
