// Reading a configuration file as the user named it, which may be anything: a regular
// file of at most kMaxConfigBytes is read; a FIFO, a device (`--config /dev/zero`), a
// directory or a larger file is refused at once — opened without blocking, so that a
// FIFO nobody writes to does not hang the command. Private to sandbox.
#pragma once

#include <string>

#include <boost/filesystem/path.hpp>

namespace sandbox {

// file's content. ConfigError naming the file and what is wrong when it is not a
// regular file of at most kMaxConfigBytes, or cannot be read.
std::string read_config_file(const boost::filesystem::path& file);

}  // namespace sandbox
