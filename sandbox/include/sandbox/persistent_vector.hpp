// PersistentVector<T> — an immutable vector whose copies share structure.
//
// A 32-way trie with a tail buffer (the layout of Clojure's persistent vector):
// copying is O(1), push_back and set copy only the path to the changed element
// (O(log32 n), effectively constant), and indexing is O(log32 n). Every "modifying"
// operation returns a new vector and leaves this one untouched, so a snapshot of a
// session is a copy of a few pointers and appending to a log never copies the log.
//
// Thread-safety: a PersistentVector is an immutable value; distinct threads may read
// and copy the same vector concurrently.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace sandbox {

// An immutable, structurally shared sequence of T.
template <typename T>
class PersistentVector {
  static constexpr unsigned kBits = 5;
  static constexpr std::size_t kWidth = std::size_t{1} << kBits;
  static constexpr std::size_t kMask = kWidth - 1;

  // Interior nodes hold children, leaves hold up to kWidth values.
  struct Node {
    std::vector<std::shared_ptr<const Node>> children;
    std::vector<T> values;
  };
  using NodePtr = std::shared_ptr<const Node>;

 public:
  PersistentVector() = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The element at index (throws std::out_of_range past the end).
  const T& at(std::size_t index) const {
    if (index >= size_) throw std::out_of_range("PersistentVector index out of range");
    return (*this)[index];
  }
  const T& operator[](std::size_t index) const {
    if (index >= tail_offset()) return tail_->values[index - tail_offset()];
    const Node* node = root_.get();
    for (unsigned level = shift_; level > 0; level -= kBits) {
      node = node->children[(index >> level) & kMask].get();
    }
    return node->values[index & kMask];
  }
  const T& back() const { return (*this)[size_ - 1]; }

  // A vector with value appended.
  PersistentVector push_back(T value) const {
    PersistentVector out = *this;
    if (size_ - tail_offset() < kWidth) {
      auto tail = tail_ ? std::make_shared<Node>(*tail_) : std::make_shared<Node>();
      tail->values.push_back(std::move(value));
      out.tail_ = std::move(tail);
    } else {
      // The tail is full: it becomes a leaf of the trie.
      if ((size_ >> kBits) > (std::size_t{1} << shift_)) {
        auto root = std::make_shared<Node>();
        root->children.push_back(root_);
        root->children.push_back(new_path(shift_, tail_));
        out.root_ = std::move(root);
        out.shift_ = shift_ + kBits;
      } else {
        out.root_ = push_tail(size_, shift_, root_.get(), tail_);
      }
      auto tail = std::make_shared<Node>();
      tail->values.reserve(kWidth);
      tail->values.push_back(std::move(value));
      out.tail_ = std::move(tail);
    }
    ++out.size_;
    return out;
  }

  // A vector with the element at index replaced by value.
  PersistentVector set(std::size_t index, T value) const {
    if (index >= size_) throw std::out_of_range("PersistentVector index out of range");
    PersistentVector out = *this;
    if (index >= tail_offset()) {
      auto tail = std::make_shared<Node>(*tail_);
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
    out.reserve(size_);
    for (std::size_t i = 0; i < size_; ++i) out.push_back((*this)[i]);
    return out;
  }

  // True if both vectors are the same version (not a deep comparison).
  bool shares_root_with(const PersistentVector& other) const {
    return root_ == other.root_ && tail_ == other.tail_ && size_ == other.size_;
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
  const_iterator end() const { return {this, size_}; }

 private:
  std::size_t tail_offset() const { return size_ < kWidth ? 0 : ((size_ - 1) >> kBits) << kBits; }

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
      inserted = new_path(level - kBits, std::move(leaf));
    }
    if (slot < node->children.size()) {
      node->children[slot] = std::move(inserted);
    } else {
      node->children.push_back(std::move(inserted));
    }
    return node;
  }

  static NodePtr new_path(unsigned level, NodePtr leaf) {
    if (level == 0) return leaf;
    auto node = std::make_shared<Node>();
    node->children.push_back(new_path(level - kBits, std::move(leaf)));
    return node;
  }

  static NodePtr assoc(const NodePtr& node, unsigned level, std::size_t index, T value) {
    auto copy = std::make_shared<Node>(*node);
    if (level == 0) {
      copy->values[index & kMask] = std::move(value);
    } else {
      std::size_t slot = (index >> level) & kMask;
      copy->children[slot] = assoc(node->children[slot], level - kBits, index, std::move(value));
    }
    return copy;
  }

  std::size_t size_ = 0;
  unsigned shift_ = kBits;
  NodePtr root_;
  NodePtr tail_;
};

}  // namespace sandbox
