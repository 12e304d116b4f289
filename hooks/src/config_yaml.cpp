// Config::to_yaml: a Config as a complete configuration file, which parse reads back to
// the same settings (a run's hooks read the configuration the run started with).
#include <cstdio>

#include <yaml-cpp/yaml.h>

#include "hooks/config.hpp"

namespace hooks {

namespace {

std::string seconds(std::chrono::seconds s) {
  return std::to_string(s.count()) + "s";
}

std::string seconds(std::chrono::milliseconds ms) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(ms).count()) + "s";
}

// An amount of USD that parses back to the same double.
std::string usd(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

void list(YAML::Emitter& out, const char* key, const std::vector<std::string>& items) {
  out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
  for (const std::string& item : items) out << item;
  out << YAML::EndSeq;
}

// The run section.
void emit_run(YAML::Emitter& out, const runs::RunSettings& run) {
  out << YAML::Key << "run" << YAML::Value << YAML::BeginMap;
  list(out, "env", run.env);
  list(out, "secrets", run.secrets);
  out << YAML::Key << "resume_max_age" << YAML::Value << seconds(run.resume_max_age);
  out << YAML::Key << "preserve" << YAML::Value
      << std::string(runs::preserve_strategy_name(run.preserve));
  out << YAML::Key << "preserve_interval" << YAML::Value << seconds(run.preserve_interval);
  out << YAML::Key << "capture_state" << YAML::Value << run.capture_state;
  out << YAML::Key << "auto_resume" << YAML::Value << run.auto_resume;
  out << YAML::Key << "resume_validation" << YAML::Value
      << std::string(runs::resume_validation_name(run.resume_validation));
  out << YAML::Key << "home" << YAML::Value << YAML::BeginMap;
  list(out, "carry", run.home.carry);
  out << YAML::Key << "credentials" << YAML::Value << run.home.credentials;
  out << YAML::Key << "isolate" << YAML::Value << run.home.isolate;
  out << YAML::EndMap << YAML::EndMap;
}

// The rollback section.
void emit_rollback(YAML::Emitter& out, const sandbox::RollbackSettings& rollback) {
  out << YAML::Key << "rollback" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "on_failure" << YAML::Value << rollback.on_failure;
  list(out, "keep_failed_tools", rollback.keep_failed_tools);
  out << YAML::Key << "keep_failures" << YAML::Value << YAML::BeginSeq;
  for (const sandbox::KeepRule& rule : rollback.keep_failures) {
    out << YAML::BeginMap;
    if (!rule.tool.empty()) out << YAML::Key << "tool" << YAML::Value << rule.tool;
    if (!rule.command.empty()) {
      out << YAML::Key << "command" << YAML::Value << YAML::DoubleQuoted << rule.command;
    }
    if (!rule.exit_codes.empty()) {
      out << YAML::Key << "exit_codes" << YAML::Value << YAML::Flow << rule.exit_codes;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
}

void emit_policy(YAML::Emitter& out, const runs::PolicySettings& p) {
  out << YAML::Key << "policy" << YAML::Value << YAML::BeginMap;
  if (p.limits.max_cost_usd)
    out << YAML::Key << "max_cost_usd" << YAML::Value << usd(*p.limits.max_cost_usd);
  if (p.limits.max_steps) out << YAML::Key << "max_steps" << YAML::Value << *p.limits.max_steps;
  if (p.limits.max_retries_total) {
    out << YAML::Key << "max_retries_total" << YAML::Value << *p.limits.max_retries_total;
  }
  if (p.limits.timeout) out << YAML::Key << "timeout" << YAML::Value << seconds(*p.limits.timeout);
  if (p.circuit_breaker) {
    out << YAML::Key << "circuit_breaker" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "failure_threshold" << YAML::Value << p.circuit_breaker->failure_threshold;
    out << YAML::Key << "recovery_timeout" << YAML::Value
        << seconds(p.circuit_breaker->recovery_timeout);
    out << YAML::EndMap;
  }
  if (p.budget_window) {
    out << YAML::Key << "budget_window" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "window" << YAML::Value << seconds(p.budget_window->window);
    if (p.budget_window->max_cost_usd > 0) {
      out << YAML::Key << "max_cost_usd" << YAML::Value << usd(p.budget_window->max_cost_usd);
    }
    if (p.budget_window->max_calls > 0) {
      out << YAML::Key << "max_calls" << YAML::Value << p.budget_window->max_calls;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "repeat" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "deny_threshold" << YAML::Value << p.repeat.deny_threshold;
  out << YAML::Key << "halt_threshold" << YAML::Value << p.repeat.halt_threshold;
  out << YAML::EndMap;
  out << YAML::Key << "prices" << YAML::Value << YAML::BeginMap;
  for (const auto& [model, price] : p.prices.entries()) {
    out << YAML::Key << model << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "input" << YAML::Value << usd(price.input);
    out << YAML::Key << "output" << YAML::Value << usd(price.output);
    out << YAML::Key << "cache_write_5m" << YAML::Value << usd(price.cache_write_5m);
    out << YAML::Key << "cache_write_1h" << YAML::Value << usd(price.cache_write_1h);
    out << YAML::Key << "cache_read" << YAML::Value << usd(price.cache_read);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "kill_grace" << YAML::Value << seconds(p.kill_grace);
  out << YAML::Key << "telemetry" << YAML::Value << p.telemetry;
  if (!p.shared_budget.empty())
    out << YAML::Key << "shared_budget" << YAML::Value << p.shared_budget;
  out << YAML::EndMap;
}

}  // namespace

std::string Config::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;

  out << YAML::Key << "capture" << YAML::Value << YAML::BeginMap;
  list(out, "excludes", capture.excludes);
  out << YAML::Key << "max_file_size" << YAML::Value << capture.max_file_size;
  out << YAML::Key << "respect_gitignore" << YAML::Value << capture.respect_gitignore;
  out << YAML::Key << "use_git_index" << YAML::Value << capture.use_git_index;
  out << YAML::EndMap;

  out << YAML::Key << "retention" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "keep_last" << YAML::Value << retention.keep_last;
  out << YAML::Key << "max_age" << YAML::Value << seconds(retention.max_age);
  out << YAML::Key << "max_size" << YAML::Value << retention.max_size;
  out << YAML::Key << "prune_grace" << YAML::Value << seconds(retention.prune_grace);
  out << YAML::EndMap;

  out << YAML::Key << "maintenance" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "auto" << YAML::Value << auto_maintenance;
  out << YAML::Key << "loose_objects" << YAML::Value << maintenance.loose_objects;
  out << YAML::Key << "max_packs" << YAML::Value << maintenance.max_packs;
  out << YAML::EndMap;

  out << YAML::Key << "session" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "checkpoint_ring" << YAML::Value << checkpoint_ring;
  out << YAML::Key << "windows" << YAML::Value << YAML::BeginMap;
  for (const auto& [type, n] : session_windows) out << YAML::Key << type << YAML::Value << n;
  out << YAML::EndMap << YAML::EndMap;

  emit_run(out, run);

  out << YAML::Key << "hooks" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "transport" << YAML::Value << hooks.transport;
  out << YAML::EndMap;

  emit_rollback(out, rollback);

  emit_policy(out, policy);

  out << YAML::Key << "watch" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "daemon" << YAML::Value << (watch.daemon ? "auto" : "off");
  out << YAML::Key << "idle_exit" << YAML::Value << seconds(watch.idle_exit);
  out << YAML::EndMap;

  if (fleet.enabled()) {
    out << YAML::Key << "fleet" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "redis" << YAML::Value << fleet.redis;
    out << YAML::Key << "remote" << YAML::Value << fleet.remote;
    if (!fleet.worker_id.empty()) out << YAML::Key << "worker_id" << YAML::Value << fleet.worker_id;
    out << YAML::Key << "lease_ttl" << YAML::Value << seconds(fleet.lease_ttl);
    out << YAML::Key << "push" << YAML::Value << (fleet.sync_push ? "sync" : "async");
    out << YAML::Key << "required" << YAML::Value << fleet.required;
    out << YAML::EndMap;
  }

  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace hooks
