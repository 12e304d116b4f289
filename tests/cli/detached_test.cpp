// spawn_detached (cli/detached.cpp), in process: the helper it starts holds nothing of
// the caller's once the call has returned. A helper between its fork and its exec holds
// every descriptor of the caller — a run's lock on its workspace among them — so a caller
// that returned (and exited) before the helper's exec left that lock held: the next run
// on the workspace was refused as if a run were live.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

#include "detached.hpp"
#include "test_support.hpp"

namespace {

TEST(SpawnDetachedTest, NoLockOfTheCallerOutlivesTheCall) {
  testing_support::TempDir dir;
  std::string lock = (dir / "lock").string();
  testing_support::write_file(lock, "");
  // The race is a few microseconds wide: tried often enough to lose it when it is there.
  for (int i = 0; i < 40; ++i) {
    int held = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0);
    pid_t helper = cli::spawn_detached({"/bin/sleep", "5"});
    ASSERT_GT(helper, 0);
    ::close(held);  // the caller lets go of its lock, as a run's exit does

    int probe = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(probe, 0);
    int taken = ::flock(probe, LOCK_EX | LOCK_NB);
    int err = errno;
    ::close(probe);
    ::kill(helper, SIGKILL);
    ASSERT_EQ(taken, 0) << "attempt " << i << ": the helper still held the caller's lock ("
                        << std::strerror(err) << ")";
  }
}

TEST(SpawnDetachedTest, AProgramThatCannotBeRunIsNoHelperHeldOpen) {
  // exec fails: the helper exits (127) and the call returns all the same.
  pid_t helper = cli::spawn_detached({"/nonexistent/program"});
  EXPECT_GT(helper, 0);
}

}  // namespace
