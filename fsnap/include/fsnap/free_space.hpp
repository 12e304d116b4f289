// Whether a write failed for want of space: what lets gc tell a full filesystem (free
// what needs no writing, say so clearly, go on later) from any other failure.
//
// Thread-safety: a plain function.
#pragma once

#include <exception>

#include <boost/filesystem/path.hpp>

namespace fsnap {

// Whether the write that failed with e failed for want of space on the filesystem of
// dir: its message quotes the system's ENOSPC or EDQUOT (libgit2's do), or that
// filesystem has less than 1 MiB left.
bool out_of_space(const std::exception& e, const boost::filesystem::path& dir);

}  // namespace fsnap
