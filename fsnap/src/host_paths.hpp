// Confinement of caller-supplied paths to a workspace root. Private to fsnap.
#pragma once

#include <string>
#include <string_view>

namespace fsnap {

// Turns a caller's relative path into a normalised one ("a/b"; "" for the root):
// collapses "." and empty components and resolves ".." lexically. Throws kPathEscape
// for absolute paths and for ".." that climbs above the root, kInvalidArgument for a
// NUL byte.
std::string normalize_relative(std::string_view path);

// The absolute path on disk for the normalised relative path rel under root (a real
// path), after checking that no symlink along the way leads outside the root. With
// follow_last, a symlink in the last component must also resolve inside the root.
// Throws kPathEscape naming the path.
std::string confined_path(const std::string& root, const std::string& rel, bool follow_last);

}  // namespace fsnap
