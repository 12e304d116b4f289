#include "hooks/home_leftovers.hpp"

#include <sstream>
#include <string_view>

#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

constexpr std::string_view kSuffix = ".carried";
constexpr std::size_t kMaxList = 64 * 1024;

fs::path list_of(const fs::path& home) {
  return home.parent_path() / (home.filename().string() + std::string(kSuffix));
}

// A listed name is followed only where it stays inside the HOME: written by shadowbox,
// but read back from a store that anyone with the user's rights can have changed.
bool stays_inside(const std::string& relative) {
  if (relative.empty() || relative.front() == '/' || relative.find('\0') != std::string::npos) {
    return false;
  }
  for (const fs::path& part : fs::path(relative)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

}  // namespace

void record_carried(const fs::path& home, const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& path : paths) {
    if (stays_inside(path) && path.find('\n') == std::string::npos) text += path + '\n';
  }
  fsnap::write_file_atomically(list_of(home), text, 0600);
}

void forget_carried(const fs::path& home) {
  boost::system::error_code ec;
  fs::remove(list_of(home), ec);
}

std::vector<fs::path> remove_stale_carried(const fsnap::Store& store) {
  std::vector<fs::path> removed;
  boost::system::error_code ec;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  for (fs::directory_iterator run(runs, ec), end; !ec && run != end; run.increment(ec)) {
    std::optional<runs::RunMeta> meta;
    try {
      meta = runs::RunMeta::load(store, run->path().filename().string());
    } catch (const std::exception&) {
      continue;  // unreadable: leave it to whoever runs it
    }
    if (meta && meta->running()) continue;
    boost::system::error_code inner;
    for (fs::directory_iterator entry(run->path(), inner); !inner && entry != end;
         entry.increment(inner)) {
      std::string name = entry->path().filename().string();
      if (name.rfind("home", 0) != 0 || name.size() <= kSuffix.size() ||
          name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
        continue;
      }
      fs::path home = run->path() / name.substr(0, name.size() - kSuffix.size());
      // Not a list shadowbox wrote (a link, a directory, too long): left as it is.
      boost::system::error_code odd;
      if (!fs::is_regular_file(fs::symlink_status(entry->path(), odd)) ||
          fs::file_size(entry->path(), odd) > kMaxList || odd) {
        continue;
      }
      std::optional<std::string> text;
      try {
        text = fsnap::read_small_file(entry->path());
      } catch (const std::exception&) {
        continue;
      }
      if (!text) continue;
      bool all_gone = true;
      std::istringstream lines(*text);
      for (std::string line; std::getline(lines, line);) {
        if (!stays_inside(line)) continue;
        boost::system::error_code gone;
        fs::path path = home / line;
        if (!fs::exists(fs::symlink_status(path, gone))) continue;
        fs::remove_all(path, gone);
        if (gone) {
          all_gone = false;
        } else {
          removed.push_back(path);
        }
      }
      boost::system::error_code left;
      if (all_gone) fs::remove(entry->path(), left);
    }
  }
  return removed;
}

}  // namespace hooks
