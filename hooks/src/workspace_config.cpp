#include "hooks/workspace_config.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "sandbox/sha256.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The key a trusted file is recorded under: its absolute path as named, not where a
// symlink leads (a workspace's link to a file trusted elsewhere is not that file).
std::string key_of(const fs::path& config) {
  return fs::absolute(config).lexically_normal().string();
}

Poco::JSON::Object::Ptr read_records(const fs::path& file) {
  std::optional<std::string> text = fsnap::read_small_file(file);
  if (!text || text->empty()) return new Poco::JSON::Object;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(*text);
    if (parsed.type() == typeid(Poco::JSON::Object::Ptr)) {
      return parsed.extract<Poco::JSON::Object::Ptr>();
    }
  } catch (const Poco::Exception&) {
  }
  throw sandbox::Error(sandbox::ErrorCode::kCorrupt,
                       "cannot read the trusted configurations in " + file.string() +
                           ": not a JSON object (remove it to trust anew)");
}

void write_records(const fs::path& file, const Poco::JSON::Object::Ptr& records) {
  boost::system::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::ostringstream out;
  records->stringify(out, 2);
  out << '\n';
  fsnap::write_file_atomically(file, out.str(), 0600);
}

std::string seconds_text(std::chrono::seconds s) {
  return std::to_string(s.count()) + "s";
}

// limit n where 0 means none: whether a protects at least as much as b.
bool keeps_at_least(std::uint64_t a, std::uint64_t b) {
  return a == 0 || (b != 0 && a >= b);
}

std::string list_text(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return "[" + out + "]";
}

// The items of a in the order of a that b holds too.
std::vector<std::string> both(const std::vector<std::string>& a,
                              const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const std::string& item : a) {
    if (std::find(b.begin(), b.end(), item) != b.end()) out.push_back(item);
  }
  return out;
}

// The items of b not in a.
std::vector<std::string> beyond(const std::vector<std::string>& a,
                                const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const std::string& item : b) {
    if (std::find(a.begin(), a.end(), item) == a.end()) out.push_back(item);
  }
  return out;
}

int preserve_rank(runs::PreserveStrategy s) {
  switch (s) {
    case runs::PreserveStrategy::kOnToolUse:
      return 3;
    case runs::PreserveStrategy::kPeriodic:
      return 2;
    case runs::PreserveStrategy::kOnComplete:
      return 1;
    case runs::PreserveStrategy::kOnDemand:
      return 0;
  }
  return 0;
}

bool rates_at_least(const runs::ModelPrice& a, const runs::ModelPrice& b) {
  return a.input >= b.input && a.output >= b.output && a.cache_write_5m >= b.cache_write_5m &&
         a.cache_write_1h >= b.cache_write_1h && a.cache_read >= b.cache_read;
}

// A limit where 0 means none: whether a limits at least as much as b.
template <typename T>
bool limit_at_least(T a, T b) {
  return b == 0 || (a != 0 && a <= b);
}

// An optional limit: whether a limits at least as much as b (unset: no limit).
template <typename T>
bool limits_at_least(const std::optional<T>& a, const std::optional<T>& b) {
  return a && (!b || *a <= *b);
}

// Builds the tightened configuration one setting at a time.
class Tightener {
 public:
  Tightener(const Config& base, const Config& proposed, std::vector<std::string>& left_out)
      : base_(base), proposed_(proposed), out_(base), left_out_(left_out) {}

  Config run() {
    capture_settings();
    retention_settings();
    neutral_settings();
    session_settings();
    run_settings();
    rollback_settings();
    policy_settings();
    fleet_settings();
    return out_;
  }

 private:
  // Takes proposed's value when tighter says it protects at least as much, else keeps
  // base's and says why.
  template <typename T>
  void take(T& into, const T& base, const T& proposed, bool tighter, const std::string& key,
            const std::string& shown, const std::string& why) {
    if (proposed == base) return;
    if (tighter) {
      into = proposed;
    } else {
      left_out_.push_back(key + ": " + shown + " (" + why + ")");
    }
  }

  void capture_settings() {
    const fsnap::CaptureOptions& b = base_.capture;
    const fsnap::CaptureOptions& p = proposed_.capture;
    if (std::vector<std::string> more = beyond(b.excludes, p.excludes); !more.empty()) {
      left_out_.push_back("capture.excludes: " + list_text(more) +
                          " (fewer files would be captured)");
    }
    out_.capture.excludes = both(b.excludes, p.excludes);
    take(out_.capture.max_file_size, b.max_file_size, p.max_file_size,
         keeps_at_least(p.max_file_size, b.max_file_size), "capture.max_file_size",
         std::to_string(p.max_file_size), "larger files would be left out");
    take(out_.capture.respect_gitignore, b.respect_gitignore, p.respect_gitignore,
         !p.respect_gitignore, "capture.respect_gitignore", "true",
         "ignored files, a .env among them, would not come back after a rollback");
    take(out_.capture.use_git_index, b.use_git_index, p.use_git_index, !p.use_git_index,
         "capture.use_git_index", "true", "the workspace's own git index would be trusted");
  }

  void retention_settings() {
    const fsnap::RetentionPolicy& b = base_.retention;
    const fsnap::RetentionPolicy& p = proposed_.retention;
    take(out_.retention.keep_last, b.keep_last, p.keep_last,
         keeps_at_least(p.keep_last, b.keep_last), "retention.keep_last",
         std::to_string(p.keep_last), "fewer checkpoints would be kept");
    take(out_.retention.max_age, b.max_age, p.max_age,
         keeps_at_least(static_cast<std::uint64_t>(p.max_age.count()),
                        static_cast<std::uint64_t>(b.max_age.count())),
         "retention.max_age", seconds_text(p.max_age), "checkpoints would be dropped sooner");
    take(out_.retention.max_size, b.max_size, p.max_size, keeps_at_least(p.max_size, b.max_size),
         "retention.max_size", std::to_string(p.max_size), "runs would be dropped sooner");
    take(out_.retention.prune_grace, b.prune_grace, p.prune_grace, p.prune_grace >= b.prune_grace,
         "retention.prune_grace", seconds_text(p.prune_grace),
         "objects being recorded could be pruned");
  }

  // Settings that change how fast shadowbox is, not what it keeps.
  void neutral_settings() {
    out_.maintenance = proposed_.maintenance;
    out_.auto_maintenance = proposed_.auto_maintenance;
    out_.watch = proposed_.watch;
    out_.hooks.transport = proposed_.hooks.transport;
  }

  void session_settings() {
    take(out_.checkpoint_ring, base_.checkpoint_ring, proposed_.checkpoint_ring,
         proposed_.checkpoint_ring >= base_.checkpoint_ring, "session.checkpoint_ring",
         std::to_string(proposed_.checkpoint_ring), "fewer checkpoints would be kept in memory");
    for (const auto& [type, n] : proposed_.session_windows) {
      auto kept = base_.session_windows.find(type);
      if (kept != base_.session_windows.end() && n >= kept->second) {
        out_.session_windows[type] = n;
      } else if (kept == base_.session_windows.end() || n != kept->second) {
        left_out_.push_back("session.windows." + type + ": " + std::to_string(n) +
                            " (older items of the session would be dropped)");
      }
    }
  }

  void run_settings() {
    const runs::RunSettings& b = base_.run;
    const runs::RunSettings& p = proposed_.run;
    if (std::vector<std::string> more = beyond(b.env, p.env); !more.empty()) {
      left_out_.push_back("run.env: " + list_text(more) +
                          " (more of your environment would reach the agent)");
    }
    out_.run.env = both(b.env, p.env);
    // Every name either gives is redacted — but for variables whose values are no secret
    // and which redacted would break records and resumes (the workspace's path is in
    // $PWD, the user's home in $HOME).
    static const std::set<std::string> kNoSecrets = {
        "HOME", "PWD",    "OLDPWD",   "PATH", "SHELL", "USER",   "LOGNAME",
        "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ",    "TMPDIR", "HOSTNAME"};
    std::vector<std::string> secrets = b.secrets;
    for (const std::string& s : beyond(b.secrets, p.secrets)) {
      if (kNoSecrets.count(s) != 0) {
        left_out_.push_back("run.secrets: " + s +
                            " (its value is no secret; redacting it would "
                            "break the run's records)");
      } else {
        secrets.push_back(s);
      }
    }
    out_.run.secrets = secrets;
    take(out_.run.resume_max_age, b.resume_max_age, p.resume_max_age,
         p.resume_max_age <= b.resume_max_age, "run.resume_max_age", seconds_text(p.resume_max_age),
         "older sessions would pass strict resume validation");
    take(out_.run.preserve, b.preserve, p.preserve,
         preserve_rank(p.preserve) >= preserve_rank(b.preserve), "run.preserve",
         std::string(runs::preserve_strategy_name(p.preserve)),
         "the agent's session would be preserved less often");
    take(out_.run.preserve_interval, b.preserve_interval, p.preserve_interval,
         p.preserve_interval <= b.preserve_interval, "run.preserve_interval",
         seconds_text(p.preserve_interval), "the agent's session would be preserved less often");
    take(out_.run.capture_state, b.capture_state, p.capture_state, p.capture_state,
         "run.capture_state", "false", "a run that crashed could not be resumed");
    // auto_resume goes on with an earlier conversation instead of the one asked for.
    take(out_.run.auto_resume, b.auto_resume, p.auto_resume, !p.auto_resume, "run.auto_resume",
         "true", "run would go on with an earlier conversation of the agent");
    // kStrict < kRelaxed < kNone: the greater, the looser.
    take(out_.run.resume_validation, b.resume_validation, p.resume_validation,
         p.resume_validation <= b.resume_validation, "run.resume_validation",
         std::string(runs::resume_validation_name(p.resume_validation)),
         "resume would check less of the session it starts from");
    if (std::vector<std::string> more = beyond(b.home.carry, p.home.carry); !more.empty()) {
      left_out_.push_back("run.home.carry: " + list_text(more) +
                          " (more of your HOME would be carried to the agent)");
    }
    out_.run.home.carry = both(b.home.carry, p.home.carry);
    take(out_.run.home.credentials, b.home.credentials, p.home.credentials, !p.home.credentials,
         "run.home.credentials", "true", "your login would be carried to the agent");
    take(out_.run.home.isolate, b.home.isolate, p.home.isolate, p.home.isolate, "run.home.isolate",
         "false", "your setup would be carried to the agent");
  }

  // Named as the file wrote them: rollback.* or their older names under hooks:.
  void rollback_settings() {
    const sandbox::RollbackSettings& b = base_.rollback;
    const sandbox::RollbackSettings& p = proposed_.rollback;
    take(out_.rollback.on_failure, b.on_failure, p.on_failure, p.on_failure,
         proposed_.key_as_written("rollback.on_failure"), "false",
         "failed tool calls would not be rolled back");
    if (std::vector<std::string> more = beyond(b.keep_failed_tools, p.keep_failed_tools);
        !more.empty()) {
      left_out_.push_back(proposed_.key_as_written("rollback.keep_failed_tools") + ": " +
                          list_text(more) + " (their failed calls would not be rolled back)");
    }
    out_.rollback.keep_failed_tools = both(b.keep_failed_tools, p.keep_failed_tools);
    out_.rollback.keep_failures = b.keep_failures;
    for (const sandbox::KeepRule& rule : p.keep_failures) {
      if (std::find(b.keep_failures.begin(), b.keep_failures.end(), rule) !=
          b.keep_failures.end()) {
        continue;
      }
      left_out_.push_back(proposed_.key_as_written("rollback.keep_failures") + ": a rule for " +
                          (rule.command.empty() ? rule.tool : "'" + rule.command + "'") +
                          " (its failed calls would not be rolled back)");
    }
  }

  void policy_settings() {
    const runs::PolicySettings& b = base_.policy;
    const runs::PolicySettings& p = proposed_.policy;
    const runs::PolicyLimits& bl = b.limits;
    const runs::PolicyLimits& pl = p.limits;
    const std::string looser = "a looser limit";
    take(out_.policy.limits.max_cost_usd, bl.max_cost_usd, pl.max_cost_usd,
         limits_at_least(pl.max_cost_usd, bl.max_cost_usd), "policy.max_cost_usd",
         pl.max_cost_usd ? std::to_string(*pl.max_cost_usd) : "none", looser);
    take(out_.policy.limits.max_steps, bl.max_steps, pl.max_steps,
         limits_at_least(pl.max_steps, bl.max_steps), "policy.max_steps",
         pl.max_steps ? std::to_string(*pl.max_steps) : "none", looser);
    take(out_.policy.limits.max_retries_total, bl.max_retries_total, pl.max_retries_total,
         limits_at_least(pl.max_retries_total, bl.max_retries_total), "policy.max_retries_total",
         pl.max_retries_total ? std::to_string(*pl.max_retries_total) : "none", looser);
    take(out_.policy.limits.timeout, bl.timeout, pl.timeout,
         limits_at_least(pl.timeout, bl.timeout), "policy.timeout",
         pl.timeout ? seconds_text(*pl.timeout) : "none", looser);
    if (p.circuit_breaker && !(b.circuit_breaker && same(*p.circuit_breaker, *b.circuit_breaker))) {
      bool tighter =
          !b.circuit_breaker ||
          (p.circuit_breaker->failure_threshold <= b.circuit_breaker->failure_threshold &&
           p.circuit_breaker->recovery_timeout >= b.circuit_breaker->recovery_timeout);
      if (tighter) {
        out_.policy.circuit_breaker = p.circuit_breaker;
      } else {
        left_out_.push_back("policy.circuit_breaker (it would open later or close sooner)");
      }
    }
    if (p.budget_window && !(b.budget_window && same(*p.budget_window, *b.budget_window))) {
      const policy::BudgetWindowConfig& pw = *p.budget_window;
      bool tighter =
          !b.budget_window || (pw.window >= b.budget_window->window &&
                               limit_at_least(pw.max_calls, b.budget_window->max_calls) &&
                               limit_at_least(pw.max_cost_usd, b.budget_window->max_cost_usd));
      if (tighter) {
        out_.policy.budget_window = p.budget_window;
      } else {
        left_out_.push_back("policy.budget_window (a looser window)");
      }
    }
    // A threshold is tighter when it trips sooner: lower, and never 0 (off) where the
    // base has one.
    take(out_.policy.repeat.deny_threshold, b.repeat.deny_threshold, p.repeat.deny_threshold,
         limit_at_least(p.repeat.deny_threshold, b.repeat.deny_threshold),
         "policy.repeat.deny_threshold", std::to_string(p.repeat.deny_threshold),
         "repeated tool calls would be denied later, or never");
    take(out_.policy.repeat.halt_threshold, b.repeat.halt_threshold, p.repeat.halt_threshold,
         limit_at_least(p.repeat.halt_threshold, b.repeat.halt_threshold),
         "policy.repeat.halt_threshold", std::to_string(p.repeat.halt_threshold),
         "a looping agent would be stopped later, or never");
    runs::ModelPrice highest = b.prices.highest();
    for (const auto& [model, price] : p.prices.entries()) {
      auto known = b.prices.entries().find(model);
      if (known != b.prices.entries().end() && known->second == price) continue;
      // A new prefix may take models the base prices at its highest rates: it may not
      // price anything lower than that.
      const runs::ModelPrice& floor = known != b.prices.entries().end() ? known->second : highest;
      if (rates_at_least(price, floor)) {
        out_.policy.prices.set(model, price);
      } else {
        left_out_.push_back("policy.prices." + model +
                            " (lower prices: the cost ceiling would be reached later)");
      }
    }
    take(out_.policy.kill_grace, b.kill_grace, p.kill_grace, p.kill_grace <= b.kill_grace,
         "policy.kill_grace", seconds_text(p.kill_grace),
         "a halted agent would be given longer before it is killed");
    take(out_.policy.telemetry, b.telemetry, p.telemetry, p.telemetry, "policy.telemetry", "false",
         "the agent's own cost reports would not be read");
    take(out_.policy.shared_budget, b.shared_budget, p.shared_budget, false, "policy.shared_budget",
         p.shared_budget, "it lives in a fleet's Redis");
  }

  void fleet_settings() {
    const fleet::FleetSettings& b = base_.fleet;
    const fleet::FleetSettings& p = proposed_.fleet;
    bool same_fleet = p.redis == b.redis && p.remote == b.remote && p.worker_id == b.worker_id &&
                      p.lease_ttl == b.lease_ttl && p.sync_push == b.sync_push &&
                      p.required == b.required;
    if (p.enabled() && !same_fleet) {
      left_out_.push_back(
          "fleet: every checkpoint, the files' contents with it, would be pushed "
          "to " +
          fsnap::quote_input(p.remote, 120));
    }
  }

  static bool same(const policy::CircuitBreakerConfig& a, const policy::CircuitBreakerConfig& b) {
    return a.failure_threshold == b.failure_threshold && a.recovery_timeout == b.recovery_timeout;
  }
  static bool same(const policy::BudgetWindowConfig& a, const policy::BudgetWindowConfig& b) {
    return a.window == b.window && a.max_calls == b.max_calls && a.max_cost_usd == b.max_cost_usd &&
           a.degrade_at == b.degrade_at;
  }

  const Config& base_;
  const Config& proposed_;
  Config out_;
  std::vector<std::string>& left_out_;
};

}  // namespace

fs::path ConfigTrust::default_file() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
    return fs::path(xdg) / "shadowbox" / "trusted.json";
  }
  // The user's home from the password database, not $HOME: under `shadowbox run` an
  // agent's hooks have the run's HOME, which the agent writes.
  std::string home = "/nonexistent";
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) {
    home = pw->pw_dir;
  }
  return fs::path(home) / ".config" / "shadowbox" / "trusted.json";
}

ConfigTrust::ConfigTrust(fs::path file) : file_(std::move(file)) {}

bool ConfigTrust::trusts(const fs::path& config, const std::string& sha256) const {
  Poco::JSON::Object::Ptr records;
  try {
    records = read_records(file_);
  } catch (const std::exception&) {
    return false;  // what cannot be read trusts nothing
  }
  Poco::JSON::Object::Ptr record = records->getObject(key_of(config));
  return !record.isNull() && record->optValue<std::string>("sha256", "") == sha256;
}

void ConfigTrust::trust(const fs::path& config, const std::string& sha256) const {
  Poco::JSON::Object::Ptr records = read_records(file_);
  Poco::JSON::Object::Ptr record = new Poco::JSON::Object;
  record->set("sha256", sha256);
  record->set("trusted_at", fsnap::format_timestamp(std::chrono::system_clock::now()));
  records->set(key_of(config), record);
  write_records(file_, records);
}

bool ConfigTrust::revoke(const fs::path& config) const {
  Poco::JSON::Object::Ptr records = read_records(file_);
  if (!records->has(key_of(config))) return false;
  records->remove(key_of(config));
  write_records(file_, records);
  return true;
}

Config tightened(const Config& base, const Config& proposed, std::vector<std::string>& left_out) {
  return Tightener(base, proposed, left_out).run();
}

// Declared in hooks/config.hpp: where the configuration comes from, and whether a
// workspace's own file is trusted, is this file's business.
Config Config::load(const std::optional<fs::path>& explicit_file, const fs::path& workspace) {
  if (explicit_file) return load_file(*explicit_file);
  if (const char* env = std::getenv("SHADOWBOX_CONFIG"); env != nullptr && *env != '\0') {
    return load_file(fs::path(env));
  }
  fs::path local = workspace / kWorkspaceConfigName;
  boost::system::error_code ec;
  fs::file_status status = fs::symlink_status(local, ec);
  if (fs::is_symlink(status)) {
    // Not followed: whatever it leads to is not the workspace's file.
    Config config;
    config.source = local;
    config.origin = Config::Origin::kUntrustedWorkspace;
    config.left_out.push_back("the whole file: it is a symbolic link, which is not followed");
    return config;
  }
  if (!fs::is_regular_file(status)) return Config{};
  // Read once: the content trusted is the content parsed.
  std::string text = read_config_file(local);
  Config proposed = parse(text, local.string());
  Config config;
  if (ConfigTrust().trusts(local, sandbox::sha256_hex(text))) {
    config = std::move(proposed);
    config.origin = Config::Origin::kTrustedWorkspace;
  } else {
    std::vector<std::string> left_out;
    config = tightened(Config{}, proposed, left_out);
    config.left_out = std::move(left_out);
    config.origin = Config::Origin::kUntrustedWorkspace;
  }
  config.source = local;
  return config;
}

}  // namespace hooks
