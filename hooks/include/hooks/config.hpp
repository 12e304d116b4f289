// hooks::Config — shadowbox's settings, loaded from YAML (config/shadowbox.yaml
// documents every key): one reader, above the libraries whose settings it fills in
// (fsnap's, sandbox's RollbackSettings, runs' RunSettings and PolicySettings, fleet's
// FleetSettings, the hooks' own HookSettings).
//
// Lookup: an explicit file (--config or $SHADOWBOX_CONFIG), else
// <workspace>/.shadowbox.yaml if present — which may only tighten protection until its
// content is trusted (workspace_config.hpp) — else the built-in defaults. Unknown keys,
// keys given twice and values of the wrong type are errors naming the key, never
// silently ignored. A configuration file is a regular file of at most kMaxConfigBytes: a
// FIFO, a device or a directory is refused without waiting on it.
// Thread-safety: a loaded Config is a plain value.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fleet/fleet_settings.hpp"
#include "fsnap/capture_options.hpp"
#include "fsnap/maintenance.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/watch_settings.hpp"
#include "hooks/config_error.hpp"
#include "hooks/hook_settings.hpp"
#include "runs/run_settings.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/rollback_settings.hpp"

namespace hooks {

// All of shadowbox's settings, with their defaults.
struct Config {
  fsnap::CaptureOptions capture;     // capture.excludes, .max_file_size, .respect_gitignore
  fsnap::RetentionPolicy retention;  // retention.keep_last, .max_age
  // maintenance.loose_objects, .max_packs; maintenance.auto (false: only `shadowbox gc`
  // and `shadowbox maintenance` pack the store).
  fsnap::MaintenanceOptions maintenance;
  bool auto_maintenance = true;
  // session.checkpoint_ring: the capacity of an embedding program's embed::CheckpointStore.
  // Embedding only: shadowbox itself keeps every checkpoint in its store's ledger, and
  // says so when a file changes this (embedding_only_settings).
  std::size_t checkpoint_ring = 100;
  // session.windows: slice type name -> the newest items a run's session keeps of it
  // (Session::set_count_window); none by default.
  std::map<std::string, std::size_t> session_windows;
  runs::RunSettings run;  // run.env, run.secrets, run.resume_max_age
  // rollback.on_failure, .keep_failed_tools, .keep_failures (older names: hooks.*).
  sandbox::RollbackSettings rollback;
  HookSettings hooks;              // hooks.transport
  runs::PolicySettings policy;     // policy.*: limits of agent runs, prices
  fsnap::WatchSettings watch;      // watch.daemon, watch.idle_exit
  fleet::FleetSettings fleet;      // fleet.*
  boost::filesystem::path source;  // the file it came from; empty for the defaults

  // Where the settings came from.
  enum class Origin {
    kDefaults,           // no file
    kFile,               // a file the user named (--config, $SHADOWBOX_CONFIG)
    kTrustedWorkspace,   // the workspace's .shadowbox.yaml, its content trusted
    kUntrustedWorkspace  // the workspace's .shadowbox.yaml, tightening only
  };
  Origin origin = Origin::kDefaults;
  // What the file said that was not applied: the settings of an untrusted workspace
  // file that would have loosened protection (workspace_config.hpp), one line each.
  std::vector<std::string> left_out;
  // The settings the file gave by an older name: the key -> that name
  // ("rollback.on_failure" -> "hooks.rollback_on_failure"), so that what is said of a
  // setting names it as it was written.
  std::map<std::string, std::string> older_names;
  // key, or the older name the file gave it by.
  std::string key_as_written(const std::string& key) const;

  // Parses YAML text (origin names it in error messages).
  static Config parse(const std::string& yaml_text, const std::string& origin);
  // Reads and parses a file: a regular file of at most kMaxConfigBytes, else ConfigError.
  static Config load_file(const boost::filesystem::path& file);
  // Applies the lookup order above: explicit file if given, else $SHADOWBOX_CONFIG,
  // else <workspace>/.shadowbox.yaml — whole if its content is trusted (ConfigTrust),
  // else only what it tightens (workspace_config.hpp) — else defaults.
  static Config load(const std::optional<boost::filesystem::path>& explicit_file,
                     const boost::filesystem::path& workspace);

  // These settings as a complete configuration file, which parse reads back to the
  // same settings (source, origin, left_out and older_names apart).
  std::string to_yaml() const;
  // The settings, by key, that differ from their defaults but that only a program
  // embedding shadowbox reads, so they change nothing in shadowbox's own commands:
  // session.checkpoint_ring (docs/conformance/EXECUTION_STATE.md, "Checkpoint Store").
  std::vector<std::string> embedding_only_settings() const;
};

// "100MiB", "512k", "2G", "1048576" -> bytes. Throws ConfigError, saying the largest
// size, for one that does not fit in 64 bits.
std::uint64_t parse_size(const std::string& text);
// "30d", "12h", "90m", "45s", "2w" -> seconds, at most runs::kMaxDuration. Throws ConfigError.
std::chrono::seconds parse_duration(const std::string& text);
// "2.50", "$10" -> USD, more than 0. Throws ConfigError.
double parse_usd(const std::string& text);
// The same, 0 allowed (a price).
double parse_usd_or_zero(const std::string& text);

}  // namespace hooks
