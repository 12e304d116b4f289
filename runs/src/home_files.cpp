#include "home_files.hpp"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "fsnap/open_beneath.hpp"
#include "fsnap/posix.hpp"
#include "sandbox/errors.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

sandbox::Error io_error(const std::string& what, int err) {
  return sandbox::Error(sandbox::ErrorCode::kIo, fsnap::errno_message(what, err));
}

// Whether errno says that a path is gone, is (or passes through) something that is not
// what was expected there (a link, a file where a directory was), or may not be read
// (the agent's to decide): then it is left out, and the rest is preserved.
bool left_out(int err) {
  return err == ENOENT || err == ELOOP || err == ENOTDIR || err == EACCES || err == EPERM;
}

// The directory and the last name of a '/'-separated relative path ("" at the top).
std::pair<std::string, std::string> split(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

// The directory rel below home, opened without following a link (fsnap/open_beneath.hpp);
// invalid if it is left out, or if rel has an empty, "." or ".." component.
fsnap::UniqueFd open_home_dir(const fs::path& home, const std::string& rel) {
  fsnap::UniqueFd root(::open(home.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    if (left_out(errno)) return root;
    throw io_error("cannot open " + home.string(), errno);
  }
  fsnap::UniqueFd dir(fsnap::open_directory_beneath(root.get(), rel));
  if (!dir.valid() && !left_out(errno) && errno != EINVAL) {
    throw io_error("cannot open " + (home / rel).string(), errno);
  }
  return dir;
}

// Adds the regular files below the open directory dir (at path rel) to out.
void walk(int dir, const std::string& rel, std::vector<HomeFile>& out) {
  int copy = ::dup(dir);
  if (copy < 0) throw io_error("cannot read " + rel, errno);
  DIR* stream = ::fdopendir(copy);
  if (stream == nullptr) {
    int err = errno;
    ::close(copy);
    throw io_error("cannot read " + rel, err);
  }
  std::vector<std::string> subdirs;
  errno = 0;
  while (const dirent* e = ::readdir(stream)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name == ".git") continue;
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    if (S_ISDIR(st.st_mode)) {
      subdirs.push_back(name);
    } else if (S_ISREG(st.st_mode)) {
      out.push_back({rel + "/" + name, st});
    }
  }
  int err = errno;
  ::closedir(stream);
  if (err != 0) throw io_error("cannot read " + rel, err);
  for (const std::string& name : subdirs) {
    fsnap::UniqueFd sub(fsnap::open_directory_beneath(dir, name));
    if (sub.valid()) {
      walk(sub.get(), rel + "/" + name, out);
    } else if (!left_out(errno)) {
      throw io_error("cannot open " + rel + "/" + name, errno);
    }
  }
}

}  // namespace

std::vector<HomeFile> list_home_files(const fs::path& home, const std::vector<std::string>& parts) {
  std::vector<HomeFile> out;
  for (const std::string& part : parts) {
    auto [dir, name] = split(part);
    fsnap::UniqueFd parent = open_home_dir(home, dir);
    struct stat st {};
    if (!parent.valid() || name.empty() || name == "." || name == ".." ||
        ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    if (S_ISREG(st.st_mode)) {
      out.push_back({part, st});
    } else if (S_ISDIR(st.st_mode)) {
      fsnap::UniqueFd top(fsnap::open_directory_beneath(parent.get(), name));
      if (top.valid()) walk(top.get(), part, out);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const HomeFile& a, const HomeFile& b) { return a.path < b.path; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const HomeFile& a, const HomeFile& b) { return a.path == b.path; }),
            out.end());
  return out;
}

fsnap::UniqueFd open_home_file(const fs::path& home, const std::string& path, struct stat& st) {
  auto [dir, name] = split(path);
  fsnap::UniqueFd parent = open_home_dir(home, dir);
  if (!parent.valid() || name.empty() || name == "." || name == "..") return fsnap::UniqueFd();
  fsnap::UniqueFd file(
      ::openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!file.valid()) {
    if (left_out(errno)) return file;
    throw io_error("cannot open " + (home / path).string(), errno);
  }
  if (::fstat(file.get(), &st) != 0) throw io_error("cannot read " + (home / path).string(), errno);
  if (!S_ISREG(st.st_mode)) return fsnap::UniqueFd();  // (a fifo opens without blocking)
  return file;
}

}  // namespace runs
