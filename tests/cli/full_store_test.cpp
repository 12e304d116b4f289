// A store whose filesystem is full can be collected: `shadowbox gc` first does what needs
// no new space (runs dropped whole, what nothing reaches any more deleted), then writes
// what the kept checkpoints need — and those restore byte for byte. The store lives on a
// small tmpfs mounted in a mount namespace of the test's own (as root, or in a user
// namespace where the kernel allows one); where neither is possible the test is skipped,
// saying so.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::TempDir;
using testing_support::write_file;

bool write_proc_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Puts this process (and what it starts) in a mount namespace of its own, whose mounts
// nobody else sees: "" if it could, else why not.
std::string private_mount_namespace() {
  if (::unshare(CLONE_NEWNS) != 0) {
    int first = errno;
    // Not allowed to: a user namespace, where this user is root, may be.
    uid_t uid = ::getuid();
    gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
      return std::string("unshare(CLONE_NEWNS): ") + std::strerror(first) +
             "; with CLONE_NEWUSER: " + std::strerror(errno);
    }
    if (!write_proc_file("/proc/self/setgroups", "deny") ||
        !write_proc_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !write_proc_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) {
      return std::string("cannot map this user in a user namespace: ") + std::strerror(errno);
    }
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return std::string("cannot make / private: ") + std::strerror(errno);
  }
  return "";
}

// A tmpfs of size bytes at dir, for as long as this object lives.
class SmallFilesystem {
 public:
  SmallFilesystem(const fs::path& dir, std::size_t size) : dir_(dir) {
    fs::create_directories(dir);
    std::string options = "size=" + std::to_string(size) + ",mode=0700";
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      error_ = std::string("cannot mount a tmpfs: ") + std::strerror(errno);
    }
  }
  ~SmallFilesystem() {
    if (error_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  const std::string& error() const { return error_; }

  // Bytes a writer can still have.
  std::uint64_t free_bytes() const {
    struct statvfs st {};
    ::statvfs(dir_.c_str(), &st);
    return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  }

 private:
  fs::path dir_;
  std::string error_;
};

// size bytes nobody can compress, from seed.
std::string random_bytes(unsigned seed, std::size_t size) {
  std::mt19937 gen(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(gen());
  return out;
}

class FullStoreTest : public ::testing::Test {
 protected:
  FullStoreTest() : ws_(temp_ / "ws"), small_(temp_ / "small") { fs::create_directories(ws_); }

  void SetUp() override {
    std::string why = private_mount_namespace();
    if (!why.empty()) {
      GTEST_SKIP() << "SKIPPED LOUDLY: no small filesystem to fill (" << why
                   << "); run as root, or where user namespaces are allowed";
    }
    filesystem_ = std::make_unique<SmallFilesystem>(small_, 12u << 20);
    if (!filesystem_->error().empty()) GTEST_SKIP() << "SKIPPED LOUDLY: " << filesystem_->error();
    write_file(fill_, "watch:\n  daemon: off\nmaintenance:\n  auto: false\n");
  }

  CommandResult shadowbox(const fs::path& config, std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN,    "--workspace", ws_.string(),   "--store",
                                     store().string(), "--config",    config.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing_support::run_command(argv, ws_,
                                        {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string git(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"git", "--git-dir", (store() / "repo.git").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = testing_support::run_command(argv, temp_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  fs::path store() const { return small_ / "store"; }

  // Runs of two checkpoints of 512 KiB each until the filesystem is full, then the last
  // bytes outside the store (gc can free only what the store holds). Returns each run's
  // newest data.
  std::map<std::string, std::string> fill_up() {
    std::map<std::string, std::string> newest;
    bool full = false;
    for (int i = 0; i < 40 && !full; ++i) {
      char run[8];
      std::snprintf(run, sizeof run, "run%02d", i);
      for (int k = 0; k < 2 && !full; ++k) {
        std::string data = random_bytes(static_cast<unsigned>(i * 2 + k), 512u << 10);
        write_file(ws_ / "data.bin", data);
        CommandResult r = shadowbox(fill_, {"snapshot", "--run", run});
        if (r.exit_code == 0) {
          newest[run] = data;
        } else {
          EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
          full = true;
        }
      }
    }
    EXPECT_TRUE(full) << "the filesystem never filled up";
    int fd = ::open(filler().c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    std::string block(64u << 10, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
    EXPECT_LT(filesystem_->free_bytes(), 64u << 10);
    return newest;
  }
  fs::path filler() const { return small_ / "filler"; }

  // The runs of the store.
  std::vector<std::string> runs() const {
    std::istringstream listed(
        git({"for-each-ref", "--format=%(refname:lstrip=3)", "refs/shadowbox/runs/"}));
    std::vector<std::string> out;
    for (std::string run; std::getline(listed, run);) out.push_back(run);
    return out;
  }

  // Expects the store sound, one record per checkpoint, each run one checkpoint long
  // and its checkpoint restoring byte for byte.
  void expect_kept_runs_restore(const std::map<std::string, std::string>& newest,
                                const fs::path& config) {
    std::vector<std::string> kept = runs();
    ASSERT_FALSE(kept.empty());
    std::istringstream notes(git({"notes", "--ref", "shadowbox", "list"}));
    std::size_t records = 0;
    for (std::string line; std::getline(notes, line);) ++records;
    EXPECT_EQ(records, kept.size()) << "one record per kept checkpoint, and no other";
    CommandResult fsck = testing_support::run_command(
        {"git", "--git-dir", (store() / "repo.git").string(), "fsck", "--strict"}, temp_.path());
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
    for (const std::string& run : kept) {
      ASSERT_EQ(git({"rev-list", "--count", "refs/shadowbox/runs/" + run}), "1\n") << run;
      CommandResult r = shadowbox(config, {"restore", "run:" + run});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_TRUE(testing_support::read_file(ws_ / "data.bin") == newest.at(run)) << run;
    }
  }

  TempDir temp_;
  fs::path ws_;
  fs::path small_;
  fs::path fill_ = temp_ / "fill.yaml";
  std::unique_ptr<SmallFilesystem> filesystem_;
};

TEST_F(FullStoreTest, GcFreesAFullStoresFilesystemAndTheKeptCheckpointsRestore) {
  std::map<std::string, std::string> newest = fill_up();
  ASSERT_GT(newest.size(), 8u);
  // One checkpoint kept per run, and whole runs dropped, the oldest first, down to 2 MiB:
  // most runs go.
  fs::path collect = temp_ / "gc.yaml";
  write_file(collect,
             "watch:\n  daemon: off\nmaintenance:\n  auto: false\n"
             "retention:\n  keep_last: 1\n  max_size: 2M\n  prune_grace: 0\n");
  CommandResult gc = shadowbox(collect, {"gc"});
  if (gc.exit_code != 0) {
    // A first call may run out of room for what it writes, saying so; the next goes on.
    EXPECT_NE(gc.err.find("is full"), std::string::npos) << gc.err;
    gc = shadowbox(collect, {"gc"});
  }
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_GT(filesystem_->free_bytes(), 4u << 20) << "gc freed too little";
  EXPECT_LT(runs().size(), newest.size() / 2) << "most runs were to go";
  expect_kept_runs_restore(newest, collect);
}

TEST_F(FullStoreTest, AGcWithNoRoomToWriteSaysSoAndCompletesOnceThereIsRoom) {
  std::map<std::string, std::string> newest = fill_up();
  // Every run shortened, none dropped: nothing can be freed without writing first.
  fs::path collect = temp_ / "gc.yaml";
  write_file(collect,
             "watch:\n  daemon: off\nmaintenance:\n  auto: false\n"
             "retention:\n  keep_last: 1\n  prune_grace: 0\n");
  CommandResult gc = shadowbox(collect, {"gc"});
  EXPECT_EQ(gc.exit_code, 1);
  EXPECT_NE(gc.err.find("the filesystem of the store " + store().string() + " is full"),
            std::string::npos)
      << gc.err;
  EXPECT_NE(gc.err.find("run gc again"), std::string::npos) << gc.err;
  // Left as it was: every run whole, git finds it sound.
  EXPECT_EQ(runs().size(), newest.size());
  CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", (store() / "repo.git").string(), "fsck", "--strict"}, temp_.path());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;

  fs::remove(filler());
  gc = shadowbox(collect, {"gc"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_EQ(runs().size(), newest.size());
  expect_kept_runs_restore(newest, collect);
}

}  // namespace
