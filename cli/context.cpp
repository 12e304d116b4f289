#include "context.hpp"

#include <cstdlib>
#include <iostream>
#include <optional>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/workspace_discovery.hpp"
#include "progress.hpp"
#include "runs/redaction.hpp"
#include "shell.hpp"
#include "watch_daemon.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

bool is_inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

// Why shadowbox refuses dir (a real path) as a workspace: the user's HOME or a directory
// holding it (/ above all); nullopt for any other.
std::optional<std::string> unprotectable(const fs::path& dir) {
  if (dir == dir.root_path()) return "the root directory";
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return std::nullopt;
  boost::system::error_code ec;
  fs::path real_home = fs::canonical(fs::absolute(home), ec);
  if (ec || !is_inside(real_home, dir)) return std::nullopt;
  return real_home == dir ? "your HOME" : "it holds your HOME";
}

std::string describe(fsnap::WorkspaceFound how, const std::string& from) {
  switch (how) {
    case fsnap::WorkspaceFound::kStore:
      return "the directory above " + from + " that has a shadowbox store";
    case fsnap::WorkspaceFound::kGitWorkTree:
      return "the git work tree enclosing " + from;
    case fsnap::WorkspaceFound::kStart:
      break;
  }
  return "";
}

}  // namespace

Location locate(const GlobalOptions& options) {
  Location out;
  boost::system::error_code ec;
  if (options.workspace) {
    fs::path workspace(*options.workspace);
    if (!fs::is_directory(workspace, ec)) {
      throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                         "workspace is not a directory: " + workspace.string());
    }
    out.workspace = fs::canonical(fs::absolute(workspace));
  } else {
    fs::path from = options.search_from ? fs::path(*options.search_from) : fs::current_path();
    auto store_for = [&options](const fs::path& dir) -> std::optional<fs::path> {
      if (options.store) return fs::absolute(fs::path(*options.store));
      try {
        return fsnap::Store::default_location(dir);
      } catch (const fsnap::Error&) {
        return std::nullopt;  // no location to look in: none is found
      }
    };
    fsnap::FoundWorkspace found = fsnap::find_workspace(
        from, store_for, [](const fs::path& dir) { return unprotectable(dir).has_value(); });
    out.workspace = found.path;
    out.found = describe(found.how, options.search_from ? from.string() : "the current directory");
  }
  out.store_dir = options.store ? fs::absolute(fs::path(*options.store))
                                : fsnap::Store::default_location(out.workspace);
  return out;
}

Context make_context(const GlobalOptions& options) {
  Context context;
  context.options = options;
  Location location = locate(options);
  context.workspace = location.workspace;
  context.store_dir = location.store_dir;
  context.workspace_found = location.found;
  std::optional<fs::path> config_file;
  if (options.config) config_file = fs::path(*options.config);
  context.config = hooks::Config::load(config_file, context.workspace);
  return context;
}

void Context::refuse_unprotectable_workspace() const {
  std::optional<std::string> why = unprotectable(workspace);
  if (!why) return;
  throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                     "refusing " + workspace.string() + " (" + *why +
                         ") as a workspace: its store would copy everything in it at every "
                         "step; run shadowbox in a project directory, or name one with "
                         "--workspace DIR");
}

fsnap::Store Context::open_store(bool create) const {
  // Never recorded into; an existing store of one (made before, outside it) is still read.
  if (create || (unprotectable(workspace) && !fsnap::Store::is_store_of(store_dir, workspace))) {
    refuse_unprotectable_workspace();
  }
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

std::unique_ptr<runs::LedgerRun> Context::open_run(
    const std::string& run, bool create, std::shared_ptr<fsnap::ShadowRepo> repo,
    std::shared_ptr<fsnap::CaptureService> captures) const {
  runs::LedgerRunOptions run_options;
  run_options.env.repo = std::move(repo);
  run_options.capture = config.capture;
  run_options.capture.on_progress = terminal_progress();
  run_options.policy = config.rollback.policy();
  run_options.run = run;
  run_options.secrets = secret_values();
  run_options.windows = config.session_windows;
  fsnap::Store store = open_store(create);
  if (captures) {
    run_options.env.captures = std::move(captures);
  } else if (config.watch.daemon) {
    run_options.env.captures = watch_client(store, DaemonLaunch{store_dir, self_command()});
  }
  return std::make_unique<runs::LedgerRun>(std::move(store), std::move(run_options));
}

std::vector<std::string> Context::secret_values() const {
  if (!environment) return runs::secret_values(config.run.secrets);
  return runs::secret_values(config.run.secrets, [this](const std::string& name) {
    auto found = environment->find(name);
    return found != environment->end() ? found->second.c_str() : nullptr;
  });
}

std::vector<std::string> Context::self_command() const {
  std::vector<std::string> argv = {self_path(), "--workspace", workspace.string(), "--store",
                                   store_dir.string()};
  // A file the user named; the workspace's own is found (and judged) by the child.
  if (config.origin == hooks::Config::Origin::kFile) {
    argv.push_back("--config");
    argv.push_back(fs::absolute(config.source).string());
  }
  return argv;
}

}  // namespace cli
