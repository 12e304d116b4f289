// The settings of agent runs: what a run's HOME starts from and which variables reach
// the agent (RunSettings, config run.*), and the limits and prices of containment
// (PolicySettings, config policy.*). Plain values: the configuration's reader
// (hooks/config.hpp) fills them in from YAML.
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/execution_context.hpp"
#include "runs/pricing.hpp"

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

// How strictly a resume checks the agent session it starts from (run.resume_validation,
// resume --validation; hooks::resume_problems says what each checks).
enum class ResumeValidation { kStrict, kRelaxed, kNone };
// "strict", "relaxed", "none".
std::string_view resume_validation_name(ResumeValidation validation);
std::optional<ResumeValidation> parse_resume_validation(std::string_view text);

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
  // Whether a run keeps its agent's session data (the HOME's transcripts) in the store,
  // so that it can be resumed (run.capture_state). Off: no transcript enters the store;
  // the session slice still records ids and counts.
  bool capture_state = true;
  // Whether `run` first resumes the newest run of the same command in the workspace that
  // validation lets go on, starting a new run only when there is none (run.auto_resume).
  bool auto_resume = false;
  // The validation of `resume` (unless --validation) and of auto_resume.
  ResumeValidation resume_validation = ResumeValidation::kStrict;
  std::chrono::seconds preserve_interval{30};  // run.preserve_interval (periodic)
  HomeSettings home;                           // run.home
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

// The longest duration a setting holds: 36500d (100 years), which for every setting
// means never. A longer one is taken as this (it saturates), so that no deadline or
// age computed from it wraps around.
inline constexpr std::chrono::seconds kMaxDuration{std::int64_t{36500} * 24 * 3600};

}  // namespace runs
