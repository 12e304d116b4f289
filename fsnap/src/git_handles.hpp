// RAII owners for libgit2 handles, error translation, and the one-time isolated
// initialisation of libgit2. Private to fsnap.
#pragma once

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "fsnap/error.hpp"

namespace fsnap::git {

// Initialises libgit2 once per process, isolated from the user's git: no global,
// XDG, system or ProgramData config files are searched, so user settings such as
// core.hooksPath or core.autocrlf never apply. Safe to call repeatedly.
void ensure_initialized();

// Throws Error(code, "<what>: <libgit2 message>") when rc < 0.
void check(int rc, std::string_view what, ErrorCode code = ErrorCode::kIo);
// The last libgit2 error message, or "unknown error".
std::string last_error_message();

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const {
    if (p != nullptr) Free(p);
  }
};

template <typename T, void (*Free)(T*)>
using Handle = std::unique_ptr<T, Deleter<T, Free>>;

using Repository = Handle<git_repository, git_repository_free>;
using Odb = Handle<git_odb, git_odb_free>;
using OdbObject = Handle<git_odb_object, git_odb_object_free>;
using Commit = Handle<git_commit, git_commit_free>;
using Tree = Handle<git_tree, git_tree_free>;
using Blob = Handle<git_blob, git_blob_free>;
using Reference = Handle<git_reference, git_reference_free>;
using ReferenceIterator = Handle<git_reference_iterator, git_reference_iterator_free>;
using Revwalk = Handle<git_revwalk, git_revwalk_free>;
using Signature = Handle<git_signature, git_signature_free>;
using Config = Handle<git_config, git_config_free>;
using Index = Handle<git_index, git_index_free>;
using Patch = Handle<git_patch, git_patch_free>;
using Diff = Handle<git_diff, git_diff_free>;

// Owned git_buf.
struct Buf {
  git_buf buf = GIT_BUF_INIT;
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { git_buf_dispose(&buf); }
  std::string str() const { return std::string(buf.ptr ? buf.ptr : "", buf.size); }
};

// Hex id of an oid.
std::string to_hex(const git_oid& oid);
// Parses a full 40-digit hex id; throws kInvalidArgument otherwise.
git_oid from_hex(std::string_view hex);

}  // namespace fsnap::git
