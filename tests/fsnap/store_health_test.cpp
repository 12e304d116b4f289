// The store is private whatever the umask, and stays a healthy git repository (plain
// `git fsck` passes) whatever the workspace holds.
#include <sys/stat.h>

#include <set>

#include "host_fixture.hpp"

namespace {

using fsnap_test::HostTest;
namespace fs = boost::filesystem;

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Sets the umask for the life of the object.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

class StoreHealthTest : public HostTest {};

TEST_F(StoreHealthTest, TheStoreIsPrivateWhateverTheUmask) {
  Umask permissive(022);
  write(".env", "SECRET=1\n");
  open().snapshot("first");
  EXPECT_EQ(mode_of(store_dir_), 0700u);
  std::size_t objects = 0;
  for (fs::recursive_directory_iterator it(store_dir_ / "repo.git" / "objects"), end; it != end;
       ++it) {
    if (!fs::is_regular_file(it->path())) continue;
    ++objects;
    EXPECT_EQ(mode_of(it->path()) & 077, 0u) << it->path();
  }
  EXPECT_GT(objects, 0u);
  // A store left readable by others (an older version, a chmod) is tightened, and says so.
  ASSERT_EQ(::chmod(store_dir_.c_str(), 0755), 0);
  fsnap::Store reopened = fsnap::Store::open(store_dir_, ws_, false);
  EXPECT_TRUE(reopened.tightened());
  EXPECT_EQ(mode_of(store_dir_), 0700u);
  EXPECT_FALSE(fsnap::Store::open(store_dir_, ws_, false).tightened()) << "said once";
}

TEST_F(StoreHealthTest, GitFsckAcceptsWhatGitWouldNotCheckOut) {
  write(".gitmodules",
        "[submodule \"../../evil\"]\n\tpath = sub\n\turl = -upload-pack=touch /tmp/x\n"
        "[submodule \"ok\"]\n\tpath = -x\n\turl = --evil\n");
  write(".GIT/config", "[core]\n");
  write("git~1/HEAD", "ref: refs/heads/main\n");
  write("sub/.gitattributes", std::string(2000, 'a') + " text\n");
  fsnap::HostFilesystem fs = open();
  std::string tree = fs.snapshot("hostile").tree;
  testing_support::CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", (store_dir_ / "repo.git").string(), "fsck", "--strict"}, temp_.path());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  EXPECT_EQ(fsck.err.find("error"), std::string::npos) << fsck.err;
  // The workspace's content is captured exactly all the same — but for what some
  // filesystem takes for a git directory, which is left out as `.git` is (a restore
  // would refuse to write it: hostile_tree_test).
  std::set<std::string> paths;
  for (const fsnap::TreeChange& c : fs.repo().diff_trees("", tree)) paths.insert(c.path);
  for (const char* p : {".gitmodules", "sub/.gitattributes"}) {
    EXPECT_EQ(paths.count(p), 1u) << p;
  }
  for (const char* p : {".GIT/config", "git~1/HEAD"}) EXPECT_EQ(paths.count(p), 0u) << p;
}

}  // namespace
