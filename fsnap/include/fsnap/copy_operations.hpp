// CopyOperations — how the store makes its copy of a workspace file over
// capture.max_file_size, and how a restore puts one back: three ways, tried in this order
//
//   clone  a reflink (ioctl FICLONE): the blocks are shared until either side is
//          written, so the copy costs neither time nor space that grows with the file
//          (btrfs, XFS, bcachefs; not ext4 or tmpfs);
//   link   a hard link: the same file under a second name, free, on the same filesystem
//          only — and a write in place into the workspace's file writes the copy too,
//          which a restore detects (the copy's size or mtime is not the recorded one) and
//          reports instead of restoring;
//   copy   the bytes, holes kept (another filesystem, or links refused).
//
// The system's by default (HostEnv::copies); tests give their own to make any of them
// fail. Thread-safety: the functions are called from several capture threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace fsnap {

// The three ways to copy a file; each returns 0, or the errno value of its failure.
struct CopyOperations {
  // Makes the empty file open at `to` a reflink of the one open at `from`.
  std::function<int(int from, int to)> clone;
  // Links from_name of the directory open at from_dir as to_name in to_dir (linkat).
  std::function<int(int from_dir, const char* from_name, int to_dir, const char* to_name)> link;
  // Copies the size bytes of the file open at `from` into the empty one open at `to`.
  std::function<int(int from, int to, std::uint64_t size)> copy;

  // The system calls: FICLONE, linkat, and copy_file_range (or read and write) over the
  // file's data, leaving its holes as holes.
  static std::shared_ptr<const CopyOperations> system();
};

}  // namespace fsnap
