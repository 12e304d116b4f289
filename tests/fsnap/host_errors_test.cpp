// Bad input gets a clear error and changes nothing: unknown and ambiguous refs, paths
// that escape the workspace, unreadable files, unwritable stores. A snapshot that
// fails records nothing (never a stale or partial checkpoint).
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <iostream>
#include <map>

#include "fsnap/error.hpp"
#include "fsnap/shadow_repo.hpp"
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

// Expects f to throw fsnap::Error with code and a message containing text.
void expect_error(const std::function<void()>& f, fsnap::ErrorCode code, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error thrown (expected " << fsnap::to_string(code) << ")";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << text << "'";
  }
}

TEST_F(HostTest, UnknownRefIsNotFound) {
  write("a", "a");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({.tag = "t"});
  expect_error([&] { fs.repo().resolve("no-such-tag"); }, fsnap::ErrorCode::kNotFound,
               "no-such-tag");
  expect_error([&] { fs.repo().resolve("pre:toolu_missing"); }, fsnap::ErrorCode::kNotFound,
               "toolu_missing");
  expect_error([&] { fs.repo().resolve("run:nope"); }, fsnap::ErrorCode::kNotFound, "nope");
  expect_error([&] { fs.repo().resolve("deadbeefdeadbeef"); }, fsnap::ErrorCode::kNotFound,
               "deadbeefdeadbeef");
  expect_error([&] { fs.repo().resolve(""); }, fsnap::ErrorCode::kInvalidArgument, "empty");
}

TEST_F(HostTest, AmbiguousPrefixListsTheCandidates) {
  write("a", "a");
  fsnap::HostFilesystem fs = open();
  // Checkpoint and commit ids are random-looking; take checkpoints until two of them
  // share a 4-digit prefix (expected after ~160; 3000 make a miss impossible in practice).
  std::map<std::string, std::string> seen;  // prefix -> full id
  std::string prefix;
  std::pair<std::string, std::string> pair;
  for (int i = 0; i < 3000 && prefix.empty(); ++i) {
    fsnap::Checkpoint c = fs.checkpoint({});
    for (const std::string& id : {c.id, c.commit}) {
      auto [it, inserted] = seen.emplace(id.substr(0, 4), id);
      if (!inserted && prefix.empty()) {
        prefix = id.substr(0, 4);
        pair = {it->second, id};
      }
    }
  }
  ASSERT_FALSE(prefix.empty());
  try {
    fs.repo().resolve(prefix);
    FAIL() << "prefix " << prefix << " resolved although it is ambiguous";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kAmbiguous);
    std::string message = e.what();
    EXPECT_NE(message.find(pair.first.substr(0, 8)), std::string::npos) << message;
    EXPECT_NE(message.find(pair.second.substr(0, 8)), std::string::npos) << message;
  }
  // A longer prefix of one of them is unique again.
  EXPECT_NO_THROW(fs.repo().resolve(pair.second.substr(0, 16)));
  expect_error([&] { fs.repo().resolve("abc"); }, fsnap::ErrorCode::kInvalidArgument, "abc");
}

TEST_F(HostTest, PathsThatEscapeTheRootAreRefused) {
  testing_support::TempDir outside;
  testing_support::write_file(outside.path() / "secret", "outside");
  write("inside", "in");
  link(outside.path().string(), "out-abs");
  link("../..", "out-rel");
  mkdir("d");
  fsnap::HostFilesystem fs = open();
  Manifest before = manifest();
  using fsnap::ErrorCode;
  expect_error([&] { fs.read("/etc/passwd"); }, ErrorCode::kPathEscape, "/etc/passwd");
  expect_error([&] { fs.write("../x", "x"); }, ErrorCode::kPathEscape, "../x");
  expect_error([&] { fs.write("d/../../x", "x"); }, ErrorCode::kPathEscape, "d/../../x");
  expect_error([&] { fs.read("out-abs/secret"); }, ErrorCode::kPathEscape, "out-abs");
  expect_error([&] { fs.write("out-abs/new", "x"); }, ErrorCode::kPathEscape, "out-abs");
  expect_error([&] { fs.write("out-abs", "x"); }, ErrorCode::kPathEscape, "out-abs");
  expect_error([&] { fs.remove("out-rel/x"); }, ErrorCode::kPathEscape, "out-rel");
  expect_error([&] { fs.mkdir("out-rel/newdir"); }, ErrorCode::kPathEscape, "out-rel");
  expect_error([&] { fs.list("out-abs"); }, ErrorCode::kPathEscape, "out-abs");
  expect_error([&] { fs.set_executable("out-abs/secret", true); }, ErrorCode::kPathEscape,
               "out-abs");
  expect_error([&] { fs.symlink("../escaped-link", "x"); }, ErrorCode::kPathEscape, "..");
  EXPECT_WORKSPACE(before);
  EXPECT_EQ(testing_support::read_file(outside.path() / "secret"), "outside");
  EXPECT_EQ(fs::directory_iterator(outside.path())->path().filename(), "secret");
  // Links themselves may be inspected and removed: they are entries of the workspace.
  EXPECT_EQ(fs.readlink("out-rel"), "../..");
  EXPECT_EQ(fs.stat("out-abs").type, fsnap::EntryType::kSymlink);
  // Harmless forms are accepted.
  EXPECT_EQ(fs.read("./d/../inside"), "in");
}

TEST_F(HostTest, FilesystemErrorsNameThePath) {
  fsnap::HostFilesystem fs = open();
  expect_error([&] { fs.read("missing.txt"); }, fsnap::ErrorCode::kNotFound, "missing.txt");
  mkdir("dir");
  expect_error([&] { fs.read("dir"); }, fsnap::ErrorCode::kInvalidArgument, "dir");
  expect_error([&] { fs.write("dir", "x"); }, fsnap::ErrorCode::kInvalidArgument, "dir");
  expect_error([&] { fs.remove(""); }, fsnap::ErrorCode::kInvalidArgument, "root");
}

// Runs f in a child process, as the unprivileged user `nobody` when the tests run as
// root (root ignores file permissions, which these tests rely on). Returns what f
// returned, or -1 if it threw anything but fsnap::Error.
int as_unprivileged(const std::function<int()>& f) {
  std::cout.flush();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) {
        ::_exit(100);
      }
    }
    int rc = 101;
    try {
      rc = f();
    } catch (const std::exception& e) {
      std::cerr << "child: unexpected exception: " << e.what() << '\n';
    }
    ::_exit(rc);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Opens the temporary tree to the unprivileged user.
void share_with_everyone(const fs::path& dir) {
  ::chmod(dir.c_str(), 0777);
  for (fs::recursive_directory_iterator it(dir), end; it != end; ++it) {
    if (fs::is_directory(fs::symlink_status(it->path()))) ::chmod(it->path().c_str(), 0777);
  }
}

TEST_F(HostTest, UnreadableFileFailsTheSnapshotAndRecordsNothing) {
  write("ok.txt", "fine");
  write("private/key", "secret");
  share_with_everyone(temp_.path());
  ::chmod(temp_.path().c_str(), 0777);
  // First checkpoint succeeds (as the same user that will fail later).
  ASSERT_EQ(as_unprivileged([&] {
              fsnap::HostFilesystem fs(fsnap::Store::open(store_dir_, ws_, true), {});
              fs.checkpoint({});
              return 0;
            }),
            0);
  ASSERT_EQ(::chmod(at("private/key").c_str(), 0000), 0);
  write("ok.txt", "changed");
  Manifest before = manifest();
  int rc = as_unprivileged([&] {
    fsnap::HostFilesystem fs(fsnap::Store::open(store_dir_, ws_, false), {});
    try {
      fs.checkpoint({});
      return 1;  // no error: wrong
    } catch (const fsnap::Error& e) {
      std::string message = e.what();
      bool names_it = message.find("private/key") != std::string::npos;
      bool hints = message.find("exclude") != std::string::npos;
      if (e.code() != fsnap::ErrorCode::kIo || !names_it || !hints) {
        std::cerr << "child: unexpected error: " << message << '\n';
        return 2;
      }
      return 0;
    }
  });
  EXPECT_EQ(rc, 0);
  EXPECT_WORKSPACE(before);
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_dir_ / "repo.git", false);
  EXPECT_EQ(repo.log("", 0).size(), 1u) << "a failed snapshot must not record a checkpoint";
  ::chmod(at("private/key").c_str(), 0644);
}

TEST_F(HostTest, StoreOnAReadOnlyDirectoryIsAClearError) {
  write("a", "a");
  fs::path readonly = temp_.path() / "readonly";
  fs::create_directories(readonly);
  share_with_everyone(temp_.path());
  ::chmod(readonly.c_str(), 0555);
  Manifest before = manifest();
  int rc = as_unprivileged([&] {
    try {
      fsnap::Store::open(readonly / "store", ws_, true);
      return 1;
    } catch (const fsnap::Error& e) {
      std::string message = e.what();
      if (e.code() != fsnap::ErrorCode::kIo || message.find("store") == std::string::npos) {
        std::cerr << "child: unexpected error: " << message << '\n';
        return 2;
      }
      return 0;
    }
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(fs::is_empty(readonly));
  EXPECT_WORKSPACE(before);
}

TEST_F(HostTest, StoreUnderAFileIsAClearError) {
  write("a", "a");
  testing_support::write_file(temp_.path() / "plain-file", "x");
  expect_error([&] { fsnap::Store::open(temp_.path() / "plain-file/store", ws_, true); },
               fsnap::ErrorCode::kIo, "plain-file/store");
  expect_error([&] { fsnap::Store::open(temp_.path() / "absent", ws_, false); },
               fsnap::ErrorCode::kNotFound, "absent");
}

TEST_F(HostTest, RestoringAForeignSnapshotIsRefused) {
  write("a", "a");
  fsnap::HostFilesystem fs = open();
  fsnap::FilesystemSnapshot bogus;
  bogus.id = "0123456789abcdef";
  bogus.commit = std::string(40, '1');
  Manifest before = manifest();
  EXPECT_THROW(fs.restore(bogus), fsnap::Error);
  EXPECT_WORKSPACE(before);
  // Through the Snapshotable protocol, a real snapshot round-trips; its label is kept
  // with the checkpoint (free text: no tag ref is made of it).
  fsnap::FilesystemSnapshot snap = fs.snapshot("pre:proto");
  write("a", "changed");
  fs.restore(snap);
  EXPECT_WORKSPACE(before);
  EXPECT_EQ(fs.repo().read_checkpoint(snap.commit).meta.label, "pre:proto");
}

}  // namespace
}  // namespace fsnap_test
