// RollbackPolicy::decide, the one rollback decision: what becomes of a failed call
// given the configuration and what changed, window by window, since its pre-tool
// boundary.
#include <gtest/gtest.h>

#include "sandbox/rollback_policy.hpp"

namespace {

using sandbox::BoundaryFact;
using sandbox::ChangeWindow;
using sandbox::FailedCall;
using sandbox::OpenCall;
using sandbox::RollbackDecision;
using sandbox::RollbackPolicy;
using Kind = RollbackDecision::Kind;
using fsnap::Phase;
using Paths = std::map<std::string, std::set<std::string>>;

const FailedCall kBash{"Bash", "make", 2};

OpenCall call(const std::string& id, const std::string& tool = "Bash",
              std::optional<std::set<std::string>> paths = std::nullopt) {
  return OpenCall{id, tool, std::move(paths)};
}

// A window ended by the boundary (phase, id) of this run, with calls open in it.
ChangeWindow window(Phase phase, const std::string& id, std::set<std::string> changed,
                    std::vector<OpenCall> open) {
  ChangeWindow w;
  w.seen_at = BoundaryFact{phase, id, id.empty() ? "" : "Tool", "c0ffee", !changed.empty()};
  if (!changed.empty()) w.changed["workspace"] = std::move(changed);
  w.open = std::move(open);
  return w;
}

Paths differing(std::set<std::string> paths) {
  return {{"workspace", std::move(paths)}};
}

std::string kept_why(const RollbackDecision& d, const std::string& path) {
  for (const sandbox::KeptPath& k : d.kept) {
    if (k.path == path) return k.why;
  }
  return "(not kept)";
}

TEST(RollbackPolicyTest, AFailureThatChangedNoFileHasNothingToUndo) {
  RollbackDecision d = RollbackPolicy{}.decide(
      kBash, "a", {window(Phase::kPostTool, "a", {}, {call("a")})}, differing({}));
  EXPECT_EQ(d.kind, Kind::kUnchanged);
  EXPECT_EQ(sandbox::to_string(d.kind), "unchanged");
  EXPECT_TRUE(d.restore.empty());
}

TEST(RollbackPolicyTest, ChangesMadeWhileOnlyTheFailedCallRanAreAllPutBack) {
  RollbackDecision d = RollbackPolicy{}.decide(
      kBash, "a", {window(Phase::kPostTool, "a", {"d", "d/x", "y"}, {call("a")})},
      differing({"d", "d/x", "y"}));
  EXPECT_EQ(d.kind, Kind::kRollBack);
  EXPECT_TRUE(d.complete());
  EXPECT_EQ(d.restore, differing({"d", "d/x", "y"}));
  EXPECT_EQ(sandbox::to_string(d.kind), "rolled_back");
}

TEST(RollbackPolicyTest, TheConfigurationKeepsFailures) {
  RollbackDecision off = RollbackPolicy{false, {}, {}}.decide(kBash, "a", {}, differing({"x"}));
  EXPECT_EQ(off.kind, Kind::kKeep);
  EXPECT_EQ(off.reason, "not rolled back by configuration");
  RollbackPolicy keep_lint{true, {"Lint"}, {}};
  EXPECT_EQ(keep_lint.decide({"Lint", "", {}}, "a", {}, differing({"x"})).kind, Kind::kKeep);
  EXPECT_EQ(keep_lint.decide(kBash, "a", {}, differing({"x"})).kind, Kind::kRollBack);
}

TEST(RollbackPolicyTest, RulesKeepFailuresByCommandAndExitStatus) {
  RollbackPolicy policy;
  policy.keep_failures = {{"Bash", "npm test*", {1}}, {"", "make lint*", {}}};
  EXPECT_TRUE(policy.keeps({"Bash", "npm test -- --watch=false", 1}));
  EXPECT_FALSE(policy.keeps({"Bash", "npm test", 2})) << "another exit status";
  EXPECT_FALSE(policy.keeps({"Bash", "npm test", std::nullopt})) << "no exit status known";
  EXPECT_FALSE(policy.keeps({"Shell", "npm test", 1})) << "another tool";
  EXPECT_FALSE(policy.keeps({"Bash", "rm -rf node_modules; npm test", 1}));
  std::optional<std::string> lint = policy.keeps({"run_shell_command", "make lint", 7});
  ASSERT_TRUE(lint);
  EXPECT_NE(lint->find("rollback.keep_failures"), std::string::npos) << *lint;
  RollbackDecision d = policy.decide({"Bash", "npm test", 1}, "a", {}, differing({"out.log"}));
  EXPECT_EQ(d.kind, Kind::kKeep);
}

TEST(RollbackPolicyTest, AnEditSeenWhenAnotherCallBeganIsTheOpenCallsNotNobodys) {
  // pre a, a edits a.txt, pre b (Read): the change seen at b's pre-tool boundary was
  // made while only a was open.
  RollbackDecision d =
      RollbackPolicy{}.decide(kBash, "a",
                              {window(Phase::kPreTool, "b", {"a.txt"}, {call("a")}),
                               window(Phase::kPostTool, "b", {}, {call("a"), call("b", "Read")}),
                               window(Phase::kPostTool, "a", {}, {call("a")})},
                              differing({"a.txt"}));
  EXPECT_TRUE(d.complete()) << d.reason;
  EXPECT_EQ(d.restore, differing({"a.txt"}));
}

TEST(RollbackPolicyTest, WhatAnotherCallMayHaveChangedIsKeptByName) {
  // b (a shell command) ran beside a: what changed then may be either's.
  RollbackDecision d =
      RollbackPolicy{}.decide(kBash, "a",
                              {window(Phase::kPreTool, "b", {"mine.txt"}, {call("a")}),
                               window(Phase::kPostTool, "b", {"both.txt"}, {call("a"), call("b")})},
                              differing({"mine.txt", "both.txt"}));
  EXPECT_EQ(d.kind, Kind::kRollBack);
  EXPECT_FALSE(d.complete());
  EXPECT_EQ(d.restore, differing({"mine.txt"}));
  EXPECT_EQ(kept_why(d, "both.txt"), "changed while Bash b ran too");
  ASSERT_EQ(d.refused_by.size(), 1u);
  EXPECT_EQ(d.refused_by[0].call_id, "b");
  EXPECT_NE(d.reason.find("both.txt"), std::string::npos) << d.reason;
}

TEST(RollbackPolicyTest, ACallThatNamesItsPathsCanChangeOnlyThose) {
  // b is an Edit of b.txt beside a's shell command: a.txt is a's alone, b.txt b's.
  RollbackDecision beside = RollbackPolicy{}.decide(
      kBash, "a",
      {window(Phase::kPostTool, "b", {"a.txt", "b.txt"},
              {call("a"), call("b", "Edit", std::set<std::string>{"b.txt"})})},
      differing({"a.txt", "b.txt"}));
  EXPECT_EQ(beside.restore, differing({"a.txt"}));
  EXPECT_EQ(kept_why(beside, "b.txt"), "changed while Edit b ran too");

  // The failed call is an Edit of src/x.c: a file a person wrote meanwhile is not its.
  ChangeWindow edit_window =
      window(Phase::kPostTool, "a", {"src", "src/x.c", "notes.txt", "out", "out/y"},
             {call("a", "Edit", std::set<std::string>{"src/x.c", "out/y/z.c"})});
  edit_window.directories["workspace"] = {"src"};
  RollbackDecision edit =
      RollbackPolicy{}.decide({"Edit", "", {}}, "a", {edit_window},
                              differing({"src", "src/x.c", "notes.txt", "out", "out/y"}));
  EXPECT_EQ(edit.restore, differing({"src", "src/x.c"})) << "a directory made for the file";
  EXPECT_EQ(kept_why(edit, "notes.txt"), "changed outside any tool call");
  EXPECT_EQ(kept_why(edit, "out/y"), "changed outside any tool call")
      << "a file where the call's directory would be is not the call's";
}

TEST(RollbackPolicyTest, AnotherRunOrARestoreIsSomeoneElseAndAloneRefuses) {
  ChangeWindow other = window(Phase::kPostTool, "x", {"shared.txt"}, {});
  other.seen_at.run = "B";
  RollbackDecision d =
      RollbackPolicy{}.decide(kBash, "a",
                              {other, window(Phase::kCheckpoint, "", {"restored.txt"}, {call("a")}),
                               window(Phase::kPostTool, "a", {}, {call("a")})},
                              differing({"shared.txt", "restored.txt"}));
  EXPECT_EQ(d.kind, Kind::kRefuse);
  EXPECT_TRUE(d.restore.empty());
  EXPECT_EQ(kept_why(d, "shared.txt"), "changed by run B (Tool x)");
  EXPECT_EQ(kept_why(d, "restored.txt"),
            "changed by an edit made outside any tool call (checkpoint c0ffee)");
  EXPECT_NE(d.reason.find("rollback refused"), std::string::npos);
  EXPECT_EQ(d.reason.find('\n'), std::string::npos);
  ASSERT_EQ(d.refused_by.size(), 2u);
}

TEST(RollbackPolicyTest, ADirectoryIsTheCallsOnlyWhenEverythingBelowItIs) {
  RollbackDecision d =
      RollbackPolicy{}.decide(kBash, "a",
                              {window(Phase::kPreTool, "b", {"d", "d/mine"}, {call("a")}),
                               window(Phase::kPostTool, "b", {"d/theirs"}, {call("a"), call("b")})},
                              differing({"d", "d/mine", "d/theirs"}));
  EXPECT_EQ(d.restore, differing({"d/mine"}));
  EXPECT_NE(kept_why(d, "d").find("holds d/theirs"), std::string::npos) << kept_why(d, "d");
}

TEST(RollbackPolicyTest, ChangesUndoneSinceDoNotCount) {
  // b changed b.txt and put it back: nothing of b's is left for a rollback to undo.
  RollbackDecision d =
      RollbackPolicy{}.decide(kBash, "a",
                              {window(Phase::kPostTool, "b", {"b.txt"}, {call("a"), call("b")}),
                               window(Phase::kPostTool, "a", {"a.txt"}, {call("a")})},
                              differing({"a.txt"}));
  EXPECT_TRUE(d.complete());
  EXPECT_TRUE(d.refused_by.empty());
}

TEST(RollbackPolicyTest, AResourceThatCannotNamePathsIsOneWhole) {
  ChangeWindow nested = window(Phase::kPostTool, "b", {}, {call("a"), call("b")});
  nested.changed["memory"] = {""};
  RollbackDecision d = RollbackPolicy{}.decide(kBash, "a", {nested}, {{"memory", {""}}});
  EXPECT_EQ(d.kind, Kind::kRefuse);
  ASSERT_EQ(d.kept.size(), 1u);
  EXPECT_EQ(d.kept[0].resource, "memory");
  EXPECT_NE(d.reason.find("memory"), std::string::npos) << d.reason;
}

}  // namespace
