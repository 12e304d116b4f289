#include "fsnap/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "fsnap/error.hpp"

namespace fsnap {

namespace {

// Writes content to a new temporary file beside file and returns its name.
std::string write_temporary(const boost::filesystem::path& file, const std::string& content,
                            unsigned mode) {
  static std::atomic<unsigned> counter{0};
  std::string tmp = file.string() + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw Error(ErrorCode::kIo, "cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(ErrorCode::kIo, "cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorCode::kIo, "cannot write " + tmp + ": " + std::strerror(err));
  }
  return tmp;
}

}  // namespace

void write_file_atomically(const boost::filesystem::path& file, const std::string& content,
                           unsigned mode) {
  std::string tmp = write_temporary(file, content, mode);
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorCode::kIo, "cannot replace " + file.string() + ": " + std::strerror(err));
  }
}

bool create_file_atomically(const boost::filesystem::path& file, const std::string& content) {
  std::string tmp = write_temporary(file, content, 0644);
  // link(2) fails with EEXIST instead of replacing: the first creator wins.
  int result = ::link(tmp.c_str(), file.c_str());
  int err = errno;
  ::unlink(tmp.c_str());
  if (result == 0) return true;
  if (err == EEXIST) return false;
  throw Error(ErrorCode::kIo, "cannot create " + file.string() + ": " + std::strerror(err));
}

std::optional<std::string> read_small_file(const boost::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw Error(ErrorCode::kIo, "cannot read " + file.string() + ": " + std::strerror(errno));
  }
  std::string out;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error(ErrorCode::kIo, "cannot read " + file.string() + ": " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace fsnap
