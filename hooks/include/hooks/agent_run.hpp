// An agent run under shadowbox (`shadowbox run`, `shadowbox resume`): the run's ledger
// and workspace (watched), the agent's hooks installed in its ephemeral HOME by its
// adapter (agent_adapter.hpp; run.json's "agent" says which: Claude Code's HTTP hooks
// are answered by a loopback server in this process, other hooks by one `shadowbox
// hook <agent>` process per event), the agent started with only the configured
// environment, its session data preserved at every tool boundary and on exit, and how
// it ended recorded in the run's session (RunStatus) and in run.json.
//
// The HOME: the user's own configuration of the agent is carried into it (copies,
// removed when the run ends; never credentials, but for Claude Code's login, which is
// kept in step with the user's own by CredentialSync), unless run.home.isolate.
//
// Containment: every tool call is admitted by the run's ExecutionContext (config
// policy.* with the run's own limits over it), the agent's model spend is charged to
// it, and this process supervises the agent — a HaltRequest (a hook that stopped the
// run, `shadowbox abort`) or the run's timeout ends the agent's whole process tree:
// SIGTERM, then SIGKILL after policy.kill_grace. However the agent ends (exits, is
// stopped, is killed with SIGKILL by someone else), the processes it started — even
// those that left its session or were orphaned (this process is their subreaper) — are
// ended the same way and reaped before the run's end is recorded: no tool process
// changes the workspace after `run` returns. If this process dies instead (kill -9
// included), the agent's guard ends the tree the same way (AgentProcess), and the run's
// processes lock says that something of the run lives until then (run_processes.hpp):
// no resume, and no other run on the workspace, meanwhile.
//
// Fleet (config fleet.*, hooks/fleet_run.hpp): the run's lease is taken before anything
// else and released at its end; every tool boundary is pushed to the fleet's remote
// (sync: before the hook is answered). A worker that loses the lease records the loss
// (containment's abort: the next tool call is denied and the agent told to stop) and
// ends the agent's tree if it has not stopped within fleet.lease_ttl.
//
// The store's upkeep (packing, the retention limits) is never done in this process:
// AgentRunSpec::maintain_detached starts it in a process of its own while the agent
// runs, when due, and once the run's end is recorded, so that run_agent returns as soon
// as the agent has ended, whatever the size of the store; those processes are spared
// when the agent's tree is ended.
//
// Thread-safety: run_agent is called from one thread; hook events are answered on the
// server's thread, one at a time, while that thread waits for the agent, and never
// after the agent has exited.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fleet/fleet_member.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_process.hpp"
#include "hooks/config.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

// What run_agent runs, and how.
struct AgentRunSpec {
  fsnap::Store store;
  std::shared_ptr<fsnap::ShadowRepo> repo;  // the store's repository (opened if null)
  Config config;
  std::string run;
  boost::filesystem::path workspace;
  boost::filesystem::path home;   // the agent's HOME (exists)
  UserAgentSetup user;            // whose setup the HOME starts from (config run.home)
  std::vector<std::string> argv;  // the agent command
  std::vector<std::string> env;   // NAME=VALUE for the agent besides the run's own (a resume's)
  std::string resumed_session;    // the agent session a resume resumes ("" for a run)
  std::string hook_command;       // what a command hook runs: this executable, bound to the run
  std::string start_summary;      // said in the record of the run's opening boundary
  runs::RunMeta meta;             // run.json as the run starts (meta.limits: the run's own)
  std::function<void(const std::string&)> warn;    // warnings for the person running it
  std::function<void(const std::string&)> inform;  // what the supervisor does (a stop)
  // The run's place in the fleet when the caller joined it already (`recover`, `resume`);
  // else run_agent joins it (claiming the run) if the config has a fleet section.
  std::shared_ptr<fleet::FleetMember> fleet;
  // Starts a maintenance of the store in a process of its own if one is due, and
  // returns at once: the pid of the process started, or -1 (the CLI starts `shadowbox
  // maintenance` detached). With config auto_maintenance, run_agent calls it every ten
  // seconds while the agent runs (run_ended false: due by config maintenance.*), and
  // once the run's end is recorded (run_ended true: anything left loose, and the
  // retention limits), so that nothing of the store's upkeep delays the run's end.
  // Must not throw. Empty: the run leaves the store's upkeep to others.
  std::function<pid_t(bool run_ended)> maintain_detached;
};

// How an agent run ended.
struct AgentRunResult {
  AgentExit exit;                         // the agent's own exit
  std::optional<runs::HaltRequest> halt;  // set when containment or an abort stopped it
  // It sent shadowbox at least one hook event (a boundary between the run's opening and
  // closing ones): an agent that exits with an error before any did not get to work —
  // resuming, it refused the session (expired, or unknown to it).
  bool agent_reported = false;
  // (Its figures are describe_run's, as every command shows them: hooks/run_list.hpp.)
  // The status `run` exits with: 3 for a stopped run, else the agent's.
  int code() const { return halt ? 3 : exit.code(); }
};

// Runs the agent to its end under shadowbox and returns how it ended. The start is a
// saga (statekit/saga.hpp): the run's record, its HOME, the opening boundary, the hooks,
// the agent. If a step fails, what the steps before it did is undone in reverse order
// — the hooks taken out of the settings, a record after the opening boundary that the
// run did not start, the login taken out of the HOME, run.json saying it ended (exit
// code 127) — and SagaFailed names the step and the cause (kCorrupt if something could
// not be undone).
AgentRunResult run_agent(AgentRunSpec spec);

// The NO_PROXY / no_proxy entries that let a loopback hook request bypass a proxy set in
// the environment (none when no proxy is set).
std::vector<std::string> loopback_without_proxy();

// The environment that makes Claude Code export its cost events (OpenTelemetry logs,
// OTLP/HTTP JSON) to endpoint.
std::vector<std::string> telemetry_environment(const std::string& endpoint);

}  // namespace hooks
