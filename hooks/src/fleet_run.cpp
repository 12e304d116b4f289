#include "hooks/fleet_run.hpp"

#include <cstdio>
#include <sstream>

#include <Poco/JSON/Parser.h>
#include <Poco/JSON/Stringifier.h>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/run_list.hpp"
#include "hooks/run_policy.hpp"
#include "runs/redaction.hpp"

namespace hooks {

namespace {

// run.json's text with every string in it redacted, decoded (JSON escapes a '"' or '\'
// of a secret): what `recover` reads back stays JSON. Text that is not JSON is redacted
// as text.
std::string redacted_run_json(const std::string& text, const std::vector<std::string>& secrets) {
  try {
    Poco::JSON::Parser parser;
    std::ostringstream out;
    Poco::JSON::Stringifier::stringify(runs::redact_value(parser.parse(text), secrets), out);
    return out.str();
  } catch (const Poco::Exception&) {
    return runs::redact(text, secrets);
  }
}

}  // namespace

std::unique_ptr<fleet::FleetMember> join_fleet(
    const fsnap::Store& store, const Config& config, const std::string& run,
    const std::string& workspace, fleet::FleetMember::Join join,
    const std::function<void(const std::string&)>& warn) {
  if (!config.fleet.enabled()) return nullptr;
  fleet::FleetMember::Options options{
      config.fleet,
      store,
      run,
      workspace,
      [store, run, config, secrets = runs::secret_values(config.run.secrets)](
          const std::shared_ptr<fsnap::ShadowRepo>& repo) {
        return fleet_record(store, repo, run, config, secrets);
      },
      warn};
  try {
    return std::make_unique<fleet::FleetMember>(std::move(options), join);
  } catch (const fleet::RunOwnedElsewhere&) {
    throw;
  } catch (const fsnap::Error& e) {
    if (e.code() != fsnap::ErrorCode::kIo || config.fleet.required) throw;
    if (warn) {
      warn(std::string(e.what()) +
           "; running locally (fleet.required is false): no lease, nothing pushed");
    }
    return nullptr;
  }
}

std::map<std::string, std::string> fleet_record(const fsnap::Store& store,
                                                const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                                const std::string& run, const Config& config,
                                                const std::vector<std::string>& secrets) {
  RunInfo info =
      describe_run(store, repo, run, config.run.resume_max_age, std::chrono::system_clock::now());
  char cost[32];
  std::snprintf(cost, sizeof cost, "%.6f", info.figures.cost_usd);
  std::map<std::string, std::string> out = {
      {"status", info.status},
      {"halt_reason", info.halt_reason},
      {"agent", info.agent},
      {"session_id", info.session_id},
      {"cost_usd", cost},
      {"cost_exact", info.unpriced_models.empty() ? "true" : "false"},
      {"steps", std::to_string(info.figures.steps)},
      {"calls", std::to_string(info.figures.calls)},
      {"failed_calls", std::to_string(info.figures.failed)},
      {"rolled_back_calls", std::to_string(info.figures.rolled_back)},
      {"refused_calls", std::to_string(info.figures.refused)},
      {"agent_denied_calls", std::to_string(info.figures.agent_denied)},
      {"checkpoints", std::to_string(info.checkpoints)},
      {"last_activity", info.last_activity},
      {"exit_code", info.exit_code ? std::to_string(*info.exit_code) : ""},
  };
  if (std::optional<std::string> meta =
          fsnap::read_small_file(fsnap::layout::run_meta_file(store.dir(), run))) {
    out["run_json"] = redacted_run_json(*meta, secrets);  // the agent's command line
  }
  std::string ids;
  for (const AgentSession& session : info.sessions) {
    ids += (ids.empty() ? "" : ",") + session.session_id;
  }
  out["session_ids"] = ids;  // every agent session of the run, oldest first
  if (!info.sessions.empty()) out["session_cwd"] = info.sessions.back().cwd;
  return out;
}

void record_lost_run(runs::LedgerRun& run, const Config& config, const std::string& owner) {
  std::string reason = "worker " + (owner.empty() ? std::string("(unknown)") : owner) +
                       " took run " + run.run() + " over (its lease is gone from this worker)";
  record_abort(run, config, reason);
}

}  // namespace hooks
