// Slice windows (docs/conformance/STATE_MANAGEMENT.md): which items of a slice a Session
// keeps after each dispatch that changed it — at most max_items (the newest, unless
// newest_first), those younger than max_age, and, with a predicate, those it matches
// first — so a long run's LOG slices stay bounded in memory (and in each new session
// tree). Evicted items are gone from the session; the ledger's earlier session trees
// still hold them. By default nothing is evicted.
//
//   SliceWindow<ToolInvoked> w = SliceWindow<ToolInvoked>::count(500);
//   w.keep = [](const ToolInvoked& t) { return !t.success; };  // failures go last
//   session.set_window(w);
//
//   // Failures only, the newest 50 of them:
//   session.set_window(SliceWindow<ToolInvoked>::predicate(
//       [](const ToolInvoked& t) { return !t.success; }, 50));
//
// A window that evicts the oldest items only (a count or an age, with no predicate that
// saves an older one) drops them from the front of the slice's vector
// (PersistentVector::drop_front): the items left keep their leaves, and so their chunks
// in the session trees, which stay shared objects instead of all new ones.
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
  // 0: no limit. Otherwise no more than max_items stay: items keep does not match go
  // first, then, if the matches alone are more, the oldest matches (the newest with
  // newest_first).
  std::size_t max_items = 0;
  std::chrono::seconds max_age{0};  // 0: no limit (needs time_of); spares keep's matches
  std::function<std::chrono::system_clock::time_point(const T&)> time_of;
  std::function<bool(const T&)> keep;  // the items kept in preference to the others
  bool newest_first = false;           // LIFO: the newest items go first
  // Items keep does not match go at once (a predicate window keeps its matches only).
  bool matches_only = false;

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
  // The items keep matches, the newest max_items of them (0: all of them).
  static SliceWindow predicate(std::function<bool(const T&)> keep, std::size_t max_items) {
    SliceWindow w;
    w.keep = std::move(keep);
    w.max_items = max_items;
    w.matches_only = true;
    return w;
  }
};

// The items of a slice of S that window keeps at now (items itself if it keeps all).
template <typename S>
SliceItems windowed(const SliceWindow<S>& window, const SliceItems& items,
                    std::chrono::system_clock::time_point now) {
  bool by_count_alone =
      !window.keep && !window.newest_first && (window.max_age.count() == 0 || !window.time_of);
  if (by_count_alone) {
    // The product's windows (session.windows): no item looked at.
    bool over = window.max_items > 0 && items.size() > window.max_items;
    return over ? items.drop_front(items.size() - window.max_items) : items;
  }
  auto value = [&](std::size_t i) -> const S& { return *static_cast<const S*>(items[i].get()); };
  std::vector<bool> matches(items.size(), false);
  if (window.keep) {
    for (std::size_t i = 0; i < items.size(); ++i) matches[i] = window.keep(value(i));
  }
  std::vector<bool> stays(items.size(), true);
  std::size_t left = items.size();
  auto evict = [&](std::size_t i) {
    stays[i] = false;
    --left;
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    bool too_old = window.max_age.count() > 0 && window.time_of &&
                   now - window.time_of(value(i)) > window.max_age;
    if (!matches[i] && (too_old || (window.matches_only && window.keep))) evict(i);
  }
  // Over the count: the others first, then the matches, each in eviction order.
  for (bool matching : {false, true}) {
    for (std::size_t n = 0; n < items.size() && window.max_items > 0 && left > window.max_items;
         ++n) {
      std::size_t i = window.newest_first ? items.size() - 1 - n : n;
      if (stays[i] && matches[i] == matching) evict(i);
    }
  }
  if (left == items.size()) return items;
  // The oldest items went, and only they: the rest keeps its leaves.
  std::size_t first = 0;
  while (first < items.size() && !stays[first]) ++first;
  if (items.size() - first == left) return items.drop_front(first);
  SliceItems out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (stays[i]) out = out.push_back(items[i]);
  }
  return out;
}

}  // namespace statekit
