// The repeat guard's decision: identical calls in a row are allowed up to the deny
// threshold, refused from it, and stop the run at the halt threshold; another tool,
// or the same tool with another input, starts the count again; a threshold of 0 never
// trips, and both 0 turn the guard off.
#include <gtest/gtest.h>

#include "policy/repeat_guard.hpp"

namespace {

using namespace policy;

// The verdicts on calls (key, fingerprint) one after the other, from no streak.
std::vector<RepeatVerdict> verdicts(const RepeatConfig& config,
                                    const std::vector<std::pair<std::string, std::string>>& calls,
                                    RepeatStreak* last = nullptr) {
  RepeatStreak streak;
  std::vector<RepeatVerdict> out;
  for (const auto& [key, fingerprint] : calls) {
    RepeatCheck check = check_repeat(config, streak, key, fingerprint);
    streak = check.streak;
    out.push_back(check.verdict);
  }
  if (last != nullptr) *last = streak;
  return out;
}

constexpr RepeatVerdict kAllow = RepeatVerdict::kAllow;
constexpr RepeatVerdict kDeny = RepeatVerdict::kDeny;
constexpr RepeatVerdict kHalt = RepeatVerdict::kHalt;

TEST(RepeatGuardTest, TheThirdIdenticalCallIsDeniedAndTheFifthHalts) {
  RepeatStreak streak;
  std::vector<std::pair<std::string, std::string>> same(6, {"Bash", "f1"});
  EXPECT_EQ(verdicts({3, 5}, same, &streak),
            (std::vector<RepeatVerdict>{kAllow, kAllow, kDeny, kDeny, kHalt, kHalt}));
  EXPECT_EQ(streak, (RepeatStreak{"Bash", "f1", 6}));
}

TEST(RepeatGuardTest, AnyOtherCallInBetweenStartsTheCountAgain) {
  // Another input of the same tool, then another tool with the same input.
  EXPECT_EQ(verdicts({3, 5}, {{"Bash", "f1"},
                              {"Bash", "f1"},
                              {"Bash", "f2"},
                              {"Bash", "f1"},
                              {"Bash", "f1"},
                              {"Read", "f1"},
                              {"Bash", "f1"},
                              {"Bash", "f1"},
                              {"Bash", "f1"}}),
            (std::vector<RepeatVerdict>{kAllow, kAllow, kAllow, kAllow, kAllow, kAllow, kAllow,
                                        kAllow, kDeny}));
  // A denied call changed for another one: the new call runs.
  RepeatStreak streak;
  verdicts({2, 4}, {{"Bash", "f1"}, {"Bash", "f1"}}, &streak);
  RepeatCheck other = check_repeat({2, 4}, streak, "Bash", "f2");
  EXPECT_EQ(other.verdict, kAllow);
  EXPECT_EQ(other.streak, (RepeatStreak{"Bash", "f2", 1}));
}

TEST(RepeatGuardTest, AThresholdOfZeroNeverTrips) {
  std::vector<std::pair<std::string, std::string>> same(50, {"Bash", "f1"});
  for (RepeatVerdict v : verdicts({0, 0}, same)) EXPECT_EQ(v, kAllow);
  EXPECT_FALSE((RepeatConfig{0, 0}.enabled()));
  // Deny only: refused for good, never a halt.
  std::vector<RepeatVerdict> deny_only = verdicts({3, 0}, same);
  EXPECT_EQ(deny_only[1], kAllow);
  EXPECT_EQ(deny_only[2], kDeny);
  EXPECT_EQ(deny_only.back(), kDeny);
  // Halt only: allowed until the halt.
  std::vector<RepeatVerdict> halt_only = verdicts({0, 4}, same);
  EXPECT_EQ(halt_only[2], kAllow);
  EXPECT_EQ(halt_only[3], kHalt);
}

TEST(RepeatGuardTest, AHaltThresholdAtOrBelowTheDenyThresholdHaltsFirst) {
  std::vector<std::pair<std::string, std::string>> same(4, {"Bash", "f1"});
  EXPECT_EQ(verdicts({3, 3}, same), (std::vector<RepeatVerdict>{kAllow, kAllow, kHalt, kHalt}));
  EXPECT_EQ(verdicts({4, 2}, same), (std::vector<RepeatVerdict>{kAllow, kHalt, kHalt, kHalt}));
}

}  // namespace
