// `shadowbox export RUN --branch NAME`: the run's tool calls as commits of a branch of
// the user's own repository, read back with plain git — subjects, trailers and each
// call's diff — while HEAD, the index, the work tree and what the repository ignores are
// left alone; an existing branch is refused without --force, a checked-out one always,
// and a workspace in no repository is refused.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::Manifest;
using testing_support::read_file;
using testing_support::run_command;
using testing_support::take_manifest;
using testing_support::TempDir;
using testing_support::write_file;

Poco::JSON::Object::Ptr object_of(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text).extract<Poco::JSON::Object::Ptr>();
}

class ExportTest : public ::testing::Test {
 protected:
  ExportTest() {
    fs::create_directories(repo_);
    git({"init", "-q", "-b", "main"});
    write(".gitignore", ".env\nbuild/\n");
    write("README", "r1\n");
    write("src/a.txt", "a1\n");
    git({"add", "-A"});
    git({"commit", "-q", "-m", "start"});
    write(".env", "SECRET=1\n");  // ignored, never committed
    write("build/out.o", "o1\n");
  }

  // Runs git in the repository; it must succeed. Returns its stdout.
  std::string git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-c", "user.name=Test", "-c",
                                     "user.email=test@example.com"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r =
        run_command(argv, repo_, {"GIT_CONFIG_NOSYSTEM=1", "HOME=" + temp_.path().string()});
    EXPECT_EQ(r.exit_code, 0) << "git " << args.at(0) << ": " << r.err;
    return r.out;
  }
  CommandResult shadowbox(std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_,
                       {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                        "HOME=" + temp_.path().string(), "XDG_CONFIG_HOME="});
  }
  std::string ok(std::vector<std::string> args) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  void write(const std::string& rel, const std::string& data) { write_file(ws_ / rel, data); }

  // A tool call through the CLI: its pre_tool checkpoint, change(), its post_tool one.
  void call(const std::string& id, const std::string& tool, const std::string& input,
            const std::function<void()>& change) {
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", id, "--tool-name", tool, "--input",
        input});
    change();
    ok({"snapshot", "--phase", "post_tool", "--tool-call-id", id, "--result", "done " + id});
  }

  // Three calls that change files, and one that changes none.
  void four_calls() {
    call("c1", "Edit", R"({"file_path":"src/a.txt"})", [&] { write("src/a.txt", "a2\n"); });
    call("c2", "Bash", "echo b > b.txt; rm README", [&] {
      write("b.txt", "b\n");
      fs::remove(ws_ / "README");
      write(".env", "SECRET=2\n");
      write("build/out.o", "o2\n");
    });
    call("c3", "Read", "src/a.txt", [] {});
    call("c4", "Write", R"({"file_path":"docs/guide.md"})", [&] { write("docs/guide.md", "g\n"); });
  }

  // What the repository's user sees of it: HEAD, the index's bytes, status, the files.
  struct UserView {
    std::string head, index, status;
    Manifest files;
  };
  // (git status may rewrite the index, refreshing what it knows of the files: the view
  // before export reads the index after status, the one after before it.)
  UserView user_view() {
    std::string status = git({"status", "--porcelain", "--ignored"});
    return {git({"rev-parse", "HEAD"}), read_file(repo_ / ".git/index"), status,
            take_manifest(repo_)};
  }
  void expect_unchanged(const UserView& before) {
    std::string index = read_file(repo_ / ".git/index");
    UserView now = user_view();
    now.index = index;
    EXPECT_EQ(now.head, before.head);
    EXPECT_TRUE(now.index == before.index) << "the index's bytes changed";
    EXPECT_EQ(now.status, before.status);
    EXPECT_EQ(testing_support::describe_difference(before.files, now.files), "");
  }

  TempDir temp_;
  fs::path repo_ = temp_ / "repo";
  fs::path ws_ = repo_;
  fs::path store_ = temp_ / "store";
};

TEST_F(ExportTest, PlainGitLogShowsOneCommitPerCallThatChangedFiles) {
  four_calls();
  UserView before = user_view();
  std::string out = ok({"export", "default", "--branch", "agent-run"});
  EXPECT_NE(out.find("made branch agent-run of "), std::string::npos) << out;
  EXPECT_NE(out.find(": 3 commits of run default on top of HEAD"), std::string::npos) << out;
  EXPECT_NE(out.find("1 tool call changed no exported file"), std::string::npos) << out;
  EXPECT_NE(out.find("left out (the repository ignores them): .env build/out.o"), std::string::npos)
      << out;
  expect_unchanged(before);

  EXPECT_EQ(git({"log", "--format=%s", "main..agent-run"}),
            "Write: {\"file_path\":\"docs/guide.md\"}\n"
            "Bash: echo b > b.txt; rm README\n"
            "Edit: {\"file_path\":\"src/a.txt\"}\n");
  EXPECT_EQ(git({"rev-parse", "agent-run~3"}), git({"rev-parse", "main"}))
      << "the first call's parent is HEAD";
  EXPECT_EQ(git({"log",
                 "--format=%(trailers:key=Tool-Call-Id,valueonly)%(trailers:key=Tool-"
                 "Outcome,valueonly)",
                 "main..agent-run"}),
            "c4\nok\n\nc2\nok\n\nc1\nok\n\n");
  std::string body = git({"log", "-1", "--format=%B", "agent-run~1"});
  EXPECT_NE(body.find("Result: done c2\n"), std::string::npos) << body;
  EXPECT_NE(body.find("Tool-Name: Bash\n"), std::string::npos) << body;
  EXPECT_NE(body.find("Shadowbox-Run: default\n"), std::string::npos) << body;
  EXPECT_EQ(body.find("Tool-Cost-USD"), std::string::npos) << "no spend metered: " << body;

  EXPECT_EQ(git({"diff", "--name-status", "agent-run~3", "agent-run~2"}), "M\tsrc/a.txt\n");
  EXPECT_EQ(git({"diff", "--name-status", "agent-run~2", "agent-run~1"}), "D\tREADME\nA\tb.txt\n");
  EXPECT_EQ(git({"diff", "--name-status", "agent-run~1", "agent-run"}), "A\tdocs/guide.md\n");
  EXPECT_EQ(git({"show", "agent-run:src/a.txt"}), "a2\n");
  EXPECT_EQ(git({"ls-tree", "-r", "--name-only", "agent-run"}),
            ".gitignore\nb.txt\ndocs/guide.md\nsrc/a.txt\n")
      << "nothing ignored, nothing of .git";
  EXPECT_EQ(git({"fsck", "--no-progress", "--no-dangling"}), "");
}

TEST_F(ExportTest, JsonNamesEachCommitsCall) {
  four_calls();
  Poco::JSON::Object::Ptr json = object_of(ok({"--json", "export", "default", "--branch", "r"}));
  EXPECT_EQ(json->getValue<std::string>("ref"), "refs/heads/r");
  EXPECT_EQ(json->getValue<std::string>("base"), git({"rev-parse", "main"}).substr(0, 40));
  Poco::JSON::Array::Ptr commits = json->getArray("commits");
  ASSERT_EQ(commits->size(), 3u);
  EXPECT_EQ(commits->getObject(0)->getValue<std::string>("tool_call_id"), "c1");
  EXPECT_EQ(commits->getObject(2)->getValue<std::string>("commit"),
            json->getValue<std::string>("tip"));
  EXPECT_EQ(json->getValue<std::string>("tip"), git({"rev-parse", "r"}).substr(0, 40));
  EXPECT_EQ(json->getArray("unchanged_calls")->getElement<std::string>(0), "c3");
  EXPECT_EQ(json->getArray("ignored")->size(), 2u);
}

TEST_F(ExportTest, AnExistingBranchIsRefusedWithoutForce) {
  four_calls();
  git({"branch", "taken"});
  std::string taken = git({"rev-parse", "taken"});
  CommandResult r = shadowbox({"export", "default", "--branch", "taken"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("branch 'taken' exists; replace it with --force"), std::string::npos)
      << r.err;
  EXPECT_EQ(git({"rev-parse", "taken"}), taken);
  std::string out = ok({"export", "default", "--branch", "taken", "--force"});
  EXPECT_NE(out.find("replaced branch taken"), std::string::npos) << out;
  EXPECT_EQ(git({"rev-list", "--count", "main..taken"}), "3\n");
}

TEST_F(ExportTest, TheCheckedOutBranchIsNeverMoved) {
  four_calls();
  UserView before = user_view();
  CommandResult r = shadowbox({"export", "default", "--branch", "main", "--force"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("is checked out"), std::string::npos) << r.err;
  expect_unchanged(before);
}

TEST_F(ExportTest, WhatGitsGlobalIgnoreFileIgnoresIsLeftOut) {
  write_file(temp_ / ".config/git/ignore", "*.secret\n");
  call("c1", "Write", "k", [&] {
    write("key.secret", "k\n");
    write("src/b.txt", "b\n");
  });
  std::string out = ok({"export", "default", "--branch", "r"});
  EXPECT_EQ(git({"diff", "--name-status", "main", "r"}), "A\tsrc/b.txt\n") << out;
  EXPECT_NE(out.find("key.secret"), std::string::npos) << out;
}

TEST_F(ExportTest, ACallRolledBackEntirelyGivesNoCommit) {
  call("c1", "Edit", "a", [&] { write("src/a.txt", "a2\n"); });
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
  write("src/a.txt", "broken\n");
  ok({"rollback", "c2", "--result", "exit 1"});
  ASSERT_EQ(read_file(ws_ / "src/a.txt"), "a2\n");
  std::string out = ok({"export", "default", "--branch", "r"});
  EXPECT_EQ(git({"log", "--format=%s", "main..r"}), "Edit: a\n") << out;
  EXPECT_NE(out.find("1 tool call changed no exported file"), std::string::npos) << out;
}

TEST_F(ExportTest, WorkNotCommittedWhenTheRunBeganIsItsOwnFirstCommit) {
  write("notes.txt", "mine\n");  // untracked, not ignored
  call("c1", "Edit", "a", [&] { write("src/a.txt", "a2\n"); });
  ok({"export", "default", "--branch", "r"});
  EXPECT_EQ(git({"log", "--format=%s", "main..r"}),
            "Edit: a\nthe workspace as run default began\n");
  EXPECT_EQ(git({"diff", "--name-status", "main", "r~1"}), "A\tnotes.txt\n");
  EXPECT_EQ(git({"diff", "--name-status", "r~1", "r"}), "M\tsrc/a.txt\n");
}

TEST_F(ExportTest, ChangesBetweenCallsAreACommitOfTheirOwn) {
  call("c1", "Edit", "a", [&] { write("src/a.txt", "a2\n"); });
  write("by-hand.txt", "h\n");  // a person, between two calls
  call("c2", "Edit", "b", [&] { write("src/b.txt", "b\n"); });
  ok({"export", "default", "--branch", "r"});
  EXPECT_EQ(git({"log", "--format=%s", "main..r"}),
            "Edit: b\nchanges made outside any tool call\nEdit: a\n");
  EXPECT_EQ(git({"diff", "--name-status", "r~1", "r"}), "A\tsrc/b.txt\n")
      << "the call's commit holds its own changes only";
  EXPECT_EQ(git({"diff", "--name-status", "r~2", "r~1"}), "A\tby-hand.txt\n");
}

TEST_F(ExportTest, AWorkspaceInASubdirectoryIsExportedThere) {
  ws_ = repo_ / "src";
  call("c1", "Edit", "a", [&] { write("a.txt", "a3\n"); });
  ok({"export", "default", "--branch", "r"});
  EXPECT_EQ(git({"diff", "--name-status", "main", "r"}), "M\tsrc/a.txt\n");
  EXPECT_EQ(git({"show", "r:README"}), "r1\n") << "outside the workspace: as HEAD has it";
}

TEST_F(ExportTest, AWorkspaceInNoGitRepositoryIsRefused) {
  ws_ = temp_ / "plain";
  fs::create_directories(ws_);
  call("c1", "Edit", "a", [&] { write("a.txt", "a\n"); });
  CommandResult r = shadowbox({"export", "default", "--branch", "r"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("is in no git repository"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ws_ / ".git"));
}

TEST_F(ExportTest, BadInputIsNamed) {
  four_calls();
  CommandResult no_branch = shadowbox({"export", "default"});
  EXPECT_EQ(no_branch.exit_code, 2) << no_branch.err;
  EXPECT_NE(no_branch.err.find("--branch NAME is needed"), std::string::npos) << no_branch.err;
  CommandResult bad = shadowbox({"export", "default", "--branch", "a..b"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("'a..b' is not a name git allows for a branch"), std::string::npos)
      << bad.err;
  CommandResult no_run = shadowbox({"export", "nope", "--branch", "r"});
  EXPECT_EQ(no_run.exit_code, 1) << no_run.err;
  EXPECT_NE(no_run.err.find("no run named 'nope'"), std::string::npos) << no_run.err;
}

}  // namespace
