// PersistentVector<T> — an immutable vector whose copies share structure.
//
// A 32-way trie with a tail buffer (the layout of Clojure's persistent vector):
// copying is O(1), push_back and set copy only the path to the changed element
// (O(log32 n), effectively constant), and indexing is O(log32 n). Every "modifying"
// operation returns a new vector and leaves this one untouched, so a snapshot of a
// session is a copy of a few pointers and appending to a log never copies the log.
//
// A vector may also be built of LazyLeaf blocks of 32 elements (from_leaves), each
// produced the first time one of its elements is read: a long log read back from
// storage costs what is used of it, not its length.
//
// Elements have positions: the first element of a vector sits at start(), and a leaf
// holds the positions [32k, 32k + 32). drop_front(n) moves start() on by n and releases
// the leaves no position at or after it uses, so a vector that loses its oldest
// elements (a slice window) keeps every other leaf as it was, shared with the vector it
// came from — and storage that writes one chunk per leaf (sandbox's session trees)
// writes again only the first and the last.
//
// Thread-safety: a PersistentVector is an immutable value; distinct threads may read
// and copy the same vector concurrently (a lazy leaf is produced once).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace statekit {

// A block of a PersistentVector's elements produced on first use (by load()), then
// kept. A load that throws is tried again by the next read.
template <typename T>
class LazyLeaf {
 public:
  virtual ~LazyLeaf() = default;
  LazyLeaf(const LazyLeaf&) = delete;
  LazyLeaf& operator=(const LazyLeaf&) = delete;

  // The elements, loaded if they were not yet.
  const std::vector<T>& values() const {
    std::call_once(once_, [this] { values_ = load(); });
    return values_;
  }

 protected:
  LazyLeaf() = default;
  // The elements, for a leaf that has them already.
  explicit LazyLeaf(std::vector<T> loaded) : values_(std::move(loaded)) {
    std::call_once(once_, [] {});
  }
  virtual std::vector<T> load() const = 0;

 private:
  mutable std::once_flag once_;
  mutable std::vector<T> values_;
};

// An immutable, structurally shared sequence of T.
template <typename T>
class PersistentVector {
  static constexpr unsigned kBits = 5;
  static constexpr std::size_t kWidth = std::size_t{1} << kBits;
  static constexpr std::size_t kMask = kWidth - 1;

  // Interior nodes hold children, leaves hold up to kWidth values, or a lazy leaf.
  struct Node {
    std::vector<std::shared_ptr<const Node>> children;
    std::vector<T> values;
    std::shared_ptr<const LazyLeaf<T>> lazy;

    const std::vector<T>& leaf_values() const { return lazy ? lazy->values() : values; }
  };
  using NodePtr = std::shared_ptr<const Node>;

 public:
  static constexpr std::size_t kLeafSize = kWidth;

  PersistentVector() = default;

  // A vector of the elements of leaves (each must load exactly kLeafSize of them), then
  // tail's, whose first element is at position start: leaves and tail hold the
  // positions from start rounded down to a multiple of kLeafSize, and those before start
  // are placeholders, never read. No leaf is loaded here.
  static PersistentVector from_leaves(const std::vector<std::shared_ptr<const LazyLeaf<T>>>& leaves,
                                      std::vector<T> tail, std::size_t start = 0) {
    PersistentVector out = positioned(start & ~kMask);
    for (const auto& leaf : leaves) {
      auto node = std::make_shared<Node>();
      node->lazy = leaf;
      out = out.with_full_tail(std::move(node));
    }
    for (T& value : tail) out = out.push_back(std::move(value));
    out.start_ = start;
    return out;
  }

  // The lazy leaf that holds the element at index, if it is in one (nullptr otherwise).
  const LazyLeaf<T>* lazy_leaf(std::size_t index) const {
    if (index >= size()) return nullptr;
    std::size_t position = start_ + index;
    const Node* node = position >= tail_offset() ? tail_.get() : leaf_of(position);
    return node->lazy.get();
  }

  std::size_t size() const { return size_ - start_; }
  bool empty() const { return size() == 0; }
  // The position of the first element: how many were dropped from the front since the
  // vector was built (drop_front), or the start given to from_leaves.
  std::size_t start() const { return start_; }

  // The element at index (throws std::out_of_range past the end).
  const T& at(std::size_t index) const {
    if (index >= size()) throw std::out_of_range("PersistentVector index out of range");
    return (*this)[index];
  }
  const T& operator[](std::size_t index) const {
    std::size_t position = start_ + index;
    if (position >= tail_offset()) return tail_->leaf_values()[position - tail_offset()];
    return leaf_of(position)->leaf_values()[position & kMask];
  }
  const T& back() const { return (*this)[size() - 1]; }

  // A vector without its first n elements (throws std::out_of_range if n > size()). The
  // leaves it still uses are shared with this one; those it no longer uses are
  // released. Dropping every element gives an empty vector that starts at position 0.
  PersistentVector drop_front(std::size_t n) const {
    if (n > size()) throw std::out_of_range("PersistentVector drop_front past the end");
    if (n == 0) return *this;
    if (n == size()) return PersistentVector();
    PersistentVector out = *this;
    out.start_ += n;
    // Whole leaves below the new start go; the tail stays whatever start says.
    std::size_t released = std::min(start_ & ~kMask, tail_offset());
    std::size_t release = std::min(out.start_ & ~kMask, tail_offset());
    if (release > released && root_) {
      out.root_ = release_below(root_, shift_, release, /*is_root=*/true);
    }
    return out;
  }

  // A vector with value appended.
  PersistentVector push_back(T value) const {
    if (tail_ && size_ - tail_offset() < kWidth) {
      // A tail that is not full was built by push_back: never lazy.
      PersistentVector out = *this;
      auto tail = std::make_shared<Node>(*tail_);
      tail->values.push_back(std::move(value));
      out.tail_ = std::move(tail);
      ++out.size_;
      return out;
    }
    auto tail = std::make_shared<Node>();
    tail->values.reserve(kWidth);
    tail->values.push_back(std::move(value));
    PersistentVector out = with_full_tail(std::move(tail));
    out.size_ -= kWidth - 1;
    return out;
  }

  // A vector with the element at index replaced by value.
  PersistentVector set(std::size_t index, T value) const {
    if (index >= size()) throw std::out_of_range("PersistentVector index out of range");
    PersistentVector out = *this;
    index += start_;
    if (index >= tail_offset()) {
      auto tail = std::make_shared<Node>();
      tail->values = tail_->leaf_values();
      tail->values[index - tail_offset()] = std::move(value);
      out.tail_ = std::move(tail);
    } else {
      out.root_ = assoc(root_, shift_, index, std::move(value));
    }
    return out;
  }

  // Builds a vector from a sequence.
  template <typename It>
  static PersistentVector from(It first, It last) {
    PersistentVector out;
    for (; first != last; ++first) out = out.push_back(*first);
    return out;
  }

  // A copy of the elements, in order.
  std::vector<T> to_vector() const {
    std::vector<T> out;
    out.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
    return out;
  }

  // True if both vectors are the same version (not a deep comparison).
  bool shares_root_with(const PersistentVector& other) const {
    return root_ == other.root_ && tail_ == other.tail_ && size_ == other.size_ &&
           start_ == other.start_;
  }

  // Forward iteration by index.
  class const_iterator {
   public:
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    const_iterator(const PersistentVector* v, std::size_t i) : v_(v), i_(i) {}
    const T& operator*() const { return (*v_)[i_]; }
    const T* operator->() const { return &(*v_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const PersistentVector* v_;
    std::size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  // An empty vector whose next element goes to position base (a multiple of kWidth): the
  // positions before it are absent from the trie, which is made deep enough to hold them.
  static PersistentVector positioned(std::size_t base) {
    PersistentVector out;
    out.size_ = base;
    out.start_ = base;
    while ((base >> kBits) > (std::size_t{1} << out.shift_)) out.shift_ += kBits;
    return out;
  }

  // A copy of node (of the given shift) without the leaves that hold only positions
  // below `below` (a multiple of kWidth): the children wholly below it are released,
  // the one that holds it is copied the same way.
  static NodePtr release_below(const NodePtr& node, unsigned level, std::size_t below,
                               bool is_root) {
    auto copy = std::make_shared<Node>(*node);
    std::size_t slot = below >> level;
    if (!is_root) slot &= kMask;
    std::size_t whole = std::min(slot, copy->children.size());
    for (std::size_t i = 0; i < whole; ++i) copy->children[i].reset();
    if (level > kBits && slot < copy->children.size() && copy->children[slot]) {
      copy->children[slot] = release_below(copy->children[slot], level - kBits, below, false);
    }
    return copy;
  }

  std::size_t tail_offset() const { return size_ < kWidth ? 0 : ((size_ - 1) >> kBits) << kBits; }

  // The trie's leaf that holds position index (below tail_offset()).
  const Node* leaf_of(std::size_t index) const {
    const Node* node = root_.get();
    for (unsigned level = shift_; level > 0; level -= kBits) {
      node = node->children[(index >> level) & kMask].get();
    }
    return node;
  }

  // This vector (whose tail is full, or which is empty) with its tail moved into the
  // trie and leaf, taken as full, as the new tail.
  PersistentVector with_full_tail(NodePtr leaf) const {
    PersistentVector out = *this;
    if (tail_) {
      if ((size_ >> kBits) > (std::size_t{1} << shift_)) {
        auto root = std::make_shared<Node>();
        root->children.push_back(root_);
        root->children.push_back(new_path(shift_, tail_, size_));
        out.root_ = std::move(root);
        out.shift_ = shift_ + kBits;
      } else {
        out.root_ = push_tail(size_, shift_, root_.get(), tail_);
      }
    }
    out.tail_ = std::move(leaf);
    out.size_ += kWidth;
    return out;
  }

  // A copy of parent (nullptr: an empty node) with leaf added as the next leaf; size
  // is the element count before the push.
  static NodePtr push_tail(std::size_t size, unsigned level, const Node* parent, NodePtr leaf) {
    auto node = parent ? std::make_shared<Node>(*parent) : std::make_shared<Node>();
    std::size_t slot = ((size - 1) >> level) & kMask;
    NodePtr inserted;
    if (level == kBits) {
      inserted = std::move(leaf);
    } else if (slot < node->children.size()) {
      inserted = push_tail(size, level - kBits, node->children[slot].get(), std::move(leaf));
    } else {
      inserted = new_path(level - kBits, std::move(leaf), size);
    }
    // A vector built from a position (from_leaves) has no children before it.
    if (slot >= node->children.size()) node->children.resize(slot + 1);
    node->children[slot] = std::move(inserted);
    return node;
  }

  // The nodes from the given shift down to leaf, which holds the positions before size.
  static NodePtr new_path(unsigned level, NodePtr leaf, std::size_t size) {
    if (level == 0) return leaf;
    auto node = std::make_shared<Node>();
    std::size_t slot = ((size - 1) >> level) & kMask;
    node->children.resize(slot + 1);
    node->children[slot] = new_path(level - kBits, std::move(leaf), size);
    return node;
  }

  static NodePtr assoc(const NodePtr& node, unsigned level, std::size_t index, T value) {
    auto copy = std::make_shared<Node>(*node);
    if (level == 0) {
      if (copy->lazy) copy->values = copy->lazy->values();
      copy->lazy.reset();
      copy->values[index & kMask] = std::move(value);
    } else {
      std::size_t slot = (index >> level) & kMask;
      copy->children[slot] = assoc(node->children[slot], level - kBits, index, std::move(value));
    }
    return copy;
  }

  std::size_t size_ = 0;   // the position after the last element
  std::size_t start_ = 0;  // the position of the first element
  unsigned shift_ = kBits;
  NodePtr root_;
  NodePtr tail_;
};

}  // namespace statekit
