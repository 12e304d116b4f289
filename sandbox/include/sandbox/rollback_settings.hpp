// RollbackSettings — what a configuration says becomes of failed tool calls (config
// rollback.*; the older names hooks.rollback_on_failure, hooks.keep_failed_tools and
// hooks.keep_failures still read): of agents' calls (hook events) and of external
// tools' (`shadowbox rollback`) alike. The settings as written, in their order; policy()
// is the RollbackPolicy that decides with them.
//
// Thread-safety: a plain value.
#pragma once

#include <string>
#include <vector>

#include "sandbox/rollback_policy.hpp"

namespace sandbox {

// The rollback settings of a configuration, with their defaults.
struct RollbackSettings {
  bool on_failure = true;                      // rollback.on_failure: false keeps every failure
  std::vector<std::string> keep_failed_tools;  // rollback.keep_failed_tools: never rolled back
  std::vector<KeepRule> keep_failures;  // rollback.keep_failures: kept by command, exit status

  // The rollback policy these settings describe.
  RollbackPolicy policy() const {
    return RollbackPolicy{
        on_failure, {keep_failed_tools.begin(), keep_failed_tools.end()}, keep_failures};
  }
};

}  // namespace sandbox
