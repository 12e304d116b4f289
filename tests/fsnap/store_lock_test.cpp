// StoreLock: exclusive between threads (and, through flock, between processes — see
// concurrency_test), re-entrant within the thread that holds it, and released when the
// outermost hold ends.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "fsnap/store.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

TEST(StoreLockTest, TheHoldingThreadMayTakeItAgainOthersWait) {
  testing_support::TempDir dir;
  fs::path file = dir / "lock";
  std::atomic<bool> other_has_it{false};
  std::thread other;
  {
    fsnap::StoreLock outer(file);
    {
      fsnap::StoreLock inner(file);  // re-entry: does not block
      other = std::thread([&] {
        fsnap::StoreLock lock(file);
        other_has_it = true;
      });
    }
    // The inner hold ended; the outer one still excludes the other thread.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(other_has_it) << "another thread took a lock that is held";
  }
  other.join();
  EXPECT_TRUE(other_has_it) << "the lock was not released with its outermost hold";
}

TEST(StoreLockTest, AMovedLockIsReleasedOnce) {
  testing_support::TempDir dir;
  fs::path file = dir / "lock";
  {
    fsnap::StoreLock first(file);
    fsnap::StoreLock moved(std::move(first));
  }
  std::atomic<bool> taken{false};
  std::thread other([&] {
    fsnap::StoreLock lock(file);
    taken = true;
  });
  other.join();
  EXPECT_TRUE(taken);
}

TEST(StoreLockTest, AnUnopenableLockIsAnError) {
  testing_support::TempDir dir;
  EXPECT_THROW(fsnap::StoreLock(dir / "missing/dir/lock"), fsnap::Error);
  // ...and does not leave the lock held: it can be taken right after.
  fsnap::StoreLock ok(dir / "lock");
}

}  // namespace
