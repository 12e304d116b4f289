// statekit::PersistentVector: contents across every trie shape, versions that stay
// untouched by later changes, lazy leaves loaded once, when first read, and a front
// that moves (drop_front) keeping the other leaves shared and releasing the ones left
// behind, also for a vector built from a position.
#include <memory>
#include <numeric>
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

TEST(PersistentVectorTest, DroppingFromTheFrontKeepsTheRestInOrder) {
  PersistentVector<int> v;
  for (int i = 0; i < 32 * 32 * 3 + 50; ++i) v = v.push_back(i);
  PersistentVector<int> whole = v;
  std::size_t dropped = 0;
  // Steps of every size: inside a leaf, whole leaves, across the trie's nodes, into the
  // tail.
  for (std::size_t step : {1u, 5u, 26u, 32u, 64u, 1000u, 31u, 1u, 1900u, 50u}) {
    v = v.drop_front(step);
    dropped += step;
    ASSERT_EQ(v.start(), dropped);
    ASSERT_EQ(v.size(), whole.size() - dropped);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int>(dropped + i));
  }
  // It goes on growing and changing, and the vector it came from is untouched.
  PersistentVector<int> longer = v.push_back(-1).set(0, -2);
  EXPECT_EQ(longer.back(), -1);
  EXPECT_EQ(longer[0], -2);
  EXPECT_EQ(v[0], static_cast<int>(dropped));
  for (std::size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], static_cast<int>(i));
  EXPECT_THROW(v.drop_front(v.size() + 1), std::out_of_range);
  EXPECT_TRUE(v.drop_front(v.size()).empty());
  EXPECT_EQ(v.drop_front(v.size()).push_back(7)[0], 7);
  EXPECT_FALSE(v.drop_front(1).shares_root_with(v));
  EXPECT_TRUE(v.drop_front(0).shares_root_with(v));
}

TEST(PersistentVectorTest, AWindowThatSlidesKeepsExactlyTheNewestAndReleasesTheRest) {
  for (std::size_t window : {1u, 10u, 32u, 33u, 1000u}) {
    PersistentVector<std::shared_ptr<int>> v;
    std::vector<std::weak_ptr<int>> made;
    for (int i = 0; i < 3000; ++i) {
      auto item = std::make_shared<int>(i);
      made.push_back(item);
      v = v.push_back(std::move(item));
      if (v.size() > window) v = v.drop_front(v.size() - window);
      ASSERT_EQ(v.size(), std::min<std::size_t>(window, made.size()));
      ASSERT_EQ(*v[0], static_cast<int>(made.size() - v.size())) << window;
      ASSERT_EQ(*v.back(), i);
    }
    // What the vector holds is bounded: items of leaves wholly before its start are gone
    // (at most a leaf's worth of dropped items stay, beside the tail).
    std::size_t alive = 0;
    for (const std::weak_ptr<int>& w : made) alive += w.expired() ? 0 : 1;
    EXPECT_LE(alive, window + 2 * PersistentVector<int>::kLeafSize) << window;
  }
}

TEST(PersistentVectorTest, DroppingFromTheFrontSharesTheLeavesItKeeps) {
  int loads = 0;
  bool fail = false;
  std::vector<std::shared_ptr<const statekit::LazyLeaf<int>>> leaves;
  for (int i = 0; i < 40; ++i)
    leaves.push_back(std::make_shared<CountingLeaf>(32 * i, &loads, &fail));
  PersistentVector<int> v = PersistentVector<int>::from_leaves(leaves, {1280});
  PersistentVector<int> shorter = v.drop_front(70);
  EXPECT_EQ(loads, 0) << "dropping loads nothing";
  EXPECT_EQ(shorter.lazy_leaf(0), leaves[2].get()) << "position 70 is in leaf 2";
  EXPECT_EQ(shorter.lazy_leaf(1000 - 70), leaves[31].get());
  EXPECT_EQ(shorter[0], 70);
  EXPECT_EQ(shorter.size(), 1281u - 70);
}

TEST(PersistentVectorTest, AVectorBuiltFromAPositionReadsAndGrowsFromThere) {
  int loads = 0;
  bool fail = false;
  // Positions from 32 * 1100 + 8 (leaf 1100 holds 8 placeholders first): a trie two
  // levels deep whose first 1100 leaves are absent.
  for (std::size_t first_leaf : {0u, 1u, 31u, 32u, 33u, 1023u, 1024u, 1100u}) {
    for (std::size_t skip : {0u, 8u}) {
      std::vector<std::shared_ptr<const statekit::LazyLeaf<int>>> leaves;
      for (std::size_t i = first_leaf; i < first_leaf + 3; ++i)
        leaves.push_back(std::make_shared<CountingLeaf>(static_cast<int>(32 * i), &loads, &fail));
      int end = static_cast<int>(32 * (first_leaf + 3));
      std::size_t start = 32 * first_leaf + skip;
      PersistentVector<int> v = PersistentVector<int>::from_leaves(leaves, {end, end + 1}, start);
      ASSERT_EQ(v.start(), start);
      ASSERT_EQ(v.size(), 3 * 32 + 2 - skip);
      for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int>(start + i));
      // Growing across leaves and trie levels, and dropping again.
      PersistentVector<int> grown = v;
      for (int i = end + 2; i < end + 2 + 32 * 40; ++i) grown = grown.push_back(i);
      for (std::size_t i = 0; i < grown.size(); ++i) {
        ASSERT_EQ(grown[i], static_cast<int>(start + i)) << first_leaf << "+" << skip << " @" << i;
      }
      PersistentVector<int> slid = grown.drop_front(100);
      EXPECT_EQ(slid[0], static_cast<int>(start + 100));
      EXPECT_EQ(slid.back(), grown.back());
    }
  }
  // Placeholders before the start in the tail alone (no leaves).
  PersistentVector<int> tail_only = PersistentVector<int>::from_leaves({}, {0, 0, 5, 6}, 66);
  EXPECT_EQ(tail_only.to_vector(), (std::vector<int>{5, 6}));
  EXPECT_EQ(tail_only.push_back(7).to_vector(), (std::vector<int>{5, 6, 7}));
}

}  // namespace
