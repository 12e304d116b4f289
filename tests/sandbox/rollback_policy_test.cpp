// RollbackPolicy::decide, the one rollback decision: what becomes of a failed call
// given the configuration and the boundaries recorded after its pre-tool boundary.
#include <gtest/gtest.h>

#include "sandbox/rollback_policy.hpp"

namespace {

using sandbox::BoundaryFact;
using sandbox::RollbackDecision;
using sandbox::RollbackPolicy;
using Kind = RollbackDecision::Kind;
using fsnap::Phase;

BoundaryFact fact(Phase phase, const std::string& call, bool changed,
                  const std::string& tool = "Write") {
  return BoundaryFact{phase, call, call.empty() ? "" : tool, "c0ffee", changed};
}

TEST(RollbackPolicyTest, AFailureWithNothingAfterItIsRolledBack) {
  RollbackDecision d = RollbackPolicy{}.decide("Bash", "a", {});
  EXPECT_EQ(d.kind, Kind::kRollBack);
  EXPECT_TRUE(d.refused_by.empty());
  EXPECT_EQ(sandbox::to_string(d.kind), "rolled_back");
}

TEST(RollbackPolicyTest, TheConfigurationKeepsFailures) {
  RollbackPolicy off{false, {}};
  EXPECT_EQ(off.decide("Bash", "a", {}).kind, Kind::kKeep);
  RollbackPolicy keep_lint{true, {"Lint"}};
  RollbackDecision d = keep_lint.decide("Lint", "a", {fact(Phase::kPostTool, "b", true)});
  EXPECT_EQ(d.kind, Kind::kKeep) << "the configuration comes first";
  EXPECT_EQ(d.reason, "not rolled back by configuration");
  EXPECT_EQ(keep_lint.decide("Bash", "a", {}).kind, Kind::kRollBack);
}

TEST(RollbackPolicyTest, LaterChangesByOthersRefuseTheRollback) {
  RollbackPolicy policy;
  RollbackDecision d =
      policy.decide("Bash", "a",
                    {fact(Phase::kPreTool, "b", false), fact(Phase::kPostTool, "b", true, "Edit"),
                     fact(Phase::kCheckpoint, "", true)});
  EXPECT_EQ(d.kind, Kind::kRefuse);
  ASSERT_EQ(d.refused_by.size(), 2u);
  EXPECT_EQ(d.refused_by[0].call_id, "b");
  EXPECT_NE(d.reason.find("rollback refused"), std::string::npos);
  EXPECT_NE(d.reason.find("Edit b"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("outside any tool call"), std::string::npos) << d.reason;
  EXPECT_EQ(d.reason.find('\n'), std::string::npos);
}

TEST(RollbackPolicyTest, WhatARollbackWouldNotUndoDoesNotCount) {
  RollbackPolicy policy;
  // Another call that changed nothing; the call's own later boundaries; the rollback
  // of another call (phase checkpoint with its id): none of them are undone.
  EXPECT_EQ(policy
                .decide("Bash", "a",
                        {fact(Phase::kPostTool, "b", false), fact(Phase::kPostTool, "a", true),
                         fact(Phase::kCheckpoint, "c", true), fact(Phase::kManual, "", false)})
                .kind,
            Kind::kRollBack);
}

}  // namespace
