#include "watch_daemon.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <boost/filesystem/operations.hpp>

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
    std::vector<std::string> argv = {self_path(), "--workspace", context.workspace.string(),
                                     "--store", context.store_dir.string()};
    if (!context.config.source.empty()) {
      argv.push_back("--config");
      argv.push_back(boost::filesystem::absolute(context.config.source).string());
    }
    argv.push_back("daemon");
    argv.push_back("serve");
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    std::string log = fsnap::layout::watch_log_file(context.store_dir).string();
    // Double fork: the grandchild is adopted by init, so nobody waits for it, and in a
    // session of its own no signal to this command's process group reaches it.
    pid_t child = ::fork();
    if (child < 0) return;
    if (child == 0) {
      ::setsid();
      if (::fork() != 0) ::_exit(0);
      // A hook process blocks SIGTERM while it records (termination.hpp); the daemon
      // must not inherit that: an agent's supervisor ends it with the agent's tree.
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (null >= 0) ::dup2(null, 0);
      if (out >= 0) {
        ::dup2(out, 1);
        ::dup2(out, 2);
      }
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::waitpid(child, nullptr, 0);
  } catch (...) {
    // The next command tries again; this one scans.
  }
}

}  // namespace cli
