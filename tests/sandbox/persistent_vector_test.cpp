// sandbox::PersistentVector: contents across every trie shape, and versions that
// stay untouched by later changes.
#include <gtest/gtest.h>

#include "sandbox/persistent_vector.hpp"

namespace {

using sandbox::PersistentVector;

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

}  // namespace
