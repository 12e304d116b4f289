// The transaction core through the executable, under faults: a checkpoint and its
// ledger record land together (a note that cannot be written, kill -9 at any moment),
// parallel boundaries lose no session log entry, a bad tag leaves the run unchanged
// with a one-line error — and `restore REF` and `rollback CALL_ID` mean one thing each.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class TransactionsTest : public ::testing::Test {
 protected:
  TransactionsTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
  }

  std::vector<std::string> argv(std::vector<std::string> args) const {
    std::vector<std::string> out = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                    store_.string()};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  CommandResult shadowbox(std::vector<std::string> args) const {
    return run_command(argv(std::move(args)), ws_,
                       {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string ok(std::vector<std::string> args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  fsnap::ShadowRepo repo() const { return fsnap::ShadowRepo::open(store_ / "repo.git", false); }
  sandbox::Ledger ledger() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  }
  // The newest checkpoint of the default run has its ledger record.
  void expect_tip_recorded() const {
    std::vector<fsnap::Checkpoint> tip = repo().log("default", 1);
    if (tip.empty()) return;
    EXPECT_TRUE(ledger().read(tip.front()).has_value())
        << "checkpoint " << tip.front().id << " is the run's tip without its record";
  }
  // No pre-tool record says its call ended unless the run shows the call ended — or the
  // call is among killed_ends, whose ending step was killed: the outcome lands in the
  // notes commit of the boundary that ends the call, before the run's ref moves, so a
  // kill between the two leaves it in the record of a call the run shows open (a
  // decision: whether a call ended is the run's to say; sandbox/src/tool_transactions.cpp).
  void expect_no_call_ended_without_its_end(const std::set<std::string>& killed_ends = {}) const {
    std::vector<fsnap::Checkpoint> chain = repo().log("default", 0);  // newest first
    std::set<std::string> ended;
    for (const fsnap::Checkpoint& c : chain) {
      if (c.meta.phase == fsnap::Phase::kPostTool) ended.insert(c.meta.tool_call_id);
      if (c.meta.phase != fsnap::Phase::kPreTool) continue;
      std::optional<sandbox::LedgerRecord> r = ledger().read(c);
      if (r && r->success && killed_ends.count(c.meta.tool_call_id) == 0) {
        EXPECT_EQ(ended.count(c.meta.tool_call_id), 1u)
            << "the record of " << c.meta.tool_call_id << " says it ended; the run does not";
      }
    }
  }
  void expect_fsck_clean() const {
    CommandResult fsck = run_command(
        {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict", "--no-dangling"});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(TransactionsTest, ACheckpointWhoseRecordCannotBeWrittenLeavesTheRunUnchanged) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_1", "--tool-name", "Bash"});
  std::string tip = repo().log("default", 1).front().commit;
  // The ledger cannot be written (as on a full disk): its ref becomes a directory.
  fs::path notes = store_ / "repo.git/refs/notes/shadowbox";
  std::string saved = testing_support::read_file(notes);
  fs::remove(notes);
  write_file(notes / "blocker", "not a ref");
  write_file(ws_ / "b.txt", "b\n");
  CommandResult r =
      shadowbox({"snapshot", "--phase", "post_tool", "--tool-call-id", "call_1", "--result", "ok"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(repo().log("default", 1).front().commit, tip) << "the run moved without its record";
  fs::remove_all(notes);
  write_file(notes, saved);
  expect_tip_recorded();
  expect_fsck_clean();
  // Once the ledger can be written, the same step succeeds.
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "call_1", "--result", "ok"});
  expect_tip_recorded();
}

TEST_F(TransactionsTest, KilledAtAnyMomentTheRunsTipHasItsRecord) {
  // A workspace big enough that a checkpoint takes a while, killed at moments spread
  // over the length of one uninterrupted pre_tool checkpoint.
  for (int d = 0; d < 40; ++d) {
    for (int f = 0; f < 50; ++f) {
      write_file(ws_ / ("d" + std::to_string(d)) / ("f" + std::to_string(f)),
                 std::string(200, static_cast<char>('a' + (d + f) % 26)));
    }
  }
  ok({"init"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "warm", "--tool-name", "Bash"});
  // Each checkpoint has something new to write; steps alternate between a call's
  // pre_tool and its post_tool (which also rewrites the pre-tool record).
  auto checkpoint_args = [&](int i) {
    write_file(ws_ / ("d" + std::to_string(i % 40)) / "changed", std::to_string(i));
    std::string call = "call_" + std::to_string(i / 2);
    if (i % 2 == 1 && repo().resolve("run:default").meta.tool_call_id != call) {
      return argv({"snapshot", "--phase", "pre_tool", "--tool-call-id", call, "--tool-name",
                   "Bash"});  // the call's pre_tool was killed: begin it again
    }
    return i % 2 == 0 ? argv({"snapshot", "--phase", "pre_tool", "--tool-call-id", call,
                              "--tool-name", "Bash"})
                      : argv({"snapshot", "--phase", "post_tool", "--tool-call-id", call});
  };
  // How long one checkpoint takes once the stat cache is warm (the shortest of three).
  auto full = std::chrono::steady_clock::duration::max();
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> args = checkpoint_args(1000 + i);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(run_command(args, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"}).exit_code,
              0);
    full = std::min(full, std::chrono::steady_clock::now() - start);
  }
  constexpr int kKills = 60;
  int killed = 0;
  std::set<std::string> killed_ends;  // calls whose post_tool step was killed
  for (int i = 0; i < kKills; ++i) {
    std::vector<std::string> args = checkpoint_args(i);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("SHADOWBOX_CONFIG", "", 1);
      ::setenv("SHADOWBOX_NO_PROGRESS", "1", 1);
      std::vector<char*> raw;
      for (std::string& a : args) raw.push_back(a.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    // From a fifth of a checkpoint's time to its end, where commits and records are
    // written.
    std::this_thread::sleep_for(full / 5 + full * 4 * i / (5 * kKills));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      ++killed;
      if (std::find(args.begin(), args.end(), "post_tool") != args.end()) {
        killed_ends.insert(
            args[std::find(args.begin(), args.end(), "--tool-call-id") - args.begin() + 1]);
      }
    }
    expect_tip_recorded();
    expect_no_call_ended_without_its_end(killed_ends);
    if (HasFailure()) break;
  }
  EXPECT_GT(killed, 0) << "no checkpoint was interrupted";
  // Whatever a kill left behind (a ref's lock file among it), the next step works.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "after", "--tool-name", "Bash"});
  expect_fsck_clean();
}

TEST_F(TransactionsTest, ParallelPostToolBoundariesLoseNoLogEntry) {
  constexpr int kCalls = 8;
  for (int i = 0; i < kCalls; ++i) {
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_" + std::to_string(i),
        "--tool-name", "Read"});
  }
  std::vector<std::thread> threads;
  std::vector<int> codes(kCalls, -1);
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      codes[i] = shadowbox({"snapshot", "--phase", "post_tool", "--tool-call-id",
                            "call_" + std::to_string(i), "--result", "read"})
                     .exit_code;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int code : codes) EXPECT_EQ(code, 0);
  std::optional<sandbox::LedgerRecord> latest = ledger().latest("default");
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(ledger().session(*latest).slice<sandbox::ToolInvoked>().size(),
            static_cast<std::size_t>(kCalls))
      << "every call is in the newest record";
  expect_fsck_clean();
}

TEST_F(TransactionsTest, ABadTagLeavesTheRunUnchangedAndIsQuotedOnOneLine) {
  ok({"snapshot", "--tag", "before"});
  std::string tip = repo().log("default", 1).front().commit;
  for (const std::string& tag :
       {std::string(5000, 't'), std::string("two\nlines"), std::string("control\x01byte")}) {
    CommandResult r = shadowbox({"snapshot", "--tag", tag});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.find('\x01'), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 300u) << r.err;
    EXPECT_EQ(repo().log("default", 1).front().commit, tip) << "the run moved";
  }
  std::string log = ok({"log"});
  EXPECT_EQ(log.find("ttttt"), std::string::npos) << log;
  expect_fsck_clean();
}

TEST_F(TransactionsTest, RestoreAlwaysMakesTheWorkspaceExactlyTheCheckpoint) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_1", "--tool-name", "Bash"});
  std::string pre_id = repo().resolve("pre:call_1").id;
  write_file(ws_ / "a.txt", "changed\n");
  // `restore pre:X` and `restore <id of pre:X>` do the same thing: files (and STATE
  // slices) exactly as at the checkpoint; the call is not ended, no failure logged.
  for (const std::string& ref : {std::string("pre:call_1"), pre_id}) {
    write_file(ws_ / "a.txt", "changed\n");
    ok({"restore", ref});
    EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n") << ref;
    std::optional<sandbox::LedgerRecord> latest = ledger().latest("default");
    ASSERT_TRUE(latest.has_value());
    EXPECT_EQ(latest->phase, fsnap::Phase::kCheckpoint) << ref;
    EXPECT_TRUE(latest->tool_call_id.empty()) << ref;
    EXPECT_EQ(latest->result_summary, "restored " + pre_id) << ref;
    EXPECT_EQ(ledger().session(*latest).slice<sandbox::ToolInvoked>().size(), 0u) << ref;
  }
  // The failure of the call is its own verb, once.
  write_file(ws_ / "junk.txt", "junk\n");
  Poco::JSON::Parser parser;
  auto rolled = parser.parse(ok({"--json", "rollback", "call_1", "--result", "exit 1"}))
                    .extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(rolled->getValue<std::string>("outcome"), "rolled_back");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
  std::optional<sandbox::LedgerRecord> latest = ledger().latest("default");
  ASSERT_EQ(ledger().session(*latest).slice<sandbox::ToolInvoked>().size(), 1u);
  EXPECT_EQ(ledger().session(*latest).slice<sandbox::ToolInvoked>()[0].result_summary, "exit 1");
  CommandResult again = shadowbox({"rollback", "call_1"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("ended already"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("restore pre:call_1"), std::string::npos) << again.err;
  CommandResult unknown = shadowbox({"rollback", "call_nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no pre-tool checkpoint"), std::string::npos) << unknown.err;
  EXPECT_EQ(shadowbox({"rollback"}).exit_code, 2);
}

TEST_F(TransactionsTest, AStepWhoseRunCannotMoveLeavesTheCallOpen) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_1", "--tool-name", "Bash"});
  // The run's ref cannot move (its directory refuses writes): the end of the call is
  // written, its record too, and then the step fails.
  fs::path runs = store_ / "repo.git/refs/shadowbox/runs";
  if (!testing_support::lock_directory(runs)) GTEST_SKIP() << "cannot lock a directory here";
  write_file(ws_ / "b.txt", "b\n");
  CommandResult post = shadowbox({"snapshot", "--phase", "post_tool", "--tool-call-id", "call_1"});
  CommandResult rollback = shadowbox({"rollback", "call_1"});
  testing_support::unlock_directory(runs);
  EXPECT_EQ(post.exit_code, 1);
  EXPECT_EQ(rollback.exit_code, 1);
  expect_no_call_ended_without_its_end();
  // The call is still open: its end can be recorded now.
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "call_1", "--result", "ok"});
  EXPECT_TRUE(ledger().read(repo().resolve("pre:call_1"))->success.value_or(false));
}

TEST_F(TransactionsTest, ChangesSeenWhileACallIsOpenAreItsOwn) {
  // The sequence of issue 32: an edit while A runs, recorded when B (a Read) begins.
  // It was taken for an edit of no call, and the rollback of A refused.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "A", "--tool-name", "Bash"});
  write_file(ws_ / "a.txt", "A's change\n");
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "B", "--tool-name", "Read"});
  EXPECT_EQ(repo().log("default", 2)[1].meta.phase, fsnap::Phase::kPreTool)
      << "no checkpoint of no call between A's and B's pre-tool ones";
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "B"});
  CommandResult r = shadowbox({"rollback", "A", "--result", "exit 1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rolled back tool call A"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n") << r.out;

  // A snapshot someone takes while a call runs records the call's changes too.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "C", "--tool-name", "Bash"});
  write_file(ws_ / "c.txt", "C's\n");
  ok({"snapshot", "--tag", "while-c-ran"});
  ok({"rollback", "C", "--result", "exit 1"});
  EXPECT_FALSE(fs::exists(ws_ / "c.txt"));
}

TEST_F(TransactionsTest, WhatARestoreOrAnotherCallMayHaveChangedIsKeptByName) {
  Poco::JSON::Parser parser;
  auto rollback = [&](const std::string& call) {
    return parser.parse(ok({"--json", "rollback", call, "--result", "exit 1"}))
        .extract<Poco::JSON::Object::Ptr>();
  };
  write_file(ws_ / "old.txt", "old\n");
  ok({"snapshot", "--tag", "with-old"});
  fs::remove(ws_ / "old.txt");
  // A restore while the call runs is someone else's doing: what it brought back stays.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Bash"});
  ok({"restore", "with-old"});
  Poco::JSON::Object::Ptr refused = rollback("c1");
  EXPECT_EQ(refused->getValue<std::string>("outcome"), "refused");
  ASSERT_EQ(refused->getArray("kept")->size(), 1u);
  EXPECT_EQ(refused->getArray("kept")->getObject(0)->getValue<std::string>("path"), "old.txt");
  EXPECT_TRUE(fs::exists(ws_ / "old.txt"));

  // Beside another shell call: what changed while both ran is kept, named; what changed
  // while the failed call ran alone is put back.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
  write_file(ws_ / "mine.txt", "c2's\n");
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c3", "--tool-name", "Bash"});
  write_file(ws_ / "either.txt", "c2's or c3's\n");
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c3"});
  CommandResult r = shadowbox({"rollback", "c2", "--result", "exit 1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(ws_ / "mine.txt"));
  EXPECT_TRUE(fs::exists(ws_ / "either.txt"));
  EXPECT_NE(r.out.find("kept either.txt: changed while Bash c3 ran too"), std::string::npos)
      << r.out;

  // A later change that is gone again (restored away) leaves nothing to keep.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c4", "--tool-name", "Bash"});
  std::string pre_c4 = repo().resolve("pre:c4").id;
  write_file(ws_ / "user3.txt", "x\n");
  ok({"snapshot", "--tag", "later"});
  ok({"restore", pre_c4});
  write_file(ws_ / "junk.txt", "junk\n");
  EXPECT_EQ(rollback("c4")->getValue<std::string>("outcome"), "rolled_back");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
}

TEST_F(TransactionsTest, AFailedCallThatChangedNothingCostsNoCheckpoint) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Bash"});
  std::size_t before = repo().log("default", 0).size();
  CommandResult r = shadowbox({"rollback", "c1", "--result", "cat: /nonexistent: No such file"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("changed no file"), std::string::npos) << r.out;
  std::vector<fsnap::Checkpoint> after = repo().log("default", 0);
  ASSERT_EQ(after.size(), before + 1) << "one boundary ends the call; no safety checkpoint";
  EXPECT_EQ(after[0].meta.phase, fsnap::Phase::kPostTool);
  EXPECT_EQ(after[0].meta.tool_call_id, "c1");
}

TEST_F(TransactionsTest, AfterGcRollbacksStillSeeLaterCalls) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Bash"});
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c1"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c3", "--tool-name", "Write"});
  write_file(ws_ / "three.txt", "3\n");
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c3"});
  write_file(temp_ / "gc.yaml", "retention:\n  keep_last: 3\n");
  std::vector<std::string> gc = argv({"--config", (temp_ / "gc.yaml").string(), "gc"});
  ASSERT_EQ(run_command(gc, ws_, {"SHADOWBOX_NO_PROGRESS=1"}).exit_code, 0);
  // c2's pre-tool checkpoint was rewritten by gc; c3 changed files since it.
  CommandResult r = shadowbox({"rollback", "c2", "--result", "exit 1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "three.txt")) << "c3's file was undone";
  EXPECT_EQ(shadowbox({"rollback", "c2"}).exit_code, 1) << "c2 has ended";
}

}  // namespace
