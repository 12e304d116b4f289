// sandbox::Config — shadowbox's settings, loaded from YAML (config/shadowbox.yaml
// documents every key).
//
// Lookup: an explicit file (--config or $SHADOWBOX_CONFIG), else
// <workspace>/.shadowbox.yaml if present, else the built-in defaults. Unknown keys and
// values of the wrong type are errors naming the key, never silently ignored.
// Thread-safety: a loaded Config is a plain value.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"
#include "fsnap/shadow_repo.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/rollback_policy.hpp"

namespace sandbox {

// A configuration file that cannot be read or does not validate.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(ErrorCode::kInvalidArgument, message) {}
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
                                  "HTTP_PROXY",
                                  "HTTPS_PROXY",
                                  "NO_PROXY",
                                  "http_proxy",
                                  "https_proxy",
                                  "no_proxy"};
  // Of the variables, those holding credentials: their values never enter the store
  // (found in captured agent data or ledger records, they are replaced by [REDACTED]).
  std::vector<std::string> secrets = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                                      "CLAUDE_CODE_OAUTH_TOKEN"};
  // Strict resume validation refuses agent sessions older than this.
  std::chrono::seconds resume_max_age{7 * 24 * 3600};
};

// How the agent hooks treat failed tool calls.
struct HookSettings {
  // What becomes of failed tool calls: of agents (hook events) and of external tools
  // (`shadowbox rollback`) alike.
  bool rollback_on_failure = true;             // hooks.rollback_on_failure
  std::vector<std::string> keep_failed_tools;  // hooks.keep_failed_tools: never rolled back
  // hooks.transport: how `shadowbox run` receives hook events — "http" (posted to the
  // run's own loopback server) or "command" (one `shadowbox hook` process per event).
  std::string transport = "http";

  // The rollback policy these settings describe.
  RollbackPolicy policy() const {
    return RollbackPolicy{rollback_on_failure,
                          {keep_failed_tools.begin(), keep_failed_tools.end()}};
  }
};

// All of shadowbox's settings, with their defaults.
struct Config {
  fsnap::CaptureOptions capture;      // capture.excludes, .max_file_size, .respect_gitignore
  fsnap::RetentionPolicy retention;   // retention.keep_last, .max_age
  std::size_t checkpoint_ring = 100;  // session.checkpoint_ring: CheckpointStore capacity
  RunSettings run;                    // run.env, run.secrets, run.resume_max_age
  HookSettings hooks;                 // hooks.rollback_on_failure, .keep_failed_tools, .transport
  boost::filesystem::path source;     // the file it came from; empty for the defaults

  // Parses YAML text (origin names it in error messages).
  static Config parse(const std::string& yaml_text, const std::string& origin);
  // Reads and parses a file.
  static Config load_file(const boost::filesystem::path& file);
  // Applies the lookup order above: explicit file if given, else $SHADOWBOX_CONFIG,
  // else <workspace>/.shadowbox.yaml, else defaults.
  static Config load(const std::optional<boost::filesystem::path>& explicit_file,
                     const boost::filesystem::path& workspace);
};

// "100MiB", "512k", "2G", "1048576" -> bytes. Throws ConfigError.
std::uint64_t parse_size(const std::string& text);
// "30d", "12h", "90m", "45s", "2w" -> seconds. Throws ConfigError.
std::chrono::seconds parse_duration(const std::string& text);

}  // namespace sandbox
