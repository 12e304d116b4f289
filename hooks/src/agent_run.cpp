#include "hooks/agent_run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_event.hpp"
#include "hooks/agent_home.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/agent_supervisor.hpp"
#include "hooks/fleet_run.hpp"
#include "hooks/held_stderr.hpp"
#include "hooks/home_leftovers.hpp"
#include "hooks/hook_server.hpp"
#include "hooks/process_tree.hpp"
#include "hooks/reported_cost.hpp"
#include "hooks/run_policy.hpp"
#include "hooks/run_processes.hpp"
#include "runs/home_preservation.hpp"
#include "runs/ledger_run.hpp"
#include "runs/redaction.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/containment.hpp"
#include "statekit/saga.hpp"

namespace hooks {

namespace {

using std::chrono::milliseconds;

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
}

// How the agent's end is recorded.
runs::RunStatus status_of(const AgentExit& exit, const std::optional<runs::HaltRequest>& halt) {
  if (halt) return {"halted", halt->reason + " (" + halt->halt_reason + ")"};
  if (exit.signal != 0)
    return {"killed", "the agent was killed by signal " + std::to_string(exit.signal)};
  if (exit.status == 0) return {"complete", "the agent exited with status 0"};
  return {"failed", "the agent exited with status " + std::to_string(exit.status)};
}

// Said when files changed in a run whose agent sent no hook event (with the adapter's
// hint at why).
constexpr const char* kNotReporting =
    "the agent changed files but its hooks never reached shadowbox: none of its tool calls "
    "were checkpointed one by one and none of them can be rolled back alone (the run's "
    "first and last checkpoints hold the files before and after). ";

// Preserves the agent's session data; a failure goes to the run's log (the next
// boundary tries again).
void preserve_logged(runs::HomePreserver& preserver, const fsnap::Store& store,
                     const std::string& run) {
  try {
    preserver.preserve();
  } catch (const std::exception& e) {
    runs::append_run_log(
        store, run,
        std::string("warning: could not preserve the agent's session data: ") + e.what());
  }
}

// Answers hook events inside this process (hooks.transport: http): the workspace stays
// open and watched between events, and each event costs one loopback request.
class InProcessHooks {
 public:
  // With preserve_at_events, the agent's session data is preserved after each event.
  InProcessHooks(runs::LedgerRun& run, runs::HomePreserver& preserver, HookOptions options,
                 HookServer::TelemetryHandler telemetry, bool preserve_at_events,
                 fleet::FleetMember* fleet)
      : run_(run),
        preserver_(preserver),
        options_(std::move(options)),
        fleet_(fleet),
        server_([this](const std::string& event) { return answer(event); },
                [this, preserve_at_events](const HttpHookReply&) {
                  if (preserve_at_events) preserve();
                },
                std::move(telemetry)) {}

  const std::string& url() const { return server_.url(); }
  const std::string& telemetry_url() const { return server_.telemetry_url(); }
  // Answers no more events (the agent is gone); waits for one being answered.
  void stop() { server_.stop(); }
  // Preserves the agent's session data between events (a conversation goes on between
  // tool calls, too).
  void preserve_between_events() {
    server_.exclusive([this] { preserve(); });
  }
  // Runs f between events.
  void exclusive(const std::function<void()>& f) { server_.exclusive(f); }

 private:
  HttpHookReply answer(const std::string& event) {
    // (An event that cannot be read is answered as one that could not be recorded: a
    // call about to run is denied, and the gap is in the run's log.)
    HttpHookReply reply;
    try {
      reply = to_http_reply(handle_claude_code_event(event, run_, options_));
    } catch (const std::exception& e) {
      // (It answers every failure itself.) Whatever failed, the answer blocks: a 5xx
      // would be a non-blocking error to Claude Code.
      HookAnswer answer = unreadable_event_answer(event, std::string("not recorded: ") + e.what());
      runs::record_gap(run_.store().dir(), run_.run(), answer.stderr_text);
      return to_http_reply(answer);
    }
    // To the fleet's remote (fleet.push sync: before the agent hears back).
    if (fleet_ != nullptr) fleet_->boundary_recorded();
    return reply;
  }

  // The agent's session data, preserved at every boundary (after the reply: the agent
  // need not wait for it, and the next event waits until it is done).
  void preserve() { preserve_logged(preserver_, run_.store(), run_.run()); }

  runs::LedgerRun& run_;
  runs::HomePreserver& preserver_;
  HookOptions options_;
  fleet::FleetMember* fleet_;  // null outside a fleet
  HookServer server_;          // last: stops before what it uses goes
};

// The maintenances of the store this run started (AgentRunSpec::maintain_detached)
// while its agent ran: they are this process's children (it is a subreaper), spared
// when the agent's tree is ended, and reaped here once they have exited — until then
// their pids stay theirs, so that no process of the agent can be given one.
class MaintenanceHelpers {
 public:
  void add(pid_t pid) {
    if (pid > 0) pids_.push_back(pid);
  }
  // Reaps those that have exited (or are not this process's children).
  void reap() {
    std::erase_if(pids_, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
  }
  const std::vector<pid_t>& pids() const { return pids_; }

 private:
  std::vector<pid_t> pids_;
};

// Ends the agent's process tree, the maintenances in spared excepted. Hook processes in
// it finish the step they are in first (`shadowbox hook` defers SIGTERM until its step
// is recorded).
void end_agent_tree(AgentProcess& agent, const AgentRunSpec& spec,
                    const std::vector<pid_t>& spared) {
  TreeEnding ending = agent.end_tree(spec.config.policy.kill_grace, spared);
  if (!ending.all_gone && spec.warn) spec.warn("some of the agent's processes survived SIGKILL");
}

// Supervises the agent until it has exited: a HaltRequest, or the run's time running
// out, ends its process tree (AgentSupervisor decides when); once it has exited,
// whatever it left running is ended — but the run's own maintenances (helpers). Returns
// the halt that stopped it, if one did.
std::optional<runs::HaltRequest> supervise(AgentProcess& agent, const AgentRunSpec& spec,
                                           std::optional<policy::TimePoint> deadline,
                                           const std::string& timeout_reason,
                                           const std::function<void()>& tick,
                                           const MaintenanceHelpers& helpers) {
  AgentSupervisor supervisor({spec.config.policy.kill_grace, deadline, timeout_reason},
                             {[&] { return runs::pending_halt(spec.store, spec.run); },
                              [&](const runs::HaltRequest& request) {
                                try {
                                  runs::request_halt(spec.store, spec.run, request);
                                } catch (const std::exception&) {
                                  // The request is this process's own; the file only tells others.
                                }
                              }},
                             std::make_shared<SteadyWallClock>(), spec.inform);
  while (!agent.wait_for(milliseconds(100))) {
    tick();
    if (supervisor.tick()) end_agent_tree(agent, spec, helpers.pids());
  }
  std::optional<runs::HaltRequest> halt = supervisor.finish();
  // Nothing the agent started outlives it, however it ended (killed with SIGKILL too):
  // a tool process left running would change the workspace after the run's last
  // checkpoint, unrecorded. Orphans were reparented to its guard or to this process
  // (subreapers both).
  end_agent_tree(agent, spec, helpers.pids());
  return halt;
}

// Makes a timeout or an abort the supervisor carried out part of the run's count (a
// hook that stopped the run has recorded its own reason).
void record_halt(sandbox::ExecutionState& state, const runs::HaltRequest& halt) {
  policy::ExecutionContext* context = state.containment();
  if (context == nullptr) return;
  if (halt.halt_reason == "timeout") context->check_deadline();
  policy::ContainmentState counted = context->state();
  if (!counted.halted_by) context->abort(halt.reason);
  state.record_containment();
}

}  // namespace

std::vector<std::string> loopback_without_proxy() {
  std::vector<std::string> out;
  bool proxied = false;
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
    const char* value = std::getenv(name);
    proxied = proxied || (value != nullptr && *value != '\0');
  }
  if (!proxied) return out;
  for (const char* name : {"NO_PROXY", "no_proxy"}) {
    const char* value = std::getenv(name);
    std::string list = value != nullptr ? value : "";
    out.push_back(std::string(name) + "=" + list + (list.empty() ? "" : ",") + "127.0.0.1");
  }
  return out;
}

std::vector<std::string> telemetry_environment(const std::string& endpoint) {
  return {"CLAUDE_CODE_ENABLE_TELEMETRY=1",
          "OTEL_LOGS_EXPORTER=otlp",
          "OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
          "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=http/json",
          "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=" + endpoint,
          "OTEL_LOGS_EXPORT_INTERVAL=500",
          "OTEL_METRICS_EXPORTER=none",
          "OTEL_TRACES_EXPORTER=none"};
}

namespace {

// One agent run, from its start to its end: run_agent's steps, and what they share.
class AgentRun {
 public:
  explicit AgentRun(AgentRunSpec spec);

  // Starting the run is one saga: when a step fails, those before it are undone in
  // reverse order — the hooks taken out of the agent's settings, the opening boundary
  // followed by a record that the run did not start, the login taken out of its HOME,
  // the run recorded as ended — and nothing is left half-done.
  void start();
  // Until the agent has exited for good (started again while it asks to be).
  void supervise();
  // Records the run's end; how it ended.
  AgentRunResult finish();

 private:
  void warn(const std::string& text) {
    runs::append_run_log(spec_.store, spec_.run, "warning: " + text);
    if (spec_.warn) spec_.warn(text);
  }
  std::function<void(const std::string&)> warner() {
    return [this](const std::string& text) { warn(text); };
  }
  // The agent's cost reported before this run's agent starts: its file's, or what the
  // run's newest session recorded.
  double reported_before(const boost::filesystem::path& cost_file);
  // The saga's steps, each with what undoes it.
  void record_start();
  void record_not_ended();
  void open_boundary();
  void record_not_started();
  void install_hooks();
  void uninstall_hooks();
  void start_agent();
  // The agent, started with agent_argv_ and agent_env_ (again, when it asks to be).
  void launch();
  void save_agent_pid();
  void stop_servers() {
    if (in_process_) in_process_->stop();
    if (telemetry_only_) telemetry_only_->stop();
  }
  // Every second while the agent runs: the fleet followed, the store's maintenance
  // started when due, the login kept in step and the session data preserved (a
  // conversation goes on between tool calls; a crash loses at most a second).
  void while_running();
  void follow_fleet();
  void maintain_when_due();
  // What is left after the agent: late outcomes settled, open calls closed.
  void settle_calls();

  AgentRunSpec spec_;
  runs::LedgerRun run_;
  const AgentAdapter& adapter_;
  std::vector<std::string> secrets_;
  runs::HomePreserver preserver_;
  SpendMeter meter_;
  ReportedCost reported_;
  HookServer::TelemetryHandler telemetry_;
  bool http_ = false;
  runs::PreserveStrategy preserve_;

  std::unique_ptr<PreparedHome> home_;
  std::unique_ptr<InProcessHooks> in_process_;
  statekit::Subscription containment_news_;
  std::unique_ptr<HookServer> telemetry_only_;
  std::string telemetry_url_;
  // Held while this process supervises the run; the agent's guard keeps a part until
  // its tree has ended, whatever becomes of this process (hooks/run_processes.hpp).
  std::optional<RunProcessLocks> processes_;
  // This process's stderr while an interactive agent owns the terminal; held once the
  // agent has the terminal as its own stderr.
  std::unique_ptr<HeldStderr> held_;
  std::unique_ptr<AgentProcess> agent_;
  std::vector<std::string> agent_argv_, agent_env_;  // what the agent was started with
  std::string opening_commit_;
  std::string start_failure_;
  AgentRunResult result_;

  std::chrono::steady_clock::time_point last_tick_ = std::chrono::steady_clock::now();
  // The store is packed beside the agent, by a process of its own (no tool boundary
  // waits, and no end of the run either), when maintenance is due.
  MaintenanceHelpers maintenances_;
  std::chrono::steady_clock::time_point last_maintenance_check_ = last_tick_;
  // How often the session data is preserved while the agent runs (run.preserve), if at
  // all.
  std::optional<std::chrono::seconds> preserve_every_;
  std::chrono::steady_clock::time_point last_preserved_ = last_tick_;
  // A run this worker lost: recorded once; the agent's tree ended if it has not stopped
  // (told so at its next tool call) within the lease's time.
  std::optional<std::chrono::steady_clock::time_point> lost_at_;
  bool lost_ended_ = false;
  std::string refs_seen_;  // the run's checkpoints and HOME as last handed to the fleet
};

// What the supervisor does is in the run's log too (the person may see it only once the
// agent has exited: HeldStderr).
AgentRunSpec logging_what_it_does(AgentRunSpec spec) {
  if (spec.inform) {
    spec.inform = [inform = spec.inform, store = spec.store,
                   run = spec.run](const std::string& text) {
      runs::append_run_log(store, run, text);
      inform(text);
    };
  }
  return spec;
}

AgentRun::AgentRun(AgentRunSpec spec)
    : spec_(logging_what_it_does(std::move(spec))),
      run_(spec_.store,
           {spec_.config.capture, spec_.config.rollback.policy(), spec_.run,
            fsnap::HostEnv{spec_.repo, nullptr, nullptr}, std::nullopt,
            runs::secret_values(spec_.config.run.secrets), spec_.config.session_windows}),
      adapter_(adapter_for(recorded_agent_kind(spec_.meta.agent, spec_.meta.command))),
      secrets_(runs::secret_values(spec_.config.run.secrets)),
      preserver_(spec_.store, run_.repo(), spec_.run, spec_.home, adapter_.preserved_parts(),
                 secrets_),
      // The agent's cost: its transcripts, and its own reports (OpenTelemetry), which go
      // on from what the run's earlier agents reported.
      meter_(spec_.config.policy.prices,
             fsnap::layout::agent_cost_file(spec_.store.dir(), spec_.run)),
      reported_(fsnap::layout::agent_cost_file(spec_.store.dir(), spec_.run),
                reported_before(fsnap::layout::agent_cost_file(spec_.store.dir(), spec_.run))),
      // run.capture_state off: nothing of the agent's session data enters the store.
      preserve_(spec_.config.run.capture_state ? spec_.config.run.preserve
                                               : runs::PreserveStrategy::kOnDemand) {
  spec_.meta.agent = adapter_.name();
  spec_.meta.capture_state = spec_.config.run.capture_state;
  const runs::PolicySettings& policy = spec_.config.policy;
  contain_run(run_, spec_.config, policy.limits.overridden_by(spec_.meta.limits));
  runs::clear_halt(spec_.store, spec_.run);
  // A run whose supervisor was killed may have left its login and the user's carried
  // configuration behind.
  remove_stale_credentials(spec_.store);
  remove_stale_carried(spec_.store);
  // The run's own boundaries (its opening and closing ones) bring its spend up to date,
  // as its hooks' do: after a crash, the opening boundary of the resume counts what the
  // agent spent after the last boundary the crashed run recorded.
  run_.transactions().set_step_hook([this] {
    sandbox::Session& s = run_.state().session();
    for (const std::string& model :
         meter_.update(s, run_.state().containment(), run_transcripts(s, {}))) {
      warn(unpriced_model_warning(model));
    }
  });
  if (policy.telemetry && adapter_.reports_cost()) {
    telemetry_ = [this](const std::string& body) { reported_.add_export(body); };
  }
  http_ = spec_.config.hooks.transport == "http" && adapter_.http_hooks();
  if (http_) {
    try {
      run_.workspace().watch([this](const std::string& advice) { warn(advice); });
    } catch (const fsnap::Error& e) {
      warn(std::string(e.what()) + "; every tool boundary will look at the whole workspace");
    }
  }
  if (preserve_ == runs::PreserveStrategy::kOnToolUse) {
    preserve_every_ = std::chrono::seconds(1);
  }
  if (preserve_ == runs::PreserveStrategy::kPeriodic) {
    preserve_every_ = spec_.config.run.preserve_interval;
  }
}

double AgentRun::reported_before(const boost::filesystem::path& cost_file) {
  double before = read_reported_cost(cost_file);
  if (std::optional<sandbox::LedgerRecord> latest = run_.ledger().latest(spec_.run);
      latest && latest->has_session()) {
    if (std::optional<AgentSpend> spend = agent_spend(run_.ledger().session(*latest))) {
      before = std::max(before, spend->reported_usd);
    }
  }
  return before;
}

void AgentRun::start() {
  statekit::Saga start("start of run " + spec_.run, [this](const statekit::SagaEvent& e) {
    if (e.kind == statekit::SagaEvent::Kind::kStepFailed) start_failure_ = e.error;
  });
  std::shared_ptr<fleet::FleetMember>& member = spec_.fleet;
  if (member || spec_.config.fleet.enabled()) {
    start.step<void>(
        "fleet lease",
        [&](statekit::SagaContext&) {
          // Before anything is written for the run: another worker may own it.
          if (!member) {
            member = join_fleet(spec_.store, spec_.config, spec_.run, spec_.workspace.string(),
                                fleet::FleetMember::Join::kClaim, warner());
          }
        },
        [&] {
          if (member) member->finish();
        });
  }
  start.step<void>(
      "run record", [this](statekit::SagaContext&) { record_start(); },
      [this] { record_not_ended(); });
  start.step<void>(
      "agent home",
      [this](statekit::SagaContext&) {
        home_ = adapter_.prepare_home(
            {spec_.home, spec_.workspace, spec_.user, spec_.config.run.home, warner(),
             fsnap::layout::agent_answers_file(spec_.store.dir(), adapter_.name())});
        record_carried(spec_.home, home_->carried());
      },
      [this] {
        home_->finish();
        forget_carried(spec_.home);
      });
  start.step<void>(
      "opening boundary", [this](statekit::SagaContext&) { open_boundary(); },
      [this] { record_not_started(); });
  start.step<void>(
      "hooks", [this](statekit::SagaContext&) { install_hooks(); }, [this] { uninstall_hooks(); });
  start.step<void>("agent", [this](statekit::SagaContext&) { start_agent(); });
  start.run();
  save_agent_pid();
}

void AgentRun::record_start() {
  // Refused while a process of the run lives: another supervisor, or the agent of one
  // that died, still being ended.
  processes_ = RunProcessLocks::take(spec_.store, spec_.run);
  // The run is running from here on (others' clean-ups leave its HOME alone).
  runs::RunMeta& meta = spec_.meta;
  meta.pid = ::getpid();
  meta.home = spec_.home.string();
  meta.exit_code.reset();
  meta.ended_at.clear();
  meta.save(spec_.store);
}

void AgentRun::record_not_ended() {
  spec_.meta.exit_code = 127;
  spec_.meta.ended_at = now_text();
  spec_.meta.save(spec_.store);
}

void AgentRun::open_boundary() {
  // The workspace as the agent finds it. (When watched, this capture walks the tree; the
  // ones at tool boundaries don't.)
  opening_commit_ = run_.transactions()
                        .checkpoint(
                            {"", fsnap::Phase::kCheckpoint, "", "", spec_.run},
                            [this](sandbox::Session& s) {
                              // What the run counted goes on; a stop, an abort and the
                              // clock start afresh.
                              run_.state().restart_containment(/*keep_count=*/true);
                              runs::record_run_start(s, spec_.start_summary);
                            },
                            spec_.start_summary)
                        .boundary.record.commit;
}

void AgentRun::record_not_started() {
  std::string reason = "the run could not start: " + start_failure_;
  run_.transactions().checkpoint(
      {"", fsnap::Phase::kCheckpoint, "", "", spec_.run},
      [&](sandbox::Session& s) {
        runs::record_run_status(s, {"failed", reason});
      },
      reason);
}

void AgentRun::install_hooks() {
  if (!http_) {
    adapter_.install_hooks(spec_.home, {spec_.hook_command, ""});
    if (telemetry_) {
      telemetry_only_ = std::make_unique<HookServer>(nullptr, nullptr, telemetry_);
      telemetry_url_ = telemetry_only_->telemetry_url();
    }
    return;
  }
  in_process_ = std::make_unique<InProcessHooks>(
      run_, preserver_,
      HookOptions{secrets_, &meter_, /*supervised=*/true, warner(), spec_.resumed_session},
      telemetry_, preserve_ == runs::PreserveStrategy::kOnToolUse, spec_.fleet.get());
  adapter_.install_hooks(spec_.home, {spec_.hook_command, in_process_->url()});
  telemetry_url_ = in_process_->telemetry_url();
  // The hooks are answered in this process: containment's decisions reach the user as
  // they are made, not only when the run ends.
  if (spec_.inform) {
    containment_news_ = run_.transactions().events().safety.subscribe(
        [inform = spec_.inform](const policy::SafetyEvent& e) {
          inform("containment (" + std::string(policy::halt_reason_name(e.type)) +
                 "): " + e.reason +
                 (policy::stops_run(e.type) ? "; stopping the run" : "; the run goes on"));
        });
  }
}

void AgentRun::uninstall_hooks() {
  containment_news_ = {};
  stop_servers();
  adapter_.uninstall_hooks(spec_.home);
}

void AgentRun::start_agent() {
  std::vector<std::string> extra = {"HOME=" + spec_.home.string(), "SHADOWBOX_RUN=" + spec_.run,
                                    "SHADOWBOX_RUN_HOME=" + spec_.home.string(),
                                    "SHADOWBOX_NO_PROGRESS=1"};
  for (std::string& v : adapter_.environment(spec_.home)) extra.push_back(std::move(v));
  extra.insert(extra.end(), spec_.env.begin(), spec_.env.end());
  for (std::string& v : loopback_without_proxy()) extra.push_back(std::move(v));
  if (!telemetry_url_.empty()) {
    for (std::string& v : telemetry_environment(telemetry_url_)) extra.push_back(std::move(v));
  }
  // The agent's configuration is the run's HOME, never the user's own.
  std::vector<std::string> names = spec_.config.run.env;
  std::vector<std::string> withheld = adapter_.withheld_variables();
  std::erase_if(names, [&](const std::string& name) {
    return std::find(withheld.begin(), withheld.end(), name) != withheld.end();
  });
  try {
    become_subreaper();
  } catch (const std::exception& e) {
    warn(std::string(e.what()) + "; processes the agent leaves behind may outlive a stopped run");
  }
  agent_argv_ = adapter_.run_argv(spec_.argv);
  agent_env_ = agent_environment(names, extra);
  launch();
}

void AgentRun::launch() {
  agent_ = std::make_unique<AgentProcess>(
      agent_argv_, spec_.workspace, agent_env_,
      AgentGuardOptions{spec_.config.policy.kill_grace, processes_->tree_fd()});
  if (agent_may_own_terminal(STDIN_FILENO, STDERR_FILENO)) {
    held_ = HeldStderr::start(fsnap::layout::run_dir(spec_.store.dir(), spec_.run));
  }
}

void AgentRun::save_agent_pid() {
  spec_.meta.agent_pid = agent_->pid();
  try {
    spec_.meta.save(spec_.store);
  } catch (const std::exception& e) {
    warn(e.what());
  }
}

void AgentRun::supervise() {
  std::optional<policy::TimePoint> deadline = run_.state().containment()->deadline();
  std::string timeout_reason = "the run's time is up";
  std::optional<std::chrono::seconds> timeout =
      spec_.config.policy.limits.overridden_by(spec_.meta.limits).timeout;
  if (timeout) timeout_reason += " (timeout " + std::to_string(timeout->count()) + " s)";
  auto tick = [this] { while_running(); };
  result_.halt = hooks::supervise(*agent_, spec_, deadline, timeout_reason, tick, maintenances_);
  // An agent whose own launcher would start it again (the same command line) is started
  // again by its supervisor, the run going on — a few times in a row at most.
  for (int again = 0; again < 3 && !result_.halt; ++again) {
    std::optional<AgentExit> exit = agent_->exit();
    if (!exit || exit->signal != 0 || !adapter_.asks_to_start_again(exit->status)) break;
    if (spec_.inform) spec_.inform("the agent asked to be started again; starting it again");
    held_.reset();  // its screen is gone; the next one gets the terminal, not the held file
    try {
      launch();
    } catch (const std::exception& e) {
      warn(std::string("could not start the agent again: ") + e.what());
      break;
    }
    save_agent_pid();
    result_.halt = hooks::supervise(*agent_, spec_, deadline, timeout_reason, tick, maintenances_);
  }
}

void AgentRun::follow_fleet() {
  fleet::FleetMember* member = spec_.fleet.get();
  if (member == nullptr) return;
  if (!member->lost()) {
    // Command hooks record boundaries in other processes: what they wrote (or the HOME
    // preserved here) goes to the fleet once it is there.
    if (in_process_) return;
    std::string refs = run_.repo()->ref_target(fsnap::layout::run_ref(spec_.run)).value_or("") +
                       run_.repo()->ref_target(fsnap::layout::home_ref(spec_.run)).value_or("");
    if (refs != refs_seen_) member->boundary_recorded();
    refs_seen_ = refs;
    return;
  }
  if (!lost_at_) {
    lost_at_ = std::chrono::steady_clock::now();
    if (spec_.inform) {
      spec_.inform("stopping the agent: worker " + member->lost_to() + " took the run over");
    }
    auto record = [&] { record_lost_run(run_, spec_.config, member->lost_to()); };
    try {
      if (in_process_) {
        in_process_->exclusive(record);
      } else {
        record();
      }
    } catch (const std::exception& e) {
      warn(std::string("could not record the loss of the run: ") + e.what());
    }
  } else if (!lost_ended_ &&
             std::chrono::steady_clock::now() - *lost_at_ >= spec_.config.fleet.lease_ttl) {
    lost_ended_ = true;
    try {
      runs::request_halt(
          spec_.store, spec_.run,
          {"aborted", "aborted: worker " + member->lost_to() + " took the run over", false});
    } catch (const std::exception& e) {
      warn(e.what());
    }
  }
}

void AgentRun::maintain_when_due() {
  maintenances_.reap();
  if (!spec_.config.auto_maintenance || !spec_.maintain_detached) return;
  if (std::chrono::steady_clock::now() - last_maintenance_check_ < std::chrono::seconds(10)) {
    return;
  }
  last_maintenance_check_ = std::chrono::steady_clock::now();
  maintenances_.add(spec_.maintain_detached(/*run_ended=*/false));
}

void AgentRun::while_running() {
  if (std::chrono::steady_clock::now() - last_tick_ < std::chrono::seconds(1)) return;
  last_tick_ = std::chrono::steady_clock::now();
  follow_fleet();
  maintain_when_due();
  home_->tick();
  if (!preserve_every_ || last_tick_ - last_preserved_ < *preserve_every_) return;
  last_preserved_ = last_tick_;
  if (in_process_) {
    in_process_->preserve_between_events();
  } else {
    preserve_logged(preserver_, spec_.store, spec_.run);
  }
}

void AgentRun::settle_calls() {
  try {
    // A call whose outcome the agent wrote after its last hook event ends as it says.
    settle_late_outcomes(adapter_, run_, run_transcripts(run_.state().session(), {}),
                         HookOptions{secrets_, &meter_, /*supervised=*/true, warner(), ""});
  } catch (const std::exception& e) {
    warn(std::string("could not end the calls whose outcome the agent wrote last: ") + e.what());
  }
  try {
    // A call the agent began and never reported (the agent ended first) does not stay
    // open.
    run_.transactions().close_open_calls(
        "the agent ended before the call reported an outcome (it may or may not have run)");
  } catch (const std::exception& e) {
    warn(std::string("could not close the calls the agent left open: ") + e.what());
  }
}

AgentRunResult AgentRun::finish() {
  // The agent has exited (for good): what was said meanwhile, to the terminal.
  held_.reset();
  result_.exit = agent_->exit().value_or(AgentExit{1, 0});
  agent_.reset();
  // No event is answered after this (the one in flight, if any, is waited for): from
  // here on this thread alone uses the run and its repository.
  stop_servers();
  // Whatever happened: keep the agent's session data (unless only asked for), and the
  // files as they are now.
  if (preserve_ != runs::PreserveStrategy::kOnDemand) {
    try {
      preserver_.preserve_now();
    } catch (const std::exception& e) {
      warn(std::string("could not preserve the agent's session data: ") + e.what());
    }
  }
  home_->finish();
  forget_carried(spec_.home);
  settle_calls();
  // A hook event records a checkpoint: none since the opening one means the agent
  // reported nothing.
  std::vector<fsnap::Checkpoint> newest = run_.repo()->log(spec_.run, 1);
  bool agent_reported = !newest.empty() && newest.front().commit != opening_commit_;
  result_.agent_reported = agent_reported;
  runs::RunStatus status = status_of(result_.exit, result_.halt);
  sandbox::StepResult closing = run_.transactions().checkpoint(
      {"", fsnap::Phase::kCheckpoint, "", "", spec_.run},
      [&](sandbox::Session& s) {
        if (result_.halt) record_halt(run_.state(), *result_.halt);
        run_.state().record_containment();
        runs::record_run_status(s, status);
      },
      status.reason);
  if (!agent_reported && run_.repo()->read_checkpoint(opening_commit_).tree !=
                             run_.repo()->read_checkpoint(closing.boundary.record.commit).tree) {
    warn(kNotReporting + adapter_.silent_hooks_hint());
  }
  run_.transactions().set_step_hook(nullptr);
  spec_.meta.exit_code = result_.exit.code();
  spec_.meta.ended_at = now_text();
  spec_.meta.save(spec_.store);
  // The run's end to the fleet: its last checkpoints, its record, the lease released.
  if (spec_.fleet) spec_.fleet->finish();
  // The run has ended: what it left loose is packed, and the retention limits applied
  // (this run is finished, so to it too), by a maintenance of its own that `run` does
  // not wait for.
  if (spec_.config.auto_maintenance && spec_.maintain_detached) {
    spec_.maintain_detached(/*run_ended=*/true);
  }
  return result_;
}

}  // namespace

AgentRunResult run_agent(AgentRunSpec spec) {
  AgentRun run(std::move(spec));
  run.start();
  run.supervise();
  return run.finish();
}

}  // namespace hooks
