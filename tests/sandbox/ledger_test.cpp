// The composite ledger: records of every tool call written with the checkpoint commits
// as git notes, read back by a fresh reader (and by plain git), the session rebuilt at
// any checkpoint, restore to a tool boundary from the ledger alone (as a new process
// does), gc that keeps records with their checkpoints, and a latest-state lookup that
// does not read the run's history.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "embed/agent_slices.hpp"
#include "embed/checkpoint_store.hpp"
#include "embed/tool_runner.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/home_preservation.hpp"
#include "runs/ledger_run.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox;
using namespace runs;
using namespace embed;
using namespace statekit;

struct SetObjective {
  std::string objective;
};

std::shared_ptr<Session> make_session() {
  register_agent_slice_types();
  auto session = std::make_shared<Session>();
  session->register_reducer<Plan, SetObjective>([](const Slice<Plan>& s, const SetObjective& e) {
    Plan p = s.latest() ? *s.latest() : Plan{};
    p.objective = e.objective;
    return Slice<Plan>::of(p);
  });
  return session;
}

// A host workspace with an execution state whose checkpoints go to the ledger.
class LedgerTest : public ::testing::Test {
 protected:
  LedgerTest() {
    fs::create_directories(ws_);
    testing_support::write_file(ws_ / "file.txt", "original");
    store_ = std::make_unique<fsnap::Store>(fsnap::Store::open(temp_ / "store", ws_, true));
    host_ = std::make_shared<fsnap::HostFilesystem>(*store_, fsnap::CaptureOptions{});
    checkpoints_ = std::make_shared<CheckpointStore>(100);
    state_ = make_state(host_, checkpoints_);
    state_->session().seed<Plan>({Plan{"start", "active", {}}});
  }

  static std::unique_ptr<ExecutionState> make_state(std::shared_ptr<fsnap::HostFilesystem> host,
                                                    std::shared_ptr<CheckpointStore> store) {
    ResourceRegistry r;
    r.put<fsnap::Filesystem>(host, "filesystem");
    return std::make_unique<ExecutionState>(make_session(), std::move(r),
                                            std::make_shared<fsnap::SystemClock>(), 1, store);
  }

  // Tool "step" writes file.txt and <call>.txt, sets the objective; "fail" does the
  // same, then fails.
  std::map<std::string, Tool> tools() {
    auto body = [](const ToolCall& call, ToolContext& ctx, bool ok) {
      auto fs = ctx.state.resources().get<fsnap::Filesystem>();
      fs->write("file.txt", "after " + call.id);
      fs->write(call.id + ".txt", call.id);
      ctx.state.session().dispatch(SetObjective{"after " + call.id});
      return ToolResult{ok, ok ? "wrote " + call.id : "exit 1", ""};
    };
    return {{"step",
             Tool{nullptr, [body](const ToolCall& c, ToolContext& x) { return body(c, x, true); }}},
            {"fail", Tool{nullptr, [body](const ToolCall& c, ToolContext& x) {
                            return body(c, x, false);
                          }}}};
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  std::unique_ptr<fsnap::Store> store_;
  std::shared_ptr<fsnap::HostFilesystem> host_;
  std::shared_ptr<CheckpointStore> checkpoints_;
  std::unique_ptr<ExecutionState> state_;
};

TEST_F(LedgerTest, EveryToolCallIsRecordedAndReadBackByAFreshReader) {
  ToolRunner runner(*state_, tools(), "prompt");
  runner.execute({"call_a", "step", "{\"n\":1}"});
  runner.execute({"call_b", "fail", "{\"n\":2}"});
  runner.execute({"call_c", "step", "{\"n\":3}"});

  Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
  std::vector<LedgerRecord> records = fresh.records("default");
  std::vector<std::string> shape;
  for (const LedgerRecord& r : records) {
    shape.push_back(std::string(fsnap::to_string(r.phase)) + " " + r.tool_call_id + " " +
                    (r.success.value_or(false) ? "ok" : "failed"));
  }
  // Every checkpoint has its record, the safety checkpoint of call_b's rollback too:
  // the workspace as call_b left it, attributed to call_b.
  EXPECT_EQ(shape, (std::vector<std::string>{"pre_tool call_a ok", "post_tool call_a ok",
                                             "pre_tool call_b failed", "safety call_b failed",
                                             "checkpoint call_b failed", "pre_tool call_c ok",
                                             "post_tool call_c ok"}));
  EXPECT_EQ(records[3].tool_name, "fail");
  // Both records of call_b say it was rolled back; the records of other calls say nothing.
  EXPECT_EQ(records[2].rollback, "rolled_back");
  EXPECT_EQ(records[4].rollback, "rolled_back");
  EXPECT_EQ(records[4].rollback_reason, "");
  EXPECT_EQ(records[3].rollback, "");
  EXPECT_EQ(records[1].rollback, "");
  EXPECT_EQ(fresh.resolve("failed:call_b").commit, records[3].commit);
  EXPECT_EQ(fresh.resolve("post:call_b").commit, records[3].commit);
  EXPECT_EQ(fresh.resolve("post:call_a").commit, records[1].commit);
  EXPECT_EQ(records[2].result_summary, "exit 1");
  EXPECT_EQ(records[2].input_summary, "{\"n\":2}");
  EXPECT_TRUE(records[2].elapsed_ms.has_value());
  EXPECT_EQ(records[1].tool_name, "step");

  // The session at each checkpoint: STATE as it was, LOG as it had grown.
  EXPECT_EQ(fresh.session(records[2]).slice<Plan>()[0].objective, "after call_a");
  EXPECT_EQ(fresh.session(records[3]).slice<Plan>()[0].objective, "after call_b")
      << "the safety checkpoint keeps the failed state";
  EXPECT_EQ(fresh.session(records[4]).slice<Plan>()[0].objective, "after call_a") << "rolled back";
  EXPECT_EQ(fresh.session(records[4]).slice<ToolInvoked>().size(), 2u);
  std::optional<LedgerRecord> latest = fresh.latest("default");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->phase, fsnap::Phase::kPostTool);
  EXPECT_EQ(fresh.session(*latest).slice<ToolInvoked>().size(), 3u);
  EXPECT_EQ(fresh.session(*latest).slice<Plan>()[0].objective, "after call_c");

  // Plain git shows the records.
  testing_support::CommandResult git =
      testing_support::run_command({"git", "--git-dir", store_->repo_dir().string(), "log",
                                    "--notes=shadowbox", "refs/shadowbox/runs/default"});
  ASSERT_EQ(git.exit_code, 0) << git.err;
  EXPECT_NE(git.out.find("Notes (shadowbox):"), std::string::npos);
  EXPECT_NE(git.out.find("\"tool_call_id\": \"call_b\""), std::string::npos) << git.out;
  EXPECT_NE(git.out.find("\"result_summary\": \"exit 1\""), std::string::npos);
}

TEST_F(LedgerTest, RestoreToAToolBoundaryFromTheLedgerAlone) {
  ToolRunner runner(*state_, tools(), "prompt");
  for (const char* id : {"call_a", "call_b", "call_c"}) runner.execute({id, "step", "{}"});

  // A new process: the run's state is rebuilt from the ledger's newest record.
  LedgerRun fresh(fsnap::Store::open(temp_ / "store", ws_, false), {});
  fresh.state().session().register_reducer<Plan, SetObjective>(
      [](const Slice<Plan>& s, const SetObjective& e) {
        Plan p = s.latest() ? *s.latest() : Plan{};
        p.objective = e.objective;
        return Slice<Plan>::of(p);
      });
  fsnap::Checkpoint pre_b = fresh.repo()->resolve("pre:call_b");
  StepResult result =
      fresh.transactions().restore(fresh.log().boundary_at(pre_b), "back to before call_b");
  EXPECT_EQ(testing_support::read_file(ws_ / "file.txt"), "after call_a");
  EXPECT_TRUE(fs::exists(ws_ / "call_a.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "call_b.txt"));
  EXPECT_FALSE(fs::exists(ws_ / "call_c.txt"));
  ASSERT_TRUE(result.restore.has_value());
  ASSERT_TRUE(result.restore->safety.has_value()) << "a safety checkpoint came first";
  EXPECT_EQ(fresh.state().session().latest<Plan>()->objective, "after call_a");
  EXPECT_EQ(fresh.state().session().all<ToolInvoked>().size(), 3u) << "LOG keeps everything";
  // The result is recorded, session and all, so the next process starts from it.
  std::optional<LedgerRecord> latest = fresh.ledger().latest("default");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->result_summary, "back to before call_b");
  EXPECT_EQ(fresh.ledger().session(*latest).slice<Plan>()[0].objective, "after call_a");
  // The safety checkpoint has a record too: the state it keeps can be restored whole.
  std::optional<LedgerRecord> safety = fresh.ledger().read(*result.restore->safety);
  ASSERT_TRUE(safety.has_value());
  EXPECT_EQ(fresh.ledger().session(*safety).slice<Plan>()[0].objective, "after call_c");
}

TEST_F(LedgerTest, CheckpointsAreFoundByTagTimeAndSliceAndHaveALineage) {
  ToolRunner runner(*state_, tools(), "prompt");
  runner.execute({"call_a", "step", "{}"});
  runner.execute({"call_b", "step", "{}"});
  SnapshotMetadata tagged;
  tagged.tag = "release-1";
  state_->snapshot(tagged);
  Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
  std::vector<fsnap::Checkpoint> chain = fresh.repo().log("default", 0);  // newest first
  ASSERT_EQ(chain.size(), 5u);
  auto ids = [](const std::vector<fsnap::Checkpoint>& cs) {
    std::vector<std::string> out;
    for (const fsnap::Checkpoint& c : cs) out.push_back(c.id);
    return out;
  };
  Ledger::SnapshotQuery by_tag;
  by_tag.tag_pattern = "release-*";
  EXPECT_EQ(ids(fresh.find("", by_tag)), ids({chain[0]}));
  // The log of calls exists from the first call's end on.
  Ledger::SnapshotQuery by_slice;
  by_slice.contains_slice = "tool_invoked";
  EXPECT_EQ(ids(fresh.find("default", by_slice)), ids({chain[0], chain[1], chain[2], chain[3]}));
  Ledger::SnapshotQuery by_time;
  by_time.created_after = chain[3].created_at;
  by_time.created_before = chain[0].created_at;
  EXPECT_EQ(ids(fresh.find("default", by_time)), ids({chain[1], chain[2]}));
  EXPECT_TRUE(fresh.find("no-such-run", {}).empty());
  // Lineage: the run up to a checkpoint, oldest first.
  EXPECT_EQ(ids(fresh.lineage(chain[2])), ids({chain[4], chain[3], chain[2]}));
  fsnap::Checkpoint elsewhere = chain[2];
  elsewhere.meta.run = "other";
  EXPECT_THROW(fresh.lineage(elsewhere), Error);
}

TEST_F(LedgerTest, GcMovesRecordsWithTheirCheckpoints) {
  ToolRunner runner(*state_, tools(), "prompt");
  for (int i = 0; i < 4; ++i) runner.execute({"call_" + std::to_string(i), "step", "{}"});
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_->repo_dir(), false);
  {
    fsnap::StoreLock lock = store_->lock();
    repo.collect_garbage({.keep_last = 3, .prune_grace = std::chrono::seconds(0)},
                         std::chrono::system_clock::now());
  }
  Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
  std::vector<LedgerRecord> records = fresh.records("default");
  ASSERT_EQ(records.size(), 3u) << "every kept checkpoint keeps its record";
  EXPECT_EQ(records.back().tool_call_id, "call_3");
  EXPECT_EQ(records.back().phase, fsnap::Phase::kPostTool);
  // Records now sit on the rewritten commits, and their sessions are all there, though
  // unreachable objects went at once.
  for (const fsnap::Checkpoint& c : repo.log("default", 0)) {
    ASSERT_TRUE(fresh.read(c).has_value()) << c.commit;
    EXPECT_EQ(fresh.read(c)->checkpoint_id, c.id);
    EXPECT_EQ(fresh.session(*fresh.read(c)).slice<Plan>()[0].objective.substr(0, 6), "after ");
  }
  // gc started the notes' history afresh; the session chain keeps the sessions of the
  // kept records, and only those, oldest first (a session that did not change from one
  // checkpoint to the next is committed once).
  testing_support::CommandResult sessions =
      testing_support::run_command({"git", "--git-dir", store_->repo_dir().string(), "log",
                                    "--format=%T %s", "refs/shadowbox/sessions/default"});
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  std::string expected;
  std::string previous;
  for (const LedgerRecord& r : records) {
    if (r.session_tree == previous) continue;
    previous = r.session_tree;
    expected = r.session_tree + " session kept by gc\n" + expected;
  }
  EXPECT_EQ(sessions.out, expected);
  testing_support::CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", store_->repo_dir().string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

TEST_F(LedgerTest, AGcStoppedAtAnyStepLeavesEveryCheckpointWithItsRecord) {
  ToolRunner runner(*state_, tools(), "prompt");
  for (int i = 0; i < 4; ++i) runner.execute({"call_" + std::to_string(i), "step", "{}"});
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_->repo_dir(), false);
  auto every_checkpoint_has_its_record = [&](const std::string& when) {
    Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
    for (const fsnap::Checkpoint& c : repo.log("default", 0)) {
      std::optional<LedgerRecord> record = fresh.read(c);
      ASSERT_TRUE(record.has_value()) << when << ": " << c.commit;
      EXPECT_EQ(record->checkpoint_id, c.id) << when;
      EXPECT_EQ(record->commit, c.commit) << when;
    }
  };
  // gc stopped as a crash would stop it, after each of its steps in turn.
  struct Stopped {};
  for (const char* step : {"commits rewritten", "records copied", "runs moved"}) {
    fsnap::StoreLock lock = store_->lock();
    EXPECT_THROW(repo.collect_garbage({.keep_last = 3, .prune_grace = std::chrono::seconds(0)},
                                      std::chrono::system_clock::now(), {},
                                      [&](std::string_view done) {
                                        if (done == step) throw Stopped{};
                                      }),
                 Stopped);
    every_checkpoint_has_its_record(std::string("stopped after ") + step);
  }
  {
    fsnap::StoreLock lock = store_->lock();
    repo.collect_garbage({.keep_last = 3, .prune_grace = std::chrono::seconds(0)},
                         std::chrono::system_clock::now());
  }
  every_checkpoint_has_its_record("after a whole gc");
  EXPECT_EQ(repo.log("default", 0).size(), 3u);
  testing_support::CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", store_->repo_dir().string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

TEST_F(LedgerTest, ARecordStaysSmallWhateverTheRunsLength) {
  // Each record names its session tree: the 100th call's record is the size of the
  // 5th's, though the LOG slice it points to holds every call so far.
  ToolRunner runner(*state_, tools(), "prompt");
  std::map<int, std::size_t> note_size;
  for (int i = 1; i <= 100; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "call_%03d", i);
    runner.execute({id, "step", "{}"});
    if (i == 5 || i == 100) {
      fsnap::Checkpoint post = host_->repo().resolve(std::string("post:") + id);
      note_size[i] = host_->repo().note(post.commit)->size();
    }
  }
  EXPECT_LE(note_size[100], note_size[5] + 8) << note_size[5] << " -> " << note_size[100];
  Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
  EXPECT_EQ(fresh.session(*fresh.latest("default")).slice<ToolInvoked>().size(), 100u);
}

TEST_F(LedgerTest, ARunRecordedInTheFormerFormatGoesOn) {
  // A record of format v1 holds its session inline; the next step starts from it and
  // records the session as a tree.
  state_->session().seed<ToolInvoked>({ToolInvoked{"old_1", "Bash", "{}", true, "ok", 3},
                                       ToolInvoked{"old_2", "Edit", "{}", false, "no", 4}});
  std::string inline_session = state_->session().snapshot({}, true).to_json();
  host_->checkpoint({.phase = fsnap::Phase::kPostTool, .tool_call_id = "old_2"},
                    [&](const fsnap::Checkpoint& c) {
                      LedgerRecord r = LedgerRecord::for_checkpoint(c, "", {});
                      r.session_json = inline_session;
                      std::string note = r.to_json();
                      note.replace(note.find("ledger.v2"), 9, "ledger.v1");
                      return std::vector<fsnap::Note>{{c.commit, note}};
                    });
  LedgerRun run(fsnap::Store::open(temp_ / "store", ws_, false), {});
  run.transactions().begin({"new_1", "Read", "{}"});
  run.transactions().succeed("new_1", "read");
  std::optional<LedgerRecord> latest = run.ledger().latest("default");
  ASSERT_TRUE(latest.has_value());
  EXPECT_FALSE(latest->session_tree.empty());
  std::vector<ToolInvoked> log = run.ledger().session(*latest).slice<ToolInvoked>().to_vector();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].tool_call_id, "old_1");
  EXPECT_EQ(log[1].result_summary, "no");
  EXPECT_EQ(log[2].tool_call_id, "new_1");
  EXPECT_EQ(run.ledger().session(*latest).slice<Plan>()[0].objective, "start");
}

TEST_F(LedgerTest, TheFailedStateOfACallRolledBackInTheFormerFormatIsFound) {
  // Before safety checkpoints named their call: pre-tool, a safety checkpoint of no
  // call, then the checkpoint that ends the call, its record without a rollback.
  auto record = [](std::optional<bool> success) {
    return [success](const fsnap::Checkpoint& c) {
      LedgerRecord r = LedgerRecord::for_checkpoint(c, "", {});
      r.success = success;
      r.result_summary = success ? "exit 1" : "";
      return std::vector<fsnap::Note>{r.note()};
    };
  };
  fsnap::Checkpoint pre = host_->checkpoint(
      {.phase = fsnap::Phase::kPreTool, .tool_call_id = "old_1", .tool_name = "Bash"},
      record(std::nullopt));
  testing_support::write_file(ws_ / "file.txt", "as old_1 left it");
  fsnap::RestoreReport report = host_->restore_checkpoint(pre, {});
  ASSERT_TRUE(report.safety.has_value());
  host_->checkpoint(
      {.phase = fsnap::Phase::kCheckpoint, .tool_call_id = "old_1", .tool_name = "Bash"},
      record(false));
  Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
  EXPECT_EQ(fresh.resolve("failed:old_1").commit, report.safety->commit);
}

TEST_F(LedgerTest, LatestStateDoesNotReadTheRunsHistory) {
  // 200 checkpoints with records; then the oldest record is made unreadable. The
  // latest state is still found (only the newest note is read), while reading every
  // record fails on the damaged one.
  constexpr int kCheckpoints = 200;
  SessionSnapshot session = state_->session().snapshot({}, true);
  std::string first_commit;
  std::string session_json = session.to_json();
  for (int i = 0; i < kCheckpoints; ++i) {
    fsnap::Checkpoint c = host_->checkpoint(
        {.phase = fsnap::Phase::kCheckpoint, .tool_call_id = "c" + std::to_string(i)},
        [&](const fsnap::Checkpoint& checkpoint) {
          // Records of format v1, with the session inline.
          LedgerRecord r = LedgerRecord::for_checkpoint(checkpoint, "", {});
          r.session_json = session_json;
          r.result_summary = std::to_string(i);
          return std::vector<fsnap::Note>{r.note()};
        });
    if (i == 0) first_commit = c.commit;
  }
  {
    fsnap::StoreLock lock = store_->lock();
    fsnap::ShadowRepo::open(store_->repo_dir(), false)
        .write_notes({{first_commit, "damaged"}}, std::chrono::system_clock::now());
  }
  Ledger fresh = Ledger::of(fsnap::Store::open(temp_ / "store", ws_, false));
  std::optional<LedgerRecord> latest = fresh.latest("default");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->result_summary, std::to_string(kCheckpoints - 1));
  try {
    fresh.records("default");
    FAIL() << "a damaged record was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }
}

}  // namespace

TEST_F(LedgerTest, EachRecordNamesTheAgentsHomeAsItWasAtItsBoundary) {
  LedgerRun run(fsnap::Store::open(temp_ / "store", ws_, false), {.run = "r"});
  fs::path home = temp_ / "home";
  HomePreserver preserver(run.store(), run.repo(), "r", home, {".claude/projects"}, {});
  auto home_of = [&](const std::string& ref) {
    return run.ledger().read(run.ledger().resolve(ref))->home_commit;
  };
  // No preserved HOME yet: the record names none.
  run.transactions().begin({"c0", "Read", "{}"});
  EXPECT_EQ(home_of("pre:c0"), "");
  testing_support::write_file(home / ".claude/projects/p/s.jsonl", "{\"n\":1}\n");
  preserver.preserve_now();
  std::string first = *run.repo()->ref_target(fsnap::layout::home_ref("r"));
  run.transactions().begin({"c1", "Read", "{}"});
  testing_support::write_file(home / ".claude/projects/p/s.jsonl", "{\"n\":1}\n{\"n\":2}\n");
  preserver.preserve_now();
  std::string second = *run.repo()->ref_target(fsnap::layout::home_ref("r"));
  ASSERT_NE(first, second);
  run.transactions().succeed("c1", "read");
  EXPECT_EQ(home_of("pre:c1"), first);
  EXPECT_EQ(home_of("post:c1"), second);
  // Read back from the note, as a later process reads it.
  EXPECT_EQ(*run.repo()->commit_tree(second), *preserved_home(*run.repo(), "r"));
}

TEST(LedgerRecordTest, AHomeThatIsNoCommitIdIsACorruptRecord) {
  LedgerRecord r;
  r.run = "r";
  r.home_commit = std::string(40, 'a');
  EXPECT_EQ(LedgerRecord::from_json(r.to_json()).home_commit, r.home_commit);
  std::string bad = r.to_json();
  bad.replace(bad.find(r.home_commit), 40, "../../etc/passwd");
  try {
    LedgerRecord::from_json(bad);
    FAIL() << "a record naming no commit was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  }
}
