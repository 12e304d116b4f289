// LargeFileCopies — the copies a store keeps of workspace files over
// capture.max_file_size, in <store>/large-files (store_layout.hpp). Private to fsnap.
//
// No checkpoint's tree holds such a file. The capture that skips one makes sure the
// store has a copy of it as it is (keep): a reflink, a hard link or a plain copy, in
// that order (copy_operations.hpp), named by the file's path and identity (device,
// inode, size, mtime), so that a file that did not change costs one stat. The
// checkpoint records the copy's name and the file's mtime (SkippedPath::copy). A restore
// puts the file back from its copy (put_back) once it has checked that the copy still
// is that file (why_not): a hard link written in place since has another size or mtime
// — a write that keeps both, to the nanosecond, is not seen. gc deletes the copies no
// checkpoint names (prune) and counts the others in the store's size (disk_usage).
//
// Thread-safety: keep may be called from several threads at once; the rest from one.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <boost/filesystem/path.hpp>

#include "fsnap/copy_operations.hpp"
#include "fsnap/snapshot.hpp"

namespace fsnap {

// The copies of one store.
class LargeFileCopies {
 public:
  // The copies in dir (created, private, on the first keep), made with ops (the system's
  // when null).
  explicit LargeFileCopies(boost::filesystem::path dir,
                           std::shared_ptr<const CopyOperations> ops = nullptr);

  // The copy of the regular file `name` of the directory open at dirfd, whose path in
  // the workspace is path and whose fstatat (no follow) gave st — made now unless the
  // store holds it already; nullopt if none could be made (the file changed meanwhile,
  // the store's filesystem is full, ...): a restore then names the file as one it
  // cannot put back.
  std::optional<LargeFileCopy> keep(int dirfd, const std::string& name, const std::string& path,
                                    const struct stat& st) const;

  // "" if skipped's copy can put the file back as it was; else why not, for the user
  // ("it was written in place after the checkpoint ...").
  std::string why_not(const SkippedPath& skipped) const;

  // Writes skipped's file from its copy as temp (a name that does not exist) in the
  // directory open at dirfd, with its mode and mtime; the caller renames it into place.
  // Error kConflict if the copy is no longer the file (see why_not), kIo naming
  // skipped.path if it cannot be written (nothing is left at temp).
  void put_back(const SkippedPath& skipped, int dirfd, const std::string& temp) const;

  // Deletes the copies whose name is not in needed, and the temporary files of killed
  // captures, once their ctime (when the store's name was made, or the file last
  // changed) is older than grace at now. Returns how many went.
  std::size_t prune(const std::set<std::string>& needed, std::chrono::system_clock::time_point now,
                    std::chrono::seconds grace) const;

  // What each copy takes on disk that the store alone holds, by name: nothing for a hard
  // link the workspace still has, the blocks for the others (shared among the names of
  // one file).
  std::map<std::string, std::uint64_t> disk_usage() const;

  // The name of the copy of the file at path whose stat is st.
  static std::string name_for(const std::string& path, const struct stat& st);
  // Whether name can be a copy's name (40 lowercase hex digits): a name read from a
  // checkpoint becomes a path only then.
  static bool is_copy_name(const std::string& name);

 private:
  boost::filesystem::path dir_;
  std::shared_ptr<const CopyOperations> ops_;
};

}  // namespace fsnap
