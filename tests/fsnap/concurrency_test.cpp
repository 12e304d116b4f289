// Several processes checkpointing one store at once (durability): every
// snapshot succeeds (writers wait for the store lock), each run's chain holds every
// checkpoint in order, and the repository stays valid — every commit and tree opens,
// and `git fsck` finds nothing wrong.
#include <git2.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <set>

#include "fsnap/shadow_repo.hpp"
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

constexpr int kProcesses = 3;
constexpr int kCheckpointsEach = 15;

// Replaces ws/name whole: the new content is written beside the workspace and renamed
// over the file, so another process's snapshot reads either the old file or the new one,
// never one half rewritten (a file truncated while being read fails that snapshot, which
// is not what this test is about).
void replace_file(const fs::path& ws, const std::string& name, const std::string& data) {
  fs::path staged = ws.parent_path() / (name + ".staged");
  testing_support::write_file(staged, data);
  fs::rename(staged, ws / name);
}

// Forks a writer that edits its own file and checkpoints, kCheckpointsEach times,
// alternating between its own run and the shared "default" run.
pid_t spawn_writer(const fs::path& store, const fs::path& ws, int index) {
  std::cout.flush();
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  int rc = 0;
  try {
    fsnap::HostFilesystem fs(fsnap::Store::open(store, ws, true), {});
    for (int i = 0; i < kCheckpointsEach; ++i) {
      replace_file(ws, "writer" + std::to_string(index) + ".txt", std::to_string(i));
      fsnap::CheckpointMeta meta;
      meta.run = i % 2 == 0 ? "default" : "writer" + std::to_string(index);
      meta.tool_call_id = "w" + std::to_string(index) + "-" + std::to_string(i);
      fs.checkpoint(meta);
    }
  } catch (const std::exception& e) {
    std::cerr << "writer " << index << ": " << e.what() << '\n';
    rc = 1;
  }
  ::_exit(rc);
}

// Opens every commit of every checkpoint and walks its whole tree with libgit2.
void expect_all_objects_readable(const fs::path& git_dir,
                                 const std::vector<fsnap::Checkpoint>& checkpoints) {
  git_repository* repo = nullptr;
  ASSERT_EQ(git_repository_open_bare(&repo, git_dir.c_str()), 0);
  for (const fsnap::Checkpoint& c : checkpoints) {
    git_oid oid;
    ASSERT_EQ(git_oid_fromstr(&oid, c.commit.c_str()), 0);
    git_commit* commit = nullptr;
    ASSERT_EQ(git_commit_lookup(&commit, repo, &oid), 0) << c.commit;
    git_tree* tree = nullptr;
    ASSERT_EQ(git_commit_tree(&tree, commit), 0) << c.commit;
    auto visit = [](const char*, const git_tree_entry* entry, void* payload) -> int {
      git_object* object = nullptr;
      int rc = git_tree_entry_to_object(&object, static_cast<git_repository*>(payload), entry);
      git_object_free(object);
      return rc;
    };
    EXPECT_EQ(git_tree_walk(tree, GIT_TREEWALK_PRE, visit, repo), 0) << c.commit;
    git_tree_free(tree);
    git_commit_free(commit);
  }
  git_repository_free(repo);
}

TEST_F(HostTest, ConcurrentProcessesAllSucceedAndTheStoreStaysValid) {
  write("shared.txt", "shared");
  open();  // create the store and repository up front
  std::vector<pid_t> writers;
  for (int i = 0; i < kProcesses; ++i) writers.push_back(spawn_writer(store_dir_, ws_, i));
  for (pid_t pid : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  }

  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_dir_ / "repo.git", false);
  std::vector<fsnap::Checkpoint> all = repo.log("", 0);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kProcesses * kCheckpointsEach));
  std::set<std::string> call_ids;
  for (const fsnap::Checkpoint& c : all) call_ids.insert(c.meta.tool_call_id);
  EXPECT_EQ(call_ids.size(), all.size()) << "a checkpoint was lost or duplicated";

  // The shared run is one linear chain holding every writer's even-numbered steps.
  std::vector<fsnap::Checkpoint> shared = repo.log("default", 0);
  EXPECT_EQ(shared.size(), static_cast<std::size_t>(kProcesses * ((kCheckpointsEach + 1) / 2)));
  for (std::size_t i = 0; i + 1 < shared.size(); ++i) {
    EXPECT_EQ(shared[i].parent, shared[i + 1].commit) << "chain broken at " << i;
  }
  EXPECT_TRUE(shared.back().parent.empty());
  for (int i = 0; i < kProcesses; ++i) {
    EXPECT_EQ(repo.log("writer" + std::to_string(i), 0).size(),
              static_cast<std::size_t>(kCheckpointsEach / 2));
  }
  expect_all_objects_readable(store_dir_ / "repo.git", all);

  testing_support::CommandResult fsck =
      testing_support::run_command({"git", "--git-dir", (store_dir_ / "repo.git").string(), "fsck",
                                    "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

}  // namespace
}  // namespace fsnap_test
