#include "context.hpp"

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "hooks/agent_home.hpp"
#include "progress.hpp"

namespace cli {

namespace fs = boost::filesystem;

Context make_context(const GlobalOptions& options) {
  Context context;
  context.options = options;
  context.workspace = options.workspace ? fs::path(*options.workspace) : fs::current_path();
  boost::system::error_code ec;
  if (!fs::is_directory(context.workspace, ec)) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "workspace is not a directory: " + context.workspace.string());
  }
  context.workspace = fs::canonical(fs::absolute(context.workspace));
  context.store_dir = options.store ? fs::absolute(fs::path(*options.store))
                                    : fsnap::Store::default_location(context.workspace);
  std::optional<fs::path> config_file;
  if (options.config) config_file = fs::path(*options.config);
  context.config = sandbox::Config::load(config_file, context.workspace);
  return context;
}

fsnap::Store Context::open_store(bool create) const {
  try {
    return fsnap::Store::open(store_dir, workspace, create);
  } catch (const fsnap::Error& e) {
    if (e.code() != fsnap::ErrorCode::kNotFound || create) throw;
    throw fsnap::Error(fsnap::ErrorCode::kNotFound, "no shadowbox store for " + workspace.string() +
                                                        " at " + store_dir.string() +
                                                        " (run 'shadowbox init' first)");
  }
}

hooks::ClaudeCodeHookOptions Context::hook_options(const std::string& run) const {
  hooks::ClaudeCodeHookOptions options;
  options.run = run;
  options.secrets = hooks::secret_values(config.run.secrets);
  options.rollback_on_failure = config.hooks.rollback_on_failure;
  options.keep_failed_tools.insert(config.hooks.keep_failed_tools.begin(),
                                   config.hooks.keep_failed_tools.end());
  return options;
}

fsnap::HostFilesystem Context::open_workspace(bool create) const {
  fsnap::CaptureOptions capture = config.capture;
  capture.on_progress = terminal_progress();
  return fsnap::HostFilesystem(open_store(create), std::move(capture));
}

}  // namespace cli
