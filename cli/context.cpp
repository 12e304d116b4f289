#include "context.hpp"

#include <iostream>
#include <tuple>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "progress.hpp"
#include "sandbox/redaction.hpp"
#include "shell.hpp"
#include "watch_daemon.hpp"

namespace cli {

namespace fs = boost::filesystem;

std::pair<fs::path, fs::path> locate(const GlobalOptions& options) {
  fs::path workspace = options.workspace ? fs::path(*options.workspace) : fs::current_path();
  boost::system::error_code ec;
  if (!fs::is_directory(workspace, ec)) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "workspace is not a directory: " + workspace.string());
  }
  workspace = fs::canonical(fs::absolute(workspace));
  fs::path store = options.store ? fs::absolute(fs::path(*options.store))
                                 : fsnap::Store::default_location(workspace);
  return {workspace, store};
}

Context make_context(const GlobalOptions& options) {
  Context context;
  context.options = options;
  std::tie(context.workspace, context.store_dir) = locate(options);
  std::optional<fs::path> config_file;
  if (options.config) config_file = fs::path(*options.config);
  context.config = sandbox::Config::load(config_file, context.workspace);
  return context;
}

fsnap::Store Context::open_store(bool create) const {
  try {
    fsnap::Store store = fsnap::Store::open(store_dir, workspace, create);
    if (store.tightened()) {
      std::cerr << "shadowbox: made the store " << store.dir().string()
                << " private (mode 0700): it holds copies of the workspace's files\n";
    }
    return store;
  } catch (const fsnap::Error& e) {
    if (e.code() != fsnap::ErrorCode::kNotFound || create) throw;
    throw fsnap::Error(fsnap::ErrorCode::kNotFound, "no shadowbox store for " + workspace.string() +
                                                        " at " + store_dir.string() +
                                                        " (run 'shadowbox init' first)");
  }
}

std::shared_ptr<fsnap::ShadowRepo> Context::open_repo(const fsnap::Store& store) const {
  return std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store.repo_dir(), false));
}

std::unique_ptr<sandbox::LedgerRun> Context::open_run(
    const std::string& run, bool create, std::shared_ptr<fsnap::ShadowRepo> repo,
    std::shared_ptr<fsnap::CaptureService> captures) const {
  sandbox::LedgerRunOptions run_options;
  run_options.env.repo = std::move(repo);
  run_options.capture = config.capture;
  run_options.capture.on_progress = terminal_progress();
  run_options.policy = config.hooks.policy();
  run_options.run = run;
  run_options.secrets = secret_values();
  run_options.windows = config.session_windows;
  fsnap::Store store = open_store(create);
  if (captures) {
    run_options.env.captures = std::move(captures);
  } else if (config.watch.daemon) {
    run_options.env.captures = watch_client(*this, store);
  }
  return std::make_unique<sandbox::LedgerRun>(std::move(store), std::move(run_options));
}

std::vector<std::string> Context::secret_values() const {
  if (!environment) return sandbox::secret_values(config.run.secrets);
  return sandbox::secret_values(config.run.secrets, [this](const std::string& name) {
    auto found = environment->find(name);
    return found != environment->end() ? found->second.c_str() : nullptr;
  });
}

std::vector<std::string> Context::self_command() const {
  std::vector<std::string> argv = {self_path(), "--workspace", workspace.string(), "--store",
                                   store_dir.string()};
  // A file the user named; the workspace's own is found (and judged) by the child.
  if (config.origin == sandbox::Config::Origin::kFile) {
    argv.push_back("--config");
    argv.push_back(fs::absolute(config.source).string());
  }
  return argv;
}

}  // namespace cli
