// HomeFiles — the regular files of an agent's HOME that preservation keeps, listed and
// read without following a symbolic link anywhere below HOME. Private to runs.
//
// The agent writes its HOME: a link it plants (a part, a directory on the way to one,
// or a file swapped for a link between listing and reading) must not bring a file from
// outside HOME into the store. Every name is opened relative to its directory's
// descriptor with O_NOFOLLOW, and a file is read only once fstat says it is a regular
// file. `.git` entries are left out, as a capture leaves them out.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/posix.hpp"

namespace runs {

// One regular file below HOME.
struct HomeFile {
  std::string path;  // relative to HOME, '/'-separated
  struct stat st {};
};

// The regular files under each of parts (relative to home; a directory is walked, a
// file is taken as it is), sorted by path. A part that is missing, is or passes through
// a symbolic link, or may not be opened contributes nothing. Throws sandbox::Error (kIo)
// if a directory cannot be read.
std::vector<HomeFile> list_home_files(const boost::filesystem::path& home,
                                      const std::vector<std::string>& parts);

// The regular file at path (relative to home), opened for reading, and its stat data; an
// invalid descriptor if it is gone, may not be opened, or is no longer a regular file
// reached without a link. Throws sandbox::Error (kIo) if it cannot be looked at.
fsnap::UniqueFd open_home_file(const boost::filesystem::path& home, const std::string& path,
                               struct stat& st);

}  // namespace runs
