#include "config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/config.hpp"

namespace sandbox {

namespace {

// Closes a file descriptor on destruction.
struct OpenFile {
  int fd;
  ~OpenFile() { ::close(fd); }
};

std::string too_large(const std::string& name) {
  return name + " is larger than 1 MiB (a configuration is a few dozen lines)";
}

}  // namespace

std::string read_config_file(const boost::filesystem::path& file) {
  const std::string name = "config file " + file.string();
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise. (A regular file reads the
  // same either way.)
  int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    throw ConfigError("cannot read " + name + ": " +
                      (err == ENOENT   ? std::string("no such file")
                       : err == EACCES ? std::string("permission denied")
                                       : std::string(std::strerror(err))));
  }
  OpenFile open_file{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw ConfigError("cannot read " + name + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw ConfigError(name + " is a directory, not a file");
  if (!S_ISREG(st.st_mode)) {
    throw ConfigError(name + " is not a regular file (a FIFO, socket or device is never read)");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxConfigBytes) throw ConfigError(too_large(name));
  // Read to the end, but never more than the limit: the file may grow meanwhile.
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ConfigError("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxConfigBytes) throw ConfigError(too_large(name));
  }
  return text;
}

}  // namespace sandbox
