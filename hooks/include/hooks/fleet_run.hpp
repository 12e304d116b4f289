// An agent run in the fleet (config fleet.*): joining it when the run starts, what the
// registry shows of the run, and what a worker does when it has lost the run.
//
// Thread-safety: plain functions; the member they return is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fleet/fleet_member.hpp"
#include "fsnap/store.hpp"
#include "hooks/config.hpp"
#include "runs/ledger_run.hpp"

namespace hooks {

// The run's place in the fleet, or null when the config has no fleet section — or when
// Redis cannot be reached and fleet.required is false (a local run: warned about).
// Throws fleet::RunOwnedElsewhere when another worker owns the run, fsnap::Error kIo
// when Redis cannot be reached and fleet.required is true (the default).
std::unique_ptr<fleet::FleetMember> join_fleet(const fsnap::Store& store, const Config& config,
                                               const std::string& run, const std::string& workspace,
                                               fleet::FleetMember::Join join,
                                               const std::function<void(const std::string&)>& warn);

// The run's record as the fleet's registry shows it: what `shadowbox runs` says of it
// (status, agent, session_id and every session's in session_ids, cost, steps, calls),
// its run.json (for `recover`; secrets and credential-shaped text redacted, as in the
// ledger), and the working directory of its newest agent session.
std::map<std::string, std::string> fleet_record(const fsnap::Store& store,
                                                const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                                const std::string& run, const Config& config,
                                                const std::vector<std::string>& secrets);

// Records in the run's ledger that this worker lost the run to owner: containment's
// abort, so that its next tool call is denied and the agent told to stop.
void record_lost_run(runs::LedgerRun& run, const Config& config, const std::string& owner);

}  // namespace hooks
