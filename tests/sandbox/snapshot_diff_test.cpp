// Session snapshots compared and merged (docs/conformance/STATE_MANAGEMENT.md): slices
// added, removed and modified by content (not by identity), and a merge in which the
// later snapshot's slices win.
#include <gtest/gtest.h>

#include "embed/agent_slices.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"

namespace {

using namespace sandbox;
using namespace embed;
using namespace statekit;

ToolInvoked call(int i) {
  return ToolInvoked{"c" + std::to_string(i), "Edit", "{}", true, "", i};
}

TEST(SnapshotDiffTest, SlicesAddedRemovedAndModifiedByContent) {
  embed::register_agent_slice_types();
  Session session;
  session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  session.seed<Plan>({Plan{"ship", "active", {}}});
  session.seed<VisibilityOverrides>({});
  session.dispatch(call(1));
  SessionSnapshot before = session.snapshot({}, true);
  session.dispatch(call(2));
  session.seed<Plan>({Plan{"ship", "done", {}}});
  session.seed<WorkspaceDigest>({WorkspaceDigest{}});
  SessionSnapshot after = session.snapshot({}, true);
  after.slices.erase(typeid(VisibilityOverrides));
  after.policies.erase(typeid(VisibilityOverrides));

  SnapshotDiff d = SessionSnapshot::diff(before, after);
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added.count(typeid(WorkspaceDigest)), 1u);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed.count(typeid(VisibilityOverrides)), 1u);
  ASSERT_EQ(d.modified.size(), 2u);
  EXPECT_EQ(d.modified.at(typeid(ToolInvoked)).first.size(), 1u);
  EXPECT_EQ(d.modified.at(typeid(ToolInvoked)).second.size(), 2u);
  EXPECT_EQ(Slice<Plan>(d.modified.at(typeid(Plan)).second)[0].status, "done");
  // Equal contents in other objects (as read back from the ledger) are no change.
  SessionSnapshot copy = SessionSnapshot::from_json(after.to_json());
  EXPECT_TRUE(SessionSnapshot::diff(after, copy).empty());
  EXPECT_TRUE(SessionSnapshot::diff(before, before).empty());
}

TEST(SnapshotDiffTest, AMergeKeepsTheLaterSnapshotsSlices) {
  embed::register_agent_slice_types();
  Session a;
  a.seed<Plan>({Plan{"from a", "active", {}}});
  a.seed<VisibilityOverrides>({VisibilityOverrides{}});
  Session b;
  b.seed<Plan>({Plan{"from b", "active", {}}});
  SessionSnapshot earlier = a.snapshot({}, true, {{"who", "a"}, {"only", "a"}});
  SessionSnapshot later = b.snapshot({SlicePolicy::kState}, false, {{"who", "b"}});
  SessionSnapshot merged = SessionSnapshot::merge(earlier, later);
  EXPECT_EQ(merged.slice<Plan>()[0].objective, "from b") << "the later one wins";
  EXPECT_EQ(merged.slice<VisibilityOverrides>().size(), 1u) << "what only the earlier has";
  EXPECT_EQ(merged.tags.at("who"), "b");
  EXPECT_EQ(merged.tags.at("only"), "a");
  EXPECT_EQ(merged.covered, std::set<SlicePolicy>{SlicePolicy::kState}) << "only what both cover";
  // Restoring the merge leaves slices of policies it does not cover alone.
  Session target;
  target.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  target.dispatch(call(7));
  target.rollback(merged, /*preserve_logs=*/false);
  EXPECT_EQ(target.all<ToolInvoked>().size(), 1u);
  EXPECT_EQ(target.latest<Plan>()->objective, "from b");
}

}  // namespace
