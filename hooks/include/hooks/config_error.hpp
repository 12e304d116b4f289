// The error of configuration files, and how large one may be: what the reader of a file
// and the parser of its text both need, apart from the settings themselves.
#pragma once

#include <cstddef>
#include <string>

#include <boost/filesystem/path.hpp>

#include "sandbox/errors.hpp"

namespace hooks {

// The largest configuration file read (1 MiB; a configuration is a few dozen lines).
inline constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// A configuration file that cannot be read or does not validate.
class ConfigError : public sandbox::Error {
 public:
  explicit ConfigError(const std::string& message)
      : sandbox::Error(sandbox::ErrorCode::kInvalidArgument, message) {}
};

// The whole text of a configuration file as the user named it, which may be anything:
// a regular file of at most kMaxConfigBytes is read; a FIFO, a device (`--config
// /dev/zero`), a directory or a larger file is refused at once — opened without
// blocking, so that a FIFO nobody writes to does not hang the command. ConfigError
// naming the file and what is wrong.
std::string read_config_file(const boost::filesystem::path& file);

}  // namespace hooks
