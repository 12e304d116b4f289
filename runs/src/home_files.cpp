#include "home_files.hpp"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include "fsnap/posix.hpp"
#include "sandbox/errors.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

sandbox::Error io_error(const std::string& what, int err) {
  return sandbox::Error(sandbox::ErrorCode::kIo, fsnap::errno_message(what, err));
}

// Opens name (one component) below the directory at, never through a link: a
// directory with O_DIRECTORY, else for reading. -1 with errno set if it cannot.
int open_below(int at, const std::string& name, bool directory) {
  int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (directory ? O_DIRECTORY : O_NONBLOCK);
  int fd;
  do {
    fd = ::openat(at, name.c_str(), flags);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Whether errno says that a path is gone, is (or passes through) something that is not
// what was expected there (a link, a file where a directory was), or may not be read
// (the agent's to decide): then it is left out, and the rest is preserved.
bool gone_or_replaced(int err) {
  return err == ENOENT || err == ELOOP || err == ENOTDIR || err == EACCES || err == EPERM;
}

// The components of a '/'-separated relative path ("" and "." left out); nullopt if one
// is "..".
std::optional<std::vector<std::string>> components(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, slash - start);
    if (part == "..") return std::nullopt;
    if (!part.empty() && part != ".") out.push_back(std::move(part));
    start = slash + 1;
  }
  return out;
}

// The directory at the end of names below home, or an invalid descriptor if one of
// them is missing, is a link or is not a directory.
fsnap::UniqueFd open_dirs(const fs::path& home, const std::vector<std::string>& names,
                          std::size_t count) {
  fsnap::UniqueFd dir(::open(home.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    if (gone_or_replaced(errno)) return dir;
    throw io_error("cannot open " + home.string(), errno);
  }
  for (std::size_t i = 0; i < count; ++i) {
    fsnap::UniqueFd next(open_below(dir.get(), names[i], true));
    if (!next.valid() && !gone_or_replaced(errno)) {
      throw io_error("cannot open " + (home / names[i]).string(), errno);
    }
    dir = std::move(next);
    if (!dir.valid()) break;
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
    fsnap::UniqueFd sub(open_below(dir, name, true));
    if (sub.valid()) {
      walk(sub.get(), rel + "/" + name, out);
    } else if (!gone_or_replaced(errno)) {
      throw io_error("cannot open " + rel + "/" + name, errno);
    }
  }
}

}  // namespace

std::vector<HomeFile> list_home_files(const fs::path& home, const std::vector<std::string>& parts) {
  std::vector<HomeFile> out;
  for (const std::string& part : parts) {
    std::optional<std::vector<std::string>> names = components(part);
    if (!names || names->empty()) continue;
    fsnap::UniqueFd parent = open_dirs(home, *names, names->size() - 1);
    if (!parent.valid()) continue;
    struct stat st {};
    if (::fstatat(parent.get(), names->back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string rel;
    for (const std::string& name : *names) rel += (rel.empty() ? "" : "/") + name;
    if (S_ISREG(st.st_mode)) {
      out.push_back({rel, st});
    } else if (S_ISDIR(st.st_mode)) {
      fsnap::UniqueFd dir(open_below(parent.get(), names->back(), true));
      if (dir.valid()) walk(dir.get(), rel, out);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const HomeFile& a, const HomeFile& b) { return a.path < b.path; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const HomeFile& a, const HomeFile& b) { return a.path == b.path; }),
            out.end());
  return out;
}

std::optional<std::string> read_home_file(const fs::path& home, const std::string& path,
                                          struct stat& st) {
  std::optional<std::vector<std::string>> names = components(path);
  if (!names || names->empty()) return std::nullopt;
  fsnap::UniqueFd parent = open_dirs(home, *names, names->size() - 1);
  if (!parent.valid()) return std::nullopt;
  fsnap::UniqueFd file(open_below(parent.get(), names->back(), false));
  if (!file.valid()) {
    if (gone_or_replaced(errno)) return std::nullopt;
    throw io_error("cannot open " + (home / path).string(), errno);
  }
  if (::fstat(file.get(), &st) != 0) throw io_error("cannot read " + (home / path).string(), errno);
  if (!S_ISREG(st.st_mode)) return std::nullopt;  // (a fifo opens without blocking)
  std::string content;
  if (!fsnap::read_all(file.get(), content)) {
    throw io_error("cannot read " + (home / path).string(), errno);
  }
  return content;
}

}  // namespace runs
