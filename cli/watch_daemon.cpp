#include "watch_daemon.hpp"

#include <sys/stat.h>

#include <vector>

#include <boost/filesystem/operations.hpp>

#include "detached.hpp"
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

std::shared_ptr<fsnap::WatchDaemonClient> watch_client(const Context& context,
                                                       const fsnap::Store& store) {
  fsnap::WatchClientOptions options;
  options.version = daemon_version();
  options.start_daemon = [&context] { start_daemon_detached(context); };
  return std::make_shared<fsnap::WatchDaemonClient>(store, std::move(options));
}

void start_daemon_detached(const Context& context) {
  try {
    std::vector<std::string> argv = context.self_command();
    argv.push_back("daemon");
    argv.push_back("serve");
    spawn_detached(std::move(argv), fsnap::layout::watch_log_file(context.store_dir).string());
  } catch (...) {
    // The next command tries again; this one scans.
  }
}

}  // namespace cli
