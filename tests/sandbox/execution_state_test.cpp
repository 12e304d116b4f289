// ExecutionState: one composite snapshot of the session and every resource, one seed
// for every id and random number, an injected clock, restores that either fully
// succeed or leave everything as it was (a host restore that fails half-way included),
// mismatched snapshots refused, composite JSON round trips field by field (an in-memory
// filesystem's snapshot restorable after one), and labels of any text, repeated.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "embed/agent_slices.hpp"
#include "embed/tool_runner.hpp"
#include "state_fixture.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox_test;

TEST(ExecutionStateTest, SeededRandomnessAndInjectedClock) {
  MemoryState a;
  MemoryState b;
  EXPECT_EQ(a.state.rng()(), b.state.rng()());
  EXPECT_EQ(a.state.snapshot().created_at, fsnap::TimePoint(std::chrono::seconds(1'800'000'000)));
}

// A resource whose restore fails on demand.
struct Fragile : fsnap::Snapshotable<BudgetSnapshot> {
  BudgetSnapshot value;
  bool fail = false;
  int restores_left = -1;  // how many restores succeed before it refuses (-1: all)
  BudgetSnapshot snapshot(std::string_view) override { return value; }
  void restore(const BudgetSnapshot& s) override {
    if (fail || restores_left == 0) throw std::runtime_error("fragile resource refuses");
    if (restores_left > 0) --restores_left;
    value = s;
  }
};

TEST(ExecutionStateTest, AFailedRestoreLeavesEverythingAsBefore) {
  auto fs = std::make_shared<fsnap::InMemoryFilesystem>();
  auto fragile = std::make_shared<Fragile>();
  ResourceRegistry r;
  r.put<fsnap::Filesystem>(fs, "filesystem");  // restored first
  r.put<Fragile>(fragile, "fragile");          // then this one fails
  ExecutionState state(make_session(), std::move(r));
  fs->write("a", "old");
  state.session().seed<Plan>({Plan{"old", "", {}}});
  fragile->value.tool_calls = 1;
  CompositeSnapshot snap = state.snapshot();

  fs->write("a", "new");
  state.session().dispatch(SetObjective{"new"});
  fragile->value.tool_calls = 2;
  fragile->fail = true;
  EXPECT_THROW(state.restore(snap), RestoreFailedError);
  EXPECT_EQ(fs->read("a"), "new") << "the filesystem was put back";
  EXPECT_EQ(state.session().latest<Plan>()->objective, "new");
  EXPECT_EQ(fragile->value.tool_calls, 2u);
  fragile->fail = false;
  state.restore(snap);
  EXPECT_EQ(fs->read("a"), "old");
  EXPECT_EQ(fragile->value.tool_calls, 1u);
}

// The restore is a saga: when a later part fails and putting an earlier one back fails
// too, the error says so (kCorrupt), naming what may be left — and the session, the
// last step, is not touched.
TEST(ExecutionStateTest, ARestoreThatCannotPutAPartBackSaysWhatIsLeft) {
  auto first = std::make_shared<Fragile>();
  struct OtherFragile : Fragile {};  // the registry holds one resource per type
  auto second = std::make_shared<OtherFragile>();
  ResourceRegistry r;
  r.put<Fragile>(first, "first");
  r.put<OtherFragile>(second, "second");
  ExecutionState state(make_session(), std::move(r));
  state.session().seed<Plan>({Plan{"old", "", {}}});
  first->value.tool_calls = 1;
  CompositeSnapshot snap = state.snapshot();
  first->value.tool_calls = 2;
  state.session().dispatch(SetObjective{"new"});
  first->restores_left = 1;  // restored, then cannot be put back
  second->fail = true;
  try {
    state.restore(snap);
    FAIL() << "the restore did not fail";
  } catch (const RestoreFailedError& e) {
    FAIL() << "not everything was put back, yet the error says so: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("cannot restore resource 'second'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("could not put back 'first'"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(first->value.tool_calls, 1u) << "restored, and left so";
  EXPECT_EQ(state.session().latest<Plan>()->objective, "new");
}

TEST(ExecutionStateTest, AHostRestoreThatFailsPartWayLeavesEverythingAsBefore) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws/locked");
  testing_support::write_file(dir / "ws/0.txt", "1\n");
  testing_support::write_file(dir / "ws/locked/a.txt", "1\n");
  HostState h(dir.path());
  ExecutionState& state = h.state;
  std::shared_ptr<BudgetTracker> budget = h.budget;
  state.session().seed<Plan>({Plan{"old", "", {}}});
  CompositeSnapshot snap = state.snapshot();

  // Both files change; then the directory of the second cannot be written: a restore
  // rewrites 0.txt first and fails on locked/a.txt.
  testing_support::write_file(dir / "ws/0.txt", "2\n");
  testing_support::write_file(dir / "ws/locked/a.txt", "2\n");
  state.session().dispatch(SetObjective{"new"});
  budget->consume(5, 5, 0);
  if (!testing_support::lock_directory(dir / "ws/locked")) {
    GTEST_SKIP() << "cannot lock a directory here";
  }
  testing_support::Manifest before = testing_support::take_manifest(dir / "ws");
  try {
    state.restore(snap);
    ADD_FAILURE() << "the restore did not fail";
  } catch (const RestoreFailedError& e) {
    EXPECT_NE(std::string(e.what()).find("put back"), std::string::npos) << e.what();
  }
  testing_support::unlock_directory(dir / "ws/locked");
  // As it promises: the state is as it was before the restore, files included.
  EXPECT_EQ(
      testing_support::describe_difference(before, testing_support::take_manifest(dir / "ws")), "");
  EXPECT_EQ(testing_support::read_file(dir / "ws/0.txt"), "2\n");
  EXPECT_EQ(state.session().latest<Plan>()->objective, "new");
  EXPECT_EQ(budget->current().input_tokens, 5u);
  // And once the directory can be written, the same restore works.
  state.restore(snap);
  EXPECT_EQ(testing_support::read_file(dir / "ws/locked/a.txt"), "1\n");
  EXPECT_EQ(state.session().latest<Plan>()->objective, "old");
}

TEST(ExecutionStateTest, MismatchedSnapshotsChangeNothing) {
  MemoryState a;
  MemoryState b;
  a.fs->write("x", "1");
  CompositeSnapshot snap = a.state.snapshot();
  ExecutionState bare(make_session(), ResourceRegistry{});
  EXPECT_THROW(bare.restore(snap), SnapshotMismatchError);
  // A snapshot of another kind of resource under the same name.
  auto other_fs = std::make_shared<BudgetTracker>();
  ResourceRegistry r;
  r.put<BudgetTracker>(other_fs, "filesystem");
  ExecutionState odd(make_session(), std::move(r));
  other_fs->consume(1, 1, 1);
  EXPECT_THROW(odd.restore(snap), SnapshotMismatchError);
  EXPECT_EQ(other_fs->current().input_tokens, 1u);
}

// A snapshot with every field of its metadata set, and a session with a slice.
SnapshotMetadata full_metadata() {
  SnapshotMetadata meta;
  meta.tag = "t-1";
  meta.label = "pre:call_1 (second try) — données/étape: 2";
  meta.phase = fsnap::Phase::kDenied;
  meta.tool_call_id = "call_1";
  meta.tool_name = "Edit";
  meta.run = "run-x";
  meta.move_tag = true;
  meta.outcome.input_summary = "edit a.txt";
  meta.outcome.success = false;
  meta.outcome.result_summary = "refused";
  meta.outcome.elapsed_ms = 12;
  meta.outcome.rollback = "kept";
  meta.outcome.rollback_reason = "configured";
  meta.outcome.rollback_kept = {{"a.txt", "another call changed it"}};
  meta.outcome.rollback_unrestored = {{"big.bin", "over the size limit"}};
  meta.outcome.agent_denied = true;
  meta.decision = "halt";
  policy::SafetyEvent event;
  event.type = policy::StopReason::kBudgetExceeded;
  event.decision = policy::Decision::kHalt;
  event.hook = "ExecutionContext";
  event.reason = "spent 2.5 of 2";
  event.limit = 2;
  event.value = 2.5;
  event.at = fsnap::TimePoint(std::chrono::seconds(1'800'000'000));
  event.node_id = "n-3";
  event.key = "Edit";
  meta.safety_event = event;
  meta.paths = std::vector<std::string>{"a.txt", "dir/b"};
  meta.parent_call_id = "call_0";
  meta.undoes = "call_9";
  meta.separate_outside_changes = true;
  return meta;
}

TEST(ExecutionStateTest, ACompositeSnapshotRoundTripsThroughJsonFieldByField) {
  MemoryState m;
  m.state.session().seed<Plan>({Plan{"objective", "active", {PlanStep{"s", true}}}});
  m.fs->write("a", "1");
  m.budget->consume(5, 5, 0);
  SnapshotMetadata meta = full_metadata();
  meta.tag.clear();  // an in-memory state has no store to hold a tag; the label is kept
  meta.move_tag = false;
  CompositeSnapshot snap = m.state.snapshot(meta);
  snap.record.decision = "halt";  // a record as a host workspace would have written
  snap.record.commit = std::string(40, 'a');
  snap.record.home_commit = std::string(40, 'b');
  CompositeSnapshot back = CompositeSnapshot::from_json(snap.to_json());
  EXPECT_EQ(back.id, snap.id);
  EXPECT_EQ(back.created_at, snap.created_at);
  EXPECT_EQ(back.metadata, snap.metadata) << "decision, safety event, paths, label...";
  EXPECT_EQ(back.metadata.safety_event->reason, "spent 2.5 of 2");
  EXPECT_EQ(back.record, snap.record);
  EXPECT_TRUE(back.session.equivalent(snap.session));
  EXPECT_EQ(back.session.tags, snap.session.tags);
  ASSERT_EQ(back.resources.size(), 2u);
  const auto* fs_back = back.resources.at("filesystem").get<fsnap::FilesystemSnapshot>();
  const auto* fs_snap = snap.resources.at("filesystem").get<fsnap::FilesystemSnapshot>();
  EXPECT_EQ(fs_back->id, fs_snap->id);
  EXPECT_EQ(fs_back->label, meta.label);
  EXPECT_EQ(*back.resources.at("budget").get<BudgetSnapshot>(), m.budget->current());
  EXPECT_EQ(back.to_json(), snap.to_json());
  // Every field of the metadata, set one at a time, survives.
  SnapshotMetadata every = full_metadata();
  CompositeSnapshot alone;
  alone.id = "x";
  alone.created_at = fsnap::TimePoint(std::chrono::seconds(1'800'000'000));
  alone.metadata = every;
  EXPECT_EQ(CompositeSnapshot::from_json(alone.to_json()).metadata, every);
}

TEST(ExecutionStateTest, AnInMemorySnapshotReadBackFromJsonRestoresTheFiles) {
  MemoryState m;
  m.fs->mkdir("dir/empty");
  m.fs->write("dir/a.txt", "one");
  m.fs->write("bin", std::string("\0\xff\x01 bytes", 9));
  m.fs->set_executable("bin", true);
  m.fs->symlink("link", "dir/a.txt");
  m.budget->consume(5, 5, 0);
  m.state.session().seed<Plan>({Plan{"before", "", {}}});
  std::string json = m.state.snapshot().to_json();

  // A new process, with the same kind of state, restores it from the JSON alone.
  MemoryState other;
  other.fs->write("dir/a.txt", "changed");
  other.fs->write("extra", "x");
  other.state.restore(CompositeSnapshot::from_json(json));
  EXPECT_EQ(other.fs->read("dir/a.txt"), "one");
  EXPECT_EQ(other.fs->read("bin"), std::string("\0\xff\x01 bytes", 9));
  EXPECT_TRUE(other.fs->stat("bin").executable);
  EXPECT_EQ(other.fs->readlink("link"), "dir/a.txt");
  EXPECT_TRUE(other.fs->exists("dir/empty"));
  EXPECT_FALSE(other.fs->exists("extra"));
  EXPECT_EQ(other.fs->snapshot("").id, m.fs->snapshot("").id) << "the very tree";
  EXPECT_EQ(other.budget->current().input_tokens, 5u);
  EXPECT_EQ(other.state.session().latest<Plan>()->objective, "before");

  // Entries that do not make the tree the snapshot's id names are refused, saying so.
  std::string forged = json;
  std::size_t at = forged.find("\"data_base64\":\"b25l\"");  // "one"
  ASSERT_NE(at, std::string::npos) << json;
  forged.replace(at, 20, "\"data_base64\":\"dHdv\"");  // "two"
  try {
    CompositeSnapshot::from_json(forged);
    FAIL() << "a forged tree was read";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not the one its id names"), std::string::npos)
        << e.what();
  }
}

TEST(ExecutionStateTest, AnyLabelIsKeptWithAHostWorkspaceAndMayRepeat) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws");
  HostState h(dir.path());
  const std::vector<std::string> labels = {"pre:toolu_1", "pre:toolu_1", "with spaces and / :",
                                           " padded ",    "étiquette ✓", "two\nlines\t\"quoted\""};
  std::vector<std::string> commits;
  for (const std::string& label : labels) {
    SnapshotMetadata meta;
    meta.label = label;
    CompositeSnapshot snap = h.state.snapshot(meta);
    const auto* fs_snap = snap.resources.at("filesystem").get<fsnap::FilesystemSnapshot>();
    EXPECT_EQ(fs_snap->label, label);
    EXPECT_EQ(snap.session.tags.at("label"), label);
    commits.push_back(fs_snap->commit);
  }
  // Read back from the store (another process): each checkpoint has its label, and no
  // tag ref was made for any.
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(dir / "store" / "repo.git", false);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(repo.read_checkpoint(commits[i]).meta.label, labels[i]) << i;
    EXPECT_EQ(repo.read_checkpoint(commits[i]).meta.tag, "");
  }
  testing_support::CommandResult refs =
      testing_support::run_command({"git", "--git-dir", (dir / "store" / "repo.git").string(),
                                    "for-each-ref", "refs/shadowbox/tags/"},
                                   dir.path());
  EXPECT_EQ(refs.out, "");
  // The Snapshotable interface of the specification: fs.snapshot(tag) with such a tag.
  EXPECT_EQ(h.host->snapshot("pre:toolu_2").label, "pre:toolu_2");
  EXPECT_EQ(h.host->snapshot("pre:toolu_2").label, "pre:toolu_2") << "again";
  // A tag is still a ref name, unique in the store (`snapshot --tag`).
  SnapshotMetadata tagged;
  tagged.tag = "pre:toolu_1";
  EXPECT_THROW(h.state.snapshot(tagged), fsnap::Error);
}

TEST(ExecutionStateTest, OneSeedReplaysEveryIdOfTheState) {
  // Two runs of the same calls from the same seed (and clock), and one from another.
  struct Replay {
    std::string session_id;
    std::vector<std::string> ids;  // composite, session snapshot and checkpoint ids
    std::uint64_t random = 0;
  };
  auto replay = [](std::uint64_t seed) {
    testing_support::TempDir dir;
    fs::create_directories(dir / "ws");
    auto clock =
        std::make_shared<fsnap::FixedClock>(fsnap::TimePoint(std::chrono::seconds(1'800'000'000)));
    fsnap::HostEnv env;
    env.clock = clock;
    auto host = std::make_shared<fsnap::HostFilesystem>(
        fsnap::Store::open(dir / "store", dir / "ws", true), fsnap::CaptureOptions{}, env);
    ResourceRegistry resources;
    resources.put<fsnap::Filesystem>(host, "filesystem");
    auto checkpoints = std::make_shared<CheckpointStore>(10);
    ExecutionState state(make_session(), std::move(resources), clock, seed, checkpoints);
    ToolRunner runner(state,
                      {{"write", Tool{nullptr,
                                      [](const ToolCall& call, ToolContext& ctx) {
                                        ctx.state.resources().get<fsnap::Filesystem>()->write(
                                            "f", call.params);
                                        return ToolResult{};
                                      }}}},
                      "prompt");
    Replay out;
    out.session_id = state.session().id();
    runner.execute({"call_1", "write", "one"});
    runner.execute({"call_2", "write", "two"});
    for (const ToolCheckpoint& c : checkpoints->list_checkpoints()) {
      out.ids.push_back(c.pre_snapshot.id);
      out.ids.push_back(c.pre_snapshot.session.id);
      out.ids.push_back(
          c.pre_snapshot.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->id);
      out.ids.push_back(c.post_snapshot->id);
      out.ids.push_back(
          c.post_snapshot->resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->id);
    }
    out.random = state.rng()();
    return out;
  };
  Replay a = replay(42);
  Replay b = replay(42);
  Replay c = replay(43);
  ASSERT_EQ(a.ids.size(), 10u);
  EXPECT_EQ(a.session_id, b.session_id);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.random, b.random);
  EXPECT_NE(a.session_id, c.session_id);
  for (std::size_t i = 0; i < a.ids.size(); ++i) EXPECT_NE(a.ids[i], c.ids[i]) << i;
  EXPECT_NE(a.random, c.random);
  // Unseeded, a state keeps the ids its parts were given.
  auto session = make_session();
  std::string id = session->id();
  ExecutionState unseeded(session, ResourceRegistry{});
  EXPECT_EQ(unseeded.session().id(), id);
}

TEST(ExecutionStateTest, CompositeJsonRoundTripWithAHostWorkspace) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws");
  testing_support::write_file(dir / "ws/file.txt", "v1");
  HostState h(dir.path());
  ExecutionState& state = h.state;
  std::shared_ptr<fsnap::HostFilesystem> host = h.host;
  std::shared_ptr<BudgetTracker> budget = h.budget;
  state.session().seed<Plan>({Plan{"persisted", "active", {PlanStep{"s", true}}}});
  budget->consume(10, 20, 0.5);
  SnapshotMetadata meta{{"t", fsnap::Phase::kPreTool, "toolu_1", "Edit", "run-x"}};
  CompositeSnapshot snap = state.snapshot(meta);

  // The host checkpoint carries the metadata, so plain git shows it.
  fsnap::Checkpoint c = host->repo().resolve("pre:toolu_1");
  EXPECT_EQ(c.meta.tool_name, "Edit");
  EXPECT_EQ(c.meta.run, "run-x");

  CompositeSnapshot back = CompositeSnapshot::from_json(snap.to_json());
  EXPECT_EQ(back.id, snap.id);
  EXPECT_EQ(back.metadata, snap.metadata);
  EXPECT_EQ(back.to_json(), snap.to_json());
  EXPECT_EQ(back.resources.at("filesystem").get<fsnap::FilesystemSnapshot>()->commit, c.commit);
  EXPECT_TRUE(back.session.equivalent(snap.session));

  testing_support::write_file(dir / "ws/file.txt", "v2");
  testing_support::write_file(dir / "ws/extra", "x");
  budget->consume(1, 1, 1);
  state.session().seed<Plan>({Plan{"later", "", {}}});
  state.restore(back);  // from JSON, as a new process would
  EXPECT_EQ(testing_support::read_file(dir / "ws/file.txt"), "v1");
  EXPECT_FALSE(fs::exists(dir / "ws/extra"));
  EXPECT_EQ(budget->current().input_tokens, 10u);
  EXPECT_EQ(state.session().latest<Plan>()->objective, "persisted");
}

// A fork goes on from a snapshot in parts of its own; the state forked from, and the
// fork, then change apart.
TEST(ExecutionStateTest, AForkStartsFromASnapshotAndGoesItsOwnWay) {
  MemoryState m;
  m.state.set_containment({.max_steps = 5});
  m.fs->write("a.txt", "at the fork");
  m.budget->consume(3, 3, 0);
  m.state.session().dispatch(SetObjective{"before"});
  m.state.containment()->admit(policy::NodeKind::kTool);
  m.state.record_containment();
  CompositeSnapshot at = m.state.snapshot();
  // The original goes on.
  m.fs->write("a.txt", "original, later");
  m.fs->write("b.txt", "only in the original");
  m.state.session().dispatch(SetObjective{"original, later"});

  MemoryState parts;  // new resources and a session with the same registrations
  std::unique_ptr<ExecutionState> fork =
      m.state.fork(at, {parts.state.session_ptr(), parts.registry(), std::uint64_t{7}});
  EXPECT_EQ(parts.fs->read("a.txt"), "at the fork");
  EXPECT_FALSE(parts.fs->exists("b.txt"));
  EXPECT_EQ(parts.budget->current().input_tokens, 3u);
  EXPECT_EQ(fork->session().latest<Plan>()->objective, "before");
  // Every slice as at the snapshot, LOG slices included: the containment count too.
  ASSERT_NE(fork->containment(), nullptr);
  EXPECT_EQ(fork->containment()->state().step_count, 1u);
  EXPECT_EQ(fork->containment()->config().max_steps, std::optional<std::size_t>(5));

  // From here on, each its own.
  parts.fs->write("a.txt", "the fork's");
  fork->session().dispatch(SetObjective{"the fork's"});
  EXPECT_EQ(m.fs->read("a.txt"), "original, later");
  EXPECT_EQ(m.state.session().latest<Plan>()->objective, "original, later");
  EXPECT_EQ(fork->session().latest<Plan>()->objective, "the fork's");
  // A snapshot of the fork restores in the fork.
  CompositeSnapshot forked = fork->snapshot();
  parts.fs->write("a.txt", "changed again");
  fork->restore(forked);
  EXPECT_EQ(parts.fs->read("a.txt"), "the fork's");

  // A fork shares nothing with the state it comes from.
  EXPECT_THROW(m.state.fork(at, {m.state.session_ptr(), MemoryState().registry(), {}}),
               fsnap::Error);
  MemoryState more;
  EXPECT_THROW(m.state.fork(at, {more.state.session_ptr(), m.registry(), {}}), fsnap::Error);
}

TEST(ExecutionStateTest, AHostWorkspaceIsNotForkedInProcess) {
  testing_support::TempDir dir;
  testing_support::write_file(dir / "ws" / "a.txt", "x");
  HostState h(dir.path());
  CompositeSnapshot at = h.state.snapshot();
  MemoryState parts;
  try {
    h.state.fork(at, {parts.state.session_ptr(), parts.registry(), {}});
    FAIL() << "a host workspace was forked";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("shadowbox rewind"), std::string::npos) << e.what();
  }
}

}  // namespace
