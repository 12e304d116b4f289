#include "hooks/config.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/enum_names.hpp"
#include "fsnap/error.hpp"
#include "yaml_keys.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// Reports a problem with one key of one file.
[[noreturn]] void fail(const std::string& origin, const YAML::Node& node, const std::string& key,
                       const std::string& problem) {
  std::ostringstream out;
  out << origin;
  if (node.IsDefined() && node.Mark().line >= 0) out << ":" << node.Mark().line + 1;
  out << ": " << key << ": " << problem;
  throw ConfigError(out.str());
}

// Rejects keys of a mapping that are not in known.
void check_keys(const std::string& origin, const YAML::Node& map, const std::string& prefix,
                const std::set<std::string>& known) {
  for (const auto& item : map) {
    std::string key = item.first.as<std::string>();
    if (known.count(key) == 0) {
      std::string list;
      for (const std::string& k : known) {
        if (!list.empty()) list += ", ";
        list += prefix;
        list += k;
      }
      fail(origin, item.first, prefix + key, "unknown key (known keys: " + list + ")");
    }
  }
}

std::string scalar(const std::string& origin, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(origin, node, key, "expected a single value");
  return node.Scalar();
}

bool as_bool(const std::string& origin, const YAML::Node& node, const std::string& key) {
  std::string text = scalar(origin, node, key);
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  fail(origin, node, key, "expected true or false, got " + fsnap::quote_input(text));
}

std::uint64_t as_count(const std::string& origin, const YAML::Node& node, const std::string& key) {
  std::string text = scalar(origin, node, key);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    fail(origin, node, key,
         "expected a non-negative whole number, got " + fsnap::quote_input(text));
  }
  if (text.size() > 18) {
    fail(origin, node, key,
         fsnap::quote_input(text) + " is too large (the largest count is 999999999999999999)");
  }
  return std::stoull(text);
}

// rollback.keep_failures (key: as written, or its older name hooks.keep_failures): a
// list of {tool, command, exit_codes}, each with one at least.
void parse_keep_failures(const std::string& origin, const YAML::Node& rules, const std::string& key,
                         Config& config) {
  if (!rules.IsSequence()) fail(origin, rules, key, "expected a list");
  const bool older = key.rfind("hooks.", 0) == 0;
  for (const YAML::Node& r : rules) {
    if (!r.IsMap()) fail(origin, r, key, "expected a mapping with tool, command or exit_codes");
    check_keys(origin, r, key + "[].", {"tool", "command", "exit_codes"});
    sandbox::KeepRule rule;
    if (YAML::Node tool = r["tool"]; tool) rule.tool = scalar(origin, tool, key + "[].tool");
    if (YAML::Node command = r["command"]; command) {
      rule.command = scalar(origin, command, key + "[].command");
    }
    if (YAML::Node codes = r["exit_codes"]; codes) {
      if (!codes.IsSequence()) fail(origin, codes, key + "[].exit_codes", "expected a list");
      for (const YAML::Node& c : codes) {
        std::uint64_t code = as_count(origin, c, key + "[].exit_codes");
        if (code > 255) fail(origin, c, key + "[].exit_codes", "an exit status is 0 to 255");
        rule.exit_codes.push_back(static_cast<int>(code));
      }
    }
    if (rule.tool.empty() && rule.command.empty() && rule.exit_codes.empty()) {
      fail(origin, r, key,
           std::string("a rule names a tool, a command or exit codes (else it keeps every "
                       "failure: use ") +
               (older ? "rollback_on_failure" : "on_failure") + ": false)");
    }
    config.rollback.keep_failures.push_back(std::move(rule));
  }
}

// A name that can be part of a Redis key and of a git ref: letters, digits, '.', '_'
// and '-', not starting with '.' or '-', at most 64 bytes.
std::string as_name(const std::string& origin, const YAML::Node& node, const std::string& key) {
  std::string text = scalar(origin, node, key);
  bool valid = !text.empty() && text.size() <= 64 && text.front() != '.' && text.front() != '-' &&
               text.find("..") == std::string::npos &&
               text.find_first_not_of(
                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789._-") == std::string::npos;
  if (!valid) {
    fail(origin, node, key,
         "expected a name of letters, digits, '.', '_' and '-' (at most 64), got " +
             fsnap::quote_input(text));
  }
  return text;
}

template <typename Parse>
auto parse_with(const std::string& origin, const YAML::Node& node, const std::string& key,
                Parse parse) {
  std::string text = scalar(origin, node, key);
  try {
    return parse(text);
  } catch (const ConfigError& e) {
    fail(origin, node, key, e.what());
  }
}

// The value a named choice's text parses to (parse gives nullopt for any other text);
// fails naming the key and what it expected.
template <typename Parse>
auto choice(const std::string& origin, const YAML::Node& node, const std::string& key, Parse parse,
            const std::string& expected) {
  auto value = parse(scalar(origin, node, key));
  if (!value) fail(origin, node, key, "expected " + expected);
  return *value;
}

void parse_fleet(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "fleet", "expected a mapping");
  check_keys(origin, node, "fleet.",
             {"redis", "remote", "worker_id", "lease_ttl", "push", "required"});
  fleet::FleetSettings& f = config.fleet;
  YAML::Node redis = node["redis"];
  YAML::Node remote = node["remote"];
  if (!redis || !remote) {
    fail(origin, node, "fleet", "needs both redis (redis://HOST:PORT/DB) and remote (a git URL)");
  }
  f.redis = scalar(origin, redis, "fleet.redis");
  if (f.redis.rfind("redis://", 0) != 0 || f.redis.size() == 8) {
    fail(origin, redis, "fleet.redis",
         "expected redis://[:PASSWORD@]HOST[:PORT][/DB], got " + fsnap::quote_input(f.redis));
  }
  f.remote = scalar(origin, remote, "fleet.remote");
  if (f.remote.empty()) fail(origin, remote, "fleet.remote", "expected a git URL or path");
  if (YAML::Node v = node["worker_id"]; v) f.worker_id = as_name(origin, v, "fleet.worker_id");
  if (YAML::Node v = node["lease_ttl"]; v) {
    f.lease_ttl = parse_with(origin, v, "fleet.lease_ttl", parse_duration);
    if (f.lease_ttl < std::chrono::seconds(2)) {
      fail(origin, v, "fleet.lease_ttl", "must be at least 2s (it is renewed every third of it)");
    }
  }
  if (YAML::Node v = node["push"]; v) {
    std::string text = scalar(origin, v, "fleet.push");
    if (text != "async" && text != "sync") fail(origin, v, "fleet.push", "expected async or sync");
    f.sync_push = text == "sync";
  }
  if (YAML::Node v = node["required"]; v) f.required = as_bool(origin, v, "fleet.required");
}

void parse_capture(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "capture", "expected a mapping");
  check_keys(origin, node, "capture.",
             {"excludes", "max_file_size", "respect_gitignore", "use_git_index"});
  if (YAML::Node excludes = node["excludes"]; excludes && !excludes.IsNull()) {
    if (!excludes.IsSequence()) fail(origin, excludes, "capture.excludes", "expected a list");
    for (const YAML::Node& item : excludes) {
      std::string pattern = scalar(origin, item, "capture.excludes");
      if (pattern.empty()) fail(origin, item, "capture.excludes", "empty pattern");
      config.capture.excludes.push_back(pattern);
    }
  }
  if (YAML::Node size = node["max_file_size"]; size) {
    config.capture.max_file_size = parse_with(origin, size, "capture.max_file_size", parse_size);
  }
  if (YAML::Node flag = node["respect_gitignore"]; flag) {
    config.capture.respect_gitignore = as_bool(origin, flag, "capture.respect_gitignore");
  }
  if (YAML::Node flag = node["use_git_index"]; flag) {
    config.capture.use_git_index = as_bool(origin, flag, "capture.use_git_index");
  }
}

void parse_retention(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "retention", "expected a mapping");
  check_keys(origin, node, "retention.", {"keep_last", "max_age", "max_size", "prune_grace"});
  if (YAML::Node grace = node["prune_grace"]; grace) {
    config.retention.prune_grace =
        parse_with(origin, grace, "retention.prune_grace", parse_duration);
  }
  if (YAML::Node keep = node["keep_last"]; keep) {
    config.retention.keep_last =
        static_cast<std::size_t>(as_count(origin, keep, "retention.keep_last"));
  }
  if (YAML::Node age = node["max_age"]; age) {
    config.retention.max_age = parse_with(origin, age, "retention.max_age", parse_duration);
  }
  if (YAML::Node size = node["max_size"]; size) {
    config.retention.max_size = parse_with(origin, size, "retention.max_size", parse_size);
  }
}

std::vector<std::string> names(const std::string& origin, const YAML::Node& node,
                               const std::string& key) {
  if (!node.IsSequence()) fail(origin, node, key, "expected a list of variable names");
  std::vector<std::string> out;
  for (const YAML::Node& item : node) {
    std::string name = scalar(origin, item, key);
    if (name.empty() || name.find_first_of("= \t") != std::string::npos) {
      fail(origin, item, key, fsnap::quote_input(name) + " is not an environment variable name");
    }
    out.push_back(name);
  }
  return out;
}

// A path relative to HOME that stays inside it ("a/b", not "/a", "../a" or "a/../b").
std::string home_path(const std::string& origin, const YAML::Node& node, const std::string& key) {
  std::string path = scalar(origin, node, key);
  bool inside = !path.empty() && path.front() != '/';
  std::size_t start = 0;
  while (inside && start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    inside = !part.empty() && part != "." && part != "..";
    start = end + 1;
  }
  if (!inside) {
    fail(origin, node, key,
         fsnap::quote_input(path) + " is not a path inside HOME (like .claude/agents)");
  }
  // The agent's own session data and the login are the run's, never carried.
  for (const char* own : {".claude/projects", ".claude/todos", ".claude/.credentials.json"}) {
    std::string o = own;
    bool overlaps = path == o || o.rfind(path + "/", 0) == 0 || path.rfind(o + "/", 0) == 0;
    if (overlaps) {
      fail(origin, node, key,
           fsnap::quote_input(path) + " holds " + o +
               ", which a run never carries (session data is the run's own; the login is "
               "run.home.credentials)");
    }
  }
  return path;
}

void parse_home(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "run.home", "expected a mapping");
  check_keys(origin, node, "run.home.", {"carry", "credentials", "isolate"});
  if (YAML::Node carry = node["carry"]; carry) {
    if (!carry.IsSequence() && !carry.IsNull()) {
      fail(origin, carry, "run.home.carry", "expected a list");
    }
    config.run.home.carry.clear();
    for (const YAML::Node& item : carry) {
      config.run.home.carry.push_back(home_path(origin, item, "run.home.carry"));
    }
  }
  if (YAML::Node flag = node["credentials"]; flag) {
    config.run.home.credentials = as_bool(origin, flag, "run.home.credentials");
  }
  if (YAML::Node flag = node["isolate"]; flag) {
    config.run.home.isolate = as_bool(origin, flag, "run.home.isolate");
  }
}

void parse_run(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "run", "expected a mapping");
  check_keys(origin, node, "run.",
             {"env", "secrets", "resume_max_age", "preserve", "preserve_interval", "home",
              "capture_state", "auto_resume", "resume_validation"});
  if (YAML::Node home = node["home"]; home && !home.IsNull()) parse_home(origin, home, config);
  if (YAML::Node env = node["env"]; env) config.run.env = names(origin, env, "run.env");
  if (YAML::Node secrets = node["secrets"]; secrets) {
    config.run.secrets = names(origin, secrets, "run.secrets");
  }
  if (YAML::Node age = node["resume_max_age"]; age) {
    config.run.resume_max_age = parse_with(origin, age, "run.resume_max_age", parse_duration);
  }
  if (YAML::Node flag = node["capture_state"]; flag) {
    config.run.capture_state = as_bool(origin, flag, "run.capture_state");
  }
  if (YAML::Node flag = node["auto_resume"]; flag) {
    config.run.auto_resume = as_bool(origin, flag, "run.auto_resume");
  }
  if (YAML::Node mode = node["resume_validation"]; mode) {
    config.run.resume_validation = choice(origin, mode, "run.resume_validation",
                                          runs::parse_resume_validation, "strict, relaxed or none");
  }
  if (YAML::Node preserve = node["preserve"]; preserve) {
    config.run.preserve = choice(origin, preserve, "run.preserve", runs::parse_preserve_strategy,
                                 "on_tool_use, on_complete, periodic or on_demand");
  }
  if (YAML::Node interval = node["preserve_interval"]; interval) {
    config.run.preserve_interval =
        parse_with(origin, interval, "run.preserve_interval", parse_duration);
    if (config.run.preserve_interval.count() == 0) {
      fail(origin, interval, "run.preserve_interval", "expected at least 1s");
    }
  }
}

// A positive amount of USD ("2.50", "10"); fails naming the key.
double as_usd(const std::string& origin, const YAML::Node& node, const std::string& key) {
  return parse_with(origin, node, key, parse_usd);
}

// A whole number of at least 1; fails naming the key.
std::size_t as_positive_count(const std::string& origin, const YAML::Node& node,
                              const std::string& key) {
  std::uint64_t n = as_count(origin, node, key);
  if (n == 0) fail(origin, node, key, "must be at least 1");
  return static_cast<std::size_t>(n);
}

// A duration of at least one second; fails naming the key.
std::chrono::seconds as_positive_duration(const std::string& origin, const YAML::Node& node,
                                          const std::string& key) {
  std::chrono::seconds d = parse_with(origin, node, key, parse_duration);
  if (d.count() == 0) fail(origin, node, key, "must be longer than 0 s");
  return d;
}

policy::CircuitBreakerConfig parse_circuit_breaker(const std::string& origin,
                                                   const YAML::Node& cb) {
  if (!cb.IsMap()) fail(origin, cb, "policy.circuit_breaker", "expected a mapping");
  check_keys(origin, cb, "policy.circuit_breaker.", {"failure_threshold", "recovery_timeout"});
  policy::CircuitBreakerConfig c;
  if (YAML::Node v = cb["failure_threshold"]; v) {
    c.failure_threshold = as_positive_count(origin, v, "policy.circuit_breaker.failure_threshold");
  }
  if (YAML::Node v = cb["recovery_timeout"]; v) {
    c.recovery_timeout = as_positive_duration(origin, v, "policy.circuit_breaker.recovery_timeout");
  }
  return c;
}

policy::BudgetWindowConfig parse_budget_window(const std::string& origin, const YAML::Node& bw) {
  if (!bw.IsMap()) fail(origin, bw, "policy.budget_window", "expected a mapping");
  check_keys(origin, bw, "policy.budget_window.", {"window", "max_cost_usd", "max_calls"});
  policy::BudgetWindowConfig w;
  if (YAML::Node v = bw["window"]; v)
    w.window = as_positive_duration(origin, v, "policy.budget_window.window");
  if (YAML::Node v = bw["max_cost_usd"]; v) {
    w.max_cost_usd = as_usd(origin, v, "policy.budget_window.max_cost_usd");
  }
  if (YAML::Node v = bw["max_calls"]; v) {
    w.max_calls = as_positive_count(origin, v, "policy.budget_window.max_calls");
  }
  if (w.max_calls == 0 && w.max_cost_usd == 0) {
    fail(origin, bw, "policy.budget_window", "needs max_calls or max_cost_usd");
  }
  return w;
}

void parse_repeat(const std::string& origin, const YAML::Node& repeat, runs::PolicySettings& p) {
  if (!repeat.IsMap()) fail(origin, repeat, "policy.repeat", "expected a mapping");
  check_keys(origin, repeat, "policy.repeat.", {"deny_threshold", "halt_threshold"});
  for (auto [name, into] : {std::pair{"deny_threshold", &p.repeat.deny_threshold},
                            std::pair{"halt_threshold", &p.repeat.halt_threshold}}) {
    YAML::Node v = repeat[name];
    if (!v) continue;
    std::string key = std::string("policy.repeat.") + name;
    std::uint64_t n = as_count(origin, v, key);
    // 1 would refuse every call, not a repeated one.
    if (n == 1) fail(origin, v, key, "must be 0 (off) or at least 2");
    *into = static_cast<std::size_t>(n);
  }
}

void parse_prices(const std::string& origin, const YAML::Node& prices, runs::PolicySettings& p) {
  if (!prices.IsMap()) fail(origin, prices, "policy.prices", "expected a mapping of models");
  for (const auto& item : prices) {
    std::string model = item.first.as<std::string>();
    std::string key = "policy.prices." + model;
    const YAML::Node& rates = item.second;
    if (!rates.IsMap()) fail(origin, rates, key, "expected a mapping of USD per million tokens");
    check_keys(origin, rates, key + ".",
               {"input", "output", "cache_write_5m", "cache_write_1h", "cache_read"});
    auto rate = [&](const char* name) {
      YAML::Node v = rates[name];
      if (!v) fail(origin, rates, key + "." + name, "missing (USD per million tokens)");
      return parse_with(origin, v, key + "." + name, parse_usd_or_zero);
    };
    p.prices.set(model, runs::ModelPrice{rate("input"), rate("output"), rate("cache_write_5m"),
                                         rate("cache_write_1h"), rate("cache_read")});
  }
}

void parse_policy(const std::string& origin, const YAML::Node& node, Config& config) {
  if (!node.IsMap()) fail(origin, node, "policy", "expected a mapping");
  check_keys(origin, node, "policy.",
             {"max_cost_usd", "max_steps", "max_retries_total", "timeout", "circuit_breaker",
              "budget_window", "repeat", "prices", "kill_grace", "telemetry", "shared_budget"});
  runs::PolicySettings& p = config.policy;
  if (YAML::Node v = node["max_cost_usd"]; v)
    p.limits.max_cost_usd = as_usd(origin, v, "policy.max_cost_usd");
  if (YAML::Node v = node["max_steps"]; v)
    p.limits.max_steps = as_positive_count(origin, v, "policy.max_steps");
  if (YAML::Node v = node["max_retries_total"]; v) {
    p.limits.max_retries_total = as_positive_count(origin, v, "policy.max_retries_total");
  }
  if (YAML::Node v = node["timeout"]; v)
    p.limits.timeout = as_positive_duration(origin, v, "policy.timeout");
  if (YAML::Node v = node["kill_grace"]; v)
    p.kill_grace = parse_with(origin, v, "policy.kill_grace", parse_duration);
  if (YAML::Node v = node["telemetry"]; v) p.telemetry = as_bool(origin, v, "policy.telemetry");
  if (YAML::Node v = node["shared_budget"]; v) {
    p.shared_budget = as_name(origin, v, "policy.shared_budget");
  }
  if (YAML::Node cb = node["circuit_breaker"]; cb && !cb.IsNull()) {
    p.circuit_breaker = parse_circuit_breaker(origin, cb);
  }
  if (YAML::Node bw = node["budget_window"]; bw && !bw.IsNull()) {
    p.budget_window = parse_budget_window(origin, bw);
  }
  if (YAML::Node repeat = node["repeat"]; repeat && !repeat.IsNull()) {
    parse_repeat(origin, repeat, p);
  }
  if (YAML::Node prices = node["prices"]; prices && !prices.IsNull()) {
    parse_prices(origin, prices, p);
  }
}

// A quantity as written: a whole number and its unit ("12.5MiB" is refused).
struct Quantity {
  std::optional<std::uint64_t> value;  // nullopt: more than 64 bits would hold
  std::string unit;
};

Quantity split_quantity(const std::string& text, const char* what) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) {
    throw ConfigError("expected " + std::string(what) + " such as " +
                      (std::string(what) == "a size" ? "'100MiB'" : "'30d'") + ", got " +
                      fsnap::quote_input(text));
  }
  Quantity out{std::uint64_t{0}, text.substr(digits)};
  while (!out.unit.empty() && out.unit.front() == ' ') out.unit.erase(0, 1);
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < digits && out.value; ++i) {
    auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (*out.value > (kMax - digit) / 10) {
      out.value.reset();
    } else {
      out.value = *out.value * 10 + digit;
    }
  }
  return out;
}

void parse_watch(const std::string& origin, const YAML::Node& watch, Config& config) {
  if (!watch.IsMap()) fail(origin, watch, "watch", "expected a mapping");
  check_keys(origin, watch, "watch.", {"daemon", "idle_exit"});
  if (YAML::Node mode = watch["daemon"]; mode) {
    std::string text = scalar(origin, mode, "watch.daemon");
    if (text != "auto" && text != "off") fail(origin, mode, "watch.daemon", "expected auto or off");
    config.watch.daemon = text == "auto";
  }
  if (YAML::Node idle = watch["idle_exit"]; idle) {
    config.watch.idle_exit = parse_with(origin, idle, "watch.idle_exit", parse_duration);
  }
}

void parse_maintenance(const std::string& origin, const YAML::Node& maintenance, Config& config) {
  if (!maintenance.IsMap()) fail(origin, maintenance, "maintenance", "expected a mapping");
  check_keys(origin, maintenance, "maintenance.", {"auto", "loose_objects", "max_packs"});
  if (YAML::Node flag = maintenance["auto"]; flag) {
    config.auto_maintenance = as_bool(origin, flag, "maintenance.auto");
  }
  if (YAML::Node n = maintenance["loose_objects"]; n) {
    config.maintenance.loose_objects =
        static_cast<std::size_t>(as_count(origin, n, "maintenance.loose_objects"));
  }
  if (YAML::Node n = maintenance["max_packs"]; n) {
    std::uint64_t packs = as_count(origin, n, "maintenance.max_packs");
    if (packs == 0) fail(origin, n, "maintenance.max_packs", "must be at least 1");
    config.maintenance.max_packs = static_cast<std::size_t>(packs);
  }
}

void parse_hooks(const std::string& origin, const YAML::Node& hooks, Config& config) {
  if (!hooks.IsMap()) fail(origin, hooks, "hooks", "expected a mapping");
  // The rollback settings' older names are read with rollback.* (parse_rollback).
  check_keys(origin, hooks, "hooks.",
             {"rollback_on_failure", "keep_failed_tools", "keep_failures", "transport"});
  if (YAML::Node transport = hooks["transport"]; transport) {
    config.hooks.transport = scalar(origin, transport, "hooks.transport");
    if (config.hooks.transport != "http" && config.hooks.transport != "command") {
      fail(origin, transport, "hooks.transport", "expected http or command");
    }
  }
}

// A rollback setting: its name under rollback: and its older one under hooks:.
struct RollbackKey {
  const char* name;
  const char* older;
};
constexpr RollbackKey kRollbackKeys[] = {{"on_failure", "rollback_on_failure"},
                                         {"keep_failed_tools", "keep_failed_tools"},
                                         {"keep_failures", "keep_failures"}};

// rollback.*, each setting also read by its older name under hooks: (a file of an older
// version); both names for one setting are an error naming both.
void parse_rollback(const std::string& origin, const YAML::Node& root, Config& config) {
  YAML::Node rollback = root["rollback"];
  if (rollback && !rollback.IsNull() && !rollback.IsMap()) {
    fail(origin, rollback, "rollback", "expected a mapping");
  }
  std::set<std::string> names;
  for (const RollbackKey& k : kRollbackKeys) names.insert(k.name);
  if (rollback && rollback.IsMap()) check_keys(origin, rollback, "rollback.", names);
  YAML::Node hooks = root["hooks"];
  for (const RollbackKey& k : kRollbackKeys) {
    const std::string key = std::string("rollback.") + k.name;
    const std::string older = std::string("hooks.") + k.older;
    // (A YAML::Node() is a null value, not an absent one: absence is said by the flags.)
    const bool now = rollback && rollback.IsMap() && rollback[k.name];
    const bool old = hooks && hooks.IsMap() && hooks[k.older];
    if (now && old) {
      fail(origin, rollback[k.name], key,
           "also given as " + older + ", its older name: give one of them");
    }
    if (!now && !old) continue;
    const YAML::Node value = now ? rollback[k.name] : hooks[k.older];
    const std::string& written = now ? key : older;
    if (!now) config.older_names[key] = older;
    if (std::string(k.name) == "on_failure") {
      config.rollback.on_failure = as_bool(origin, value, written);
    } else if (std::string(k.name) == "keep_failed_tools") {
      if (!value.IsSequence()) fail(origin, value, written, "expected a list");
      for (const YAML::Node& t : value) {
        config.rollback.keep_failed_tools.push_back(scalar(origin, t, written));
      }
    } else if (!value.IsNull()) {
      parse_keep_failures(origin, value, written, config);
    }
  }
}

void parse_session(const std::string& origin, const YAML::Node& session, Config& config) {
  if (!session.IsMap()) fail(origin, session, "session", "expected a mapping");
  check_keys(origin, session, "session.", {"checkpoint_ring", "windows"});
  if (YAML::Node windows = session["windows"]; windows && !windows.IsNull()) {
    if (!windows.IsMap()) fail(origin, windows, "session.windows", "expected a mapping");
    for (const auto& entry : windows) {
      std::string type = scalar(origin, entry.first, "session.windows");
      std::uint64_t n = as_count(origin, entry.second, "session.windows." + type);
      if (n == 0) fail(origin, entry.second, "session.windows." + type, "must be at least 1");
      config.session_windows[type] = static_cast<std::size_t>(n);
    }
  }
  if (YAML::Node ring = session["checkpoint_ring"]; ring) {
    std::uint64_t n = as_count(origin, ring, "session.checkpoint_ring");
    if (n == 0) fail(origin, ring, "session.checkpoint_ring", "must be at least 1");
    config.checkpoint_ring = static_cast<std::size_t>(n);
  }
}

}  // namespace

double parse_usd_or_zero(const std::string& text) {
  std::string t = !text.empty() && text.front() == '$' ? text.substr(1) : text;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !(value >= 0) || value > 1e12) {
    throw ConfigError("expected an amount of USD such as '2.50', got " + fsnap::quote_input(text));
  }
  return value;
}

double parse_usd(const std::string& text) {
  double value = parse_usd_or_zero(text);
  if (!(value > 0)) throw ConfigError("expected more than $0, got " + fsnap::quote_input(text));
  return value;
}

std::uint64_t parse_size(const std::string& text) {
  auto [value, unit] = split_quantity(text, "a size");
  std::string u;
  for (char c : unit) u.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::uint64_t factor = 0;
  if (u.empty() || u == "b") {
    factor = 1;
  } else if (u == "k" || u == "kb" || u == "kib") {
    factor = 1ull << 10;
  } else if (u == "m" || u == "mb" || u == "mib") {
    factor = 1ull << 20;
  } else if (u == "g" || u == "gb" || u == "gib") {
    factor = 1ull << 30;
  } else if (u == "t" || u == "tb" || u == "tib") {
    factor = 1ull << 40;
  } else {
    throw ConfigError("unknown size unit " + fsnap::quote_input(unit) + " in " +
                      fsnap::quote_input(text) + " (use B, KiB, MiB, GiB or TiB)");
  }
  if (!value || *value > std::numeric_limits<std::uint64_t>::max() / factor) {
    throw ConfigError(fsnap::quote_input(text) +
                      " is too large (the largest size is 16777215TiB, 2^64 bytes less one)");
  }
  return *value * factor;
}

std::chrono::seconds parse_duration(const std::string& text) {
  auto [value, unit] = split_quantity(text, "a duration");
  std::uint64_t factor = 0;
  if (unit.empty() || unit == "s") {
    factor = 1;
  } else if (unit == "m") {
    factor = 60;
  } else if (unit == "h") {
    factor = 3600;
  } else if (unit == "d") {
    factor = 86400;
  } else if (unit == "w") {
    factor = std::uint64_t{7} * 86400;
  } else {
    throw ConfigError("unknown duration unit " + fsnap::quote_input(unit) + " in " +
                      fsnap::quote_input(text) + " (use s, m, h, d or w)");
  }
  // Longer than runs::kMaxDuration: runs::kMaxDuration (never, for every setting).
  auto longest = static_cast<std::uint64_t>(runs::kMaxDuration.count());
  if (!value || *value > longest / factor) return runs::kMaxDuration;
  return std::chrono::seconds(static_cast<std::int64_t>(*value * factor));
}

Config Config::parse(const std::string& yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
    check_unique_keys(yaml_text, origin);
  } catch (const YAML::Exception& e) {
    std::ostringstream out;
    out << origin;
    if (e.mark.line >= 0) out << ":" << e.mark.line + 1;
    out << ": invalid YAML: " << e.msg;
    throw ConfigError(out.str());
  }
  Config config;
  if (root.IsNull()) return config;
  if (!root.IsMap()) throw ConfigError(origin + ": expected a mapping at the top level");
  check_keys(origin, root, "",
             {"capture", "retention", "maintenance", "session", "run", "hooks", "rollback",
              "policy", "watch", "fleet"});
  if (YAML::Node watch = root["watch"]; watch && !watch.IsNull())
    parse_watch(origin, watch, config);
  if (YAML::Node fleet = root["fleet"]; fleet && !fleet.IsNull()) {
    parse_fleet(origin, fleet, config);
  }
  if (YAML::Node maintenance = root["maintenance"]; maintenance && !maintenance.IsNull())
    parse_maintenance(origin, maintenance, config);
  if (YAML::Node policy = root["policy"]; policy && !policy.IsNull()) {
    parse_policy(origin, policy, config);
  }
  if (!config.policy.shared_budget.empty() && !config.fleet.enabled()) {
    throw ConfigError(origin +
                      ": policy.shared_budget: a shared budget lives in the fleet's Redis; "
                      "it needs a fleet section (fleet.redis)");
  }
  if (YAML::Node capture = root["capture"]; capture && !capture.IsNull()) {
    parse_capture(origin, capture, config);
  }
  if (YAML::Node retention = root["retention"]; retention && !retention.IsNull()) {
    parse_retention(origin, retention, config);
  }
  if (YAML::Node run = root["run"]; run && !run.IsNull()) parse_run(origin, run, config);
  if (YAML::Node hooks = root["hooks"]; hooks && !hooks.IsNull())
    parse_hooks(origin, hooks, config);
  parse_rollback(origin, root, config);
  if (YAML::Node session = root["session"]; session && !session.IsNull())
    parse_session(origin, session, config);
  return config;
}

Config Config::load_file(const fs::path& file) {
  Config config = parse(read_config_file(file), file.string());
  config.source = file;
  config.origin = Origin::kFile;
  return config;
}

std::string Config::key_as_written(const std::string& key) const {
  auto older = older_names.find(key);
  return older == older_names.end() ? key : older->second;
}

std::vector<std::string> Config::embedding_only_settings() const {
  std::vector<std::string> out;
  if (checkpoint_ring != Config{}.checkpoint_ring) out.push_back("session.checkpoint_ring");
  return out;
}

}  // namespace hooks
