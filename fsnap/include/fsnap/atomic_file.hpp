// Small files written whole: a reader sees the old content or the new, never a mix
// (a temporary file beside the target, then rename(2) or link(2)).
//
// Thread-safety: concurrent writers of one file each write their own temporary file;
// for write_file_atomically the last rename wins, for create_file_atomically the first
// link does.
#pragma once

#include <optional>
#include <string>

#include <boost/filesystem/path.hpp>

namespace fsnap {

// Replaces file with content, as a new file of mode (less the umask). Error kIo naming
// the file if it cannot.
void write_file_atomically(const boost::filesystem::path& file, const std::string& content,
                           unsigned mode = 0644);

// Creates file with content unless it exists already: true if this call created it,
// false if it was there (and is left as it was). Error kIo naming the file if it cannot.
bool create_file_atomically(const boost::filesystem::path& file, const std::string& content);

// The content of a small file, or nullopt if it does not exist. Error kIo if it exists
// but cannot be read.
std::optional<std::string> read_small_file(const boost::filesystem::path& file);

}  // namespace fsnap
