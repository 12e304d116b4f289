#include "fsnap/copy_operations.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace fsnap {

namespace {

int clone_file(int from, int to) {
  return ::ioctl(to, FICLONE, from) == 0 ? 0 : errno;
}

int link_file(int from_dir, const char* from_name, int to_dir, const char* to_name) {
  return ::linkat(from_dir, from_name, to_dir, to_name, 0) == 0 ? 0 : errno;
}

// Copies [at, end) of from into to at the same offsets with pread and pwrite.
int copy_range_by_reading(int from, int to, off_t at, off_t end) {
  std::vector<char> buffer(1 << 20);
  while (at < end) {
    auto want = static_cast<std::size_t>(std::min<off_t>(end - at, buffer.size()));
    ssize_t n = ::pread(from, buffer.data(), want, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;  // the file got shorter: the caller's checks say so
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(to, buffer.data() + done, static_cast<std::size_t>(n - done), at + done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return errno;
      done += w;
    }
    at += n;
  }
  return 0;
}

// Copies [at, end) of from into to: in the kernel where it can (which may share the
// blocks, or copy on the server), else by reading.
int copy_range(int from, int to, off_t at, off_t end) {
  while (at < end) {
    loff_t in = at, out = at;
    ssize_t n = ::copy_file_range(from, &in, to, &out, static_cast<std::size_t>(end - at), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
                  errno == EPERM)) {
      return copy_range_by_reading(from, to, at, end);
    }
    if (n < 0) return errno;
    if (n == 0) return EIO;
    at += n;
  }
  return 0;
}

// Copies the data of from, hole by hole, then gives to its size: a sparse file's copy
// is as sparse.
int copy_file(int from, int to, std::uint64_t size) {
  auto end = static_cast<off_t>(size);
  for (off_t at = 0; at < end;) {
    off_t data = ::lseek(from, at, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // holes to the end
    if (data < 0) data = at;                // no hole information: all of it is data
    if (data >= end) break;
    off_t hole = ::lseek(from, data, SEEK_HOLE);
    if (hole < 0 || hole > end) hole = end;
    if (int err = copy_range(from, to, data, hole)) return err;
    at = hole;
  }
  return ::ftruncate(to, end) == 0 ? 0 : errno;
}

}  // namespace

std::shared_ptr<const CopyOperations> CopyOperations::system() {
  static const std::shared_ptr<const CopyOperations> ops =
      std::make_shared<const CopyOperations>(CopyOperations{clone_file, link_file, copy_file});
  return ops;
}

}  // namespace fsnap
