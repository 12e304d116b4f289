// runs::PriceTable: list prices by model prefix, and unknown models priced high
// rather than free.
#include <gtest/gtest.h>

#include "runs/pricing.hpp"

namespace {

using runs::PriceTable;
using runs::TokenUsage;

TEST(PriceTableTest, ListPricesPerMillionTokensOfEachKind) {
  PriceTable t = PriceTable::defaults();
  TokenUsage million_each{1'000'000, 1'000'000, 1'000'000, 1'000'000, 1'000'000};
  PriceTable::Priced sonnet = t.price("claude-sonnet-4-6", million_each);
  EXPECT_TRUE(sonnet.known);
  EXPECT_DOUBLE_EQ(sonnet.usd, 3 + 15 + 3.75 + 6 + 0.3);
  EXPECT_DOUBLE_EQ(t.price("claude-haiku-4-5-20251001", {1'000'000, 0, 0, 0, 0}).usd, 1.0);
  // What Claude Code itself computed against the mock: 2M input + 2k output = $8.04.
  EXPECT_NEAR(t.price("claude-opus-5-5", {2'000'000, 2'000, 0, 0, 0}).usd, 8.04, 1e-9);
}

TEST(PriceTableTest, TheLongestPrefixWins) {
  PriceTable t = PriceTable::defaults();
  EXPECT_DOUBLE_EQ(t.price("claude-opus-4-1", {1'000'000, 0, 0, 0, 0}).usd, 15);
  EXPECT_DOUBLE_EQ(t.price("claude-opus-4-5-20251101", {1'000'000, 0, 0, 0, 0}).usd, 5);
  t.set("claude-opus-4-5-cheap", {0.5, 1, 1, 1, 0});
  EXPECT_DOUBLE_EQ(t.price("claude-opus-4-5-cheap-1", {1'000'000, 0, 0, 0, 0}).usd, 0.5);
  EXPECT_DOUBLE_EQ(t.price("claude-opus-4-5", {1'000'000, 0, 0, 0, 0}).usd, 5);
}

TEST(PriceTableTest, AnUnknownModelCostsTheHighestRatesAndIsReported) {
  PriceTable t = PriceTable::defaults();
  PriceTable::Priced p = t.price("gpt-9-turbo", {1'000'000, 1'000'000, 0, 0, 0});
  EXPECT_FALSE(p.known);
  EXPECT_DOUBLE_EQ(p.usd, 15 + 75);
  EXPECT_FALSE(t.price("", {}).known);
  EXPECT_EQ(t.price("", {}).usd, 0);
}

}  // namespace
