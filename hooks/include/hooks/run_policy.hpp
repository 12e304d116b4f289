// The containment of an agent run as every process of the run sets it up — the
// supervisor, a hook process, `shadowbox abort` — so that they all count against the
// same limits: config policy.* with the run's own limits (its run flags, kept in
// run.json) over it.
//
// Thread-safety: plain functions over one LedgerRun (one thread at a time).
#pragma once

#include <string>

#include "fsnap/store.hpp"
#include "hooks/config.hpp"
#include "runs/ledger_run.hpp"

namespace hooks {

// The limits of run: config's, overridden by those of its run.json, if it has one.
runs::PolicyLimits run_limits(const fsnap::Store& store, const std::string& run,
                              const Config& config);

// Puts run's tool calls under containment with config's policy and limits. With
// policy.shared_budget (and a fleet), max_cost_usd and max_steps are the shared
// budget's, counted in the fleet's Redis (fleet/shared_budget.hpp).
void contain_run(runs::LedgerRun& run, const Config& config, const runs::PolicyLimits& limits);

// Records in run's ledger that containment aborted it for reason (its containment set
// up first if it has none): every later tool call of the run is denied.
void record_abort(runs::LedgerRun& run, const Config& config, const std::string& reason);

// Stops a running agent run from another process: records the abort (with reason) in
// the run's ledger — every later tool call of the run is denied — and asks its
// supervisor to stop the agent (HaltRequest). Error kNotFound if run is no agent run,
// kConflict if it is not running.
void abort_run(runs::LedgerRun& run, const Config& config, const std::string& reason);

}  // namespace hooks
