// `shadowbox undo CALL_ID` through the executable, on calls made with `snapshot --phase
// pre_tool/post_tool`: one call's changes reversed and every later one kept (other files,
// other lines of the same file), a later change in the way refused by path with
// nothing changed, the undo undone, binary files, deletions, added files and files over
// the size limit, the calls around it, and the errors.
#include <unistd.h>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_notices.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::Manifest;
using testing_support::read_file;
using testing_support::run_command;
using testing_support::take_manifest;
using testing_support::write_file;

// Twelve numbered lines, with line `at` replaced by text (0: none).
std::string numbered(int at = 0, const std::string& text = "", int at2 = 0,
                     const std::string& text2 = "") {
  std::string out;
  for (int i = 1; i <= 12; ++i) {
    out += (i == at ? text : i == at2 ? text2 : "line " + std::to_string(i)) + "\n";
  }
  return out;
}

class UndoTest : public ::testing::Test {
 protected:
  UndoTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
  }

  CommandResult shadowbox(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    if (!config_.empty()) {
      write_file(temp_ / "config.yaml", config_);
      argv.insert(argv.end(), {"--config", (temp_ / "config.yaml").string()});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string ok(std::vector<std::string> args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  // One tool call: its pre-tool checkpoint, what it does, its post-tool checkpoint.
  void call(const std::string& id, const std::function<void()>& does) {
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", id, "--tool-name", "Bash"});
    does();
    ok({"snapshot", "--phase", "post_tool", "--tool-call-id", id, "--result", "ok"});
  }
  Poco::JSON::Object::Ptr json(const std::string& text) const {
    Poco::JSON::Parser parser;
    return parser.parse(text).extract<Poco::JSON::Object::Ptr>();
  }
  fsnap::ShadowRepo repo() const { return fsnap::ShadowRepo::open(store_ / "repo.git", false); }
  sandbox::Ledger ledger() const {
    return sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
  }
  std::size_t checkpoints() const { return repo().log("default", 0).size(); }
  Manifest files() const { return take_manifest(ws_); }
  void write(const std::string& rel, const std::string& data) { write_file(ws_ / rel, data); }
  void expect_unchanged_by(const std::vector<std::string>& args, const std::string& named) {
    Manifest before = files();
    std::size_t recorded = checkpoints();
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_EQ(testing_support::describe_difference(before, files()), "");
    EXPECT_EQ(checkpoints(), recorded) << "a refused undo records nothing";
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  std::string config_;
};

TEST_F(UndoTest, UndoingTheSecondOfThreeCallsKeepsTheThirdsChangesToOtherFiles) {
  call("call_1", [&] { write("one.txt", "1\n"); });
  call("call_2", [&] {
    write("a.txt", "a by call 2\n");
    write("two.txt", "2\n");
  });
  call("call_3", [&] {
    write("three.txt", "3\n");
    write("one.txt", "1 by call 3\n");
  });

  std::string out = ok({"undo", "call_2"});
  EXPECT_NE(out.find("undid tool call call_2 (Bash): 2 changes"), std::string::npos) << out;
  EXPECT_NE(out.find("shadowbox undo undo-call_2"), std::string::npos) << out;
  EXPECT_NE(out.find("files only"), std::string::npos) << out;
  EXPECT_EQ(read_file(ws_ / "a.txt"), "a\n");
  EXPECT_FALSE(fs::exists(ws_ / "two.txt"));
  EXPECT_EQ(read_file(ws_ / "three.txt"), "3\n") << "call 3's changes are kept";
  EXPECT_EQ(read_file(ws_ / "one.txt"), "1 by call 3\n");

  // Recorded as a call of its own: which call it undid and the paths it changed.
  std::vector<fsnap::Checkpoint> tip = repo().log("default", 2);
  ASSERT_EQ(tip.size(), 2u);
  EXPECT_EQ(tip[0].meta.phase, fsnap::Phase::kPostTool);
  EXPECT_EQ(tip[1].meta.phase, fsnap::Phase::kPreTool);
  EXPECT_EQ(tip[0].meta.tool_call_id, "undo-call_2");
  EXPECT_EQ(tip[0].meta.tool_name, "undo");
  std::optional<sandbox::LedgerRecord> pre = ledger().read(tip[1]);
  ASSERT_TRUE(pre.has_value());
  EXPECT_EQ(pre->undoes, "call_2");
  EXPECT_EQ(pre->paths, std::optional<std::vector<std::string>>({"a.txt", "two.txt"}));
  EXPECT_EQ(pre->success, std::optional<bool>(true));
  EXPECT_EQ(ledger().read(tip[0])->undoes, "call_2");
  EXPECT_EQ(read_file(ws_ / "a.txt"), "a\n");

  // log and show say what it was.
  std::string log = ok({"log", "-n", "1"});
  EXPECT_NE(log.find("  undo-call_2      undo  ok       undo Bash call_2\n"), std::string::npos)
      << log;
  log = ok({"log", "--checkpoints", "-n", "2"});
  EXPECT_NE(log.find("undo-call_2"), std::string::npos) << log;
  EXPECT_NE(log.find("undid Bash call_2 (2 paths)"), std::string::npos) << log;
  std::string show = ok({"show", "pre:undo-call_2"});
  EXPECT_NE(show.find("undoes       tool call call_2"), std::string::npos) << show;
  EXPECT_NE(show.find("paths        a.txt, two.txt"), std::string::npos) << show;
  Poco::JSON::Object::Ptr shown = json(ok({"--json", "show", "post:undo-call_2"}));
  EXPECT_EQ(shown->getObject("ledger")->getValue<std::string>("undoes"), "call_2");
}

TEST_F(UndoTest, ALaterEditOfOtherLinesOfTheSameFileIsKept) {
  write("f.txt", numbered());
  call("call_1", [&] { write("one.txt", "1\n"); });
  call("call_2", [&] { write("f.txt", numbered(2, "call 2's line")); });
  call("call_3", [&] { write("f.txt", numbered(2, "call 2's line", 10, "call 3's line")); });

  ok({"undo", "call_2"});
  EXPECT_EQ(read_file(ws_ / "f.txt"), numbered(10, "call 3's line"))
      << "call 2's line reverted, call 3's kept";
}

TEST_F(UndoTest, AnOverlappingLaterChangeIsRefusedByPathAndNothingChanges) {
  write("f.txt", numbered());
  write("g.txt", "g\n");
  fs::create_symlink("f.txt", ws_ / "lnk");
  call("call_2", [&] {
    fs::remove(ws_ / "lnk");
    fs::create_symlink("g.txt", ws_ / "lnk");
    write("f.txt", numbered(5, "call 2's line"));
    write("g.txt", "g by call 2\n");
    write("new.txt", "new\n");
    write("h.txt", "h by call 2\n");
  });
  call("call_3", [&] {
    fs::remove(ws_ / "lnk");
    fs::create_symlink("new.txt", ws_ / "lnk");
    write("f.txt", numbered(5, "call 3's line"));
    fs::remove(ws_ / "g.txt");
    write("new.txt", "changed by call 3\n");
  });
  write("h.txt", "h by hand\n");  // after every checkpoint

  expect_unchanged_by({"undo", "call_2"}, "cannot undo tool call call_2 (Bash)");
  CommandResult r = shadowbox({"undo", "call_2"});
  EXPECT_NE(r.err.find("  f.txt: changed again since, in or next to the lines the call changed; "
                       "last changed by Bash call_3"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("  g.txt: the call changed it and it was removed since; last changed by "
                       "Bash call_3"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("  new.txt: the call created it and it was changed since"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("  h.txt: the call created it and it was changed since; last changed "
                       "after the newest checkpoint"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("  lnk: a symlink the call changed was changed again since; last changed "
                       "by Bash call_3"),
            std::string::npos)
      << r.err;

  CommandResult j = shadowbox({"--json", "undo", "call_2"});
  EXPECT_EQ(j.exit_code, 1);
  Poco::JSON::Object::Ptr refused = json(j.out);
  EXPECT_EQ(refused->getValue<std::string>("outcome"), "refused");
  Poco::JSON::Array::Ptr conflicts = refused->getArray("conflicts");
  ASSERT_EQ(conflicts->size(), 5u);
  EXPECT_EQ(conflicts->getObject(0)->getValue<std::string>("path"), "f.txt");
  EXPECT_TRUE(refused->isNull("recorded"));
}

TEST_F(UndoTest, UndoingTheUndoPutsTheCallsChangesBack) {
  write("f.txt", numbered());
  call("call_2", [&] {
    write("f.txt", numbered(2, "call 2's line"));
    write("two.txt", "2\n");
    fs::remove(ws_ / "a.txt");
  });
  call("call_3", [&] { write("f.txt", numbered(2, "call 2's line", 11, "call 3's line")); });
  Manifest done = files();

  ok({"undo", "call_2"});
  EXPECT_EQ(read_file(ws_ / "f.txt"), numbered(11, "call 3's line"));
  EXPECT_TRUE(fs::exists(ws_ / "a.txt"));
  std::string out = ok({"undo", "undo-call_2"});
  EXPECT_NE(out.find("undid tool call undo-call_2 (undo)"), std::string::npos) << out;
  EXPECT_EQ(testing_support::describe_difference(done, files()), "")
      << "call 2's changes are back, with call 3's";
  EXPECT_EQ(ledger().read(repo().resolve("pre:undo-undo-call_2"))->undoes, "undo-call_2");

  // Undone again, it is recorded under an id of its own.
  std::string again = ok({"undo", "call_2"});
  EXPECT_NE(again.find("shadowbox undo undo-call_2-2"), std::string::npos) << again;
  EXPECT_EQ(read_file(ws_ / "f.txt"), numbered(11, "call 3's line"));
  // Once reversed, there is nothing left to undo, and nothing is recorded.
  std::size_t recorded = checkpoints();
  std::string nothing = ok({"undo", "call_2"});
  EXPECT_NE(nothing.find("nothing to undo: tool call call_2 (Bash): the files have none of its "
                         "changes any more"),
            std::string::npos)
      << nothing;
  EXPECT_EQ(checkpoints(), recorded);
}

TEST_F(UndoTest, BinaryFilesDeletionsAddedDirectoriesSymlinksAndModesAreUndone) {
  const std::string binary("\0\x01\x02png", 6);
  write("img.bin", binary);
  write("old.txt", "old\n");
  write("keep/k.txt", "k\n");
  write("run.sh", "#!/bin/sh\n");
  Manifest before = files();
  call("call_2", [&] {
    write("img.bin", std::string("\0\xff other", 8));
    fs::remove(ws_ / "old.txt");
    write("dir/sub/new.txt", "new\n");
    fs::create_directories(ws_ / "empty");
    fs::create_symlink("keep/k.txt", ws_ / "link");
    write_file(ws_ / "run.sh", "#!/bin/sh\n", /*executable=*/true);
  });
  Manifest after_call_2 = files();
  call("call_3", [&] { write("keep/later.txt", "later\n"); });

  Poco::JSON::Object::Ptr undone = json(ok({"--json", "undo", "call_2"}));
  EXPECT_EQ(undone->getValue<std::string>("outcome"), "undone");
  EXPECT_EQ(undone->getValue<std::string>("undo_call_id"), "undo-call_2");
  EXPECT_FALSE(undone->isNull("safety"));
  EXPECT_EQ(undone->getObject("safety")->getValue<std::string>("phase"), "pre_tool");
  EXPECT_EQ(undone->getObject("recorded")->getValue<std::string>("phase"), "post_tool");
  write_file(temp_ / "expected/keep/later.txt", "later\n");
  Manifest expected = before;
  expected.merge(Manifest(take_manifest(temp_ / "expected")));
  EXPECT_EQ(testing_support::describe_difference(expected, files()), "");

  // And back: the binary file as call 2 left it, the rest too.
  ok({"undo", "undo-call_2"});
  Manifest redone = after_call_2;
  redone.merge(Manifest(take_manifest(temp_ / "expected")));
  EXPECT_EQ(testing_support::describe_difference(redone, files()), "");

  // A binary file changed again since cannot be merged.
  write("img.bin", std::string("\0third", 6));
  expect_unchanged_by({"undo", "call_2"},
                      "img.bin: a binary file the call changed was changed "
                      "again since; last changed after the newest checkpoint");
}

TEST_F(UndoTest, AFileOverTheSizeLimitComesBackFromTheStoresCopy) {
  config_ = "capture:\n  max_file_size: 10\n";
  write("big.bin", std::string(64, 'b'));
  call("call_2", [&] {
    fs::remove(ws_ / "big.bin");
    write("big.bin", std::string(80, 'c'));
    write("small.txt", "s\n");
  });
  call("call_3", [&] { write("three.txt", "3\n"); });
  std::string out = ok({"undo", "call_2"});
  EXPECT_NE(out.find("big.bin (over capture.max_file_size: from its copy)"), std::string::npos)
      << out;
  EXPECT_EQ(read_file(ws_ / "big.bin"), std::string(64, 'b'));
  EXPECT_FALSE(fs::exists(ws_ / "small.txt"));
  EXPECT_TRUE(fs::exists(ws_ / "three.txt"));
}

TEST_F(UndoTest, WhatACallRunningAtTheSameTimeCanHaveChangedIsKeptByName) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
  write("mine.txt", "c2's\n");
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c3", "--tool-name", "Bash"});
  write("either.txt", "c2's or c3's\n");
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c3"});
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c2"});

  std::string out = ok({"undo", "c2"});
  EXPECT_FALSE(fs::exists(ws_ / "mine.txt"));
  EXPECT_TRUE(fs::exists(ws_ / "either.txt"));
  EXPECT_NE(out.find("kept either.txt: changed while Bash c3 ran too"), std::string::npos) << out;
}

TEST_F(UndoTest, ErrorsNameTheCallAndChangeNothing) {
  call("done", [&] { write("d.txt", "d\n"); });
  expect_unchanged_by({"undo", "nope"}, "tool call 'nope' has no pre-tool checkpoint");

  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "open", "--tool-name", "Bash"});
  write("o.txt", "o\n");
  expect_unchanged_by({"undo", "open"}, "tool call 'open' is still running");
  ok({"rollback", "open", "--result", "exit 1"});
  expect_unchanged_by({"undo", "open"},
                      "tool call 'open' failed and was rolled back: there is nothing to undo");

  std::size_t recorded = checkpoints();
  call("reads", [] {});
  recorded = checkpoints();
  std::string out = ok({"undo", "reads"});
  EXPECT_NE(out.find("nothing to undo: tool call reads (Bash): it changed no file"),
            std::string::npos)
      << out;
  EXPECT_EQ(checkpoints(), recorded);

  EXPECT_EQ(shadowbox({"undo"}).exit_code, 2);
  CommandResult elsewhere = shadowbox({"undo", "done", "--run", "other"});
  EXPECT_EQ(elsewhere.exit_code, 1);
  EXPECT_NE(elsewhere.err.find("in run 'other'"), std::string::npos) << elsewhere.err;
  EXPECT_TRUE(fs::exists(ws_ / "d.txt"));
}

}  // namespace

namespace {

// An undo made while an agent runs on the workspace is told to that agent: a notice its
// hooks hand on at its next tool call.
TEST_F(UndoTest, AnUndoDuringALiveRunIsToldToItsAgent) {
  call("call_1", [&] { write("b.txt", "b\n"); });
  call("call_2", [&] { write("c.txt", "c\n"); });
  fsnap::Store store = fsnap::Store::open(store_, ws_, false);
  runs::RunMeta live;  // a supervisor alive on this workspace: this process
  live.run = "live";
  live.workspace = fs::canonical(ws_).string();
  live.pid = ::getpid();
  live.save(store);
  ok({"undo", "call_1"});
  EXPECT_FALSE(fs::exists(ws_ / "b.txt"));
  std::vector<std::string> notices = runs::take_run_notices(store, "live");
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("`shadowbox undo` reversed what 'Bash' call 'call_1' changed"),
            std::string::npos)
      << notices[0];
  EXPECT_NE(notices[0].find("D b.txt"), std::string::npos) << notices[0];
}

}  // namespace
