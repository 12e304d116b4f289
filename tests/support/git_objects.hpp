// Every object of a git repository, read with libgit2 — loose and packed, reachable or
// not — for tests that must show something is in none of a store's objects.
#pragma once

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace testing_support {

// "<type> <id>" of each object of the repository at git_dir whose content holds one of
// needles (an empty list when none does).
std::vector<std::string> objects_containing(const boost::filesystem::path& git_dir,
                                            const std::vector<std::string>& needles);

// How many objects the repository at git_dir holds (so a test can see it searched some).
std::size_t object_count(const boost::filesystem::path& git_dir);

}  // namespace testing_support
