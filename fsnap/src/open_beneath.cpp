#include "fsnap/open_beneath.hpp"

#include <fcntl.h>

#include <cerrno>

#include "fsnap/posix.hpp"

namespace fsnap {

int open_directory_beneath(int dirfd, const std::string& rel) {
  UniqueFd fd(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  std::size_t start = 0;
  while (fd.valid() && start < rel.size()) {
    std::size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    std::string component = rel.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") {
      errno = EINVAL;
      return -1;
    }
    int next =
        ::openat(fd.get(), component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    fd.reset(next);
    errno = err;
    start = end + 1;
  }
  return fd.release();
}

}  // namespace fsnap
