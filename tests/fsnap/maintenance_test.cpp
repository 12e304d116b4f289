// Maintenance packs a store's loose objects and merges packs, losing nothing: every
// checkpoint still reads and restores, and `git fsck` is clean.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <thread>

#include "fsnap/maintenance.hpp"
#include "host_fixture.hpp"

namespace {

using fsnap_test::HostTest;
namespace fs = boost::filesystem;

std::size_t loose_files(const fs::path& objects) {
  std::size_t n = 0;
  for (fs::directory_iterator dir(objects), end; dir != end; ++dir) {
    if (dir->path().filename().string().size() != 2) continue;
    for (fs::directory_iterator it(dir->path()); it != end; ++it) ++n;
  }
  return n;
}

std::size_t packs(const fs::path& objects) {
  std::size_t n = 0;
  for (fs::directory_iterator it(objects / "pack"), end; it != end; ++it) {
    n += it->path().extension() == ".pack";
  }
  return n;
}

class MaintenanceTest : public HostTest {
 protected:
  // Snapshots n states of the workspace; returns their manifests by checkpoint id.
  std::vector<std::pair<std::string, testing_support::Manifest>> history(int n) {
    std::vector<std::pair<std::string, testing_support::Manifest>> out;
    fsnap::HostFilesystem fs = open();
    for (int i = 0; i < n; ++i) {
      write("f" + std::to_string(i % 7), std::string(100 + i, 'a' + static_cast<char>(i % 26)));
      write("dir/g" + std::to_string(i), std::to_string(i));
      out.emplace_back(fs.snapshot("").id, manifest());
    }
    return out;
  }
  void expect_every_checkpoint_restores(
      const std::vector<std::pair<std::string, testing_support::Manifest>>& states) {
    fsnap::HostFilesystem fs = open();
    for (const auto& [id, manifest] : states) {
      fs.restore_checkpoint(fs.repo().resolve(id), {});
      EXPECT_EQ(testing_support::describe_difference(manifest, this->manifest()), "") << id;
    }
    testing_support::CommandResult fsck = testing_support::run_command(
        {"git", "--git-dir", (store_dir_ / "repo.git").string(), "fsck", "--strict"}, temp_.path());
    EXPECT_EQ(fsck.exit_code, 0) << fsck.err;
  }
  fs::path objects() const { return store_dir_ / "repo.git" / "objects"; }
};

TEST_F(MaintenanceTest, LooseObjectsArePackedAndEveryCheckpointStillRestores) {
  auto states = history(12);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  std::size_t before = loose_files(objects());
  ASSERT_GT(before, 30u);
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, {0, 8});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->objects_packed, before);
  EXPECT_EQ(loose_files(objects()), 0u);
  EXPECT_EQ(packs(objects()), 1u);
  EXPECT_EQ(fsnap::estimate_loose_objects(store), 0u);
  EXPECT_FALSE(fsnap::maintenance_due(store, {1, 8}));
  EXPECT_TRUE(fsnap::maintenance_due(store, {1, 0})) << "one pack is more than none";
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, SmallPacksAreMergedOnceThereAreTooMany) {
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  std::vector<std::pair<std::string, testing_support::Manifest>> states;
  for (int round = 0; round < 5; ++round) {
    auto more = history(2);
    states.insert(states.end(), more.begin(), more.end());
    fsnap::maintain(store, {0, 100});  // one pack per round, never merged
  }
  EXPECT_EQ(packs(objects()), 5u);
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, {0, 3});
  ASSERT_TRUE(report.has_value());
  EXPECT_GE(report->packs_merged, 4u);
  EXPECT_LE(packs(objects()), 2u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, AConsolidatingMaintenanceLeavesOnePack) {
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  std::vector<std::pair<std::string, testing_support::Manifest>> states;
  for (int round = 0; round < 3; ++round) {
    auto more = history(2);
    states.insert(states.end(), more.begin(), more.end());
    fsnap::maintain(store, {0, 100});
  }
  ASSERT_EQ(packs(objects()), 3u);
  fsnap::maintain(store, {0, 100});
  EXPECT_EQ(packs(objects()), 3u) << "under max_packs: left as they are";
  std::optional<fsnap::MaintenanceReport> report =
      fsnap::maintain(store, {0, 100, /*consolidate=*/true});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->packs_merged, 3u);
  EXPECT_EQ(packs(objects()), 1u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, OneMaintenanceAtATime) {
  history(3);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  int fd = ::open(fsnap::layout::maintenance_lock_file(store_dir_).c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // another process maintaining
  EXPECT_FALSE(fsnap::maintain(store, {0, 8}).has_value());
  EXPECT_GT(loose_files(objects()), 0u) << "nothing touched";
  // One that waits runs once the other has ended.
  std::optional<fsnap::MaintenanceReport> waited;
  std::thread waiting([&] { waited = fsnap::maintain(store, {0, 8, false, /*wait=*/true}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::close(fd);
  waiting.join();
  ASSERT_TRUE(waited.has_value()) << "it waited for the lock";
  EXPECT_EQ(loose_files(objects()), 0u);
}

TEST_F(MaintenanceTest, UnreferencedObjectsStayLooseUntilGcsGracePeriodEnds) {
  history(2);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  fsnap::maintain(store, {0, 8});
  ASSERT_EQ(loose_files(objects()), 0u);
  // Objects no ref reaches (as a checkpoint being recorded has written them).
  fs::create_directories(temp_ / "other");
  testing_support::write_file(temp_ / "other" / "x", "not referenced by anything");
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_dir_ / "repo.git", false);
  repo.capture_directory(temp_ / "other", {});
  std::size_t unreferenced = loose_files(objects());
  ASSERT_GT(unreferenced, 0u);
  fsnap::maintain(store, {0, 8});
  EXPECT_EQ(loose_files(objects()), unreferenced) << "maintenance packs what refs reach only";
  auto now = std::chrono::system_clock::now();
  EXPECT_EQ(repo.collect_garbage({}, now).objects_pruned, 0u) << "young: kept";
  for (fs::recursive_directory_iterator it(objects()), end; it != end; ++it) {
    if (fs::is_regular_file(it->path()) && it->path().parent_path().filename() != "pack") {
      fs::last_write_time(it->path(), std::time(nullptr) - 7200);
    }
  }
  EXPECT_EQ(repo.collect_garbage({}, now).objects_pruned, unreferenced) << "old: pruned";
  EXPECT_EQ(loose_files(objects()), 0u);
}

}  // namespace
