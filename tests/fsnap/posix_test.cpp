// The POSIX helpers (fsnap/posix.hpp): UniqueFd closes what it owns exactly once and
// passes it on when moved; write_all and read_all move every byte through a pipe whose
// other end takes it in small pieces and interrupts the writer with signals; the
// positioned forms write and read at an offset; an error made from errno names the call
// and says the system's words for it.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "test_support.hpp"

namespace {

using fsnap::UniqueFd;

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

// Both ends of a new pipe, each owned.
struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw fsnap::system_error("pipe", errno);
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
};

// Data no two offsets of which look alike over a short stretch: a byte lost, doubled or
// moved shows.
std::string pattern(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 7 + i / 251) & 0xff);
  return out;
}

std::atomic<int> interruptions{0};
void count_interruption(int) {
  interruptions.fetch_add(1);
}

// Installs a SIGUSR1 handler without SA_RESTART (a blocked write returns what it wrote so
// far, or fails with EINTR), and puts back the one before on destruction.
class InterruptingSignal {
 public:
  InterruptingSignal() {
    struct sigaction action {};
    action.sa_handler = count_interruption;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    ::sigaction(SIGUSR1, &action, &before_);
  }
  ~InterruptingSignal() { ::sigaction(SIGUSR1, &before_, nullptr); }

 private:
  struct sigaction before_ {};
};

// Ignores SIGPIPE (a write to a pipe nobody reads fails with EPIPE instead of ending the
// test), and puts back the handling before on destruction.
class IgnoredSigpipe {
 public:
  IgnoredSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &before_);
  }
  ~IgnoredSigpipe() { ::sigaction(SIGPIPE, &before_, nullptr); }

 private:
  struct sigaction before_ {};
};

TEST(PosixTest, UniqueFdClosesWhatItOwnsWhenItGoesOutOfScope) {
  int fd = -1;
  {
    Pipe pipe;
    fd = pipe.read_end.get();
    ASSERT_TRUE(is_open(fd));
  }
  EXPECT_FALSE(is_open(fd)) << "the descriptor outlived its owner";
  EXPECT_EQ(errno, EBADF);
}

TEST(PosixTest, AMovedUniqueFdIsOwnedAndClosedOnceByItsNewOwner) {
  Pipe pipe;
  int fd = pipe.read_end.get();
  UniqueFd moved(std::move(pipe.read_end));
  EXPECT_FALSE(pipe.read_end.valid()) << "the moved-from owner still claims it";
  EXPECT_EQ(moved.get(), fd);

  // Assigning into an owner closes what it held before and takes the other's.
  UniqueFd target(::dup(pipe.write_end.get()));
  int held_before = target.get();
  ASSERT_TRUE(is_open(held_before));
  target = std::move(moved);
  EXPECT_FALSE(is_open(held_before)) << "move assignment leaked the descriptor it replaced";
  EXPECT_EQ(target.get(), fd);
  EXPECT_TRUE(is_open(fd));
  EXPECT_FALSE(moved.valid());

  target.reset();
  EXPECT_FALSE(is_open(fd));
  EXPECT_FALSE(target.valid());
}

TEST(PosixTest, ReleaseGivesUpTheDescriptorWithoutClosingIt) {
  Pipe pipe;
  int fd = pipe.read_end.release();
  EXPECT_FALSE(pipe.read_end.valid());
  EXPECT_TRUE(is_open(fd)) << "release closed the descriptor";
  ::close(fd);
}

TEST(PosixTest, WriteAllDeliversEveryByteToAReaderThatTakesSmallPiecesAndInterrupts) {
  InterruptingSignal signal;
  Pipe pipe;
  // A small pipe: the writer blocks again and again, and signals find it blocked.
  ::fcntl(pipe.write_end.get(), F_SETPIPE_SZ, 4096);
  const std::string data = pattern(1 << 20);
  pthread_t writer_thread = ::pthread_self();
  std::atomic<bool> writer_ready{false};
  bool written = false;
  int write_errno = 0;
  std::thread writer([&] {
    writer_thread = ::pthread_self();
    writer_ready = true;
    written = fsnap::write_all(pipe.write_end.get(), data.data(), data.size());
    write_errno = errno;
    pipe.write_end.reset();
  });
  while (!writer_ready) std::this_thread::yield();
  std::string got;
  char piece[1000];
  for (;;) {
    ssize_t n = ::read(pipe.read_end.get(), piece, sizeof piece);
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GE(n, 0) << std::strerror(errno);
    if (n == 0) break;
    got.append(piece, static_cast<std::size_t>(n));
    // Interrupt the writer between pieces while it still writes.
    if (got.size() < data.size()) ::pthread_kill(writer_thread, SIGUSR1);
  }
  writer.join();
  EXPECT_TRUE(written) << "write_all failed: " << std::strerror(write_errno);
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data) << "the bytes arrived changed or out of order";
  EXPECT_GT(interruptions.load(), 0);
}

TEST(PosixTest, WriteAllToAPipeNobodyReadsFailsWithEpipe) {
  IgnoredSigpipe ignored;
  Pipe pipe;
  pipe.read_end.reset();
  errno = 0;
  EXPECT_FALSE(fsnap::write_all(pipe.write_end.get(), "x", 1));
  EXPECT_EQ(errno, EPIPE);
}

TEST(PosixTest, ReadAllReadsToTheEndOrStopsOnceOverTheLimit) {
  IgnoredSigpipe ignored;
  const std::string data = pattern(300 * 1024);
  auto feed = [&](Pipe& pipe) {
    return std::thread([&pipe, &data] {
      fsnap::write_all(pipe.write_end.get(), data.data(), data.size());
      pipe.write_end.reset();
    });
  };
  {
    Pipe pipe;
    std::thread writer = feed(pipe);
    std::string out = "kept:";
    EXPECT_TRUE(fsnap::read_all(pipe.read_end.get(), out));
    writer.join();
    EXPECT_TRUE(out == "kept:" + data) << "read_all did not append the whole stream";
  }
  {
    Pipe pipe;
    std::thread writer = feed(pipe);
    std::string out;
    EXPECT_TRUE(fsnap::read_all(pipe.read_end.get(), out, 1000));
    pipe.read_end.reset();  // the writer's write fails now: it does not wait for a reader
    writer.join();
    EXPECT_GT(out.size(), 1000u) << "stopped before the limit was passed";
    EXPECT_LT(out.size(), data.size()) << "read past the limit to the end";
    EXPECT_EQ(out, data.substr(0, out.size()));
  }
  std::string none;
  EXPECT_FALSE(fsnap::read_all(-1, none));
  EXPECT_EQ(errno, EBADF);
}

TEST(PosixTest, PositionedWritesAndReadsUseTheOffsetAndAShortFileIsNoRead) {
  testing_support::TempDir dir;
  std::string file = (dir / "f").string();
  UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd.valid());
  ASSERT_TRUE(fsnap::write_all_at(fd.get(), "0123456789", 10, 0));
  ASSERT_TRUE(fsnap::write_all_at(fd.get(), "ab", 2, 4));
  char four[4];
  ASSERT_TRUE(fsnap::read_all_at(fd.get(), four, sizeof four, 3));
  EXPECT_EQ(std::string(four, sizeof four), "3ab6");
  EXPECT_FALSE(fsnap::read_all_at(fd.get(), four, sizeof four, 8)) << "read past the end";
}

TEST(PosixTest, AnErrorFromErrnoNamesTheCallAndSaysTheSystemsWords) {
  EXPECT_EQ(fsnap::errno_message("cannot read config file c.yaml", EACCES),
            "cannot read config file c.yaml: Permission denied");
  fsnap::Error io = fsnap::system_error("cannot open /nowhere/x", ENOENT);
  EXPECT_EQ(io.code(), fsnap::ErrorCode::kIo);
  EXPECT_STREQ(io.what(), "cannot open /nowhere/x: No such file or directory");
  fsnap::Error missing = fsnap::system_error("cannot read a", ENOENT, fsnap::ErrorCode::kNotFound);
  EXPECT_EQ(missing.code(), fsnap::ErrorCode::kNotFound);
  EXPECT_STREQ(missing.what(), "cannot read a: No such file or directory");
}

}  // namespace
