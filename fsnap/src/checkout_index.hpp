// CheckoutIndex — when the workspace is a git checkout, the blob ids its own index
// already vouches for, so that a first capture reads what `git status` would read and
// not every file. Private to fsnap.
//
// The user's pack files are linked into the store first (hard links, copies across
// filesystems), as `git clone --local` does, so the ids it hands out name objects the
// store holds itself: deleting or garbage-collecting the user's repository later
// breaks nothing. Objects the packs lack (loose ones, or from alternates) are copied
// one by one; an id whose object cannot be had is not handed out.
//
// The index is in the workspace, which shadowbox does not trust: an id it gives is
// used only once the capture has hashed the file and found that id (workspace_capture:
// from_checkout). What it saves is compressing and writing the objects.
//
// The user's repository is only read: a capture never writes an object a linked pack
// holds (libgit2 would set the pack's mtime), except a blob over kStreamedBlobSize,
// which is streamed before its id is known. Thread-safe after open().
#pragma once

#include <git2/index.h>
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "git_handles.hpp"

namespace fsnap {

class CheckoutIndex {
 public:
  // The index of the checkout whose work tree is root, with its packs linked into the
  // store whose object directory is store_objects. Null when root is not the top of a
  // git work tree, or its repository or index cannot be read as libgit2 reads them
  // (then a capture reads every file, as without it); never throws for the user's
  // repository, only kIo when the store cannot be written.
  static std::unique_ptr<CheckoutIndex> open(const std::string& root,
                                             const std::string& store_objects);

  // The blob id of the file at path (relative to root; lstat st, git mode mode) if the
  // index vouches for it and the store holds a blob of that id and of st's size (one
  // only the user's repository held is copied in through store first). The size check
  // also catches content a filter changed on its way into the index (line endings,
  // `ident`, LFS). Files larger than kStreamedBlobSize are never vouched for: captured,
  // they stay loose objects, which restore streams.
  std::optional<git_oid> blob_for(const std::string& path, std::uint32_t mode,
                                  const struct stat& st,
                                  const std::function<git_oid(std::string_view)>& store) const;

  // Whether the store's packs (the user's linked ones among them) hold oid.
  bool packed(const git_oid& oid) const;

 private:
  CheckoutIndex() = default;

  git::Repository user_;  // the user's repository, read only
  git::Index index_;
  timespec index_mtime_{};
  git::Odb user_odb_;
  git::Odb store_packs_;  // the store's packs alone (no loose lookups, no freshening)
  std::unordered_map<std::string_view, const git_index_entry*> entries_;  // into index_
};

}  // namespace fsnap
