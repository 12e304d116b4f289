// Opening a directory below another without following any symlink on the way: how the
// watcher adds a directory of the workspace, and how an agent's HOME is read for its
// preservation (runs/), where a link planted by the agent must lead nowhere.
#pragma once

#include <string>

namespace fsnap {

// Opens the directory rel ("a/b", '/'-separated; "" is dirfd itself) below dirfd one
// component at a time with O_NOFOLLOW, so that no symlink along the way is followed.
// Returns -1 with errno set: ELOOP or ENOTDIR where a component is not a directory,
// EINVAL for an empty, "." or ".." component.
int open_directory_beneath(int dirfd, const std::string& rel);

}  // namespace fsnap
