#include "watch_daemon.hpp"

#include <sys/stat.h>

#include <sstream>
#include <vector>

#include <boost/filesystem/operations.hpp>

#include "detached.hpp"
#include "fsnap/atomic_file.hpp"
#include "fsnap/store_layout.hpp"
#include "shell.hpp"
#include "version.hpp"

namespace cli {

std::string daemon_version() {
  std::string version = kVersion;
  struct stat st;
  if (::stat("/proc/self/exe", &st) == 0) {
    version += "+" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
               "." + std::to_string(st.st_size);
  }
  return version;
}

std::shared_ptr<fsnap::WatchDaemonClient> watch_client(const fsnap::Store& store,
                                                       std::optional<DaemonLaunch> launch) {
  fsnap::WatchClientOptions options;
  options.version = daemon_version();
  if (launch) {
    options.start_daemon = [launch = std::move(*launch)] { start_daemon_detached(launch); };
  }
  return std::make_shared<fsnap::WatchDaemonClient>(store, std::move(options));
}

bool daemon_start_allowed(const boost::filesystem::path& store_dir) {
  using namespace std::chrono;
  boost::filesystem::path file = fsnap::layout::watch_spawns_file(store_dir);
  auto now = duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
  std::vector<long long> recent;
  if (std::optional<std::string> text = fsnap::read_small_file(file)) {
    std::istringstream in(*text);
    for (long long at = 0; in >> at;) {
      if (now - at < kDaemonStartWindow.count()) recent.push_back(at);
    }
  }
  if (recent.size() >= kDaemonStartsPerWindow) return false;
  recent.push_back(now);
  std::string text;
  for (long long at : recent) text += std::to_string(at) + "\n";
  fsnap::write_file_atomically(file, text, 0600);
  return true;
}

void start_daemon_detached(const DaemonLaunch& launch) {
  try {
    // A daemon that dies as soon as it starts (it cannot watch, or cannot listen) would
    // otherwise be started again by every command: the commands scan meanwhile.
    if (!daemon_start_allowed(launch.store_dir)) return;
    std::vector<std::string> argv = launch.self_command;
    argv.push_back("daemon");
    argv.push_back("serve");
    spawn_detached(std::move(argv), fsnap::layout::watch_log_file(launch.store_dir).string());
  } catch (...) {
    // The next command tries again; this one scans.
  }
}

}  // namespace cli
