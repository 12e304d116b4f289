// A first capture of a git checkout (issue 10): blob ids come from the user's index
// where its stat data vouches for a file, the user's packs are linked into the store,
// and the result is exactly what reading every file gives. The store stays
// self-contained: deleting or garbage-collecting the user's repository afterwards
// breaks no checkpoint.
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>

#include <thread>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

using testing_support::run_command;

class CheckoutIndexTest : public HostTest {
 protected:
  CheckoutIndexTest() { use_test_clock(); }

  // Runs git in the workspace, isolated from the user's own configuration.
  std::string git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git", "-c", "user.name=t", "-c", "user.email=t@example.com"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv, ws_, {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"});
    EXPECT_EQ(r.exit_code, 0) << "git " << args.front() << ": " << r.err;
    return r.out;
  }

  // A checkout of a repository with n committed files in a few directories (packed by
  // git gc, as a clone's are), a symlink and an executable file.
  void make_checkout(int n) {
    git({"init", "-q"});
    for (int i = 0; i < n; ++i) {
      write("src/d" + std::to_string(i % 5) + "/f" + std::to_string(i) + ".c",
            "int f" + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n");
    }
    write("tool.sh", "#!/bin/sh\necho hi\n", true);
    link("src/d0/f0.c", "latest");
    write(".gitignore", "*.o\n");
    past_the_clock_tick();
    git({"add", "-A"});
    git({"commit", "-q", "-m", "one"});
    git({"gc", "-q"});
  }

  // File times come from a coarse clock (a tick of at most 10 ms): a file written in the
  // same tick as the index that takes it is racy, and read. Called between writing files
  // and `git add`, so that the index vouches for them.
  static void past_the_clock_tick() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

  fsnap::CaptureOptions counting(bool use_git_index = true) {
    fsnap::CaptureOptions options;
    options.use_git_index = use_git_index;
    options.on_progress = [this](const fsnap::CaptureProgress& p) {
      if (p.done) last_ = p;
    };
    return options;
  }

  // The tree of the workspace as a capture that reads every file sees it, in a store of
  // its own.
  std::string tree_read_in_full() {
    fsnap::HostFilesystem plain(fsnap::Store::open(temp_.path() / "plain-store", ws_, true),
                                counting(false), fsnap::HostEnv{nullptr, clock_, nullptr});
    return plain.capture_tree();
  }

  static timespec mtime_of(const fs::path& p) {
    struct stat st;
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mtim;
  }

  fs::path user_pack() {
    for (fs::directory_iterator it(ws_ / ".git/objects/pack"), end; it != end; ++it) {
      if (it->path().extension() == ".pack") return it->path();
    }
    ADD_FAILURE() << "git gc wrote no pack";
    return {};
  }

  fsnap::CaptureProgress last_;
};

TEST_F(CheckoutIndexTest, FirstCaptureTakesIdsFromTheIndexAndMatchesAFullRead) {
  make_checkout(40);
  write("src/d1/f1.c", "changed, and longer than before\n");  // edited, not staged
  write("src/d2/new.c", "staged, not committed\n");           // a loose object of the user's
  past_the_clock_tick();
  git({"add", "src/d2/new.c"});
  write("notes.txt", "untracked\n");
  write("main.o", "ignored\n");
  settle();
  timespec pack_before = mtime_of(user_pack());
  timespec index_before = mtime_of(ws_ / ".git/index");

  fsnap::HostFilesystem fs = open(counting());
  std::string tree = fs.capture_tree();
  std::uint64_t hashed = last_.files_hashed;

  EXPECT_EQ(tree, tree_read_in_full());
  EXPECT_EQ(last_.files_hashed, 46u) << "the full read reads every file";
  // Only the edited, untracked and ignored files were read; the staged file's blob was
  // taken from the user's loose object.
  EXPECT_EQ(hashed, 3u);
  // The user's repository is only read.
  timespec pack_after = mtime_of(user_pack());
  timespec index_after = mtime_of(ws_ / ".git/index");
  EXPECT_EQ(pack_after.tv_sec, pack_before.tv_sec);
  EXPECT_EQ(pack_after.tv_nsec, pack_before.tv_nsec);
  EXPECT_EQ(index_after.tv_nsec, index_before.tv_nsec);
  // Its pack is in the store as a hard link (same filesystem here).
  struct stat user_st;
  struct stat store_st;
  ASSERT_EQ(::stat(user_pack().c_str(), &user_st), 0);
  ASSERT_EQ(
      ::stat((store_dir_ / "repo.git/objects/pack" / user_pack().filename()).c_str(), &store_st),
      0);
  EXPECT_EQ(user_st.st_ino, store_st.st_ino);
}

TEST_F(CheckoutIndexTest, CheckpointsSurviveTheUserRepositoryDeleted) {
  make_checkout(30);
  write("src/d2/new.c", "staged, not committed\n");
  past_the_clock_tick();
  git({"add", "src/d2/new.c"});
  settle();
  Manifest before = manifest();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 0u);

  fs::remove_all(ws_ / ".git");
  for (int i = 0; i < 30; i += 3)
    remove("src/d" + std::to_string(i % 5) + "/f" + std::to_string(i) + ".c");
  write("src/d0/f0.c", "overwritten\n");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
}

TEST_F(CheckoutIndexTest, CheckpointsSurviveTheUserRepositoryGarbageCollected) {
  make_checkout(30);
  settle();
  Manifest before = manifest();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 0u);
  fs::path linked = user_pack();

  // History rewritten to nothing, then every unreachable object pruned: the packs the
  // store linked are deleted from the user's repository.
  std::string branch = git({"symbolic-ref", "--short", "HEAD"});
  branch.pop_back();  // the newline
  git({"checkout", "-q", "--orphan", "empty"});
  git({"rm", "-rq", "--cached", "."});
  git({"commit", "-q", "--allow-empty", "-m", "empty"});
  git({"branch", "-q", "-D", branch});
  git({"reflog", "expire", "--expire=now", "--all"});
  git({"gc", "-q", "--prune=now"});
  EXPECT_FALSE(fs::exists(linked)) << "git gc kept the pack";

  remove("src");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
}

TEST_F(CheckoutIndexTest, ContentAFilterChangedIsReadAsItIs) {
  git({"init", "-q"});
  git({"config", "core.autocrlf", "true"});
  write("dos.txt", "one\r\ntwo\r\n");
  write("unix.txt", "no line ends at all");
  past_the_clock_tick();
  git({"add", "-A"});
  git({"commit", "-q", "-m", "one"});
  git({"gc", "-q"});
  write("staged.txt", "three\r\n");  // a loose object of the user's
  past_the_clock_tick();
  git({"add", "staged.txt"});
  settle();
  Manifest before = manifest();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  // The files with CRLF went into the index with LF endings (another size): they were
  // read.
  EXPECT_EQ(last_.files_hashed, 2u);

  remove("dos.txt");
  remove("staged.txt");
  fs.restore_checkpoint(cp, {});
  EXPECT_WORKSPACE(before);
  EXPECT_EQ(tree_read_in_full(), cp.tree);
}

TEST_F(CheckoutIndexTest, AFilterAttributeMeansEveryFileIsRead) {
  make_checkout(10);
  write(".gitattributes", "*.c filter=custom\n");
  past_the_clock_tick();
  git({"add", ".gitattributes"});
  settle();
  fsnap::HostFilesystem fs = open(counting());
  EXPECT_EQ(fs.capture_tree(), tree_read_in_full());
  EXPECT_EQ(last_.files_hashed, 14u);
}

TEST_F(CheckoutIndexTest, RacyEntriesAreRead) {
  make_checkout(10);
  // An index written before its files' times: git cannot tell whether they changed
  // again in the same tick, and neither can shadowbox.
  timespec past[2] = {{.tv_sec = 1000000, .tv_nsec = 0}, {.tv_sec = 1000000, .tv_nsec = 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (ws_ / ".git/index").c_str(), past, 0), 0);
  settle();
  fsnap::HostFilesystem fs = open(counting());
  EXPECT_EQ(fs.capture_tree(), tree_read_in_full());
  EXPECT_EQ(last_.files_hashed, 13u);
}

TEST_F(CheckoutIndexTest, TheIndexIsNotUsedWhenTurnedOffOrOnceAStatCacheExists) {
  make_checkout(10);
  settle();
  {
    fsnap::HostFilesystem fs = open(counting(false));
    fs.capture_tree();
    EXPECT_EQ(last_.files_hashed, 13u);
  }
  write("src/d0/f0.c", "edited\n");
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fs.capture_tree();
  EXPECT_EQ(last_.files_hashed, 1u);  // from the stat cache, as before
}

TEST_F(CheckoutIndexTest, AForgedIndexCannotMakeACheckpointRecordWhatIsNotOnDisk) {
  // An agent that can write the workspace can write .git/index: here an entry with the
  // stat data of the file as it is now and the id of what it was (same size).
  make_checkout(5);
  std::string old_id = git({"rev-parse", "HEAD:src/d0/f0.c"});
  old_id.pop_back();
  std::string before = testing_support::read_file(ws_ / "src/d0/f0.c");
  std::string after = before;
  after[after.size() - 5] = '9';  // "return 0;" -> "return 9;"
  ASSERT_EQ(after.size(), before.size());
  write("src/d0/f0.c", after);
  past_the_clock_tick();
  git({"add", "src/d0/f0.c"});  // the index now vouches for the new content...
  {
    git_libgit2_init();
    git_repository* repo = nullptr;
    ASSERT_EQ(git_repository_open(&repo, ws_.c_str()), 0);
    git_index* index = nullptr;
    ASSERT_EQ(git_repository_index(&index, repo), 0);
    const git_index_entry* found = git_index_get_bypath(index, "src/d0/f0.c", 0);
    ASSERT_NE(found, nullptr);
    git_index_entry forged = *found;
    ASSERT_EQ(git_oid_fromstr(&forged.id, old_id.c_str()), 0);  // ...under the old id
    ASSERT_EQ(git_index_add(index, &forged), 0);
    ASSERT_EQ(git_index_write(index), 0);
    git_index_free(index);
    git_repository_free(repo);
    git_libgit2_shutdown();
  }
  settle();
  ASSERT_NE(git({"ls-files", "-s", "src/d0/f0.c"}).find(old_id), std::string::npos)
      << "the index was forged";

  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint first = fs.checkpoint({});
  EXPECT_EQ(first.tree, tree_read_in_full()) << "the checkpoint records what is on disk";
  // And a restore of it writes what was on disk.
  write("src/d0/f0.c", "something else entirely\n");
  fs.restore_checkpoint(first, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "src/d0/f0.c"), after);
}

}  // namespace
}  // namespace fsnap_test
