// The side effects of answering a tool boundary are data: what a failed or denied call
// leads to is checked here without performing anything (containment_hook_test and
// claude_code_hook_test check the same effects performed, through the hook).
#include <gtest/gtest.h>

#include "hooks/boundary_effects.hpp"

namespace {

using namespace hooks;

AgentEvent call_event(const std::string& name) {
  AgentEvent e;
  e.name = name;
  e.tool_name = "Bash";
  e.tool_use_id = "toolu_9";
  return e;
}

TEST(BoundaryEffects, ARolledBackFailureTellsTheAgentWhatCameBack) {
  sandbox::FailureResult failure;
  failure.decision.kind = sandbox::RollbackDecision::Kind::kRollBack;
  fsnap::RestoreReport report;
  fsnap::TreeChange change;
  change.kind = fsnap::TreeChange::Kind::kModified;
  change.path = "src/a.txt";
  report.changes.push_back(change);
  fsnap::Checkpoint safety;
  safety.id = "abc123";
  report.safety = safety;
  failure.step.restore = report;
  statekit::Effects effects = failure_effects(call_event("PostToolUseFailure"), failure);
  ASSERT_EQ(effects.size(), 2u);
  const TellAgent* tell = effects[0].as<TellAgent>();
  ASSERT_NE(tell, nullptr) << effects[0].describe();
  EXPECT_EQ(tell->event, "PostToolUseFailure");
  EXPECT_NE(tell->context.find("rolled back the workspace to before this failed Bash call "
                               "(toolu_9): reverted src/a.txt"),
            std::string::npos)
      << tell->context;
  EXPECT_NE(tell->context.find("shadowbox restore abc123"), std::string::npos);
  // The person running the agent is told too: what came back, and where what the call
  // left is.
  const TellUser* user = effects[1].as<TellUser>();
  ASSERT_NE(user, nullptr) << effects[1].describe();
  EXPECT_EQ(user->text,
            "shadowbox rolled back the failed Bash call toolu_9: reverted src/a.txt. What it left "
            "is checkpoint abc123 (shadowbox diff pre:toolu_9 failed:toolu_9; shadowbox restore "
            "failed:toolu_9 brings it back).");
  // A rollback with nothing to put back tells the person nothing.
  failure.step.restore->changes.clear();
  ASSERT_EQ(failure_effects(call_event("PostToolUseFailure"), failure).size(), 1u);
}

// A failed call that only deleted a file over capture.max_file_size (no tree holds it):
// the rollback put it back from the store's copy.
TEST(BoundaryEffects, ALargeFilePutBackCountsAsRolledBack) {
  sandbox::FailureResult failure;
  failure.decision.kind = sandbox::RollbackDecision::Kind::kRollBack;
  fsnap::RestoreReport report;
  fsnap::TreeChange change;
  change.kind = fsnap::TreeChange::Kind::kAdded;
  change.path = "data/model.bin";
  report.large_files.push_back(change);
  report.safety = fsnap::Checkpoint{};
  report.safety->id = "abc123";
  failure.step.restore = report;
  statekit::Effects effects = failure_effects(call_event("PostToolUseFailure"), failure);
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_NE(effects[0].as<TellAgent>()->context.find("rolled back the workspace to before this "
                                                     "failed Bash call (toolu_9): restored "
                                                     "data/model.bin"),
            std::string::npos)
      << effects[0].as<TellAgent>()->context;
}

TEST(BoundaryEffects, WhatARollbackCouldNotPutBackIsToldFirstToTheAgentAndThePerson) {
  sandbox::FailureResult failure;
  failure.decision.kind = sandbox::RollbackDecision::Kind::kRollBack;
  fsnap::RestoreReport report;
  fsnap::TreeChange change;
  change.kind = fsnap::TreeChange::Kind::kModified;
  change.path = "src/a.txt";
  report.changes.push_back(change);
  report.unrestored.push_back({"node_modules/big.bin", "it was written in place"});
  report.safety = fsnap::Checkpoint{};
  report.safety->id = "abc123";
  failure.step.restore = report;
  statekit::Effects effects = failure_effects(call_event("PostToolUseFailure"), failure);
  ASSERT_EQ(effects.size(), 2u);
  const std::string& context = effects[0].as<TellAgent>()->context;
  EXPECT_EQ(context.find("shadowbox could NOT roll back all of this failed Bash call (toolu_9)"),
            0u)
      << context;
  EXPECT_NE(context.find("node_modules/big.bin (it was written in place)"), std::string::npos);
  EXPECT_EQ(context.find("rolled back the workspace"), std::string::npos) << context;
  EXPECT_NE(context.find("Rolled back: reverted src/a.txt"), std::string::npos);
  EXPECT_NE(context.find("shadowbox restore abc123"), std::string::npos);
  const TellUser* user = effects[1].as<TellUser>();
  ASSERT_NE(user, nullptr) << effects[1].describe();
  EXPECT_EQ(user->text.find("shadowbox could not roll back all of the failed Bash call toolu_9: "
                            "NOT restored: node_modules/big.bin (it was written in place)."),
            0u)
      << user->text;
}

TEST(BoundaryEffects, ARefusedRollbackAlsoTellsTheUserAndAKeptFailureDoesNothing) {
  sandbox::FailureResult failure;
  failure.decision.kind = sandbox::RollbackDecision::Kind::kRefuse;
  failure.decision.reason = "a later call changed a.txt";
  statekit::Effects effects = failure_effects(call_event("PostToolUseFailure"), failure);
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_NE(effects[0].as<TellAgent>()->context.find("did NOT roll back"), std::string::npos);
  ASSERT_NE(effects[1].as<TellUser>(), nullptr) << effects[1].describe();
  EXPECT_EQ(effects[1].as<TellUser>()->text,
            "shadowbox did not roll back the failed Bash call toolu_9: a later call changed "
            "a.txt. Its changes are still in the workspace.");
  failure.decision.kind = sandbox::RollbackDecision::Kind::kKeep;
  EXPECT_TRUE(failure_effects(call_event("PostToolUseFailure"), failure).empty());
}

TEST(BoundaryEffects, ADenialThatStopsTheRunAsksTheSupervisorToo) {
  policy::SafetyEvent stop;
  stop.type = policy::StopReason::kStepLimitExceeded;
  stop.reason = "step limit reached";
  statekit::Effects effects = denial_effects(call_event("PreToolUse"), stop);
  ASSERT_EQ(effects.size(), 3u);
  const DenyCall* deny = effects[0].as<DenyCall>();
  ASSERT_NE(deny, nullptr);
  EXPECT_NE(deny->reason.find("The run is stopped (max_steps)"), std::string::npos) << deny->reason;
  EXPECT_NE(deny->stop_reason.find("shadowbox stopped the run"), std::string::npos);
  EXPECT_NE(effects[1].as<LogToRun>()->line.find("containment denied Bash call toolu_9"),
            std::string::npos);
  EXPECT_EQ(effects[2].as<RequestHalt>()->halt_reason, "max_steps");

  policy::SafetyEvent open_circuit;
  open_circuit.type = policy::StopReason::kCircuitOpen;
  open_circuit.reason = "circuit open for Bash";
  statekit::Effects one_tool = denial_effects(call_event("PreToolUse"), open_circuit);
  ASSERT_EQ(one_tool.size(), 2u) << "the run goes on: no halt";
  EXPECT_TRUE(one_tool[0].as<DenyCall>()->stop_reason.empty());
  EXPECT_EQ(one_tool[1].as<LogToRun>()->line.find("containment denied"), 0u);
}

}  // namespace
