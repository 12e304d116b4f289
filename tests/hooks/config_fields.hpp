// Every setting of two Configs compared, one expectation each: for tests that two ways
// of reaching a configuration reach the same one.
#pragma once

#include <gtest/gtest.h>

#include "hooks/config.hpp"

namespace config_fields {

// Expects a and b to hold the same settings (where they came from apart).
inline void expect_same_settings(const hooks::Config& a, const hooks::Config& b) {
  EXPECT_EQ(a.capture.excludes, b.capture.excludes);
  EXPECT_EQ(a.capture.max_file_size, b.capture.max_file_size);
  EXPECT_EQ(a.capture.respect_gitignore, b.capture.respect_gitignore);
  EXPECT_EQ(a.capture.use_git_index, b.capture.use_git_index);
  EXPECT_EQ(a.retention.keep_last, b.retention.keep_last);
  EXPECT_EQ(a.retention.max_age, b.retention.max_age);
  EXPECT_EQ(a.retention.max_size, b.retention.max_size);
  EXPECT_EQ(a.retention.prune_grace, b.retention.prune_grace);
  EXPECT_EQ(a.auto_maintenance, b.auto_maintenance);
  EXPECT_EQ(a.maintenance.loose_objects, b.maintenance.loose_objects);
  EXPECT_EQ(a.maintenance.max_packs, b.maintenance.max_packs);
  EXPECT_EQ(a.checkpoint_ring, b.checkpoint_ring);
  EXPECT_EQ(a.session_windows, b.session_windows);
  EXPECT_EQ(a.run.env, b.run.env);
  EXPECT_EQ(a.run.secrets, b.run.secrets);
  EXPECT_EQ(a.run.resume_max_age, b.run.resume_max_age);
  EXPECT_EQ(a.run.preserve, b.run.preserve);
  EXPECT_EQ(a.run.preserve_interval, b.run.preserve_interval);
  EXPECT_EQ(a.run.capture_state, b.run.capture_state);
  EXPECT_EQ(a.run.auto_resume, b.run.auto_resume);
  EXPECT_EQ(a.run.resume_validation, b.run.resume_validation);
  EXPECT_EQ(a.run.home.carry, b.run.home.carry);
  EXPECT_EQ(a.run.home.credentials, b.run.home.credentials);
  EXPECT_EQ(a.run.home.isolate, b.run.home.isolate);
  EXPECT_EQ(a.rollback.on_failure, b.rollback.on_failure);
  EXPECT_EQ(a.rollback.keep_failed_tools, b.rollback.keep_failed_tools);
  EXPECT_EQ(a.rollback.keep_failures, b.rollback.keep_failures);
  EXPECT_EQ(a.hooks.transport, b.hooks.transport);
  EXPECT_EQ(a.watch.daemon, b.watch.daemon);
  EXPECT_EQ(a.watch.idle_exit, b.watch.idle_exit);
  EXPECT_EQ(a.policy.limits, b.policy.limits);
  ASSERT_EQ(a.policy.circuit_breaker.has_value(), b.policy.circuit_breaker.has_value());
  if (a.policy.circuit_breaker) {
    EXPECT_EQ(a.policy.circuit_breaker->failure_threshold,
              b.policy.circuit_breaker->failure_threshold);
    EXPECT_EQ(a.policy.circuit_breaker->recovery_timeout,
              b.policy.circuit_breaker->recovery_timeout);
  }
  ASSERT_EQ(a.policy.budget_window.has_value(), b.policy.budget_window.has_value());
  if (a.policy.budget_window) {
    EXPECT_EQ(a.policy.budget_window->window, b.policy.budget_window->window);
    EXPECT_EQ(a.policy.budget_window->max_calls, b.policy.budget_window->max_calls);
    EXPECT_EQ(a.policy.budget_window->max_cost_usd, b.policy.budget_window->max_cost_usd);
  }
  EXPECT_EQ(a.policy.repeat, b.policy.repeat);
  EXPECT_EQ(a.policy.prices.entries(), b.policy.prices.entries());
  EXPECT_EQ(a.policy.kill_grace, b.policy.kill_grace);
  EXPECT_EQ(a.policy.telemetry, b.policy.telemetry);
  EXPECT_EQ(a.policy.shared_budget, b.policy.shared_budget);
  EXPECT_EQ(a.fleet.redis, b.fleet.redis);
  EXPECT_EQ(a.fleet.remote, b.fleet.remote);
  EXPECT_EQ(a.fleet.worker_id, b.fleet.worker_id);
  EXPECT_EQ(a.fleet.lease_ttl, b.fleet.lease_ttl);
  EXPECT_EQ(a.fleet.sync_push, b.fleet.sync_push);
  EXPECT_EQ(a.fleet.required, b.fleet.required);
}

}  // namespace config_fields
