// runs::Config — shadowbox's settings, loaded from YAML (config/shadowbox.yaml
// documents every key).
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

#include "fsnap/capture_options.hpp"
#include "fsnap/maintenance.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/watch_settings.hpp"
#include "policy/execution_context.hpp"
#include "runs/config_error.hpp"
#include "runs/pricing.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/rollback_settings.hpp"

namespace runs {

// When a run's agent session data (its ephemeral HOME's transcripts) is preserved in the
// store (run.preserve; the checkpoint frequency of docs/conformance/ADAPTER_STATE.md).
enum class PreserveStrategy {
  kOnToolUse,   // at every hook event, every second between them while it changes, at the end
  kOnComplete,  // when the agent exits
  kPeriodic,    // every run.preserve_interval while the agent runs, and when it exits
  kOnDemand,    // only when `shadowbox preserve RUN` asks
};
// "on_tool_use", "on_complete", "periodic", "on_demand".
std::string_view preserve_strategy_name(PreserveStrategy strategy);
std::optional<PreserveStrategy> parse_preserve_strategy(std::string_view text);

// What of the user's own HOME an agent run's ephemeral HOME starts from (run.home).
struct HomeSettings {
  // Paths relative to HOME, copied into the run's HOME at its start (files, or
  // directories with what they hold). Those under .claude/ (and .claude.json) come from
  // $CLAUDE_CONFIG_DIR instead when it is set. Copies: the run never changes the
  // user's files.
  std::vector<std::string> carry = {".claude.json",
                                    ".claude/settings.json",
                                    ".claude/CLAUDE.md",
                                    ".claude/rules",
                                    ".claude/agents",
                                    ".claude/commands",
                                    ".claude/skills",
                                    ".claude/output-styles",
                                    ".claude/hooks",
                                    ".claude/themes",
                                    ".claude/workflows",
                                    ".claude/plugins",
                                    ".claude/keybindings.json"};
  // Use the user's Claude Code login (.claude/.credentials.json) in the run, kept in
  // step with the user's own file in both directions; never stored.
  bool credentials = true;
  // true: the run's HOME starts empty (nothing carried, no login).
  bool isolate = false;
};

// How `shadowbox run` and `resume` treat the agent.
struct RunSettings {
  // Environment variables passed through to the agent (HOME is always the run's own).
  std::vector<std::string> env = {"PATH",
                                  "TERM",
                                  "LANG",
                                  "LC_ALL",
                                  "LC_CTYPE",
                                  "TZ",
                                  "TMPDIR",
                                  "USER",
                                  "LOGNAME",
                                  "SHELL",
                                  "ANTHROPIC_API_KEY",
                                  "ANTHROPIC_AUTH_TOKEN",
                                  "ANTHROPIC_BASE_URL",
                                  "ANTHROPIC_MODEL",
                                  "CLAUDE_CODE_OAUTH_TOKEN",
                                  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                                  "IS_SANDBOX",
                                  "OPENAI_API_KEY",
                                  "OPENAI_BASE_URL",
                                  "OPENAI_ORG_ID",
                                  "CODEX_API_KEY",
                                  "GEMINI_API_KEY",
                                  "GOOGLE_API_KEY",
                                  "GOOGLE_GEMINI_BASE_URL",
                                  "GOOGLE_CLOUD_PROJECT",
                                  "GOOGLE_CLOUD_LOCATION",
                                  "GOOGLE_GENAI_USE_VERTEXAI",
                                  "GEMINI_MODEL",
                                  "GEMINI_CLI_TRUST_WORKSPACE",
                                  "HTTP_PROXY",
                                  "HTTPS_PROXY",
                                  "NO_PROXY",
                                  "http_proxy",
                                  "https_proxy",
                                  "no_proxy"};
  // Of the variables, those holding credentials: their values never enter the store
  // (found in captured agent data or ledger records, they are replaced by [REDACTED]).
  std::vector<std::string> secrets = {
      "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY",
      "CODEX_API_KEY",     "GEMINI_API_KEY",       "GOOGLE_API_KEY"};
  // Strict resume validation refuses agent sessions older than this.
  std::chrono::seconds resume_max_age{7 * 24 * 3600};
  PreserveStrategy preserve = PreserveStrategy::kOnToolUse;  // run.preserve
  std::chrono::seconds preserve_interval{30};                // run.preserve_interval (periodic)
  HomeSettings home;                                         // run.home
};

// hooks.*: how the agent hooks reach shadowbox. (What becomes of failed calls is
// Config::rollback, rollback.*.)
struct HookSettings {
  // hooks.transport: how `shadowbox run` receives hook events — "http" (posted to the
  // run's own loopback server) or "command" (one `shadowbox hook` process per event).
  std::string transport = "http";
};

// Limits of an agent run that `run` flags and config policy.* both give (a limit not
// set does not apply).
struct PolicyLimits {
  std::optional<double> max_cost_usd;            // policy.max_cost_usd, --max-cost-usd
  std::optional<std::size_t> max_steps;          // policy.max_steps, --max-steps
  std::optional<std::size_t> max_retries_total;  // policy.max_retries_total, --max-retries
  std::optional<std::chrono::seconds> timeout;   // policy.timeout, --timeout
  // These, with other's set limits in their place.
  PolicyLimits overridden_by(const PolicyLimits& other) const;
  friend bool operator==(const PolicyLimits&, const PolicyLimits&) = default;
};

// Containment of agent runs (config policy.*).
struct PolicySettings {
  PolicyLimits limits;
  std::optional<policy::CircuitBreakerConfig> circuit_breaker;  // policy.circuit_breaker
  std::optional<policy::BudgetWindowConfig> budget_window;      // policy.budget_window
  // policy.repeat: the same tool call with the same input asked deny_threshold times in a
  // row is denied, halt_threshold times stops the run (`loop`); 0 turns one off. On by
  // default: the halt comes before Gemini CLI's own loop check (5 calls) ends its turn.
  policy::RepeatConfig repeat{3, 4};
  PriceTable prices = PriceTable::defaults();  // policy.prices adds to these
  std::chrono::seconds kill_grace{5};  // policy.kill_grace: SIGTERM to SIGKILL of a halted agent
  bool telemetry = true;  // policy.telemetry: read the agent's own cost (OpenTelemetry) under `run`
  // policy.shared_budget: the name of a budget in the fleet's Redis that max_cost_usd and
  // max_steps count against, shared by every run that names it ("": this run's own).
  std::string shared_budget;

  // Whether anything is limited at all.
  bool active(const PolicyLimits& limits) const;
  // The ExecutionContext configuration of these settings with limits.
  policy::ExecutionConfig execution_config(const PolicyLimits& limits) const;
};

// fleet.*: workers on several machines sharing runs through Redis (leases, the run
// registry, shared budgets) and a git remote (the runs' objects). Without a fleet
// section a run is this machine's alone.
struct FleetSettings {
  std::string redis;   // fleet.redis: redis://[:PASSWORD@]HOST[:PORT][/DB]
  std::string remote;  // fleet.remote: any URL libgit2 can push to (path, file://, ssh://, git://)
  std::string worker_id;               // fleet.worker_id (default: this machine's host name)
  std::chrono::seconds lease_ttl{30};  // fleet.lease_ttl: a run's lease lasts this long unrenewed
  bool sync_push = false;              // fleet.push: async (false: a queue in the store) or sync
  // fleet.required: false lets a run start in local mode (with a warning) when Redis
  // cannot be reached at its start.
  bool required = true;
  bool enabled() const { return !redis.empty(); }
};

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
  RunSettings run;  // run.env, run.secrets, run.resume_max_age
  // rollback.on_failure, .keep_failed_tools, .keep_failures (older names: hooks.*).
  sandbox::RollbackSettings rollback;
  HookSettings hooks;              // hooks.transport
  PolicySettings policy;           // policy.*: limits of agent runs, prices
  fsnap::WatchSettings watch;      // watch.daemon, watch.idle_exit
  FleetSettings fleet;             // fleet.*
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
  // same settings (source, origin and left_out apart).
  std::string to_yaml() const;
  // The settings, by key, that differ from their defaults but that only a program
  // embedding shadowbox reads, so they change nothing in shadowbox's own commands:
  // session.checkpoint_ring (docs/conformance/EXECUTION_STATE.md, "Checkpoint Store").
  std::vector<std::string> embedding_only_settings() const;
};

// The longest duration a setting holds: 36500d (100 years), which for every setting
// means never. A longer one is taken as this (it saturates), so that no deadline or
// age computed from it wraps around.
inline constexpr std::chrono::seconds kMaxDuration{std::int64_t{36500} * 24 * 3600};

// "100MiB", "512k", "2G", "1048576" -> bytes. Throws ConfigError, saying the largest
// size, for one that does not fit in 64 bits.
std::uint64_t parse_size(const std::string& text);
// "30d", "12h", "90m", "45s", "2w" -> seconds, at most kMaxDuration. Throws ConfigError.
std::chrono::seconds parse_duration(const std::string& text);
// "2.50", "$10" -> USD, more than 0. Throws ConfigError.
double parse_usd(const std::string& text);
// The same, 0 allowed (a price).
double parse_usd_or_zero(const std::string& text);

}  // namespace runs
