// What every command needs from the global options: the workspace, its config and
// its store, opened the same way for all commands.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "arguments.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/config.hpp"
#include "runs/ledger_run.hpp"

namespace cli {

// The resolved global options of one invocation.
struct Context {
  GlobalOptions options;
  boost::filesystem::path workspace;  // a real path: as given, else found (see locate)
  boost::filesystem::path store_dir;  // --store, else $SHADOWBOX_STORE, else the default
  // How the workspace was found when it is neither named nor the directory searched
  // from ("the git work tree enclosing the current directory"), for a notice; else empty.
  std::string workspace_found;
  hooks::Config config;
  // The environment of the process this command works for, when it is given (a hook
  // event's, which the watch daemon may record for a thin client); its secrets are the
  // ones redacted. Unset: this process's.
  std::optional<std::map<std::string, std::string>> environment;

  // The values of run.secrets in the environment this command works for.
  std::vector<std::string> secret_values() const;

  // Opens the store; with create, makes it if missing. Without, a missing store is an
  // error telling the user to run `shadowbox init`. With create (a command that records),
  // a workspace that is the user's HOME or holds it (as /) is refused
  // (refuse_unprotectable_workspace); without, an existing store of one can still be read
  // and restored from.
  fsnap::Store open_store(bool create) const;
  // Throws, saying why, if the workspace is the user's HOME or a directory holding it (/
  // included): a store of it would copy everything the user owns at every step.
  void refuse_unprotectable_workspace() const;
  // The store's repository (one per process).
  std::shared_ptr<fsnap::ShadowRepo> open_repo(const fsnap::Store& store) const;
  // A run of the workspace, with the config's capture options (and, on a terminal, a
  // progress line for long captures) and rollback policy; on repo, if given, else on a
  // repository it opens. Captures are asked of captures if given, else of the watch
  // daemon (watch.daemon), else made by scanning.
  std::unique_ptr<runs::LedgerRun> open_run(
      const std::string& run, bool create, std::shared_ptr<fsnap::ShadowRepo> repo = nullptr,
      std::shared_ptr<fsnap::CaptureService> captures = nullptr) const;
  // This program, with the workspace, store and config of this context: the start of
  // the command line of a helper it starts.
  std::vector<std::string> self_command() const;
};

// Resolves the global options (reads the config). Throws fsnap::Error or ConfigError.
Context make_context(const GlobalOptions& options);

// Where a command works: the workspace (a real path), its store and how the workspace
// was found (Context::workspace_found).
struct Location {
  boost::filesystem::path workspace;
  boost::filesystem::path store_dir;
  std::string found;
};
// The workspace and store directory of the options, without reading the config (what a
// command can still tell when the config is broken). The workspace is --workspace, else
// the one found from options.search_from (default: the current directory) as git finds
// its repository: the nearest enclosing directory with a store (where --store or the
// default location puts it), else the root of the enclosing git work tree, else the
// directory itself. A store or work tree at the user's HOME or / is passed over.
Location locate(const GlobalOptions& options);

}  // namespace cli
