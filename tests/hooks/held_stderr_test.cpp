// Nothing written over an interactive agent's screen (hooks/held_stderr.hpp): which
// agents may own the terminal — decided on a real pseudo-terminal — and this process's
// stderr held while one does, then written out whole and in order.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "hooks/held_stderr.hpp"
#include "test_support.hpp"

namespace {

// A pseudo-terminal: the side a program reads and writes as its terminal, and the other.
struct Pty {
  Pty() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return;
    terminal = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  }
  ~Pty() {
    if (terminal >= 0) ::close(terminal);
    if (master >= 0) ::close(master);
  }
  int master = -1;
  int terminal = -1;
};

// Everything readable on fd now (it is non-blocking).
std::string drain(int fd) {
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  return out;
}

TEST(HeldStderrTest, AnAgentMayOwnTheTerminalOnlyWhenItsStdinAndStderrAreOne) {
  Pty pty;
  ASSERT_GE(pty.terminal, 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  EXPECT_TRUE(hooks::agent_may_own_terminal(pty.terminal, pty.terminal));
  EXPECT_FALSE(hooks::agent_may_own_terminal(pipe_fds[0], pty.terminal)) << "a prompt piped in";
  EXPECT_FALSE(hooks::agent_may_own_terminal(null, pty.terminal)) << "stdin from /dev/null (CI)";
  EXPECT_FALSE(hooks::agent_may_own_terminal(pty.terminal, pipe_fds[1])) << "stderr to a pipe";
  EXPECT_FALSE(hooks::agent_may_own_terminal(pty.terminal, null));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::close(null);
}

TEST(HeldStderrTest, WhatIsWrittenWhileHeldReachesTheStderrOnlyOnceReleasedInOrder) {
  testing_support::TempDir dir;
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_EQ(::fcntl(out[0], F_SETFL, O_NONBLOCK), 0);
  std::cerr.flush();
  int saved = ::dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(out[1], STDERR_FILENO), STDERR_FILENO);  // this test's stderr: the pipe

  std::cerr << "before\n";
  std::unique_ptr<hooks::HeldStderr> held = hooks::HeldStderr::start(dir.path());
  bool started = held != nullptr;
  std::cerr << "shadowbox: warning: one\n";
  std::fprintf(stderr, "shadowbox: two\n");
  ssize_t written = ::write(STDERR_FILENO, "three\n", 6);
  std::string while_held = drain(out[0]);
  held.reset();
  std::cerr << "after\n";
  std::string all = drain(out[0]);

  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(out[0]);
  ::close(out[1]);
  ASSERT_TRUE(started);
  EXPECT_EQ(written, 6);
  EXPECT_EQ(while_held, "before\n") << "nothing while the agent owns the terminal";
  EXPECT_EQ(all, "shadowbox: warning: one\nshadowbox: two\nthree\nafter\n");
  EXPECT_TRUE(boost::filesystem::is_empty(dir.path())) << "the file had no name";
}

TEST(HeldStderrTest, NothingIsHeldWhereNoFileCanBeMade) {
  testing_support::TempDir dir;
  EXPECT_EQ(hooks::HeldStderr::start(dir.path() / "missing"), nullptr);
}

}  // namespace
