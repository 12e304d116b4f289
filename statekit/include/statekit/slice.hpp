// Slices as values: the items of a slice (type-erased, in a PersistentVector), the
// typed view Slice<T> over them, and the reducer shapes that turn a slice and an event
// into the next slice, with or without effects. Nothing here knows a Session; the
// toolkit's computed slices, windows and middleware are written against these types.
//
// Thread-safety: every type here is an immutable value; copies share items.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "statekit/effects.hpp"
#include "statekit/persistent_vector.hpp"

namespace statekit {

// A type-erased slice item (always a const T of the slice's type).
using Item = std::shared_ptr<const void>;
// The items of a slice, oldest first.
using SliceItems = PersistentVector<Item>;

// A typed, immutable view of one slice. Cheap to copy.
template <typename T>
class Slice {
 public:
  Slice() = default;
  explicit Slice(SliceItems items) : items_(std::move(items)) {}

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const T& operator[](std::size_t i) const { return *static_cast<const T*>(items_[i].get()); }
  // The newest value, or nullptr for an empty slice.
  const T* latest() const { return empty() ? nullptr : &(*this)[size() - 1]; }

  // New slices (this one is unchanged).
  Slice append(T value) const {
    return Slice(items_.push_back(std::make_shared<const T>(std::move(value))));
  }
  Slice replace(std::size_t i, T value) const {
    return Slice(items_.set(i, std::make_shared<const T>(std::move(value))));
  }
  // A slice holding only value (for "replace latest" reducers).
  static Slice of(T value) { return Slice().append(std::move(value)); }

  std::vector<T> to_vector() const {
    std::vector<T> out;
    out.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
    return out;
  }
  const SliceItems& items() const { return items_; }

 private:
  SliceItems items_;
};

// A reducer: the slice before the event and the event -> the slice after it.
template <typename S, typename E>
using Reducer = std::function<Slice<S>(const Slice<S>&, const E&)>;

// Ready-made reducers.
namespace reducers {
// Appends the event itself (S == E), the usual reducer of a LOG slice.
template <typename S>
Slice<S> append_all(const Slice<S>& slice, const S& event) {
  return slice.append(event);
}
// Keeps only the newest value (S == E).
template <typename S>
Slice<S> replace_latest(const Slice<S>&, const S& event) {
  return Slice<S>::of(event);
}
}  // namespace reducers

// What a reducer that has side effects returns: the new slice, and the effects to
// perform once it is in place.
template <typename S>
struct Reduced {
  Slice<S> slice;
  Effects effects;
};

// A reducer with effects.
template <typename S, typename E>
using EffectReducer = std::function<Reduced<S>(const Slice<S>&, const E&)>;

}  // namespace statekit
