// hooks::Config: every key of config/shadowbox.yaml, units, the lookup order, and
// errors that name the file, line and key instead of being ignored.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <future>

#include <gtest/gtest.h>
#include <boost/filesystem/operations.hpp>

#include "config_fields.hpp"
#include "hooks/config.hpp"
#include "test_support.hpp"

namespace {

using hooks::Config;
using hooks::ConfigError;

// Expects parse to fail with a message containing every part.
void expect_config_error(const std::string& yaml, const std::vector<std::string>& parts) {
  try {
    Config::parse(yaml, "test.yaml");
    ADD_FAILURE() << "accepted:\n" << yaml;
  } catch (const ConfigError& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << e.what() << "' lacks '" << part << "'";
    }
  }
}

TEST(ConfigTest, DefaultsMatchTheDocumentation) {
  Config c = Config::parse("", "empty.yaml");
  EXPECT_TRUE(c.capture.excludes.empty());
  EXPECT_EQ(c.capture.max_file_size, 100ull << 20);
  EXPECT_FALSE(c.capture.respect_gitignore);
  EXPECT_TRUE(c.capture.use_git_index);
  EXPECT_EQ(c.retention.keep_last, 0u);
  EXPECT_EQ(c.retention.max_age.count(), 0);
  EXPECT_TRUE(c.auto_maintenance);
  EXPECT_EQ(c.maintenance.loose_objects, 256u);
  EXPECT_EQ(c.maintenance.max_packs, 8u);
  // The repeat guard is on: the third identical call in a row denied, the fourth halts.
  EXPECT_EQ(c.policy.repeat, (policy::RepeatConfig{3, 4}));
  EXPECT_EQ(c.policy.execution_config(c.policy.limits).repeat, (policy::RepeatConfig{3, 4}));
}

TEST(ConfigTest, TheCheckpointRingIsAnEmbeddingOnlySetting) {
  EXPECT_TRUE(Config::parse("", "empty.yaml").embedding_only_settings().empty());
  EXPECT_TRUE(Config::parse("session: {checkpoint_ring: 100}\n", "c.yaml")
                  .embedding_only_settings()
                  .empty())
      << "the default changes nothing, said or not";
  Config c = Config::parse("session: {checkpoint_ring: 7}\n", "c.yaml");
  EXPECT_EQ(c.checkpoint_ring, 7u) << "still read, for the programs that embed shadowbox";
  EXPECT_EQ(c.embedding_only_settings(), (std::vector<std::string>{"session.checkpoint_ring"}));
}

TEST(ConfigTest, WatchDaemonSettings) {
  Config c = Config::parse("watch: {daemon: off, idle_exit: 90s}\n", "w.yaml");
  EXPECT_FALSE(c.watch.daemon);
  EXPECT_EQ(c.watch.idle_exit, std::chrono::seconds(90));
  EXPECT_TRUE(Config::parse("watch: {daemon: auto}\n", "w.yaml").watch.daemon);
  EXPECT_TRUE(Config().watch.daemon);
  EXPECT_EQ(Config().watch.idle_exit, std::chrono::minutes(10));
  try {
    Config::parse("watch: {daemon: sometimes}\n", "w.yaml");
    FAIL() << "an unknown watch.daemon value is accepted";
  } catch (const hooks::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("watch.daemon"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Config::parse("watch: {idle: 5m}\n", "w.yaml"), hooks::ConfigError);
}

TEST(ConfigTest, FleetSettings) {
  Config none = Config::parse("", "f.yaml");
  EXPECT_FALSE(none.fleet.enabled());
  Config c = Config::parse(
      "fleet:\n  redis: redis://127.0.0.1:6379/2\n  remote: /srv/runs.git\n"
      "  worker_id: ci-7.b_x\n  lease_ttl: 10s\n  push: sync\n  required: false\n"
      "policy: {shared_budget: nightly}\n",
      "f.yaml");
  EXPECT_TRUE(c.fleet.enabled());
  EXPECT_EQ(c.fleet.redis, "redis://127.0.0.1:6379/2");
  EXPECT_EQ(c.fleet.remote, "/srv/runs.git");
  EXPECT_EQ(c.fleet.worker_id, "ci-7.b_x");
  EXPECT_EQ(c.fleet.lease_ttl, std::chrono::seconds(10));
  EXPECT_TRUE(c.fleet.sync_push);
  EXPECT_FALSE(c.fleet.required);
  EXPECT_EQ(c.policy.shared_budget, "nightly");
  Config d = Config::parse("fleet: {redis: 'redis://h', remote: 'git://h/r'}\n", "f.yaml");
  EXPECT_EQ(d.fleet.lease_ttl, std::chrono::seconds(30));
  EXPECT_FALSE(d.fleet.sync_push);
  EXPECT_TRUE(d.fleet.required);
  EXPECT_EQ(d.fleet.worker_id, "");
}

TEST(ConfigTest, FleetMistakesAreErrorsNamingTheKey) {
  expect_config_error("fleet: {redis: 'redis://h'}\n", {"fleet", "remote"});
  expect_config_error("fleet: {remote: /r.git}\n", {"fleet", "redis"});
  expect_config_error("fleet: {redis: 'http://h', remote: /r}\n", {"fleet.redis", "redis://"});
  expect_config_error("fleet: {redis: 'redis://h', remote: /r, push: later}\n",
                      {"fleet.push", "async or sync"});
  expect_config_error("fleet: {redis: 'redis://h', remote: /r, lease_ttl: 1s}\n",
                      {"fleet.lease_ttl", "at least 2s"});
  expect_config_error("fleet: {redis: 'redis://h', remote: /r, worker_id: 'a/b'}\n",
                      {"fleet.worker_id", "'a/b'"});
  expect_config_error("fleet: {redis: 'redis://h', remote: /r, workers: 3}\n", {"fleet.workers"});
  expect_config_error("policy: {shared_budget: team}\n", {"policy.shared_budget", "fleet"});
  expect_config_error("fleet: {redis: 'redis://h', remote: /r}\npolicy: {shared_budget: '-x'}\n",
                      {"policy.shared_budget"});
}

TEST(ConfigTest, TheShippedConfigFileParsesToTheDefaults) {
  Config shipped = Config::load_file(SHADOWBOX_SOURCE_DIR "/config/shadowbox.yaml");
  Config defaults;
  config_fields::expect_same_settings(shipped, defaults);
  EXPECT_FALSE(shipped.policy.circuit_breaker);
  EXPECT_FALSE(shipped.policy.budget_window);
  EXPECT_FALSE(shipped.policy.active(shipped.policy.limits));
}

// A file that sets every key, each to something other than its default.
const char* const kEveryKey =
    "capture:\n"
    "  excludes: [node_modules/, '*.log', '!keep.log']\n"
    "  max_file_size: 2MiB\n"
    "  respect_gitignore: true\n"
    "  use_git_index: false\n"
    "retention:\n"
    "  keep_last: 50\n"
    "  max_age: 30d\n"
    "  max_size: 2GiB\n"
    "  prune_grace: 10m\n"
    "maintenance:\n"
    "  auto: false\n"
    "  loose_objects: 50\n"
    "  max_packs: 3\n"
    "session:\n"
    "  checkpoint_ring: 7\n"
    "  windows: {tool_invoked: 500}\n"
    "run:\n"
    "  env: [PATH, MY_TOKEN]\n"
    "  secrets: [MY_TOKEN]\n"
    "  resume_max_age: 2h\n"
    "  preserve: periodic\n"
    "  preserve_interval: 5m\n"
    "  capture_state: false\n"
    "  auto_resume: true\n"
    "  resume_validation: none\n"
    "  home:\n"
    "    carry: [.claude/settings.json, .gitconfig]\n"
    "    credentials: false\n"
    "    isolate: true\n"
    "hooks:\n"
    "  transport: command\n"
    "rollback:\n"
    "  on_failure: false\n"
    "  keep_failed_tools: [Bash]\n"
    "  keep_failures:\n"
    "    - {tool: Bash, command: 'npm test*', exit_codes: [1, 2]}\n"
    "    - {command: pytest}\n"
    "policy:\n"
    "  max_cost_usd: 2.50\n"
    "  max_steps: 40\n"
    "  max_retries_total: 3\n"
    "  timeout: 30m\n"
    "  circuit_breaker: {failure_threshold: 4, recovery_timeout: 2m}\n"
    "  budget_window: {window: 10m, max_cost_usd: $1, max_calls: 20}\n"
    "  repeat: {deny_threshold: 5, halt_threshold: 0}\n"
    "  prices:\n"
    "    my-model: {input: 1, output: 2, cache_write_5m: 1.25, cache_write_1h: 2, "
    "cache_read: 0}\n"
    "  kill_grace: 9s\n"
    "  telemetry: false\n";

// The store's sections of kEveryKey: capture, retention, maintenance, session.
void expect_store_keys(const Config& c) {
  EXPECT_EQ(c.capture.excludes, (std::vector<std::string>{"node_modules/", "*.log", "!keep.log"}));
  EXPECT_EQ(c.capture.max_file_size, 2u << 20);
  EXPECT_TRUE(c.capture.respect_gitignore);
  EXPECT_FALSE(c.capture.use_git_index);
  EXPECT_EQ(c.retention.keep_last, 50u);
  EXPECT_EQ(c.retention.max_age, std::chrono::hours(24 * 30));
  EXPECT_EQ(c.retention.max_size, 2ull << 30);
  EXPECT_EQ(c.retention.prune_grace, std::chrono::minutes(10));
  EXPECT_FALSE(c.auto_maintenance);
  EXPECT_EQ(c.maintenance.loose_objects, 50u);
  EXPECT_EQ(c.maintenance.max_packs, 3u);
  EXPECT_EQ(c.checkpoint_ring, 7u);
  EXPECT_EQ(c.session_windows, (std::map<std::string, std::size_t>{{"tool_invoked", 500}}));
}

// The run's and the hooks' sections of kEveryKey.
void expect_run_keys(const Config& c) {
  EXPECT_EQ(c.run.env, (std::vector<std::string>{"PATH", "MY_TOKEN"}));
  EXPECT_EQ(c.run.secrets, (std::vector<std::string>{"MY_TOKEN"}));
  EXPECT_EQ(c.run.resume_max_age, std::chrono::hours(2));
  EXPECT_EQ(c.run.preserve, runs::PreserveStrategy::kPeriodic);
  EXPECT_EQ(c.run.preserve_interval, std::chrono::minutes(5));
  EXPECT_FALSE(c.run.capture_state);
  EXPECT_TRUE(c.run.auto_resume);
  EXPECT_EQ(c.run.resume_validation, runs::ResumeValidation::kNone);
  EXPECT_EQ(c.run.home.carry, (std::vector<std::string>{".claude/settings.json", ".gitconfig"}));
  EXPECT_FALSE(c.run.home.credentials);
  EXPECT_TRUE(c.run.home.isolate);
  EXPECT_FALSE(c.rollback.on_failure);
  EXPECT_EQ(c.rollback.keep_failed_tools, (std::vector<std::string>{"Bash"}));
  EXPECT_EQ(c.rollback.keep_failures,
            (std::vector<sandbox::KeepRule>{{"Bash", "npm test*", {1, 2}}, {"", "pytest", {}}}));
  EXPECT_EQ(c.hooks.transport, "command");
}

// The policy section of kEveryKey, and the limits it gives the execution context.
void expect_policy_keys(const Config& c) {
  EXPECT_EQ(c.policy.limits.max_cost_usd, 2.5);
  EXPECT_EQ(c.policy.limits.max_steps, 40u);
  EXPECT_EQ(c.policy.limits.max_retries_total, 3u);
  EXPECT_EQ(c.policy.limits.timeout, std::chrono::minutes(30));
  ASSERT_TRUE(c.policy.circuit_breaker);
  EXPECT_EQ(c.policy.circuit_breaker->failure_threshold, 4u);
  EXPECT_EQ(c.policy.circuit_breaker->recovery_timeout, std::chrono::minutes(2));
  ASSERT_TRUE(c.policy.budget_window);
  EXPECT_EQ(c.policy.budget_window->window, std::chrono::minutes(10));
  EXPECT_EQ(c.policy.budget_window->max_cost_usd, 1.0);
  EXPECT_EQ(c.policy.budget_window->max_calls, 20u);
  EXPECT_EQ(c.policy.prices.entries().at("my-model"), (runs::ModelPrice{1, 2, 1.25, 2, 0}));
  EXPECT_TRUE(c.policy.prices.entries().count("claude-sonnet-4")) << "defaults stay";
  EXPECT_EQ(c.policy.kill_grace, std::chrono::seconds(9));
  EXPECT_FALSE(c.policy.telemetry);
  EXPECT_TRUE(c.policy.active(c.policy.limits));
  policy::ExecutionConfig e = c.policy.execution_config(c.policy.limits);
  EXPECT_EQ(e.max_cost_usd, 2.5);
  EXPECT_EQ(e.max_steps, 40u);
  EXPECT_EQ(e.max_retries_total, 3u);
  EXPECT_EQ(e.timeout, std::chrono::minutes(30));
  EXPECT_TRUE(e.circuit_breaker);
  EXPECT_TRUE(e.budget_window);
  EXPECT_EQ(e.repeat, (policy::RepeatConfig{5, 0})) << "0 turns the halt off";
}

TEST(ConfigTest, EveryKeyIsRead) {
  Config c = Config::parse(kEveryKey, "full.yaml");
  expect_store_keys(c);
  expect_run_keys(c);
  expect_policy_keys(c);
}

// The rollback settings by the names a file of an older version gives them.
const char* const kOlderRollbackNames =
    "hooks:\n"
    "  rollback_on_failure: false\n"
    "  keep_failed_tools: [Bash]\n"
    "  keep_failures:\n"
    "    - {tool: Bash, command: 'npm test*', exit_codes: [1, 2]}\n"
    "    - {command: pytest}\n";

TEST(ConfigTest, TheRollbackSettingsStillReadByTheirOlderNamesUnderHooks) {
  Config older = Config::parse(kOlderRollbackNames, "older.yaml");
  EXPECT_FALSE(older.rollback.on_failure);
  EXPECT_EQ(older.rollback.keep_failed_tools, (std::vector<std::string>{"Bash"}));
  EXPECT_EQ(older.rollback.keep_failures,
            (std::vector<sandbox::KeepRule>{{"Bash", "npm test*", {1, 2}}, {"", "pytest", {}}}));
  EXPECT_EQ(older.key_as_written("rollback.on_failure"), "hooks.rollback_on_failure");
  EXPECT_EQ(older.key_as_written("rollback.keep_failures"), "hooks.keep_failures");
  // One by each name: both read.
  Config mixed = Config::parse(
      "hooks: {rollback_on_failure: false}\nrollback: {keep_failed_tools: [Lint]}\n", "m.yaml");
  EXPECT_FALSE(mixed.rollback.on_failure);
  EXPECT_EQ(mixed.rollback.keep_failed_tools, (std::vector<std::string>{"Lint"}));
  EXPECT_EQ(mixed.key_as_written("rollback.keep_failed_tools"), "rollback.keep_failed_tools");
  // Written back, they take their own names.
  std::string yaml = older.to_yaml();
  EXPECT_NE(yaml.find("rollback:\n  on_failure: false"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("rollback_on_failure"), std::string::npos) << yaml;
  config_fields::expect_same_settings(Config::parse(yaml, "again.yaml"), older);
}

TEST(ConfigTest, ARollbackSettingGivenByBothNamesIsAnErrorNamingBoth) {
  expect_config_error("hooks: {rollback_on_failure: false}\nrollback: {on_failure: true}\n",
                      {"test.yaml:2", "rollback.on_failure", "hooks.rollback_on_failure"});
  expect_config_error("rollback: {keep_failed_tools: [A]}\nhooks: {keep_failed_tools: [B]}\n",
                      {"rollback.keep_failed_tools", "hooks.keep_failed_tools"});
  expect_config_error(
      "hooks: {keep_failures: [{tool: A}]}\nrollback: {keep_failures: [{tool: B}]}\n",
      {"rollback.keep_failures", "hooks.keep_failures"});
}

TEST(ConfigTest, ResumeMistakesAreErrorsNamingTheKey) {
  expect_config_error("run: {resume_validation: lax}\n",
                      {"run.resume_validation", "strict, relaxed or none"});
  expect_config_error("run: {auto_resume: sometimes}\n", {"run.auto_resume", "true or false"});
  expect_config_error("run: {capture_state: [yes]}\n", {"run.capture_state"});
}

TEST(ConfigTest, RollbackMistakesAreErrorsNamingTheKey) {
  expect_config_error("rollback: [on_failure]\n", {"test.yaml:1", "rollback", "mapping"});
  expect_config_error("rollback: {keep: [Bash]}\n",
                      {"rollback.keep", "unknown", "rollback.keep_failed_tools"});
  expect_config_error("rollback: {on_failure: maybe}\n", {"rollback.on_failure", "true or false"});
  expect_config_error("rollback: {keep_failed_tools: Bash}\n",
                      {"rollback.keep_failed_tools", "list"});
  expect_config_error("rollback:\n  keep_failures: [{}]\n",
                      {"rollback.keep_failures", "on_failure: false"});
  expect_config_error("rollback:\n  keep_failures: [{exit_codes: [256]}]\n",
                      {"rollback.keep_failures[].exit_codes", "0 to 255"});
  expect_config_error("rollback: {on_failure: true, 'on_failure': false}\n",
                      {"rollback.on_failure", "given twice"});
}

TEST(ConfigTest, RunFlagsOverrideConfigLimitsOneByOne) {
  runs::PolicyLimits config_limits{5.0, 40, std::nullopt, std::chrono::seconds(600)};
  runs::PolicyLimits flags{std::nullopt, 10, 2, std::nullopt};
  runs::PolicyLimits merged = config_limits.overridden_by(flags);
  EXPECT_EQ(merged.max_cost_usd, 5.0);
  EXPECT_EQ(merged.max_steps, 10u);
  EXPECT_EQ(merged.max_retries_total, 2u);
  EXPECT_EQ(merged.timeout, std::chrono::seconds(600));
}

TEST(ConfigTest, AmountsOfMoney) {
  EXPECT_EQ(hooks::parse_usd("2.50"), 2.5);
  EXPECT_EQ(hooks::parse_usd("$10"), 10.0);
  EXPECT_EQ(hooks::parse_usd("0.01"), 0.01);
  EXPECT_EQ(hooks::parse_usd_or_zero("0"), 0.0);
  for (const char* bad : {"", "$", "0", "-1", "ten", "2.5 USD", "nan", "inf", "1e13"}) {
    EXPECT_THROW(hooks::parse_usd(bad), ConfigError) << bad;
  }
}

TEST(ConfigTest, SizesAndDurations) {
  EXPECT_EQ(hooks::parse_size("0"), 0u);
  EXPECT_EQ(hooks::parse_size("1048576"), 1048576u);
  EXPECT_EQ(hooks::parse_size("512k"), 512u << 10);
  EXPECT_EQ(hooks::parse_size("100MiB"), 100u << 20);
  EXPECT_EQ(hooks::parse_size("2 GB"), 2ull << 30);
  EXPECT_EQ(hooks::parse_size("1TiB"), 1ull << 40);
  for (const char* bad :
       {"", "MiB", "-1", "1.5MiB", "12 parsecs", "99999999999999999999", "20000000TiB"}) {
    EXPECT_THROW(hooks::parse_size(bad), ConfigError) << bad;
  }
  EXPECT_EQ(hooks::parse_duration("45"), std::chrono::seconds(45));
  EXPECT_EQ(hooks::parse_duration("90m"), std::chrono::minutes(90));
  EXPECT_EQ(hooks::parse_duration("12h"), std::chrono::hours(12));
  EXPECT_EQ(hooks::parse_duration("2w"), std::chrono::hours(24 * 14));
  for (const char* bad : {"", "d", "3y", "1.5h", "-2d"}) {
    EXPECT_THROW(hooks::parse_duration(bad), ConfigError) << bad;
  }
}

TEST(ConfigTest, DurationsPastAHundredYearsAreTakenAsAHundredYears) {
  using std::chrono::seconds;
  EXPECT_EQ(runs::kMaxDuration, seconds(std::int64_t{36500} * 86400));
  EXPECT_EQ(hooks::parse_duration("36500d"), runs::kMaxDuration);
  EXPECT_EQ(hooks::parse_duration("36499d"), runs::kMaxDuration - seconds(86400));
  // Longer ones saturate: ~292 years wrapped the nanoseconds of max_age, deleting every
  // checkpoint; 200000d wrapped prune_grace and policy.timeout into the past.
  for (const char* text : {"36501d", "106753d", "200000d", "9223372036854775807",
                           "999999999999999999w", "99999999999999999999999999d"}) {
    EXPECT_EQ(hooks::parse_duration(text), runs::kMaxDuration) << text;
  }
  Config c = Config::parse(
      "retention: {max_age: 106753d, prune_grace: 200000d}\n"
      "policy: {timeout: 200000d, kill_grace: 200000d}\n"
      "watch: {idle_exit: 200000d}\n"
      "fleet: {redis: 'redis://h', remote: /r, lease_ttl: 200000d}\n"
      "run: {resume_max_age: 200000d, preserve_interval: 200000d}\n",
      "long.yaml");
  for (seconds d :
       {c.retention.max_age, c.retention.prune_grace, *c.policy.limits.timeout, c.policy.kill_grace,
        c.watch.idle_exit, c.fleet.lease_ttl, c.run.resume_max_age, c.run.preserve_interval}) {
    EXPECT_EQ(d, runs::kMaxDuration);
  }
  EXPECT_EQ(c.policy.execution_config(c.policy.limits).timeout,
            std::chrono::duration_cast<std::chrono::milliseconds>(runs::kMaxDuration));
  // A run's own limits (its run.json: a store or a fleet's record, parsed elsewhere).
  runs::PolicyLimits own;
  own.timeout = seconds::max();
  EXPECT_EQ(c.policy.execution_config(own).timeout,
            std::chrono::duration_cast<std::chrono::milliseconds>(runs::kMaxDuration));
  own.timeout = seconds(-5);
  EXPECT_EQ(c.policy.execution_config(own).timeout, std::chrono::milliseconds(0));
}

TEST(ConfigTest, SizesAndCountsThatDoNotFitAreErrorsSayingTheLargest) {
  EXPECT_EQ(hooks::parse_size("16777215TiB"), 16777215ull << 40);
  EXPECT_EQ(hooks::parse_size("18446744073709551615"), ~0ull);
  expect_config_error("capture:\n  max_file_size: 99999999999999999999G\n",
                      {"test.yaml:2", "capture.max_file_size", "too large", "16777215TiB"});
  expect_config_error("retention:\n  max_size: 16777216TiB\n",
                      {"retention.max_size", "too large", "16777215TiB"});
  expect_config_error("retention:\n  max_size: 18446744073709551616\n",
                      {"retention.max_size", "too large"});
  expect_config_error("retention:\n  keep_last: 9999999999999999999\n",
                      {"retention.keep_last", "too large", "999999999999999999"});
  expect_config_error("policy:\n  max_steps: 99999999999999999999999\n",
                      {"policy.max_steps", "too large"});
}

TEST(ConfigTest, AKeyGivenTwiceIsAnErrorNamingItAndBothLines) {
  // yaml-cpp keeps both, and a lookup finds the first: the second was ignored.
  expect_config_error("retention:\n  keep_last: 50\n  keep_last: 1\n",
                      {"test.yaml:3", "retention.keep_last", "given twice (lines 2 and 3)"});
  expect_config_error("retention: {keep_last: 1}\nhooks: {}\nretention: {max_age: 1d}\n",
                      {"test.yaml:3", "retention", "lines 1 and 3"});
  expect_config_error("hooks: {rollback_on_failure: true, 'rollback_on_failure': false}\n",
                      {"hooks.rollback_on_failure", "given twice"});
  expect_config_error(
      "policy:\n  prices:\n    m: {input: 1, output: 1, cache_write_5m: 1, cache_write_1h: 1,\n"
      "        cache_read: 1}\n    m: {input: 0, output: 0, cache_write_5m: 0, "
      "cache_write_1h: 0, cache_read: 0}\n",
      {"policy.prices.m", "lines 3 and 5"});
  expect_config_error("session:\n  windows:\n    a: 1\n    b: 2\n    a: 3\n",
                      {"session.windows.a", "lines 3 and 5"});
  // A key that is not a name.
  expect_config_error("? [retention]\n: {}\n", {"test.yaml:1", "key must be a name"});
  expect_config_error("capture:\n  ? {a: 1}\n  : x\n", {"capture", "key must be a name"});
  // The same key in different mappings, and an item twice in a list, are fine.
  Config c = Config::parse(
      "capture: {excludes: [a, a], max_file_size: 1MiB}\n"
      "retention: {max_size: 2MiB}\n"
      "policy:\n  budget_window: {window: 1m, max_calls: 2}\n"
      "  circuit_breaker: {failure_threshold: 2}\n",
      "ok.yaml");
  EXPECT_EQ(c.capture.excludes.size(), 2u);
  EXPECT_EQ(c.retention.max_size, 2u << 20);
}

TEST(ConfigTest, MistakesAreErrorsNamingTheKey) {
  expect_config_error("capture:\n  exclude: [x]\n", {"test.yaml", "capture.exclude", "unknown"});
  expect_config_error("retention:\n  keep: 3\n", {"retention.keep", "retention.keep_last"});
  expect_config_error("captures: {}\n", {"captures"});
  expect_config_error("capture:\n  max_file_size: huge\n", {"capture.max_file_size", "huge"});
  expect_config_error("capture:\n  respect_gitignore: maybe\n", {"capture.respect_gitignore"});
  expect_config_error("capture:\n  excludes: node_modules\n", {"capture.excludes", "list"});
  expect_config_error("retention:\n  keep_last: -1\n", {"retention.keep_last"});
  expect_config_error("retention:\n  max_age: [1]\n", {"retention.max_age"});
  expect_config_error("session:\n  checkpoint_ring: 0\n", {"session.checkpoint_ring"});
  expect_config_error("run:\n  env: [\"A=B\"]\n", {"run.env"});
  expect_config_error("run:\n  envs: []\n", {"run.envs"});
  expect_config_error("run:\n  home:\n    carry: [../.ssh]\n", {"run.home.carry", "inside HOME"});
  expect_config_error("run:\n  home:\n    carry: [/etc/passwd]\n", {"run.home.carry"});
  expect_config_error("run:\n  home:\n    carry: [.claude/./x]\n", {"run.home.carry"});
  expect_config_error("run:\n  home:\n    isolate: sometimes\n", {"run.home.isolate"});
  expect_config_error("run:\n  home:\n    carry: [.claude]\n", {"run.home.carry", "projects"});
  expect_config_error("run:\n  home:\n    carry: [.claude/.credentials.json]\n",
                      {"run.home.carry", "run.home.credentials"});
  expect_config_error("run:\n  home:\n    carry: [.claude/projects/x]\n", {"run.home.carry"});
  expect_config_error("run:\n  home:\n    cary: []\n", {"run.home.cary", "unknown"});
  expect_config_error("hooks:\n  transport: pigeon\n", {"hooks.transport", "http or command"});
  expect_config_error("hooks:\n  keep_failures: {tool: Bash}\n", {"hooks.keep_failures", "list"});
  expect_config_error("hooks:\n  keep_failures: [{}]\n",
                      {"hooks.keep_failures", "rollback_on_failure"});
  expect_config_error("hooks:\n  keep_failures: [{tool: Bash, exit: [1]}]\n",
                      {"hooks.keep_failures[].exit", "unknown"});
  expect_config_error("hooks:\n  keep_failures: [{exit_codes: [256]}]\n",
                      {"hooks.keep_failures[].exit_codes", "0 to 255"});
  expect_config_error("run:\n  preserve: sometimes\n", {"run.preserve", "on_demand"});
  expect_config_error("run:\n  preserve_interval: 0s\n", {"run.preserve_interval"});
  expect_config_error("capture: [1, 2]\n", {"capture", "mapping"});
  expect_config_error("- just\n- a list\n", {"test.yaml", "mapping"});
  expect_config_error("capture:\n  excludes: [a\n", {"test.yaml", "invalid YAML"});
  expect_config_error("policy:\n  max_cost: 5\n", {"policy.max_cost", "unknown"});
  expect_config_error("policy:\n  max_cost_usd: 0\n", {"policy.max_cost_usd", "more than $0"});
  expect_config_error("policy:\n  max_steps: 0\n", {"policy.max_steps", "at least 1"});
  expect_config_error("policy:\n  timeout: 0\n", {"policy.timeout"});
  expect_config_error("policy:\n  budget_window: {window: 1m}\n",
                      {"policy.budget_window", "max_calls or max_cost_usd"});
  expect_config_error("policy:\n  prices:\n    m: {input: 1}\n", {"policy.prices.m.output"});
  expect_config_error("policy:\n  circuit_breaker: {threshold: 2}\n",
                      {"policy.circuit_breaker.threshold"});
  expect_config_error("policy:\n  repeat: {deny_threshold: 1}\n",
                      {"policy.repeat.deny_threshold", "0 (off) or at least 2"});
  expect_config_error("policy:\n  repeat: {halt_threshold: -3}\n",
                      {"policy.repeat.halt_threshold"});
  expect_config_error("policy:\n  repeat: {deny: 3}\n", {"policy.repeat.deny", "unknown"});
  expect_config_error("policy:\n  repeat: 3\n", {"policy.repeat", "mapping"});
  // Line numbers point at the mistake.
  expect_config_error("capture:\n  max_file_size: 1MiB\n  oops: 1\n", {"test.yaml:3"});
}

// Sets or clears $SHADOWBOX_CONFIG for one test.
class ConfigLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("SHADOWBOX_CONFIG")) saved_ = old;
    ::unsetenv("SHADOWBOX_CONFIG");
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("SHADOWBOX_CONFIG", saved_->c_str(), 1);
    } else {
      ::unsetenv("SHADOWBOX_CONFIG");
    }
  }
  std::optional<std::string> saved_;
  testing_support::TempDir dir_;
};

TEST_F(ConfigLookupTest, ExplicitThenEnvironmentThenWorkspaceThenDefaults) {
  boost::filesystem::path ws = dir_ / "ws";
  boost::filesystem::create_directories(ws);
  EXPECT_TRUE(Config::load(std::nullopt, ws).source.empty());

  // (A workspace's own file may only tighten until trusted: workspace_config_test.)
  testing_support::write_file(ws / ".shadowbox.yaml", "policy: {max_steps: 1}\n");
  EXPECT_EQ(Config::load(std::nullopt, ws).policy.limits.max_steps, 1u);
  EXPECT_EQ(Config::load(std::nullopt, ws).source, ws / ".shadowbox.yaml");

  testing_support::write_file(dir_ / "env.yaml", "retention: {keep_last: 2}\n");
  ::setenv("SHADOWBOX_CONFIG", (dir_ / "env.yaml").c_str(), 1);
  EXPECT_EQ(Config::load(std::nullopt, ws).retention.keep_last, 2u);

  testing_support::write_file(dir_ / "explicit.yaml", "retention: {keep_last: 3}\n");
  EXPECT_EQ(Config::load(dir_ / "explicit.yaml", ws).retention.keep_last, 3u);

  // A named file that does not exist is an error, never a silent fallback.
  EXPECT_THROW(Config::load(dir_ / "missing.yaml", ws), ConfigError);
  ::setenv("SHADOWBOX_CONFIG", (dir_ / "missing.yaml").c_str(), 1);
  EXPECT_THROW(Config::load(std::nullopt, ws), ConfigError);
}

// What load says, within a deadline: "accepted" (with the config's source) or the
// error. A load still waiting at the deadline on release — a FIFO, which an open without
// O_NONBLOCK waits on for a writer — is let go by opening it for writing, so that a
// regression fails instead of hanging the suite.
std::string within_deadline(const std::function<Config()>& load,
                            const boost::filesystem::path& release) {
  std::future<std::string> loading = std::async(std::launch::async, [&load] {
    try {
      return "accepted " + load().source.string();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
  });
  if (loading.wait_for(std::chrono::seconds(10)) == std::future_status::ready) {
    return loading.get();
  }
  int writer = ::open(release.c_str(), O_WRONLY | O_NONBLOCK);
  if (writer >= 0) ::close(writer);
  loading.wait();
  return "still loading at the deadline";
}

std::string load_within_deadline(const boost::filesystem::path& file) {
  return within_deadline([&file] { return Config::load_file(file); }, file);
}

TEST_F(ConfigLookupTest, AConfigIsARegularFileOfAtMostOneMiB) {
  boost::filesystem::path fifo = dir_ / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string fifo_error = load_within_deadline(fifo);
  EXPECT_NE(fifo_error.find("config file " + fifo.string() + " is not a regular file"),
            std::string::npos)
      << fifo_error;
  std::string device_error = load_within_deadline("/dev/null");
  EXPECT_NE(device_error.find("/dev/null is not a regular file"), std::string::npos)
      << device_error;
  boost::filesystem::create_directories(dir_ / "dir.yaml");
  std::string dir_error = load_within_deadline(dir_ / "dir.yaml");
  EXPECT_NE(dir_error.find("dir.yaml is a directory"), std::string::npos) << dir_error;

  // At most 1 MiB: a configuration is a few dozen lines.
  std::string line = "# " + std::string(61, '-') + "\n";  // 64 bytes
  std::string full;
  for (std::size_t i = 0; i < hooks::kMaxConfigBytes / line.size(); ++i) full += line;
  ASSERT_EQ(full.size(), hooks::kMaxConfigBytes);
  testing_support::write_file(dir_ / "full.yaml", full);
  EXPECT_EQ(load_within_deadline(dir_ / "full.yaml"), "accepted " + (dir_ / "full.yaml").string());
  testing_support::write_file(dir_ / "over.yaml", full + "\n");
  std::string over_error = load_within_deadline(dir_ / "over.yaml");
  EXPECT_NE(over_error.find("over.yaml is larger than 1 MiB"), std::string::npos) << over_error;

  // In the workspace, only a regular .shadowbox.yaml is looked at: a FIFO or a directory
  // there is passed over at once, as before.
  boost::filesystem::path ws = dir_ / "ws";
  boost::filesystem::create_directories(ws);
  ASSERT_EQ(::mkfifo((ws / ".shadowbox.yaml").c_str(), 0600), 0);
  EXPECT_EQ(
      within_deadline([&ws] { return Config::load(std::nullopt, ws); }, ws / ".shadowbox.yaml"),
      "accepted ");
  boost::filesystem::remove(ws / ".shadowbox.yaml");
  boost::filesystem::create_directories(ws / ".shadowbox.yaml");
  EXPECT_EQ(within_deadline([&ws] { return Config::load(std::nullopt, ws); }, ws), "accepted ");
}

}  // namespace
