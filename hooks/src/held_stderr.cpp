#include "hooks/held_stderr.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>

#include "fsnap/posix.hpp"

namespace hooks {

namespace {

// What the streams of this process hold for file descriptor 2, written to it.
void flush_streams() {
  std::cerr.flush();
  std::clog.flush();
  std::fflush(stderr);
}

}  // namespace

bool agent_may_own_terminal(int stdin_fd, int stderr_fd) {
  return ::isatty(stdin_fd) == 1 && ::isatty(stderr_fd) == 1;
}

std::unique_ptr<HeldStderr> HeldStderr::start(const boost::filesystem::path& dir) {
  int file = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (file < 0) return nullptr;
  int saved = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0) {
    ::close(file);
    return nullptr;
  }
  flush_streams();
  if (::dup2(file, STDERR_FILENO) < 0) {
    ::close(saved);
    ::close(file);
    return nullptr;
  }
  return std::unique_ptr<HeldStderr>(new HeldStderr(saved, file));
}

HeldStderr::~HeldStderr() {
  release();
}

void HeldStderr::release() {
  if (saved_ < 0) return;
  flush_streams();
  ::dup2(saved_, STDERR_FILENO);
  ::close(saved_);
  saved_ = -1;
  char buffer[8192];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(file_, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    // A terminal gone (the write fails): nothing to tell any more.
    fsnap::write_all(STDERR_FILENO, buffer, static_cast<std::size_t>(n));
    at += n;
  }
  ::close(file_);
  file_ = -1;
}

}  // namespace hooks
