// fsnap::Filesystem — the interface every workspace filesystem implements.
//
// Paths are relative, '/'-separated byte strings: any byte except NUL and '/' may
// appear in a name (spaces, newlines, non-UTF-8). "" and "." name the root. Contents
// are binary-safe std::string values. Operations never follow a symlink in the last
// component unless they say so (read and write do, within the root).
//
// Thread-safety: implementations document their own contract; InMemoryFilesystem and
// HostFilesystem allow concurrent const calls, and need external synchronisation for
// mutations.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fsnap {

// The three kinds of entry a workspace holds.
enum class EntryType : std::uint8_t { kFile, kDirectory, kSymlink };

// Short lowercase name of a type ("file", "directory", "symlink").
std::string_view to_string(EntryType type);

// What stat() reports about one entry (never following a final symlink).
struct EntryStat {
  EntryType type = EntryType::kFile;
  std::uint64_t size = 0;   // bytes of a file, length of a symlink's target, 0 for a directory
  bool executable = false;  // files only: the owner-executable bit
};

// One child of a directory, as list() returns it.
struct DirEntry {
  std::string name;
  EntryType type = EntryType::kFile;

  friend bool operator==(const DirEntry&, const DirEntry&) = default;
};

// Read/write access to a tree of files, directories and symlinks.
class Filesystem {
 public:
  virtual ~Filesystem() = default;

  // Contents of the regular file at path. Throws kNotFound, or kInvalidArgument for a
  // directory.
  virtual std::string read(std::string_view path) const = 0;
  // Creates or replaces the regular file at path with data, creating missing parent
  // directories. Keeps the executable bit of a file it replaces.
  virtual void write(std::string_view path, std::string_view data) = 0;
  // Removes the file, symlink or directory (with everything in it) at path.
  // Throws kNotFound when nothing is there.
  virtual void remove(std::string_view path) = 0;
  // The children of the directory at path, sorted by name (bytewise).
  virtual std::vector<DirEntry> list(std::string_view path) const = 0;
  // Type, size and executable bit of path, not following a final symlink.
  virtual EntryStat stat(std::string_view path) const = 0;
  // Creates the directory at path and any missing parents; no-op if it exists.
  virtual void mkdir(std::string_view path) = 0;
  // True if anything (even a dangling symlink) is at path.
  virtual bool exists(std::string_view path) const = 0;
  // Creates a symlink at path pointing to target (stored verbatim), creating parents.
  virtual void symlink(std::string_view path, std::string_view target) = 0;
  // The target of the symlink at path.
  virtual std::string readlink(std::string_view path) const = 0;
  // Sets or clears the executable bit of the regular file at path.
  virtual void set_executable(std::string_view path, bool executable) = 0;
};

}  // namespace fsnap
