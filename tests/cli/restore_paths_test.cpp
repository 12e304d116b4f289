// `shadowbox restore REF -- PATH...`: only the named files and directories become REF's,
// as `git restore --source=REF -- PATH...` makes them — what REF lacks below a named
// directory is removed, and comes back from the safety checkpoint — every other path is
// kept, and a path outside the workspace or in neither REF nor the workspace changes
// nothing.
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

class RestorePathsTest : public ::testing::Test {
 protected:
  RestorePathsTest() {
    fs::create_directories(ws_);
    write("a.txt", "a1");
    write("keep.txt", "k1");
    write("src/x.c", "x1");
    write("src/y.c", "y1");
    ok({"snapshot", "--tag", "base"});
    write("a.txt", "a2");
    write("keep.txt", "k2");
    write("src/x.c", "x2");
    write("src/new.c", "new");
    write("other/z", "z");
  }

  CommandResult shadowbox(std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string ok(std::vector<std::string> args) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  void write(const std::string& rel, const std::string& data) { write_file(ws_ / rel, data); }
  std::string read(const std::string& rel) const { return read_file(ws_ / rel); }

  // Expects a one-line error naming text, exit 1, and no file nor checkpoint changed.
  void expect_refused(std::vector<std::string> args, const std::string& text) {
    Manifest before = take_manifest(ws_);
    std::string log_before = ok({"log"});
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.err.rfind("shadowbox: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
    EXPECT_EQ(testing_support::describe_difference(before, take_manifest(ws_)), "");
    EXPECT_EQ(ok({"log"}), log_before) << "no checkpoint, safety or other";
  }

  TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(RestorePathsTest, AFileAndADirectoryBecomeREFsAndNothingElse) {
  std::string out = ok({"restore", "base", "--", "a.txt", "src"});
  EXPECT_NE(out.find("restored a.txt, src of "), std::string::npos) << out;
  EXPECT_NE(out.find("(3 changes)"), std::string::npos) << out;
  EXPECT_NE(out.find("files only: the run's session slices are as they were"), std::string::npos)
      << out;
  EXPECT_EQ(read("a.txt"), "a1");
  EXPECT_EQ(read("src/x.c"), "x1");
  EXPECT_EQ(read("src/y.c"), "y1");
  EXPECT_FALSE(fs::exists(ws_ / "src/new.c")) << "REF has no src/new.c: removed";
  EXPECT_EQ(read("keep.txt"), "k2") << "not named: kept";
  EXPECT_EQ(read("other/z"), "z") << "not named: kept";
}

TEST_F(RestorePathsTest, WhatARestoredDirectoryLostComesBackFromTheSafetyCheckpoint) {
  Poco::JSON::Object::Ptr json = object_of(ok({"--json", "restore", "base", "--", "src/"}));
  ASSERT_TRUE(json->getArray("paths"));
  EXPECT_EQ(json->getArray("paths")->getElement<std::string>(0), "src");
  std::string safety = json->getObject("safety")->getValue<std::string>("id");
  ASSERT_FALSE(fs::exists(ws_ / "src/new.c"));
  ok({"restore", safety, "--", "src/new.c"});
  EXPECT_EQ(read("src/new.c"), "new");
  EXPECT_EQ(read("src/x.c"), "x1") << "only src/new.c was named";
}

TEST_F(RestorePathsTest, TheRecordOfTheRestoreNamesItsPaths) {
  Poco::JSON::Object::Ptr json =
      object_of(ok({"--json", "restore", "base", "--", (ws_ / "a.txt").string(), "src/x.c"}));
  EXPECT_EQ(read("a.txt"), "a1") << "an absolute path inside the workspace";
  EXPECT_EQ(read("src/x.c"), "x1");
  EXPECT_EQ(read("src/new.c"), "new") << "src/x.c alone was named";
  std::string recorded = json->getObject("recorded")->getValue<std::string>("id");
  Poco::JSON::Object::Ptr shown = object_of(ok({"--json", "show", recorded}));
  std::string summary = shown->getObject("ledger")->getValue<std::string>("result_summary");
  EXPECT_NE(summary.find("restored a.txt, src/x.c of "), std::string::npos) << summary;
  EXPECT_NE(ok({"log", "-n", "1"}).find("restored a.txt, src/x.c of "), std::string::npos);
}

TEST_F(RestorePathsTest, DryRunListsTheChangesOfThePathsAndChangesNothing) {
  Manifest before = take_manifest(ws_);
  std::string log_before = ok({"log"});
  std::string out = ok({"restore", "base", "--dry-run", "--", "src"});
  EXPECT_NE(out.find("would restore src of "), std::string::npos) << out;
  EXPECT_NE(out.find("src/x.c"), std::string::npos) << out;
  EXPECT_NE(out.find("src/new.c"), std::string::npos) << out;
  EXPECT_EQ(out.find("a.txt"), std::string::npos) << "not named: " << out;
  EXPECT_EQ(testing_support::describe_difference(before, take_manifest(ws_)), "");
  EXPECT_EQ(ok({"log"}), log_before);
}

TEST_F(RestorePathsTest, AFileUnderDirectoriesTheWorkspaceLostComesBackAlone) {
  write("d/s/f1", "1");
  write("d/s/f2", "2");
  ok({"snapshot", "--tag", "with-d"});
  fs::remove_all(ws_ / "d");
  ok({"restore", "with-d", "--", "d/s/f1"});
  EXPECT_EQ(read("d/s/f1"), "1");
  EXPECT_FALSE(fs::exists(ws_ / "d/s/f2")) << "not named";
}

TEST_F(RestorePathsTest, APathOutsideTheWorkspaceIsRefused) {
  write_file(temp_ / "outside.txt", "o");
  expect_refused({"restore", "base", "--", "a.txt", "../outside.txt"}, "'../outside.txt'");
  expect_refused({"restore", "base", "--", (temp_ / "outside.txt").string()},
                 "is outside the workspace");
}

TEST_F(RestorePathsTest, APathInNeitherREFNorTheWorkspaceIsRefusedByName) {
  expect_refused({"restore", "base", "--", "a.txt", "no/such.txt"},
                 "cannot restore no/such.txt: it is in neither ");
}

TEST_F(RestorePathsTest, AFileWhereREFHasADirectoryAboveANamedPathIsRefused) {
  fs::remove_all(ws_ / "src");
  write("src", "a file now");
  expect_refused({"restore", "base", "--", "src/x.c"}, "src is not a directory in the workspace");
}

TEST_F(RestorePathsTest, SlicesAndPathsTogetherAreAUsageError) {
  CommandResult r = shadowbox({"restore", "base", "--slices", "plan", "--", "a.txt"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--slices"), std::string::npos) << r.err;
  EXPECT_NE(shadowbox({"restore", "--help"}).out.find("[-- PATH...]"), std::string::npos);
}

}  // namespace
