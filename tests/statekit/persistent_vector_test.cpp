// statekit::PersistentVector: contents across every trie shape, versions that stay
// untouched by later changes, and lazy leaves loaded once, when first read.
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "statekit/persistent_vector.hpp"

namespace {

using statekit::PersistentVector;

TEST(PersistentVectorTest, PushBackAcrossTrieLevels) {
  PersistentVector<int> v;
  std::vector<int> expected;
  // 32 * 32 * 32 + 100 crosses the tail, the first level and two root overflows.
  for (int i = 0; i < 32 * 32 * 32 + 100; ++i) {
    v = v.push_back(i);
    expected.push_back(i);
  }
  ASSERT_EQ(v.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(v[i], expected[i]) << i;
  EXPECT_EQ(v.back(), expected.back());
  EXPECT_EQ(v.to_vector(), expected);
  EXPECT_THROW(v.at(expected.size()), std::out_of_range);
}

TEST(PersistentVectorTest, OldVersionsAreUnchanged) {
  PersistentVector<std::string> v;
  std::vector<PersistentVector<std::string>> versions;
  for (int i = 0; i < 2000; ++i) {
    versions.push_back(v);
    v = v.push_back("item" + std::to_string(i));
  }
  PersistentVector<std::string> changed = v.set(5, "five").set(1999, "last").set(1000, "k");
  for (std::size_t n = 0; n < versions.size(); n += 37) {
    ASSERT_EQ(versions[n].size(), n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(versions[n][i], "item" + std::to_string(i));
  }
  EXPECT_EQ(v[5], "item5");
  EXPECT_EQ(changed[5], "five");
  EXPECT_EQ(changed[1000], "k");
  EXPECT_EQ(changed[1999], "last");
  EXPECT_EQ(changed[6], "item6");
  PersistentVector<std::string> copy = v;
  EXPECT_TRUE(copy.shares_root_with(v));
  EXPECT_FALSE(changed.shares_root_with(v));
}

TEST(PersistentVectorTest, IterationAndConstruction) {
  std::vector<int> source = {3, 1, 4, 1, 5, 9, 2, 6};
  PersistentVector<int> v = PersistentVector<int>::from(source.begin(), source.end());
  std::vector<int> seen;
  for (int x : v) seen.push_back(x);
  EXPECT_EQ(seen, source);
  EXPECT_TRUE(PersistentVector<int>().empty());
}

// A leaf of 32 ints from first, counting its loads; it fails while fail is set.
class CountingLeaf : public statekit::LazyLeaf<int> {
 public:
  CountingLeaf(int first, int* loads, const bool* fail)
      : first_(first), loads_(loads), fail_(fail) {}

 private:
  std::vector<int> load() const override {
    if (*fail_) throw std::runtime_error("cannot load");
    ++*loads_;
    std::vector<int> out(32);
    for (int i = 0; i < 32; ++i) out[static_cast<std::size_t>(i)] = first_ + i;
    return out;
  }
  int first_;
  int* loads_;
  const bool* fail_;
};

TEST(PersistentVectorTest, LazyLeavesLoadOnceWhenFirstRead) {
  int loads = 0;
  bool fail = false;
  std::vector<std::shared_ptr<const statekit::LazyLeaf<int>>> leaves;
  leaves.reserve(40);
  // 40 leaves: across a root overflow of the trie.
  for (int i = 0; i < 40; ++i)
    leaves.push_back(std::make_shared<CountingLeaf>(32 * i, &loads, &fail));
  PersistentVector<int> v = PersistentVector<int>::from_leaves(leaves, {1280, 1281, 1282});
  ASSERT_EQ(v.size(), 40u * 32 + 3);
  EXPECT_EQ(loads, 0);
  EXPECT_EQ(v.lazy_leaf(70), leaves[2].get());
  EXPECT_EQ(v.lazy_leaf(1281), nullptr) << "the tail is no lazy leaf";
  // Appending, and replacing an element elsewhere, loads nothing.
  PersistentVector<int> longer = v.push_back(1283).set(1282, -1);
  EXPECT_EQ(loads, 0);
  EXPECT_EQ(v[70], 70);
  EXPECT_EQ(v[95], 95);
  EXPECT_EQ(loads, 1) << "one leaf, loaded once";
  // A leaf that cannot load is tried again.
  fail = true;
  EXPECT_THROW((void)v[0], std::runtime_error);
  fail = false;
  EXPECT_EQ(v[0], 0);
  // Replacing an element of a lazy leaf copies that leaf; the old version keeps it.
  PersistentVector<int> changed = v.set(100, -100);
  EXPECT_EQ(changed[100], -100);
  EXPECT_EQ(v[100], 100);
  EXPECT_EQ(changed.lazy_leaf(100), nullptr);
  EXPECT_EQ(changed.lazy_leaf(200), leaves[6].get());
  std::vector<int> expected(1283);
  for (int i = 0; i < 1283; ++i) expected[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(v.to_vector(), expected);
  expected[1282] = -1;
  expected.push_back(1283);
  EXPECT_EQ(longer.to_vector(), expected);
  // Leaves alone: the last one is the tail, and a push moves it into the trie.
  PersistentVector<int> only = PersistentVector<int>::from_leaves({leaves[0], leaves[1]}, {});
  EXPECT_EQ(only.size(), 64u);
  EXPECT_EQ(only.push_back(64)[63], 63);
  EXPECT_EQ(only.set(63, 7)[63], 7);
}

}  // namespace
