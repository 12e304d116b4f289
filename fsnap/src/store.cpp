#include "fsnap/store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <boost/filesystem.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/shadow_repo.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

std::string hex64(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = digits[v & 15];
  return out;
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

fs::path canonical_workspace(const fs::path& workspace) {
  boost::system::error_code ec;
  fs::path real = fs::canonical(fs::absolute(workspace), ec);
  if (ec || !fs::is_directory(real)) {
    throw Error(ErrorCode::kNotFound, "workspace is not a directory: " + workspace.string());
  }
  return real;
}

bool is_inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

// One lock file as this process holds it: threads take turns on the mutex, and the
// outermost hold of the owning thread holds the flock.
struct StoreLock::Shared {
  std::recursive_mutex mutex;
  int depth = 0;  // guarded by mutex
  int fd = -1;
};

namespace {

std::shared_ptr<StoreLock::Shared> shared_lock_for(const fs::path& lock_file) {
  static std::mutex registry_mutex;
  static std::map<std::string, std::weak_ptr<StoreLock::Shared>> registry;
  boost::system::error_code ec;
  fs::path key = fs::weakly_canonical(fs::absolute(lock_file), ec);
  if (ec) key = fs::absolute(lock_file);
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (auto it = registry.begin(); it != registry.end();) {
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  std::weak_ptr<StoreLock::Shared>& slot = registry[key.string()];
  std::shared_ptr<StoreLock::Shared> shared = slot.lock();
  if (!shared) {
    shared = std::make_shared<StoreLock::Shared>();
    slot = shared;
  }
  return shared;
}

}  // namespace

StoreLock::StoreLock(const fs::path& lock_file) : shared_(shared_lock_for(lock_file)) {
  std::unique_lock<std::recursive_mutex> hold(shared_->mutex);
  if (shared_->depth == 0) {
    UniqueFd fd(::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid()) throw system_error("cannot open store lock " + lock_file.string(), errno);
    while (::flock(fd.get(), LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      throw system_error("cannot lock " + lock_file.string(), errno);
    }
    shared_->fd = fd.release();
  }
  ++shared_->depth;
  hold.release();  // held until the destructor
}

StoreLock::~StoreLock() {
  if (!shared_) return;
  if (--shared_->depth == 0) {
    ::close(shared_->fd);  // closing the descriptor releases the flock
    shared_->fd = -1;
  }
  shared_->mutex.unlock();
}

StoreLock::StoreLock(StoreLock&& other) noexcept : shared_(std::move(other.shared_)) {}

fs::path Store::default_location(const fs::path& workspace) {
  if (const char* env = std::getenv("SHADOWBOX_STORE"); env != nullptr && *env != '\0') {
    return fs::absolute(env);
  }
  fs::path base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = fs::path(home) / ".local" / "share";
  } else {
    throw Error(ErrorCode::kInvalidArgument,
                "cannot choose a store location: neither XDG_DATA_HOME nor HOME is set "
                "(use --store or SHADOWBOX_STORE)");
  }
  fs::path real = canonical_workspace(workspace);
  std::string name = real.filename().string();
  if (name.empty() || name == "/") name = "root";
  return base / "shadowbox" / (name + "-" + hex64(fnv1a(real.string())));
}

bool Store::is_store_of(const fs::path& dir, const fs::path& workspace) {
  boost::system::error_code ec;
  fs::path real_workspace = fs::canonical(fs::absolute(workspace), ec);
  if (ec || !fs::is_directory(real_workspace, ec)) return false;
  fs::path real_store = fs::canonical(fs::absolute(dir), ec);
  if (ec || is_inside(real_store, real_workspace)) return false;
  fs::path marker = layout::workspace_marker(real_store);
  if (!fs::is_directory(layout::repo_dir(real_store), ec) || !fs::is_regular_file(marker, ec)) {
    return false;
  }
  try {
    return read_small_file(marker).value_or("") == real_workspace.string();
  } catch (const Error&) {
    return false;
  }
}

Store Store::open(const fs::path& dir, const fs::path& workspace, bool create) {
  fs::path real_workspace = canonical_workspace(workspace);
  fs::path store_dir = fs::absolute(dir).lexically_normal();
  if (store_dir.filename_is_dot()) store_dir = store_dir.parent_path();
  boost::system::error_code ec;
  fs::path real_store = fs::weakly_canonical(store_dir, ec);
  if (!ec && is_inside(real_store, real_workspace)) {
    throw Error(ErrorCode::kInvalidArgument, "the store " + store_dir.string() +
                                                 " must be outside the workspace " +
                                                 real_workspace.string());
  }

  fs::path repo_dir = layout::repo_dir(store_dir);
  fs::path marker = layout::workspace_marker(store_dir);
  bool existed = fs::is_directory(repo_dir, ec);
  if (!create) {
    if (!fs::is_directory(repo_dir, ec)) {
      throw Error(ErrorCode::kNotFound, "no shadowbox store at " + store_dir.string() + " for " +
                                            real_workspace.string() + " (run 'shadowbox init')");
    }
  } else {
    fs::create_directories(store_dir, ec);
    if (ec) {
      throw Error(ErrorCode::kIo,
                  "cannot create store " + store_dir.string() + ": " + ec.message());
    }
  }

  Store store(store_dir, real_workspace);
  // Private whatever the umask (chmod is not subject to it).
  struct stat st {};
  if (::stat(store_dir.c_str(), &st) == 0 && (st.st_mode & 077) != 0 && ::getuid() == st.st_uid) {
    if (::chmod(store_dir.c_str(), 0700) != 0) {
      throw system_error("cannot make the store " + store_dir.string() + " private", errno);
    }
    store.tightened_ = existed;
  }
  if (fs::exists(marker, ec)) {
    std::string recorded = read_small_file(marker).value_or("");
    if (recorded != real_workspace.string()) {
      throw Error(ErrorCode::kInvalidArgument, "the store " + store_dir.string() +
                                                   " belongs to the workspace " + recorded +
                                                   ", not " + real_workspace.string());
    }
  }
  // The marker is written last, under the lock, once the repository is made: with it
  // and the repository there, the store is made already and nothing is to be opened.
  if (create && !(fs::exists(marker, ec) && fs::exists(repo_dir / "HEAD", ec))) {
    StoreLock lock = store.lock();
    ShadowRepo::open(repo_dir, /*create=*/true);
    if (!fs::exists(marker, ec)) write_file_atomically(marker, real_workspace.string());
  }
  return store;
}

}  // namespace fsnap
