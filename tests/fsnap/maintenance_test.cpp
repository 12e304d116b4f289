// Maintenance packs a store's loose objects and merges packs, losing nothing: every
// checkpoint still reads and restores, and `git fsck` is clean.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include <git2.h>

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
  // One pack per size in sizes, each of one file of that many random bytes (they do not
  // compress), packed as it is written; returns the states by checkpoint id.
  std::vector<std::pair<std::string, testing_support::Manifest>> packs_of(
      const fsnap::Store& store, std::uint32_t seed, const std::vector<std::size_t>& sizes) {
    std::vector<std::pair<std::string, testing_support::Manifest>> states;
    std::mt19937 random(seed);
    fsnap::HostFilesystem fs = open();
    for (std::size_t round = 0; round < sizes.size(); ++round) {
      std::string content(sizes[round], '\0');
      for (char& c : content) c = static_cast<char>(random());
      write("r" + std::to_string(round), content);
      states.emplace_back(fs.snapshot("").id, manifest());
      fsnap::maintain(store, {0, 100});
    }
    return states;
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

// The packs by size, smallest first: (size, inode) of each .pack.
std::vector<std::pair<std::uintmax_t, ino_t>> packs_by_size(const fs::path& objects) {
  std::vector<std::pair<std::uintmax_t, ino_t>> out;
  for (fs::directory_iterator it(objects / "pack"), end; it != end; ++it) {
    struct stat st {};
    if (it->path().extension() == ".pack" && ::stat(it->path().c_str(), &st) == 0) {
      out.emplace_back(st.st_size, st.st_ino);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(MaintenanceTest, PacksOverMaxPacksAreMergedGeometricallyAndTheLargeOnesStay) {
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  // Five packs, each about four times the one before.
  auto states = packs_of(store, 7, {4096, 16384, 65536, 262144, 1048576});
  std::vector<std::pair<std::uintmax_t, ino_t>> before = packs_by_size(objects());
  ASSERT_EQ(before.size(), 5u);
  // Two packs too many: the three smallest go into one (about 84 KiB written); the two
  // large ones, a geometric progression already, stay as they are.
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, {0, 3});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->packs_merged, 3u);
  std::vector<std::pair<std::uintmax_t, ino_t>> after = packs_by_size(objects());
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[1], before[3]) << "the 256 KiB pack was rewritten";
  EXPECT_EQ(after[2], before[4]) << "the 1 MiB pack was rewritten";
  // Under max_packs: nothing to gain, nothing written.
  report = fsnap::maintain(store, {0, 3});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->packs_merged, 0u);
  EXPECT_EQ(packs_by_size(objects()), after);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, AMergeWhileAnAgentWorksLeavesTheLargePackAlone) {
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  // A 2 MiB pack, then four of 300 KiB.
  auto states = packs_of(store, 11, {2u << 20, 300u << 10, 300u << 10, 300u << 10, 300u << 10});
  std::vector<std::pair<std::uintmax_t, ino_t>> before = packs_by_size(objects());
  ASSERT_EQ(before.size(), 5u);
  // Geometric merging would take all five (the small ones weigh more than half the large
  // one): 3.2 MiB written while 3.2 MiB stay. The fewest that bring the packs down to
  // four are two; three stay within 1 MiB.
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, {0, 4});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->packs_merged, 3u);
  std::vector<std::pair<std::uintmax_t, ino_t>> after = packs_by_size(objects());
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[2], before[4]) << "the large pack was rewritten";
  // At the end of the session, it is.
  report = fsnap::maintain(store, {0, 4, false, false, /*geometric=*/true});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(packs(objects()), 1u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, AMaintenanceNobodyWaitsForMergesTheSmallPacksAndNotTheLargeOne) {
  // As the end of each run leaves the store: a large pack, and one small pack per run.
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  std::vector<std::pair<std::string, testing_support::Manifest>> states;
  std::mt19937 random(9);
  fsnap::MaintenanceOptions idle{0, 100, false, false, /*geometric=*/true};
  auto round = [&](std::size_t size) {
    std::string content(size, '\0');
    for (char& c : content) c = static_cast<char>(random());
    write("r" + std::to_string(states.size()), content);
    states.emplace_back(open().snapshot("").id, manifest());
    return fsnap::maintain(store, idle);
  };
  round(1 << 20);
  std::vector<std::pair<std::uintmax_t, ino_t>> large = packs_by_size(objects());
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(round(8192)->packs_merged, 0u) << "one small pack beside the large one";
  // The next small one: the two are no progression, so they are merged; the large one
  // stays as it is.
  EXPECT_EQ(round(8192)->packs_merged, 2u);
  std::vector<std::pair<std::uintmax_t, ino_t>> after = packs_by_size(objects());
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[1], large[0]) << "the large pack was rewritten";
  EXPECT_EQ(round(2048)->packs_merged, 0u) << "a small pack beside one four times its size";
  EXPECT_EQ(packs(objects()), 3u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, SmallPacksThatAddUpToALargeOneAreMergedWithIt) {
  // Packs of about one size are no progression: over max_packs, they go into one.
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  std::vector<std::pair<std::string, testing_support::Manifest>> states;
  std::mt19937 random(8);
  {
    fsnap::HostFilesystem fs = open();
    for (int round = 0; round < 4; ++round) {
      std::string content(64 * 1024, '\0');
      for (char& c : content) c = static_cast<char>(random());
      write("r" + std::to_string(round), content);
      states.emplace_back(fs.snapshot("").id, manifest());
      fsnap::maintain(store, {0, 100});
    }
  }
  ASSERT_EQ(packs(objects()), 4u);
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, {0, 2});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->packs_merged, 4u);
  EXPECT_EQ(packs(objects()), 1u);
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

TEST_F(MaintenanceTest, LooseObjectsArePackedWhileAnotherMaintenanceMergesPacks) {
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  std::vector<std::pair<std::string, testing_support::Manifest>> states;
  for (int round = 0; round < 3; ++round) {
    auto more = history(2);
    states.insert(states.end(), more.begin(), more.end());
    fsnap::maintain(store, {0, 100});
  }
  auto more = history(2);
  states.insert(states.end(), more.begin(), more.end());
  ASSERT_EQ(packs(objects()), 3u);
  int fd = ::open(fsnap::layout::maintenance_merge_lock_file(store_dir_).c_str(), O_RDWR | O_CREAT,
                  0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // another process merging packs
  EXPECT_FALSE(fsnap::maintenance_due(store, {1000, 1})) << "the packs are being merged";
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, {0, 1});
  ASSERT_TRUE(report.has_value()) << "packing does not wait for a merge";
  EXPECT_GT(report->objects_packed, 0u);
  EXPECT_EQ(report->packs_merged, 0u) << "one merge at a time";
  EXPECT_EQ(loose_files(objects()), 0u);
  EXPECT_EQ(packs(objects()), 4u);
  ::close(fd);
  EXPECT_TRUE(fsnap::maintenance_due(store, {1000, 1}));
  report = fsnap::maintain(store, {0, 1});
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->packs_merged, 4u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, TheFanOutDirectoriesAMaintenanceEmptiedGo) {
  auto states = history(12);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  auto fanouts = [&] {
    std::size_t n = 0;
    for (fs::directory_iterator it(objects()), end; it != end; ++it) {
      n += it->path().filename().string().size() == 2;
    }
    return n;
  };
  ASSERT_GT(fanouts(), 10u);
  ASSERT_TRUE(fsnap::maintain(store, {0, 8}).has_value());
  EXPECT_EQ(loose_files(objects()), 0u);
  EXPECT_EQ(fanouts(), 0u) << "each took a block on disk";
  // A writer makes them again.
  states.push_back(history(1).front());
  EXPECT_GT(loose_files(objects()), 0u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, LooseObjectsAreCountedInSixteenFanOutDirectories) {
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, true);
  ASSERT_TRUE(fsnap::maintain(store, {0, 8}).has_value());
  ASSERT_EQ(fsnap::estimate_loose_objects(store), 0u);
  // Two objects where the count looks (one directory in 16), one where it does not.
  for (const char* name :
       {"27/00000000000000000000000000000000000001", "f7/00000000000000000000000000000000000002",
        "28/00000000000000000000000000000000000003"}) {
    testing_support::write_file(objects() / name, "x");
  }
  EXPECT_EQ(fsnap::estimate_loose_objects(store), 32u);
  EXPECT_TRUE(fsnap::maintenance_due(store, {32, 100}));
  EXPECT_FALSE(fsnap::maintenance_due(store, {33, 100}));
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

// Writes a blob that nothing refers to, of some content starting with salt whose id starts
// with prefix (a fan-out directory's name); returns its id.
std::string write_unreferenced_blob(const fs::path& git_dir, const std::string& prefix,
                                    const std::string& salt) {
  git_repository* repo = nullptr;
  EXPECT_EQ(git_repository_open_bare(&repo, git_dir.c_str()), 0);
  std::string id;
  for (int i = 0; id.empty() && i < 100000; ++i) {
    std::string content = salt + std::to_string(i);
    git_oid oid;
    git_odb_hash(&oid, content.data(), content.size(), GIT_OBJECT_BLOB);
    std::string hex = git_oid_tostr_s(&oid);
    if (hex.rfind(prefix, 0) == 0) {
      EXPECT_EQ(git_blob_create_from_buffer(&oid, repo, content.data(), content.size()), 0);
      id = hex;
    }
  }
  git_repository_free(repo);
  return id;
}

TEST_F(MaintenanceTest, WhatAMaintenanceLeftLooseDoesNotMakeItDueAgain) {
  history(2);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  fsnap::maintain(store, {0, 8});
  ASSERT_EQ(loose_files(objects()), 0u);
  fsnap::MaintenanceOptions options{16, 8};
  ASSERT_FALSE(fsnap::maintenance_due(store, options));
  // Garbage waiting for gc's grace period in a fan-out directory the estimate counts.
  ASSERT_FALSE(write_unreferenced_blob(store_dir_ / "repo.git", "17", "first ").empty());
  ASSERT_TRUE(fsnap::maintenance_due(store, options)) << "one object there: about 16 loose";
  std::optional<fsnap::MaintenanceReport> report = fsnap::maintain(store, options);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->objects_packed, 0u);
  EXPECT_EQ(loose_files(objects()), 1u) << "unreferenced: stays loose";
  EXPECT_FALSE(fsnap::maintenance_due(store, options))
      << "the object it could not pack must not start another maintenance at every command";
  // A new object there is counted again.
  ASSERT_FALSE(write_unreferenced_blob(store_dir_ / "repo.git", "17", "second ").empty());
  ASSERT_EQ(loose_files(objects()), 2u);
  EXPECT_TRUE(fsnap::maintenance_due(store, options));
}

TEST_F(MaintenanceTest, AConsolidatingMaintenancePacksLooseObjectsLeftBehindAPackedCommit) {
  auto states = history(4);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  // As an older version could leave it: the newest commit packed, all it refers to loose.
  fs::path git_dir = store_dir_ / "repo.git";
  std::string tip = states.back().first;
  std::string commit = fsnap::ShadowRepo::open(git_dir, false).resolve(tip).commit;
  testing_support::CommandResult packed =
      testing_support::run_command({"git", "--git-dir", git_dir.string(), "pack-objects",
                                    (objects() / "pack" / "pack").string()},
                                   temp_.path(), {}, commit + "\n");
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  fs::remove(objects() / commit.substr(0, 2) / commit.substr(2));
  std::size_t behind = loose_files(objects());
  ASSERT_GT(behind, 10u);
  fsnap::maintain(store, {0, 8});
  EXPECT_EQ(loose_files(objects()), behind) << "the usual walk stops at packed objects";
  fsnap::maintain(store, {0, 8, /*consolidate=*/true});
  EXPECT_EQ(loose_files(objects()), 0u);
  expect_every_checkpoint_restores(states);
}

TEST_F(MaintenanceTest, MaintenanceBesideAWriterLeavesNothingReachableLoose) {
  // Checkpoints are written while maintenance runs again and again; once the writer has
  // stopped, one more maintenance must pack every object left loose (all of them are
  // reachable). Had a maintenance packed a commit without its parent, the walk would
  // never reach the parent again.
  history(1);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    fsnap::HostFilesystem fs = open();
    for (int i = 0; i < 150; ++i) {
      write("w/" + std::to_string(i % 13), std::to_string(i));
      fs.snapshot("");
    }
    done = true;
  });
  int rounds = 0;
  while (!done) {
    fsnap::maintain(store, {0, 1000});
    ++rounds;
  }
  writer.join();
  fsnap::maintain(store, {0, 1000});
  EXPECT_EQ(loose_files(objects()), 0u) << "after " << rounds << " maintenances beside the writer";
}

}  // namespace
