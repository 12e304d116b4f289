// MemoryBoundaryLog, the in-process BoundaryLog: open calls and their pre-tool
// boundaries, what comes after a pre-tool boundary (and whether it changed files), and
// a bounded memory that never forgets a call still open.
#include <gtest/gtest.h>

#include "embed/memory_boundary_log.hpp"

namespace {

using namespace sandbox;
using namespace embed;
using namespace statekit;
using fsnap::Phase;

// A boundary of call (phase, outcome) over files whose tree is tree.
Boundary boundary(Phase phase, const std::string& call, const std::string& tree,
                  std::optional<bool> success = std::nullopt) {
  Boundary b;
  b.snapshot.metadata.phase = phase;
  b.snapshot.metadata.tool_call_id = call;
  b.snapshot.metadata.tool_name = call.empty() ? "" : "Tool";
  b.snapshot.metadata.outcome.success = success;
  fsnap::FilesystemSnapshot fs;
  fs.id = tree;
  fs.tree = tree;
  b.snapshot.resources.emplace("filesystem", ResourceSnapshot::of(fs));
  return b;
}

TEST(MemoryBoundaryLogTest, CallsOpenAndEnd) {
  MemoryBoundaryLog log;
  EXPECT_FALSE(log.pre_tool("a").has_value());
  log.remember(boundary(Phase::kPreTool, "a", "t0"));
  ASSERT_TRUE(log.pre_tool("a").has_value());
  EXPECT_FALSE(log.pre_tool("a")->ended);
  log.remember(boundary(Phase::kPostTool, "a", "t1", true));
  EXPECT_TRUE(log.pre_tool("a")->ended);
  EXPECT_EQ(log.pre_tool("a")->record.success, true) << "the pre-tool record learns the outcome";
  // A rollback's boundary ends a call too; one without an outcome does not.
  log.remember(boundary(Phase::kPreTool, "b", "t1"));
  log.remember(boundary(Phase::kCheckpoint, "b", "t1"));
  EXPECT_FALSE(log.pre_tool("b")->ended);
  log.remember(boundary(Phase::kCheckpoint, "b", "t1", false));
  EXPECT_TRUE(log.pre_tool("b")->ended);
  log.remember(boundary(Phase::kPreTool, "c", "t1"));
  log.forget("c");
  EXPECT_FALSE(log.pre_tool("c").has_value());
}

TEST(MemoryBoundaryLogTest, WhatCameAfterAPreToolBoundary) {
  MemoryBoundaryLog log;
  log.remember(boundary(Phase::kPreTool, "a", "t0"));
  log.remember(boundary(Phase::kPreTool, "b", "t0"));
  log.remember(boundary(Phase::kPostTool, "b", "t1", true));
  log.remember(boundary(Phase::kCheckpoint, "", "t1"));
  std::vector<BoundaryLog::LaterBoundary> later = log.since(*log.pre_tool("a"));
  ASSERT_EQ(later.size(), 3u);
  EXPECT_EQ(later[0].fact.call_id, "b");
  EXPECT_FALSE(later[0].fact.changed_files);
  EXPECT_TRUE(later[1].fact.changed_files) << "t0 -> t1";
  EXPECT_EQ(later[1].previous_trees.at("filesystem"), "t0");
  EXPECT_EQ(later[1].trees.at("filesystem"), "t1");
  EXPECT_FALSE(later[2].fact.changed_files);
  EXPECT_EQ(log.since(*log.pre_tool("b")).size(), 2u);
}

TEST(MemoryBoundaryLogTest, MemoryIsBoundedButOpenCallsStay) {
  MemoryBoundaryLog log(4);
  log.remember(boundary(Phase::kPreTool, "open", "t0"));
  for (int i = 0; i < 20; ++i) {
    std::string id = "c" + std::to_string(i);
    log.remember(boundary(Phase::kPreTool, id, "t" + std::to_string(i)));
    log.remember(boundary(Phase::kPostTool, id, "t" + std::to_string(i + 1), true));
  }
  EXPECT_TRUE(log.pre_tool("open").has_value()) << "an open call is never forgotten";
  EXPECT_EQ(log.since(*log.pre_tool("open")).size(), 40u) << "nor what came after it";
  EXPECT_FALSE(log.pre_tool("c0").has_value()) << "old ended calls go";
  EXPECT_TRUE(log.pre_tool("c19").has_value());
}

}  // namespace
