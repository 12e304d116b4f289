#include "runs/run_notices.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/run_meta.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

// <ns since the epoch, 20 digits>-<pid>-<n>: sorted by name, oldest first.
std::string notice_name() {
  static std::atomic<unsigned> counter{0};
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char name[64];
  std::snprintf(name, sizeof name, "%020lld-%ld-%u", static_cast<long long>(ns),
                static_cast<long>(::getpid()), counter++);
  return name;
}

// Whether a directory entry is a notice (not a taken one, nor a temporary file).
bool is_notice_name(const std::string& name) {
  return !name.empty() && name.find_first_not_of("0123456789-") == std::string::npos;
}

}  // namespace

void post_run_notice(const fsnap::Store& store, const std::string& run, const std::string& text) {
  fs::path dir = fsnap::layout::run_notices_dir(store.dir(), run);
  boost::system::error_code ec;
  fs::create_directories(dir, ec);
  fsnap::write_file_atomically(dir / notice_name(), text.substr(0, kMaxNoticeBytes), 0600);
}

std::vector<std::string> take_run_notices(const fsnap::Store& store, const std::string& run) {
  fs::path dir = fsnap::layout::run_notices_dir(store.dir(), run);
  boost::system::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return {};
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (is_notice_name(name) && fs::is_regular_file(fs::symlink_status(it->path(), ec))) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> out;
  std::size_t left = 0;
  for (const std::string& name : names) {
    // Renamed first: of two processes taking at once, one gets it.
    fs::path taken = dir / ("taken." + name + "." + std::to_string(::getpid()));
    if (::rename((dir / name).c_str(), taken.c_str()) != 0) continue;
    if (out.size() == kMaxNoticesTaken) {
      ++left;
    } else {
      try {
        std::optional<std::string> text = fsnap::read_small_file(taken);
        if (text) out.push_back(text->substr(0, kMaxNoticeBytes));
      } catch (const std::exception&) {
        // Unreadable: skipped, and gone.
      }
    }
    fs::remove(taken, ec);
  }
  if (left > 0) {
    out.push_back(std::to_string(left) + " more notice" + (left == 1 ? "" : "s") +
                  " of changes made from outside were left out");
  }
  return out;
}

std::vector<std::string> live_runs_on(const fsnap::Store& store, const std::string& workspace) {
  std::vector<std::string> out;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  boost::system::error_code ec;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    std::string run = it->path().filename().string();
    try {
      std::optional<RunMeta> meta = RunMeta::load(store, run);
      if (meta && meta->workspace == workspace && meta->running()) out.push_back(run);
    } catch (const std::exception&) {
      // A run.json that cannot be read is no live run's.
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace runs
