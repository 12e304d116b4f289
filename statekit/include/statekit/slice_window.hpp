// Slice windows (docs/conformance/STATE_MANAGEMENT.md): which items of a slice a Session
// keeps after each dispatch that changed it — at most max_items (the newest, unless
// newest_first; the highest priority with a priority function; a thinned sample with
// sample), those younger than max_age, and, with a predicate, those it matches first —
// so a long run's LOG slices stay bounded in memory (and in each new session tree). A
// composite window applies several windows to the same slice: an item stays only if
// every one keeps it. Evicted items are gone from the session; the ledger's earlier
// session trees still hold them, and an eviction observer (Session::on_evict) is told
// which went. By default nothing is evicted.
//
//   SliceWindow<ToolInvoked> w = SliceWindow<ToolInvoked>::count(500);
//   w.keep = [](const ToolInvoked& t) { return !t.success; };  // failures go last
//   session.set_window(w);
//
//   // Failures only, the newest 50 of them:
//   session.set_window(SliceWindow<ToolInvoked>::predicate(
//       [](const ToolInvoked& t) { return !t.success; }, 50));
//
//   // At most 10,000 items, none older than two hours:
//   session.set_window(SliceWindow<Event>::composite(
//       {SliceWindow<Event>::count(10000), SliceWindow<Event>::age(2h, time_of_event)}));
//
// A window that evicts the oldest items only (a count or an age, with no predicate that
// saves an older one) drops them from the front of the slice's vector
// (PersistentVector::drop_front): the items left keep their leaves, and so their chunks
// in the session trees, which stay shared objects instead of all new ones.
//
// Thread-safety: a SliceWindow is a value; windowed reads it and the items only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "statekit/persistent_vector.hpp"
#include "statekit/slice.hpp"

namespace statekit {

// Oldest items go first (FIFO) unless newest_first, priority or sample says otherwise.
template <typename T>
struct SliceWindow {
  // 0: no limit. Otherwise no more than max_items stay: items keep does not match go
  // first, then, if the matches alone are more, the oldest matches (the newest with
  // newest_first; the lowest priority first with priority).
  std::size_t max_items = 0;
  std::chrono::seconds max_age{0};  // 0: no limit (needs time_of); spares keep's matches
  std::function<std::chrono::system_clock::time_point(const T&)> time_of;
  std::function<bool(const T&)> keep;  // the items kept in preference to the others
  bool newest_first = false;           // LIFO: the newest items go first
  // Items keep does not match go at once (a predicate window keeps its matches only).
  bool matches_only = false;
  // Over max_items, the items of lowest priority go first (equal ones in the order
  // above); keep's matches still go after the others.
  std::function<double(const T&)> priority;
  // Over max_items, every other item goes instead, counting back from the newest (which
  // stays), until max_items or fewer stay: a deterministic sample reaching back over the
  // whole slice, thinner further back (between max_items / 2 and max_items stay).
  bool sample = false;
  // More windows, each judging the whole slice: an item stays only if this window and
  // every one of them keeps it.
  std::vector<SliceWindow> all_of;

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
  // The max_items items of highest priority (of equal ones, the newest).
  static SliceWindow by_priority(std::size_t max_items, std::function<double(const T&)> priority) {
    SliceWindow w;
    w.max_items = max_items;
    w.priority = std::move(priority);
    return w;
  }
  // A thinned sample of at most max_items items, the newest always among them.
  static SliceWindow sampled(std::size_t max_items) {
    SliceWindow w;
    w.max_items = max_items;
    w.sample = true;
    return w;
  }
  // The items every one of windows keeps.
  static SliceWindow composite(std::vector<SliceWindow> windows) {
    SliceWindow w;
    w.all_of = std::move(windows);
    return w;
  }
};

// What a window evicted from slice S after one dispatch, as an eviction observer sees
// it: the slice the reducers made, the slice the window left of it, and the items that
// went (oldest first).
template <typename S>
struct Eviction {
  Slice<S> before;
  Slice<S> after;
  Slice<S> evicted;
};

// Told what a window evicted (Session::on_evict).
template <typename S>
using EvictionObserver = std::function<void(const Eviction<S>&)>;

namespace window_detail {

// True if window evicts only by count, oldest first, and so looks at no item.
template <typename S>
bool by_count_alone(const SliceWindow<S>& w) {
  return !w.keep && !w.newest_first && !w.priority && !w.sample && w.all_of.empty() &&
         (w.max_age.count() == 0 || !w.time_of);
}

// Evicts, of the items that stay, every other one counting back from the newest, until
// no more than max stay. left: how many stay.
inline void thin(std::vector<bool>& stays, std::size_t& left, std::size_t max) {
  while (left > max) {
    bool odd = false;
    for (std::size_t n = stays.size(); n-- > 0;) {
      if (!stays[n]) continue;
      if (odd) {
        stays[n] = false;
        --left;
      }
      odd = !odd;
    }
  }
}

// The order in which w evicts items over its count: the others before keep's matches,
// the lowest priority first, then oldest first (newest first with newest_first).
template <typename S, typename Value>
std::vector<std::size_t> eviction_order(const SliceWindow<S>& w, std::size_t n,
                                        const std::vector<bool>& matches, const Value& value) {
  std::vector<std::size_t> order(n);
  for (std::size_t k = 0; k < n; ++k) order[k] = w.newest_first ? n - 1 - k : k;
  if (!w.keep && !w.priority) return order;
  std::vector<double> rank(n, 0.0);
  if (w.priority) {
    for (std::size_t i = 0; i < n; ++i) rank[i] = w.priority(value(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair<bool, double>(matches[a], rank[a]) <
           std::pair<bool, double>(matches[b], rank[b]);
  });
  return order;
}

// Whether w keeps each item of items at now.
template <typename S>
std::vector<bool> stays(const SliceWindow<S>& w, const SliceItems& items,
                        std::chrono::system_clock::time_point now) {
  const std::size_t n = items.size();
  auto value = [&](std::size_t i) -> const S& { return *static_cast<const S*>(items[i].get()); };
  std::vector<bool> matches(n, false);
  if (w.keep) {
    for (std::size_t i = 0; i < n; ++i) matches[i] = w.keep(value(i));
  }
  std::vector<bool> out(n, true);
  std::size_t left = n;
  for (std::size_t i = 0; i < n; ++i) {
    bool too_old = w.max_age.count() > 0 && w.time_of && now - w.time_of(value(i)) > w.max_age;
    if (!matches[i] && (too_old || (w.matches_only && w.keep))) {
      out[i] = false;
      --left;
    }
  }
  if (w.max_items > 0 && left > w.max_items) {
    if (w.sample) {
      thin(out, left, w.max_items);
    } else {
      for (std::size_t i : eviction_order(w, n, matches, value)) {
        if (left <= w.max_items) break;
        if (out[i]) {
          out[i] = false;
          --left;
        }
      }
    }
  }
  for (const SliceWindow<S>& part : w.all_of) {
    std::vector<bool> kept = stays(part, items, now);
    for (std::size_t i = 0; i < n; ++i) out[i] = out[i] && kept[i];
  }
  return out;
}

// The items stays keeps (items itself if all); the others appended to evicted if given.
inline SliceItems keep_only(const SliceItems& items, const std::vector<bool>& stays,
                            SliceItems* evicted) {
  std::size_t left = static_cast<std::size_t>(std::count(stays.begin(), stays.end(), true));
  if (left == items.size()) return items;
  if (evicted != nullptr) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!stays[i]) *evicted = evicted->push_back(items[i]);
    }
  }
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

}  // namespace window_detail

// The items of a slice of S that window keeps at now (items itself if it keeps all).
// With evicted, the items it evicts are appended to *evicted, oldest first.
template <typename S>
SliceItems windowed(const SliceWindow<S>& window, const SliceItems& items,
                    std::chrono::system_clock::time_point now, SliceItems* evicted = nullptr) {
  if (window_detail::by_count_alone(window)) {
    // The product's windows (session.windows): no item looked at.
    if (window.max_items == 0 || items.size() <= window.max_items) return items;
    std::size_t excess = items.size() - window.max_items;
    if (evicted != nullptr) {
      for (std::size_t i = 0; i < excess; ++i) *evicted = evicted->push_back(items[i]);
    }
    return items.drop_front(excess);
  }
  return window_detail::keep_only(items, window_detail::stays(window, items, now), evicted);
}

}  // namespace statekit
