// ToolTransactions, the transaction core, on both kinds of BoundaryLog: steps of two
// processes on one ledger start from the newest record, a step needs an open call,
// discard leaves no outcome, every step keeps the run's figures (CallTally) and runs the
// step hook, and equal seeds and clocks give equal ids and commits.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "embed/agent_slices.hpp"
#include "embed/memory_boundary_log.hpp"
#include "embed/tool_runner.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/in_memory_filesystem.hpp"
#include "runs/ledger_run.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/tool_transactions.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace sandbox;
using namespace runs;
using namespace embed;
using namespace statekit;

class LedgerTransactionsTest : public ::testing::Test {
 protected:
  LedgerTransactionsTest() {
    register_agent_slice_types();  // the session holds a Plan
    fs::create_directories(ws_);
    testing_support::write_file(ws_ / "a.txt", "a\n");
    fsnap::Store::open(store_, ws_, true);
  }
  std::unique_ptr<LedgerRun> open_run() const {
    return std::make_unique<LedgerRun>(fsnap::Store::open(store_, ws_, false), LedgerRunOptions{});
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(LedgerTransactionsTest, EachStepStartsFromTheRunsNewestRecord) {
  // Two processes (two LedgerRuns) drive calls of one run, interleaved.
  std::unique_ptr<LedgerRun> one = open_run();
  std::unique_ptr<LedgerRun> two = open_run();
  one->transactions().begin({"call_1", "Read", "{}"});
  two->transactions().begin({"call_2", "Read", "{}"});
  one->transactions().succeed("call_1", "read one");
  two->transactions().succeed("call_2", "read two");
  std::optional<LedgerRecord> latest = one->ledger().latest("default");
  ASSERT_TRUE(latest.has_value());
  Slice<ToolInvoked> log = one->ledger().session(*latest).slice<ToolInvoked>();
  ASSERT_EQ(log.size(), 2u) << "no step overwrote the other's log entry";
  EXPECT_EQ(log[0].tool_call_id, "call_1");
  EXPECT_EQ(log[1].tool_call_id, "call_2");
  // The first process's state learns of the second's call at its next step.
  one->transactions().checkpoint({.phase = fsnap::Phase::kManual});
  EXPECT_EQ(one->state().session().all<ToolInvoked>().size(), 2u);
}

TEST_F(LedgerTransactionsTest, StepsOfACallNeedItOpen) {
  std::unique_ptr<LedgerRun> run = open_run();
  ToolTransactions& tx = run->transactions();
  auto code_of = [](const std::function<void()>& step) {
    try {
      step();
    } catch (const Error& e) {
      return e.code();
    }
    ADD_FAILURE() << "the step did not fail";
    return ErrorCode::kIo;
  };
  EXPECT_EQ(code_of([&] { tx.succeed("nope", ""); }), ErrorCode::kNotFound);
  EXPECT_EQ(code_of([&] { tx.fail("nope", ""); }), ErrorCode::kNotFound);
  EXPECT_EQ(code_of([&] { tx.begin({"", "Bash", ""}); }), ErrorCode::kInvalidArgument);
  tx.begin({"call_1", "Bash", "{}"});
  tx.succeed("call_1", "ok");
  EXPECT_EQ(code_of([&] { tx.succeed("call_1", "again"); }), ErrorCode::kConflict);
  EXPECT_EQ(code_of([&] { tx.fail("call_1", "late"); }), ErrorCode::kConflict);
  // A failed step leaves the run as it was: its newest record is still call_1's end.
  EXPECT_EQ(run->ledger().latest("default")->phase, fsnap::Phase::kPostTool);
}

TEST_F(LedgerTransactionsTest, OpenCallsAreFoundAmongTheNewestBoundariesOrInAll) {
  std::unique_ptr<LedgerRun> run = open_run();
  ToolTransactions& tx = run->transactions();
  tx.begin({"old", "Bash", "{}"});
  tx.begin({"done", "Bash", "{}"});
  tx.succeed("done", "ok");
  for (int i = 0; i < 3; ++i) tx.checkpoint({"", fsnap::Phase::kCheckpoint, "", "", "default"});
  tx.begin({"new", "Bash", "{}"});
  EXPECT_EQ(run->log().open_calls(), (std::vector<std::string>{"old", "new"}));
  EXPECT_EQ(run->log().recent_open_calls(0), (std::vector<std::string>{"old", "new"}));
  // The newest two boundaries: new's pre-tool one and a checkpoint.
  EXPECT_EQ(run->log().recent_open_calls(2), (std::vector<std::string>{"new"}));
  // old ends: its end is among the newest two, its start is not — only new is open.
  tx.succeed("old", "ok");
  EXPECT_EQ(run->log().recent_open_calls(2), (std::vector<std::string>{"new"}));
  EXPECT_EQ(run->log().open_calls(), (std::vector<std::string>{"new"}));
}

TEST_F(LedgerTransactionsTest, WhetherACallEndedIsWhatItsPreToolBoundarySays) {
  std::unique_ptr<LedgerRun> run = open_run();
  ToolTransactions& tx = run->transactions();
  EXPECT_EQ(run->log().call_ended("never"), std::nullopt) << "no pre-tool boundary";
  tx.begin({"open", "Bash", "{}"});
  tx.begin({"done", "Bash", "{}"});
  tx.succeed("done", "ok");
  // Further back than the first window looked at (8 boundaries).
  for (int i = 0; i < 10; ++i) tx.checkpoint({"", fsnap::Phase::kCheckpoint, "", "", "default"});
  for (const char* id : {"never", "open", "done"}) {
    std::optional<Boundary> pre = run->log().pre_tool(id);
    std::optional<bool> ended = run->log().call_ended(id);
    ASSERT_EQ(ended.has_value(), pre.has_value()) << id;
    if (pre) {
      EXPECT_EQ(*ended, pre->ended) << id;
    }
  }
  EXPECT_EQ(run->log().call_ended("open"), std::optional<bool>(false));
  EXPECT_EQ(run->log().call_ended("done"), std::optional<bool>(true));
  // Another process ends the open call: this one's log sees it at once.
  open_run()->transactions().succeed("open", "ok");
  EXPECT_EQ(run->log().call_ended("open"), std::optional<bool>(true));
}

TEST_F(LedgerTransactionsTest, ARolledBackCallEndsInACheckpointOfThePreToolFiles) {
  std::unique_ptr<LedgerRun> run = open_run();
  StepResult pre = run->transactions().begin({"call_1", "Bash", "{\"command\":\"x\"}"});
  testing_support::write_file(ws_ / "a.txt", "broken\n");
  testing_support::write_file(ws_ / "junk.txt", "junk\n");
  FailureResult failure = run->transactions().fail("call_1", "exit 1");
  EXPECT_EQ(failure.decision.kind, RollbackDecision::Kind::kRollBack);
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
  ASSERT_TRUE(failure.step.restore.has_value());
  EXPECT_EQ(failure.step.restore->changes.size(), 2u);
  fsnap::Checkpoint end = run->repo()->read_checkpoint(failure.step.boundary.record.commit);
  EXPECT_EQ(end.meta.phase, fsnap::Phase::kCheckpoint);
  EXPECT_EQ(end.tree, run->repo()->read_checkpoint(pre.boundary.record.commit).tree);
  // The pre-tool record learned the outcome in the same step.
  std::optional<LedgerRecord> pre_record =
      run->ledger().read(run->repo()->read_checkpoint(pre.boundary.record.commit));
  ASSERT_TRUE(pre_record.has_value());
  EXPECT_EQ(pre_record->success, false);
  EXPECT_EQ(pre_record->result_summary, "exit 1");
}

TEST_F(LedgerTransactionsTest, TheEndOfACallAndThePreToolOutcomeAreOneNotesCommit) {
  std::unique_ptr<LedgerRun> run = open_run();
  auto notes_commits = [&] {
    testing_support::CommandResult r =
        testing_support::run_command({"git", "--git-dir", (store_ / "repo.git").string(),
                                      "rev-list", "--count", "refs/notes/shadowbox"},
                                     temp_.path());
    return std::stoi(r.out);
  };
  StepResult pre = run->transactions().begin({"call_1", "Edit", "{}"});
  int before = notes_commits();
  testing_support::write_file(ws_ / "a.txt", "edited\n");
  run->transactions().succeed("call_1", "edited a.txt");
  // Each notes commit rewrites the notes tree's root: the call's end writes one.
  EXPECT_EQ(notes_commits(), before + 1);
  std::optional<LedgerRecord> pre_record =
      run->ledger().read(run->repo()->read_checkpoint(pre.boundary.record.commit));
  ASSERT_TRUE(pre_record.has_value());
  EXPECT_EQ(pre_record->success, true);
  EXPECT_EQ(pre_record->result_summary, "edited a.txt");
}

TEST_F(LedgerTransactionsTest, EveryProcessKeepsTheRunsFiguresWithItsBoundaries) {
  // Two processes (hook processes of one run) take turns, under a step limit of 3.
  auto open = [&] {
    std::unique_ptr<LedgerRun> run = open_run();
    run->state().set_containment({.max_steps = 3});
    return run;
  };
  std::unique_ptr<LedgerRun> one = open();
  std::unique_ptr<LedgerRun> two = open();
  one->transactions().begin({"c1", "Read", "{}"});
  two->transactions().succeed("c1", "read");
  two->transactions().begin({"c2", "Bash", "{}"});
  testing_support::write_file(ws_ / "junk.txt", "junk\n");
  EXPECT_EQ(one->transactions().fail("c2", "exit 1").decision.kind,
            RollbackDecision::Kind::kRollBack);
  // The agent's own permissions refuse c3 after shadowbox admitted it: it never ran.
  one->transactions().begin({"c3", "Bash", "{}"});
  StepResult denied = two->transactions().agent_denied("c3", "needs approval");
  EXPECT_TRUE(denied.boundary.record.agent_denied);
  EXPECT_EQ(denied.boundary.record.success, false);
  EXPECT_EQ(denied.boundary.record.result_summary, "denied by the agent: needs approval");
  EXPECT_THROW(one->transactions().succeed("c3", "late"), Error) << "it has ended";
  std::optional<LedgerRecord> pre =
      two->ledger().read(two->repo()->read_checkpoint(two->log().pre_tool("c3")->record.commit));
  EXPECT_TRUE(pre->agent_denied) << "the pre-tool record says so too";
  // c3 gave its step back, so c4 is the third; c5 is refused.
  EXPECT_EQ(one->transactions().begin({"c4", "Edit", "{}"}).decision, policy::Decision::kAllow);
  one->transactions().succeed("c4", "edited");
  EXPECT_EQ(two->transactions().begin({"c5", "Bash", "{}"}).decision, policy::Decision::kHalt);
  // c6 ran with no pre-tool boundary (its hook was lost): a step all the same.
  one->transactions().end_unbegun({"c6", "Bash", "{}"}, false, "exit 2");

  std::optional<LedgerRecord> latest = two->ledger().latest("default");
  SessionSnapshot session = two->ledger().session(*latest);
  RunStats figures = run_stats(session);
  EXPECT_EQ(figures.steps, 4u) << "c1, c2, c4, c6";
  EXPECT_EQ(figures.failed, 2u) << "c2, c6";
  EXPECT_EQ(figures.rolled_back, 1u) << "c2";
  EXPECT_EQ(figures.refused, 1u) << "c5";
  EXPECT_EQ(figures.agent_denied, 1u) << "c3";
  EXPECT_EQ(figures.calls, 6u);
  EXPECT_EQ(session.slice<ToolInvoked>().size(), 4u) << "c3 and c5 were not invoked";
  std::optional<policy::ContainmentState> counted = containment_state(session);
  ASSERT_TRUE(counted);
  EXPECT_EQ(counted->step_count, figures.steps) << "the limit counts what the figures show";
}

TEST(MemoryTransactionsTest, TheStepHookRunsInsideEveryStepThatRecordsABoundary) {
  auto fs = std::make_shared<fsnap::InMemoryFilesystem>();
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(fs, "filesystem");
  ExecutionState state(std::make_shared<Session>(), std::move(resources));
  MemoryBoundaryLog log;
  ToolTransactions tx(state, log, RollbackPolicy{});
  int hooked = 0;
  tx.set_step_hook([&] {
    ++hooked;
    state.session().seed<PromptExecuted>({PromptExecuted{"spend", std::to_string(hooked)}});
  });
  tx.begin({"c1", "Bash", "{}"});
  StepResult end = tx.succeed("c1", "ok");
  EXPECT_EQ(hooked, 2);
  // What the hook changed is in the boundary the step recorded.
  EXPECT_EQ(end.boundary.snapshot.session.slice<PromptExecuted>().latest()->output, "2");
  tx.checkpoint({.phase = fsnap::Phase::kManual});
  EXPECT_EQ(hooked, 3);
  tx.set_step_hook(nullptr);
  tx.checkpoint({.phase = fsnap::Phase::kManual});
  EXPECT_EQ(hooked, 3);
}

TEST_F(LedgerTransactionsTest, ARollbackNamesWhatItCouldNotPutBackInTheRecordThatEndsTheCall) {
  // Files over 1 KiB are kept as hard links (as on ext4): one written in place is lost.
  auto links = std::make_shared<fsnap::CopyOperations>(*fsnap::CopyOperations::system());
  links->clone = [](int, int) { return EOPNOTSUPP; };
  LedgerRunOptions options;
  options.capture.max_file_size = 1024;
  options.env.copies = links;
  testing_support::write_file(ws_ / "deleted.bin", std::string(4096, 'd'));
  testing_support::write_file(ws_ / "written.bin", std::string(4096, 'w'));
  timespec an_hour_ago[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (ws_ / "written.bin").c_str(), an_hour_ago, 0), 0);
  LedgerRun run(fsnap::Store::open(store_, ws_, false), options);
  run.transactions().begin({"call_1", "Bash", "{\"command\":\"rm; dd\"}"});
  fs::remove(ws_ / "deleted.bin");
  testing_support::write_file(ws_ / "written.bin", std::string(4096, 'X'));  // in place

  FailureResult failure = run.transactions().fail("call_1", "exit 1");
  EXPECT_EQ(failure.decision.kind, RollbackDecision::Kind::kRollBack);
  EXPECT_EQ(testing_support::read_file(ws_ / "deleted.bin"), std::string(4096, 'd'));
  ASSERT_TRUE(failure.step.restore.has_value());
  ASSERT_EQ(failure.step.restore->large_files.size(), 1u);
  EXPECT_EQ(failure.step.restore->large_files[0].path, "deleted.bin");
  std::vector<fsnap::UnrestoredPath> unrestored = failure.step.restore->unrestored;
  ASSERT_EQ(unrestored.size(), 1u);
  EXPECT_EQ(unrestored[0].path, "written.bin");
  // The record of the rollback names it, as a later process reads it.
  const std::vector<std::pair<std::string, std::string>> named = {
      {unrestored[0].path, unrestored[0].why}};
  EXPECT_EQ(failure.step.boundary.record.rollback_unrestored, named);
  fsnap::Checkpoint end = run.repo()->read_checkpoint(failure.step.boundary.record.commit);
  std::optional<LedgerRecord> read = open_run()->ledger().read(end);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->rollback_unrestored, named);
  EXPECT_NE(run.repo()->note(end.commit)->find("\"unrestored\""), std::string::npos);
}

TEST(MemoryTransactionsTest, DiscardPutsStateBackAndRecordsNoOutcome) {
  register_agent_slice_types();  // the session holds a Plan
  auto fs = std::make_shared<fsnap::InMemoryFilesystem>();
  fs->write("a", "1");
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(fs, "filesystem");
  ExecutionState state(std::make_shared<Session>(), std::move(resources));
  state.session().seed<Plan>({Plan{"before", "", {}}});
  MemoryBoundaryLog log;
  ToolTransactions tx(state, log, RollbackPolicy{});
  tx.begin({"call_1", "Edit", "{}"});
  fs->write("a", "2");
  state.session().seed<Plan>({Plan{"during", "", {}}});
  tx.discard("call_1");
  EXPECT_EQ(fs->read("a"), "1");
  EXPECT_EQ(state.session().latest<Plan>()->objective, "before");
  EXPECT_EQ(state.session().all<ToolInvoked>().size(), 0u) << "nothing logged";
  EXPECT_FALSE(log.pre_tool("call_1").has_value()) << "the call is forgotten";
  EXPECT_THROW(tx.succeed("call_1", ""), Error);
}

TEST(MemoryTransactionsTest, ASubscriberThatThrowsCannotBreakAToolCall) {
  auto fs = std::make_shared<fsnap::InMemoryFilesystem>();
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(fs, "filesystem");
  ExecutionState state(std::make_shared<Session>(), std::move(resources));
  MemoryBoundaryLog log;
  ToolTransactions tx(state, log, RollbackPolicy{});
  int seen = 0;
  Subscription s = tx.events().tools.subscribe([&](const RunEvents::ToolCallEvent&) {
    ++seen;
    throw std::runtime_error("a subscriber's bug");
  });
  EXPECT_NO_THROW(tx.begin({"call_1", "Edit", "{}"}));
  EXPECT_NO_THROW(tx.succeed("call_1", "done"));
  EXPECT_TRUE(log.open_calls().empty()) << "the call was left open";
  EXPECT_NO_THROW(tx.begin({"call_2", "Edit", "{}"}));
  fs->write("b", "2");
  EXPECT_NO_THROW(tx.fail("call_2", "exit 1"));
  EXPECT_FALSE(fs->exists("b"));
  EXPECT_TRUE(log.open_calls().empty());
  EXPECT_EQ(seen, 4);
}

TEST_F(LedgerTransactionsTest, ARefusedRollbackPutsBackNoStateSlice) {
  std::unique_ptr<LedgerRun> run = open_run();
  ToolTransactions& tx = run->transactions();
  tx.begin({"call_a", "Bash", "{}"});
  tx.begin({"call_b", "Bash", "{}"});
  fsnap::CheckpointMeta note;
  note.phase = fsnap::Phase::kManual;
  tx.checkpoint(note, [](Session& s) { s.seed<Plan>({Plan{"changed while both ran", "", {}}}); });
  testing_support::write_file(ws_ / "b.txt", "b or a\n");
  tx.succeed("call_b", "ok");
  FailureResult failure = tx.fail("call_a", "exit 1");
  EXPECT_EQ(failure.decision.kind, RollbackDecision::Kind::kRefuse);
  EXPECT_TRUE(fs::exists(ws_ / "b.txt"));
  ASSERT_TRUE(run->state().session().latest<Plan>());
  EXPECT_EQ(run->state().session().latest<Plan>()->objective, "changed while both ran")
      << "the session disagrees with the refusal";
}

TEST_F(LedgerTransactionsTest, RestorePathsPutsBackThoseFilesAndNoSessionSlice) {
  std::unique_ptr<LedgerRun> run = open_run();
  ToolTransactions& tx = run->transactions();
  testing_support::write_file(ws_ / "b.txt", "b\n");
  StepResult before = tx.checkpoint({.phase = fsnap::Phase::kManual}, [](Session& s) {
    s.seed<Plan>({Plan{"the plan before", "", {}}});
  });
  testing_support::write_file(ws_ / "a.txt", "a changed\n");
  testing_support::write_file(ws_ / "b.txt", "b changed\n");
  tx.checkpoint({.phase = fsnap::Phase::kManual}, [](Session& s) {
    s.seed<Plan>({Plan{"the plan now", "", {}}});
  });

  StepResult restored = tx.restore_paths(before.boundary, {"a.txt"}, "restored a.txt");
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  EXPECT_EQ(testing_support::read_file(ws_ / "b.txt"), "b changed\n") << "not named: kept";
  ASSERT_TRUE(run->state().session().latest<Plan>());
  EXPECT_EQ(run->state().session().latest<Plan>()->objective, "the plan now")
      << "a restore of paths leaves the session as it is";
  ASSERT_TRUE(restored.restore);
  ASSERT_TRUE(restored.restore->safety);
  ASSERT_EQ(restored.restore->changes.size(), 1u);
  EXPECT_EQ(restored.restore->changes[0].path, "a.txt");
  std::optional<LedgerRecord> record = run->ledger().latest("default");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->result_summary, "restored a.txt");
  EXPECT_EQ(run->ledger().session(*record).slice<Plan>().size(), 1u);
  EXPECT_EQ(run->ledger().session(*record).slice<Plan>()[0].objective, "the plan now");
}

TEST(MemoryTransactionsTest, AFailedCallThatChangedNoFileStillPutsItsStateBack) {
  register_agent_slice_types();  // the session holds a Plan
  auto host_dir = std::make_shared<testing_support::TempDir>();
  fs::create_directories(host_dir->path() / "ws");
  auto host = std::make_shared<fsnap::HostFilesystem>(
      fsnap::Store::open(host_dir->path() / "store", host_dir->path() / "ws", true),
      fsnap::CaptureOptions{});
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(host, "filesystem");
  ExecutionState state(std::make_shared<Session>(), std::move(resources));
  state.session().seed<Plan>({Plan{"before", "", {}}});
  MemoryBoundaryLog log;
  ToolTransactions tx(state, log, RollbackPolicy{});
  tx.begin({"call_1", "Plan", "{}"});
  state.session().seed<Plan>({Plan{"during", "", {}}});
  std::size_t checkpoints = host->repo().log("default", 0).size();
  FailureResult failure = tx.fail("call_1", "exit 1");
  EXPECT_EQ(failure.decision.kind, RollbackDecision::Kind::kUnchanged);
  EXPECT_EQ(state.session().latest<Plan>()->objective, "before");
  EXPECT_EQ(host->repo().log("default", 0).size(), checkpoints + 1)
      << "no safety checkpoint: only the boundary that ends the call";
}

TEST(MemoryTransactionsTest, AnUndoInProcessChangesFilesOnlyAndCountsNoStep) {
  register_agent_slice_types();  // the session holds a Plan
  auto host_dir = std::make_shared<testing_support::TempDir>();
  fs::path ws = host_dir->path() / "ws";
  testing_support::write_file(ws / "a.txt", "a\n");
  auto host = std::make_shared<fsnap::HostFilesystem>(
      fsnap::Store::open(host_dir->path() / "store", ws, true), fsnap::CaptureOptions{});
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(host, "filesystem");
  ExecutionState state(std::make_shared<Session>(), std::move(resources));
  state.set_containment({.max_steps = 10});
  MemoryBoundaryLog log;
  ToolTransactions tx(state, log, RollbackPolicy{});
  tx.begin({"c1", "Write", "{}", std::vector<std::string>{"a.txt"}});
  testing_support::write_file(ws / "a.txt", "a by c1\n");
  tx.succeed("c1", "ok");
  tx.begin({"c2", "Bash", "{}"});
  testing_support::write_file(ws / "b.txt", "b\n");
  state.session().seed<Plan>({Plan{"after c2", "", {}}});
  tx.succeed("c2", "ok");
  std::size_t steps = state.containment()->state().step_count;

  UndoResult undone = tx.undo("c1");
  EXPECT_EQ(undone.outcome, UndoResult::Outcome::kUndone);
  EXPECT_EQ(undone.undo_call_id, "undo-c1");
  EXPECT_EQ(undone.paths, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(testing_support::read_file(ws / "a.txt"), "a\n");
  EXPECT_EQ(testing_support::read_file(ws / "b.txt"), "b\n");
  EXPECT_EQ(state.session().latest<Plan>()->objective, "after c2") << "the session is left";
  EXPECT_EQ(state.session().all<ToolInvoked>().size(), 2u) << "an undo is no tool call";
  EXPECT_EQ(state.containment()->state().step_count, steps) << "nor a step";
  ASSERT_TRUE(undone.end.has_value());
  EXPECT_EQ(undone.end->record.undoes, "c1");
  EXPECT_TRUE(log.open_calls().empty());

  EXPECT_EQ(tx.undo("undo-c1").outcome, UndoResult::Outcome::kUndone);
  EXPECT_EQ(testing_support::read_file(ws / "a.txt"), "a by c1\n");
}

// Runs two calls in a fresh workspace with the given seed, on a fixed clock; returns
// the ids and commits they produced.
std::vector<std::string> ids_of_a_run(std::uint64_t seed) {
  testing_support::TempDir dir;
  fs::create_directories(dir / "ws");
  testing_support::write_file(dir / "ws/a.txt", "a\n");
  auto clock =
      std::make_shared<fsnap::FixedClock>(fsnap::TimePoint(std::chrono::seconds(1'800'000'000)));
  auto ids = std::make_shared<fsnap::IdSource>(seed);
  auto host = std::make_shared<fsnap::HostFilesystem>(
      fsnap::Store::open(dir / "store", dir / "ws", true), fsnap::CaptureOptions{},
      fsnap::HostEnv{nullptr, clock, ids});
  ResourceRegistry resources;
  resources.put<fsnap::Filesystem>(host, "filesystem");
  ExecutionState state(std::make_shared<Session>(clock, ids), std::move(resources), clock, seed);
  std::map<std::string, Tool> tools = {
      {"Write", Tool{nullptr, [](const ToolCall& call, ToolContext& ctx) {
                       ctx.state.resources().get<fsnap::Filesystem>()->write(call.id, "x");
                       return ToolResult{call.id != "call_2", "done", ""};
                     }}}};
  ToolRunner runner(state, tools, "ids");
  runner.execute({"call_1", "Write", "{}"});
  runner.execute({"call_2", "Write", "{}"});
  std::vector<std::string> out = {state.session().id(), state.snapshot().id};
  for (const fsnap::Checkpoint& c : host->repo().log("default", 0)) {
    out.push_back(c.id);
    out.push_back(c.commit);
    out.push_back(*host->repo().note(c.commit));
  }
  return out;
}

TEST(DeterminismTest, EqualSeedsAndClocksGiveEqualIdsAndCommits) {
  std::vector<std::string> a = ids_of_a_run(42);
  std::vector<std::string> b = ids_of_a_run(42);
  // pre/post call_1, pre/safety/checkpoint call_2, and the manual snapshot at the end.
  ASSERT_EQ(a.size(), 2u + 3 * 6);
  EXPECT_EQ(a, b);
  EXPECT_NE(ids_of_a_run(43), a);
}

}  // namespace
