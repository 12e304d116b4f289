// Session snapshots compared and merged (docs/conformance/STATE_MANAGEMENT.md): slices
// added, removed and modified by content (not by identity), and a merge in which the
// later snapshot's slices win; snapshots and restores of chosen slice types.
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

// Selective snapshots: only the chosen types are captured, and restoring them touches
// no other slice; a chosen type the session lacked is restored as absent.
TEST(SelectiveSnapshotTest, ASnapshotOfChosenTypesRestoresOnlyThoseAndLeavesTheRest) {
  embed::register_agent_slice_types();
  Session session;
  session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  session.seed<Plan>({Plan{"ship", "active", {}}});
  session.seed<VisibilityOverrides>({VisibilityOverrides{}});
  session.dispatch(call(1));  // a LOG slice
  SessionSnapshot partial = session.snapshot_of(
      SliceSelection::of<Plan, ToolInvoked, WorkspaceDigest>(), {{"tag", "plan-checkpoint"}});
  EXPECT_EQ(partial.slices.size(), 2u) << "Plan and the calls; no digest yet";
  EXPECT_EQ(partial.slices.count(typeid(VisibilityOverrides)), 0u);
  EXPECT_EQ(partial.tags.at("tag"), "plan-checkpoint");
  EXPECT_EQ(SessionSnapshot::from_json(partial.to_json()).selection.include,
            partial.selection.include)
      << "the selection survives the JSON round trip";

  session.seed<Plan>({Plan{"ship", "done", {}}});
  session.dispatch(call(2));
  session.seed<VisibilityOverrides>({VisibilityOverrides{}, VisibilityOverrides{}});
  session.seed<WorkspaceDigest>({WorkspaceDigest{}});

  // Only Plan back: the calls, the digest and the overrides stay as they are.
  session.restore(partial, SliceSelection::of<Plan>());
  EXPECT_EQ(session.latest<Plan>()->status, "active");
  EXPECT_EQ(session.all<ToolInvoked>().size(), 2u);
  EXPECT_EQ(session.all<WorkspaceDigest>().size(), 1u);
  EXPECT_EQ(session.all<VisibilityOverrides>().size(), 2u);

  // Everything the snapshot selected: the LOG slice too, and the digest it lacked goes.
  session.restore(partial);
  EXPECT_EQ(session.all<ToolInvoked>().size(), 1u);
  EXPECT_TRUE(session.all<WorkspaceDigest>().empty());
  EXPECT_EQ(session.all<VisibilityOverrides>().size(), 2u) << "not selected: left alone";

  // A rollback to a selective snapshot leaves the unselected types alone too.
  session.rollback(session.snapshot_of(SliceSelection::all_but<VisibilityOverrides>()));
  EXPECT_EQ(session.all<VisibilityOverrides>().size(), 2u);
}

TEST(SelectiveSnapshotTest, MergedPartialSnapshotsRestoreWhatEitherHeld) {
  embed::register_agent_slice_types();
  Session session;
  session.seed<Plan>({Plan{"a", "active", {}}});
  session.seed<WorkspaceDigest>({WorkspaceDigest{}});
  SessionSnapshot plan = session.snapshot_of(SliceSelection::of<Plan>());
  SessionSnapshot digest = session.snapshot_of(SliceSelection::of<WorkspaceDigest>());
  session.seed<Plan>({});
  session.seed<WorkspaceDigest>({});
  session.seed<VisibilityOverrides>({VisibilityOverrides{}});
  session.restore(SessionSnapshot::merge(plan, digest));
  EXPECT_EQ(session.all<Plan>().size(), 1u);
  EXPECT_EQ(session.all<WorkspaceDigest>().size(), 1u);
  EXPECT_EQ(session.all<VisibilityOverrides>().size(), 1u) << "neither selected it";
}

}  // namespace
