#include "fsnap/posix.hpp"

#include <cerrno>
#include <cstring>

namespace fsnap {

namespace {

// Moves n bytes in pieces: step(done) transfers some of what is left after the first done
// bytes and returns how many, or -1 with errno set. A signal interrupting a piece is no
// failure. A piece of nothing ends it, with errno at_zero (0: errno as it was).
template <typename Step>
bool in_pieces(std::size_t n, int at_zero, const Step& step) {
  for (std::size_t done = 0; done < n;) {
    ssize_t moved = step(done);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      if (moved == 0 && at_zero != 0) errno = at_zero;
      return false;
    }
    done += static_cast<std::size_t>(moved);
  }
  return true;
}

off_t at(std::uint64_t offset, std::size_t done) {
  return static_cast<off_t>(offset + done);
}

}  // namespace

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  return in_pieces(n, ENOSPC, [&](std::size_t done) { return ::write(fd, p + done, n - done); });
}

bool write_all_at(int fd, const void* data, std::size_t n, std::uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  return in_pieces(n, ENOSPC, [&](std::size_t done) {
    return ::pwrite(fd, p + done, n - done, at(offset, done));
  });
}

bool read_all_at(int fd, void* out, std::size_t n, std::uint64_t offset) {
  char* p = static_cast<char*>(out);
  return in_pieces(
      n, 0, [&](std::size_t done) { return ::pread(fd, p + done, n - done, at(offset, done)); });
}

bool read_all(int fd, std::string& out, std::size_t limit) {
  char buffer[65536];
  while (out.size() <= limit) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

std::string errno_message(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

Error system_error(const std::string& what, int err, ErrorCode code) {
  return Error(code, errno_message(what, err));
}

}  // namespace fsnap
