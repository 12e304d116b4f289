#include "hooks/config_error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "fsnap/posix.hpp"

namespace hooks {

namespace {

std::string too_large(const std::string& name) {
  return name + " is larger than 1 MiB (a configuration is a few dozen lines)";
}

}  // namespace

std::string read_config_file(const boost::filesystem::path& file) {
  const std::string name = "config file " + file.string();
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise. (A regular file reads the
  // same either way.)
  fsnap::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    int err = errno;
    throw ConfigError(err == ENOENT   ? "cannot read " + name + ": no such file"
                      : err == EACCES ? "cannot read " + name + ": permission denied"
                                      : fsnap::errno_message("cannot read " + name, err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw ConfigError(fsnap::errno_message("cannot read " + name, errno));
  }
  if (S_ISDIR(st.st_mode)) throw ConfigError(name + " is a directory, not a file");
  if (!S_ISREG(st.st_mode)) {
    throw ConfigError(name + " is not a regular file (a FIFO, socket or device is never read)");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxConfigBytes) throw ConfigError(too_large(name));
  // Read to the end, but never more than the limit: the file may grow meanwhile.
  std::string text;
  if (!fsnap::read_all(fd.get(), text, kMaxConfigBytes)) {
    throw ConfigError(fsnap::errno_message("cannot read " + name, errno));
  }
  if (text.size() > kMaxConfigBytes) throw ConfigError(too_large(name));
  return text;
}

}  // namespace hooks
