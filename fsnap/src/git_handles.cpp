#include "git_handles.hpp"

#include <mutex>

namespace fsnap::git {

namespace {

// The largest tree libgit2 keeps in its object cache (its default: 4 KiB).
constexpr std::size_t kCachedTreeBytes = 16 << 10;

}  // namespace

void ensure_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    for (git_config_level_t level : {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
                                     GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA}) {
      git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
    }
    // Trees are written by our own encoder and their entries are known to exist;
    // libgit2's per-entry existence checks would only cost lookups.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
    // The store is ours even when another user created the directory.
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    // libgit2 keeps trees of up to 4 KiB in its object cache; the ledger notes' root
    // (256 fan-out entries, 7 KB once a run has a few hundred checkpoints) is read at
    // every note lookup, several times an event, and was inflated and parsed each time.
    git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_TREE, kCachedTreeBytes);
  });
}

std::string last_error_message() {
  const git_error* e = git_error_last();
  return e != nullptr && e->message != nullptr ? e->message : "unknown error";
}

void check(int rc, std::string_view what, ErrorCode code) {
  if (rc >= 0) return;
  if (rc == GIT_ENOTFOUND && code == ErrorCode::kIo) code = ErrorCode::kNotFound;
  throw Error(code, std::string(what) + ": " + last_error_message());
}

std::string to_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return std::string(buf, GIT_OID_HEXSZ);
}

git_oid from_hex(std::string_view hex) {
  git_oid oid;
  if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&oid, hex.data(), hex.size()) != 0) {
    throw Error(ErrorCode::kInvalidArgument, "not an object id: " + std::string(hex));
  }
  return oid;
}

}  // namespace fsnap::git
