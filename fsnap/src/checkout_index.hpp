// CheckoutIndex — when the workspace is a git checkout, the blob ids its own index
// already vouches for, so that a first capture reads what `git status` would read and
// not every file. Private to fsnap.
//
// The index is in the workspace, which shadowbox does not trust: an id it gives is
// used only once the capture has hashed the file and found that id (workspace_capture:
// from_checkout). What it saves is compressing the objects: a blob the checkout's own
// packs hold whole is written into the capture's pack as the bytes git compressed, once
// they decompress to the file's content (checkout_packs.hpp). Nothing of the user's
// repository is linked or copied into the store, so nothing it does later (deleted,
// truncated, garbage-collected, rewritten by the agent) touches a checkpoint.
//
// The user's repository is only read. Thread-safe after open().
#pragma once

#include <git2/index.h>
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "checkout_packs.hpp"
#include "git_handles.hpp"

namespace fsnap {

class CheckoutIndex {
 public:
  // The index and packs of the checkout whose work tree is root. Null when root is not
  // the top of a git work tree, or its repository or index cannot be read as libgit2
  // reads them (then a capture reads every file, as without it); never throws.
  static std::unique_ptr<CheckoutIndex> open(const std::string& root);

  // The blob id the index gives the file at path (relative to root; lstat st, git mode
  // mode) if its stat data vouches for the file — to be confirmed by the file's hash.
  // The index's size must be st's: that catches content a filter changed on its way
  // into the index (line endings, `ident`, LFS). Files larger than kStreamedBlobSize
  // are never vouched for: captured, they stay loose objects, which restore streams.
  std::optional<git_oid> blob_for(const std::string& path, std::uint32_t mode,
                                  const struct stat& st) const;

  // Whether the checkout's packs hold blob id as bytes that decompress to content; if
  // so, compressed is set to them (CheckoutPacks::compressed_blob).
  bool compressed_blob(const git_oid& id, std::string_view content, std::string& compressed) const;

 private:
  CheckoutIndex() = default;

  git::Repository user_;  // the user's repository, read only
  git::Index index_;
  timespec index_mtime_{};
  std::unordered_map<std::string_view, const git_index_entry*> entries_;  // into index_
  CheckoutPacks packs_;
};

}  // namespace fsnap
