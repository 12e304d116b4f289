#include "background_maintenance.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <boost/filesystem/operations.hpp>

#include "fsnap/maintenance.hpp"
#include "sandbox/retention.hpp"
#include "shell.hpp"

namespace cli {

void maintain_in_background(const Context& context, bool session_ended) {
  try {
    if (!context.config.auto_maintenance) return;
    boost::system::error_code ec;
    if (!boost::filesystem::is_directory(context.store_dir, ec)) return;
    fsnap::Store store = fsnap::Store::open(context.store_dir, context.workspace, false);
    bool due = fsnap::maintenance_due(store, context.config.maintenance);
    bool leftovers =
        fsnap::has_loose_objects(store) || sandbox::has_retention_limits(context.config.retention);
    if (!due && !(session_ended && leftovers)) return;
    std::vector<std::string> argv = {self_path(), "--workspace", context.workspace.string(),
                                     "--store", context.store_dir.string()};
    if (!context.config.source.empty()) {
      argv.push_back("--config");
      argv.push_back(boost::filesystem::absolute(context.config.source).string());
    }
    argv.push_back("maintenance");
    if (!session_ended) argv.push_back("--auto");
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    // Double fork: the grandchild is adopted by init, so nobody waits for it, and in a
    // session of its own no signal to this command's process group reaches it.
    pid_t child = ::fork();
    if (child < 0) return;
    if (child == 0) {
      ::setsid();
      if (::fork() != 0) ::_exit(0);
      int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null >= 0) {
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
      }
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::waitpid(child, nullptr, 0);
  } catch (...) {
    // The next command tries again.
  }
}

}  // namespace cli
