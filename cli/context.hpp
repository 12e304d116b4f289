// What every command needs from the global options: the workspace, its config and
// its store, opened the same way for all commands.
#pragma once

#include <optional>

#include <boost/filesystem/path.hpp>

#include "arguments.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"
#include "hooks/claude_code_hook.hpp"
#include "sandbox/config.hpp"

namespace cli {

// The resolved global options of one invocation.
struct Context {
  GlobalOptions options;
  boost::filesystem::path workspace;  // as given (checked to be a directory)
  boost::filesystem::path store_dir;  // --store, else $SHADOWBOX_STORE, else the default
  sandbox::Config config;

  // Opens the store; with create, makes it if missing. Without, a missing store is an
  // error telling the user to run `shadowbox init`.
  fsnap::Store open_store(bool create) const;
  // The workspace as a HostFilesystem, with the config's capture options and, on a
  // terminal, a progress line for long captures.
  fsnap::HostFilesystem open_workspace(bool create) const;
  // How the Claude Code hook behaves for run, from the config.
  hooks::ClaudeCodeHookOptions hook_options(const std::string& run) const;
};

// Resolves the global options (reads the config). Throws fsnap::Error or ConfigError.
Context make_context(const GlobalOptions& options);

}  // namespace cli
