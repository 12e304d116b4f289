#include "fsnap/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"

namespace fsnap {

namespace {

// Writes content to a new temporary file beside file and returns its name.
std::string write_temporary(const boost::filesystem::path& file, const std::string& content,
                            unsigned mode) {
  static std::atomic<unsigned> counter{0};
  std::string tmp = file.string() + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw system_error("cannot write " + tmp, errno);
  if (!write_all(fd, content.data(), content.size())) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw system_error("cannot write " + tmp, err);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw system_error("cannot write " + tmp, err);
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
    throw system_error("cannot replace " + file.string(), err);
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
  throw system_error("cannot create " + file.string(), err);
}

std::optional<std::string> read_small_file(const boost::filesystem::path& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT) return std::nullopt;
  std::string out;
  if (!fd.valid() || !read_all(fd.get(), out)) {
    throw system_error("cannot read " + file.string(), errno);
  }
  return out;
}

}  // namespace fsnap
