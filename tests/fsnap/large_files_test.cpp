// Files over capture.max_file_size: no tree holds them, so the store keeps a copy of
// each version a checkpoint skipped — a reflink, else a hard link, else a copy — and a
// restore puts a deleted or replaced one back from it, names one it cannot put back
// (its copy was written in place through a hard link, or none could be made), and gc
// releases the copies no checkpoint names and counts the others in the store's size.
//
// The filesystem of the tests' temporary directory decides what the system's
// operations do (ext4 and tmpfs: no reflink, so a hard link); each way is also tested
// with operations that make the ones before it fail.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "fsnap/shadow_repo.hpp"
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

constexpr std::uint64_t kLimit = 1024;  // the tests' capture.max_file_size

struct stat stat_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

// The copy operations the tests hand a HostFilesystem: each counted; one given an errno
// value fails with it. A clone that succeeds copies the bytes (the tests' filesystem
// may have no reflinks): what matters is that the copy is a file of its own.
class CountedCopies {
 public:
  int clone_error = 0;
  int link_error = 0;
  int copy_error = 0;

  std::shared_ptr<const fsnap::CopyOperations> operations() {
    auto system = fsnap::CopyOperations::system();
    auto ops = std::make_shared<fsnap::CopyOperations>();
    ops->clone = [this, system](int from, int to) {
      ++clones;
      if (clone_error != 0) return clone_error;
      struct stat st {};
      ::fstat(from, &st);
      return system->copy(from, to, static_cast<std::uint64_t>(st.st_size));
    };
    ops->link = [this, system](int from_dir, const char* from, int to_dir, const char* to) {
      ++links;
      return link_error != 0 ? link_error : system->link(from_dir, from, to_dir, to);
    };
    ops->copy = [this, system](int from, int to, std::uint64_t size) {
      ++copies;
      return copy_error != 0 ? copy_error : system->copy(from, to, size);
    };
    return ops;
  }

  std::atomic<int> clones{0};
  std::atomic<int> links{0};
  std::atomic<int> copies{0};
};

class LargeFilesTest : public HostTest {
 protected:
  fsnap::HostFilesystem open_limited() { return open({.max_file_size = kLimit}); }
  // Makes copies with counted (the system's otherwise).
  void count(CountedCopies& counted) { copies_ = counted.operations(); }

  fs::path copies_dir() const { return store_dir_ / "large-files"; }
  fs::path copy_of(const fsnap::Checkpoint& c, const std::string& path) const {
    for (const fsnap::SkippedPath& s : c.skipped) {
      if (s.path == path && s.copy) return copies_dir() / s.copy->name;
    }
    ADD_FAILURE() << "checkpoint " << c.id << " keeps no copy of " << path;
    return {};
  }
  std::size_t copies_in_store() const {
    std::size_t n = 0;
    boost::system::error_code ec;
    for (fs::directory_iterator it(copies_dir(), ec), end; !ec && it != end; it.increment(ec)) ++n;
    return n;
  }
  // Writes content over the file at rel without replacing it (same inode).
  void write_in_place(const std::string& rel, const std::string& content) {
    int fd = ::open(at(rel).c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, content.data(), content.size(), 0),
              static_cast<ssize_t>(content.size()));
    ::close(fd);
  }
  // Dates the file at rel an hour back: a write after it gets another mtime, however
  // coarse the filesystem's clock.
  void age(const std::string& rel) {
    timespec times[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 3600, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, at(rel).c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  }
  // Writes content as a new file renamed over rel (another inode).
  void replace(const std::string& rel, const std::string& content) {
    write(rel + ".new", content);
    fs::rename(ws_ / (rel + ".new"), ws_ / rel);
  }
};

std::string big(char c, std::size_t n = 4 * kLimit) {
  return std::string(n, c);
}

bool has_path(const std::vector<fsnap::TreeChange>& changes, const std::string& path,
              fsnap::TreeChange::Kind kind) {
  for (const fsnap::TreeChange& c : changes) {
    if (c.path == path && c.kind == kind) return true;
  }
  return false;
}

TEST_F(LargeFilesTest, ADeletedLargeFileComesBackFromItsCopy) {
  write("small.txt", "small");
  write("node_modules/pkg/huge.bin", big('h'));
  write("node_modules/pkg/index.js", "module");
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  ASSERT_EQ(before.skipped.size(), 1u);
  ASSERT_TRUE(before.skipped[0].copy) << "the store keeps a copy";
  // What the capture recorded survives a round trip through the repository.
  EXPECT_EQ(fs.repo().resolve(before.id).skipped, before.skipped);
  Manifest expected = manifest();

  remove("node_modules");
  fsnap::RestoreReport dry = fs.restore_checkpoint(before, {.dry_run = true});
  EXPECT_TRUE(
      has_path(dry.large_files, "node_modules/pkg/huge.bin", fsnap::TreeChange::Kind::kAdded));
  EXPECT_FALSE(fs::exists(ws_ / "node_modules")) << "a dry run touches nothing";

  fsnap::RestoreReport report = fs.restore_checkpoint(before, {});
  EXPECT_WORKSPACE(expected);
  EXPECT_TRUE(report.unrestored.empty());
  EXPECT_TRUE(
      has_path(report.large_files, "node_modules/pkg/huge.bin", fsnap::TreeChange::Kind::kAdded));
}

TEST_F(LargeFilesTest, ALargeFileReplacedByAnotherComesBackAndTheSafetyCheckpointKeepsTheOther) {
  write("data.bin", big('1'));
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  replace("data.bin", big('2'));

  fsnap::RestoreReport report = fs.restore_checkpoint(before, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "data.bin"), big('1'));
  EXPECT_TRUE(report.unrestored.empty());
  EXPECT_TRUE(has_path(report.large_files, "data.bin", fsnap::TreeChange::Kind::kModified));
  // The restore can be undone: the replacement is the safety checkpoint's.
  ASSERT_TRUE(report.safety);
  fs.restore_checkpoint(*report.safety, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "data.bin"), big('2'));
}

TEST_F(LargeFilesTest, ALargeFileWrittenInPlaceThroughAHardLinkIsNamedAndNotRestored) {
  CountedCopies counted;
  counted.clone_error = EOPNOTSUPP;  // as ext4: the copy is a hard link
  count(counted);
  write("same-size.bin", big('a'));
  write("truncated.bin", big('b'));
  age("same-size.bin");
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  ASSERT_EQ(counted.links, 2);
  EXPECT_EQ(stat_of(copy_of(before, "same-size.bin")).st_ino,
            stat_of(ws_ / "same-size.bin").st_ino);

  // Written in place: the store's name for the file sees the new content too.
  write_in_place("same-size.bin", big('A', 16));
  testing_support::write_file(ws_ / "truncated.bin", "short");  // O_TRUNC, same inode

  fsnap::RestoreReport report = fs.restore_checkpoint(before, {});
  ASSERT_EQ(report.unrestored.size(), 2u);
  for (const fsnap::UnrestoredPath& u : report.unrestored) {
    EXPECT_NE(u.why.find("written in place"), std::string::npos) << u.path << ": " << u.why;
  }
  EXPECT_EQ(report.unrestored[0].path, "same-size.bin");
  EXPECT_EQ(report.unrestored[1].path, "truncated.bin");
  EXPECT_TRUE(report.large_files.empty()) << "nothing is said to be restored";
  // Left as they are, not "restored" with the wrong content.
  EXPECT_EQ(testing_support::read_file(ws_ / "same-size.bin"), big('A', 16) + big('a').substr(16));
  EXPECT_EQ(testing_support::read_file(ws_ / "truncated.bin"), "short");
}

TEST_F(LargeFilesTest, AReflinkIsMadeWhereTheFilesystemClonesAndSurvivesAWriteInPlace) {
  CountedCopies counted;  // every way works: the first is taken
  count(counted);
  write("data.bin", big('r'));
  age("data.bin");
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  EXPECT_EQ(counted.clones, 1);
  EXPECT_EQ(counted.links, 0);
  EXPECT_EQ(counted.copies, 0);
  EXPECT_NE(stat_of(copy_of(before, "data.bin")).st_ino, stat_of(ws_ / "data.bin").st_ino)
      << "a file of its own";

  write_in_place("data.bin", big('W', 8));
  fsnap::RestoreReport report = fs.restore_checkpoint(before, {});
  EXPECT_TRUE(report.unrestored.empty());
  EXPECT_EQ(testing_support::read_file(ws_ / "data.bin"), big('r'));
}

TEST_F(LargeFilesTest, AHardLinkWhereTheFilesystemCannotClone) {
  CountedCopies counted;
  counted.clone_error = EOPNOTSUPP;
  count(counted);
  write("data.bin", big('l'));
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  EXPECT_EQ(counted.clones, 1);
  EXPECT_EQ(counted.links, 1);
  EXPECT_EQ(counted.copies, 0);
  struct stat copy = stat_of(copy_of(before, "data.bin"));
  EXPECT_EQ(copy.st_ino, stat_of(ws_ / "data.bin").st_ino) << "the same file: free";
  EXPECT_EQ(copy.st_nlink, 2u);

  fs::remove(ws_ / "data.bin");
  fs.restore_checkpoint(before, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "data.bin"), big('l'));
}

TEST_F(LargeFilesTest, ACopyWhenNeitherACloneNorALinkCanBeMadeAndItStaysSparse) {
  CountedCopies counted;
  counted.clone_error = EXDEV;
  counted.link_error = EXDEV;  // as for a store on another filesystem
  count(counted);
  // 8 MiB with a few bytes of data at each end: a hole in between.
  {
    int fd = ::open(at("sparse.img").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
    ASSERT_EQ(::pwrite(fd, "tail", 4, (8 << 20) - 4), 4);
    ::close(fd);
  }
  std::string content = testing_support::read_file(ws_ / "sparse.img");
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  EXPECT_EQ(counted.copies, 1);
  struct stat copy = stat_of(copy_of(before, "sparse.img"));
  EXPECT_NE(copy.st_ino, stat_of(ws_ / "sparse.img").st_ino);
  EXPECT_EQ(copy.st_size, 8 << 20);
  EXPECT_LT(copy.st_blocks * 512, 1 << 20) << "the hole stayed a hole";

  fs::remove(ws_ / "sparse.img");
  fs.restore_checkpoint(before, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "sparse.img"), content);
}

// Whether the filesystem of dir makes reflinks.
bool clones_in(const fs::path& dir) {
  testing_support::write_file(dir / "probe", "probe");
  int from = ::open((dir / "probe").c_str(), O_RDONLY | O_CLOEXEC);
  int to = ::open((dir / "probe.clone").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  bool ok = from >= 0 && to >= 0 && ::ioctl(to, FICLONE, from) == 0;
  ::close(from);
  ::close(to);
  fs::remove(dir / "probe");
  fs::remove(dir / "probe.clone");
  return ok;
}

TEST_F(LargeFilesTest, TheSystemClonesWhereItCanAndLinksOtherwise) {
  bool clones = clones_in(temp_.path());
  write("data.bin", big('s'));
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  bool same_file = stat_of(copy_of(before, "data.bin")).st_ino == stat_of(ws_ / "data.bin").st_ino;
  EXPECT_EQ(same_file, !clones) << (clones ? "a reflink" : "a hard link (no reflinks here)");
}

TEST_F(LargeFilesTest, AWorkspaceOnAnotherFilesystemGetsRealCopies) {
  // tmpfs, where the machine has one apart from the temporary directory's filesystem.
  fs::path shm = "/dev/shm";
  boost::system::error_code ec;
  if (!fs::is_directory(shm, ec) || stat_of(shm).st_dev == stat_of(temp_.path()).st_dev) {
    GTEST_SKIP() << "no second filesystem at /dev/shm";
  }
  testing_support::TempDir elsewhere;  // under $TMPDIR: the store's filesystem
  fs::path ws = fs::unique_path(shm / "shadowbox-ws-%%%%%%%%");
  fs::create_directories(ws);
  struct Remove {
    fs::path p;
    ~Remove() { fs::remove_all(p); }
  } cleanup{ws};
  testing_support::write_file(ws / "data.bin", big('x'));
  fsnap::HostFilesystem fs(fsnap::Store::open(elsewhere.path() / "store", ws, true),
                           {.max_file_size = kLimit});
  fsnap::Checkpoint before = fs.checkpoint({});
  ASSERT_EQ(before.skipped.size(), 1u);
  ASSERT_TRUE(before.skipped[0].copy);
  struct stat copy =
      stat_of(elsewhere.path() / "store" / "large-files" / before.skipped[0].copy->name);
  EXPECT_NE(copy.st_dev, stat_of(ws / "data.bin").st_dev);
  fs::remove(ws / "data.bin");
  EXPECT_TRUE(fs.restore_checkpoint(before, {}).unrestored.empty());
  EXPECT_EQ(testing_support::read_file(ws / "data.bin"), big('x'));
}

TEST_F(LargeFilesTest, AnUnchangedLargeFileIsCopiedOnce) {
  CountedCopies counted;
  count(counted);
  write("data.bin", big('u'));
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint first = fs.checkpoint({});
  write("other.txt", "a change elsewhere");
  fsnap::Checkpoint second = fs.checkpoint({});
  EXPECT_EQ(counted.clones, 1);
  EXPECT_EQ(first.skipped, second.skipped) << "both name the same copy";
  EXPECT_EQ(copies_in_store(), 1u);
}

TEST_F(LargeFilesTest, ALargeFileTheTargetLacksIsRemovedAndTheSafetyCheckpointKeepsIt) {
  write("a.txt", "a");
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  write("downloads/disk.iso", big('i'));
  fsnap::RestoreReport report = fs.restore_checkpoint(before, {});
  EXPECT_FALSE(fs::exists(ws_ / "downloads")) << "its directory went with it";
  EXPECT_TRUE(
      has_path(report.large_files, "downloads/disk.iso", fsnap::TreeChange::Kind::kDeleted));
  EXPECT_TRUE(report.kept.empty());
  fs.restore_checkpoint(*report.safety, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "downloads/disk.iso"), big('i'));
}

TEST_F(LargeFilesTest, AFileNoCopyCouldBeMadeOfIsNamedAndWhatIsThereNowStays) {
  CountedCopies counted;
  counted.clone_error = counted.link_error = counted.copy_error = ENOSPC;
  count(counted);
  write("data.bin", big('n'));
  fsnap::HostFilesystem fs = open_limited();
  fsnap::Checkpoint before = fs.checkpoint({});
  ASSERT_EQ(before.skipped.size(), 1u);
  EXPECT_FALSE(before.skipped[0].copy);
  EXPECT_EQ(copies_in_store(), 0u) << "nothing half-made is left";

  fs::remove(ws_ / "data.bin");
  write("later.bin", big('l'));  // no copy either: it stays
  fsnap::RestoreReport report = fs.restore_checkpoint(before, {});
  ASSERT_EQ(report.unrestored.size(), 1u);
  EXPECT_EQ(report.unrestored[0].path, "data.bin");
  EXPECT_NE(report.unrestored[0].why.find("no copy"), std::string::npos)
      << report.unrestored[0].why;
  EXPECT_TRUE(fs::exists(ws_ / "later.bin"));
}

TEST_F(LargeFilesTest, ACopyNoCheckpointNamesIsReleasedByGc) {
  write("data.bin", big('g'));
  fsnap::HostFilesystem fs = open_limited();
  fs.checkpoint({});
  fs::remove(ws_ / "data.bin");
  write("data.bin", big('h'));  // another file
  fs.checkpoint({});
  ASSERT_EQ(copies_in_store(), 2u);

  auto now = std::chrono::system_clock::now() + std::chrono::hours(2);
  fsnap::GcReport kept_all = fs.repo().collect_garbage({}, now);
  EXPECT_EQ(kept_all.large_files_pruned, 0u) << "both are named";
  fsnap::GcReport report = fs.repo().collect_garbage({.keep_last = 1}, now);
  EXPECT_EQ(report.large_files_pruned, 1u);
  EXPECT_EQ(copies_in_store(), 1u);
  // The newest checkpoint's copy is the one left, and still does its job.
  fsnap::Checkpoint newest = fs.repo().log("default", 1).front();
  fs::remove(ws_ / "data.bin");
  fs.restore_checkpoint(newest, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "data.bin"), big('h'));
}

TEST_F(LargeFilesTest, ACopyYoungerThanTheGraceStays) {
  write("data.bin", big('y'));
  fsnap::HostFilesystem fs = open_limited();
  fs.capture_tree();  // copied, named by no checkpoint
  ASSERT_EQ(copies_in_store(), 1u);
  EXPECT_EQ(fs.repo().collect_garbage({}, std::chrono::system_clock::now()).large_files_pruned, 0u);
  EXPECT_EQ(copies_in_store(), 1u);
}

TEST_F(LargeFilesTest, TheCopiesTheStoreAloneHoldsCountInItsSize) {
  CountedCopies counted;
  counted.clone_error = EOPNOTSUPP;  // hard links, on any filesystem
  count(counted);
  std::string megabyte(1 << 20, ' ');
  for (std::size_t i = 0; i < megabyte.size(); ++i) megabyte[i] = static_cast<char>('a' + i % 26);
  write("data.bin", megabyte);
  fsnap::HostFilesystem fs = open_limited();
  fs.checkpoint({.run = "old"});
  fs.checkpoint({.run = "new"});
  // The objects take a few KiB; the copy 1 MiB once the store alone holds it.
  fsnap::RetentionPolicy policy{.max_size = 512 << 10, .prune_grace = std::chrono::seconds(0)};
  auto now = std::chrono::system_clock::now() + std::chrono::hours(1);
  EXPECT_EQ(fs.repo().collect_garbage(policy, now).runs_dropped, 0u)
      << "the workspace still has the file: its hard link costs the store nothing";

  fs::remove(ws_ / "data.bin");
  fs.checkpoint({.run = "newest"});  // the newest run stays; it names no copy
  fsnap::GcReport report = fs.repo().collect_garbage(policy, now);
  EXPECT_EQ(report.dropped_runs, (std::vector<std::string>{"old", "new"}));
  EXPECT_EQ(report.large_files_pruned, 1u);
  EXPECT_EQ(copies_in_store(), 0u);
}

}  // namespace
}  // namespace fsnap_test
