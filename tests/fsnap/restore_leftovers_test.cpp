// A restore killed part-way (SIGKILL) leaves the file it was writing under a name
// reserved for restore's temporary files (`.shadowbox-tmp-<pid>-<n>`): no later
// checkpoint captures it, the next capture removes it, and a restore never writes one
// back — while one whose restore may still be running is left alone.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

bool reserved(const std::string& name) {
  return name.rfind(".shadowbox-tmp-", 0) == 0;
}

std::string temp_name(pid_t pid, unsigned n) {
  return ".shadowbox-tmp-" + std::to_string(pid) + "-" + std::to_string(n);
}

// The workspace's entries named like restore's temporary files.
std::vector<std::string> leftovers(const fs::path& ws) {
  std::vector<std::string> out;
  for (fs::recursive_directory_iterator it(ws), end; it != end; ++it) {
    if (reserved(it->path().filename().string())) out.push_back(it->path().string());
  }
  return out;
}

// Every path in the tree, recursively.
void tree_paths(const fsnap::ShadowRepo& repo, const std::string& tree, const std::string& prefix,
                std::vector<std::string>& out) {
  for (const fsnap::ObjectEntry& e : repo.read_tree(tree)) {
    out.push_back(prefix + e.name);
    if (e.is_tree) tree_paths(repo, e.oid, prefix + e.name + "/", out);
  }
}

std::vector<std::string> tree_paths(const fsnap::ShadowRepo& repo, const std::string& tree) {
  std::vector<std::string> out;
  tree_paths(repo, tree, "", out);
  return out;
}

bool any_reserved(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (reserved(fs::path(p).filename().string())) return true;
  }
  return false;
}

// size bytes of a pattern that starts with seed: no block of zeros (restore writes those
// as holes, at no cost), so that writing it takes a while.
std::string big_file(char seed, std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>('a' + (seed + i % 251) % 26);
  return out;
}

// A process that has exited and been reaped: its id names no process.
pid_t gone_process() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

class RestoreLeftoversTest : public HostTest {};

TEST_F(RestoreLeftoversTest, AKilledRestoresTemporaryFileIsNeitherCapturedNorLeft) {
  // Large files, so that the restore spends its time writing them.
  for (char i = 0; i < 4; ++i) write("big" + std::to_string(i), big_file(i, 32u << 20));
  write("small.txt", "kept");
  std::string target;
  {
    fsnap::HostFilesystem fs = open();
    target = fs.checkpoint({}).commit;
  }
  for (int i = 0; i < 4; ++i) remove("big" + std::to_string(i));

  // The restore runs in a process of its own, killed as soon as it has created its
  // first temporary file (which it is then writing 32 MiB into).
  bool killed = testing_support::kill_on_creation(ws_, ".shadowbox-tmp-", [&] {
    pid_t pid = ::fork();
    if (pid == 0) {
      try {
        fsnap::HostFilesystem fs = open();
        fs.restore_checkpoint(fs.repo().read_checkpoint(target), {});
      } catch (...) {
      }
      ::_exit(0);
    }
    return pid;
  });
  ASSERT_TRUE(killed) << "the restore ended before it could be killed mid-file";
  ASSERT_FALSE(leftovers(ws_).empty()) << "the restore was not killed mid-file";

  // The next checkpoint holds no leftover, and none is left in the workspace.
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint after = fs.checkpoint({});
  std::vector<std::string> paths = tree_paths(fs.repo(), after.tree);
  EXPECT_FALSE(any_reserved(paths)) << "a leftover was captured";
  EXPECT_NE(std::find(paths.begin(), paths.end(), "small.txt"), paths.end());
  EXPECT_TRUE(leftovers(ws_).empty()) << leftovers(ws_).front();

  // And the restore, done again, completes.
  fs.restore_checkpoint(fs.repo().read_checkpoint(target), {});
  EXPECT_EQ(testing_support::read_file(ws_ / "big3"), big_file(3, 32u << 20));
  EXPECT_TRUE(leftovers(ws_).empty());
}

TEST_F(RestoreLeftoversTest, AWatchedCaptureLeavesThemOutAndKeepsThoseOfARunningRestore) {
  write("dir/a.txt", "a");
  fsnap::HostFilesystem fs = open();
  fs.watch();
  fs.checkpoint({});

  pid_t gone = gone_process();
  pid_t running = ::fork();
  if (running == 0) {
    ::pause();
    ::_exit(0);
  }
  // As a killed restore leaves them; and one of a restore still running.
  write("dir/" + temp_name(gone, 3), "half a fi");
  fs::create_directories(ws_ / "new");
  ASSERT_EQ(::symlink("target", (ws_ / "new" / temp_name(gone, 4)).c_str()), 0);
  write("dir/" + temp_name(running, 0), "being written");
  // Names not exactly of the reserved form are the user's.
  for (const char* name : {".shadowbox-tmp-x-1", ".shadowbox-tmp-12", ".shadowbox-tmp-012-1",
                           ".shadowbox-tmp-12-1.txt"}) {
    write(std::string("dir/") + name, "mine");
  }

  fsnap::Checkpoint c = fs.checkpoint({});
  std::vector<std::string> paths = tree_paths(fs.repo(), c.tree);
  for (const char* name : {".shadowbox-tmp-x-1", ".shadowbox-tmp-12", ".shadowbox-tmp-012-1",
                           ".shadowbox-tmp-12-1.txt"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), std::string("dir/") + name), paths.end())
        << name;
  }
  for (const std::string& p : paths) {
    EXPECT_EQ(p.find(".shadowbox-tmp-" + std::to_string(gone)), std::string::npos) << p;
    EXPECT_EQ(p.find(".shadowbox-tmp-" + std::to_string(running)), std::string::npos) << p;
  }
  EXPECT_FALSE(fs::exists(ws_ / "dir" / temp_name(gone, 3)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(ws_ / "new" / temp_name(gone, 4))));
  EXPECT_TRUE(fs::exists(ws_ / "dir" / temp_name(running, 0))) << "its restore may be writing";
  ::kill(running, SIGKILL);
  ::waitpid(running, nullptr, 0);
}

TEST_F(RestoreLeftoversTest, ALeftoverAnOlderCheckpointHoldsIsNotWrittenBack) {
  write("a.txt", "a");
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint now = fs.checkpoint({});
  // A checkpoint taken before captures left leftovers out.
  std::vector<fsnap::ObjectEntry> entries = fs.repo().read_tree(now.tree);
  std::string leftover = temp_name(gone_process(), 0);
  entries.push_back({leftover, fs.repo().write_blob("half"), false});
  std::sort(
      entries.begin(), entries.end(),
      [](const fsnap::ObjectEntry& a, const fsnap::ObjectEntry& b) { return a.name < b.name; });
  fsnap::Checkpoint draft;
  draft.id = "0123456789abcdef";
  draft.created_at = std::chrono::system_clock::now();
  fsnap::Checkpoint old;
  {
    fsnap::StoreLock lock = fs.store().lock();
    old = fs.repo().commit_checkpoint(fs.repo().write_tree(entries), draft);
  }

  fsnap::RestoreReport report = fs.restore_checkpoint(old, {});
  EXPECT_FALSE(fs::exists(ws_ / leftover));
  EXPECT_TRUE(report.changes.empty()) << report.changes.front().path;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a");
}

}  // namespace
}  // namespace fsnap_test
