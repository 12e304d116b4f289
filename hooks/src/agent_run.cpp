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
#include "hooks/agent_spend.hpp"
#include "hooks/agent_supervisor.hpp"
#include "hooks/claude_code_state.hpp"
#include "hooks/fleet_run.hpp"
#include "hooks/held_stderr.hpp"
#include "hooks/home_leftovers.hpp"
#include "hooks/hook_server.hpp"
#include "hooks/process_tree.hpp"
#include "hooks/reported_cost.hpp"
#include "hooks/run_policy.hpp"
#include "hooks/run_processes.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/home_preservation.hpp"
#include "sandbox/ledger_run.hpp"
#include "sandbox/redaction.hpp"
#include "sandbox/saga.hpp"

namespace hooks {

namespace {

using std::chrono::milliseconds;

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
}

// How the agent's end is recorded.
sandbox::RunStatus status_of(const AgentExit& exit,
                             const std::optional<sandbox::HaltRequest>& halt) {
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
void preserve_logged(sandbox::HomePreserver& preserver, const fsnap::Store& store,
                     const std::string& run) {
  try {
    preserver.preserve();
  } catch (const std::exception& e) {
    sandbox::append_run_log(
        store, run,
        std::string("warning: could not preserve the agent's session data: ") + e.what());
  }
}

// Answers hook events inside this process (hooks.transport: http): the workspace stays
// open and watched between events, and each event costs one loopback request.
class InProcessHooks {
 public:
  // With preserve_at_events, the agent's session data is preserved after each event.
  InProcessHooks(sandbox::LedgerRun& run, sandbox::HomePreserver& preserver, HookOptions options,
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
      sandbox::record_gap(run_.store().dir(), run_.run(), answer.stderr_text);
      return to_http_reply(answer);
    }
    // To the fleet's remote (fleet.push sync: before the agent hears back).
    if (fleet_ != nullptr) fleet_->boundary_recorded();
    return reply;
  }

  // The agent's session data, preserved at every boundary (after the reply: the agent
  // need not wait for it, and the next event waits until it is done).
  void preserve() { preserve_logged(preserver_, run_.store(), run_.run()); }

  sandbox::LedgerRun& run_;
  sandbox::HomePreserver& preserver_;
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
std::optional<sandbox::HaltRequest> supervise(AgentProcess& agent, const AgentRunSpec& spec,
                                              std::optional<policy::TimePoint> deadline,
                                              const std::string& timeout_reason,
                                              const std::function<void()>& tick,
                                              const MaintenanceHelpers& helpers) {
  AgentSupervisor supervisor({spec.config.policy.kill_grace, deadline, timeout_reason},
                             {[&] { return sandbox::pending_halt(spec.store, spec.run); },
                              [&](const sandbox::HaltRequest& request) {
                                try {
                                  sandbox::request_halt(spec.store, spec.run, request);
                                } catch (const std::exception&) {
                                  // The request is this process's own; the file only tells others.
                                }
                              }},
                             std::make_shared<SteadyWallClock>(), spec.inform);
  while (!agent.wait_for(milliseconds(100))) {
    tick();
    if (supervisor.tick()) end_agent_tree(agent, spec, helpers.pids());
  }
  std::optional<sandbox::HaltRequest> halt = supervisor.finish();
  // Nothing the agent started outlives it, however it ended (killed with SIGKILL too):
  // a tool process left running would change the workspace after the run's last
  // checkpoint, unrecorded. Orphans were reparented to its guard or to this process
  // (subreapers both).
  end_agent_tree(agent, spec, helpers.pids());
  return halt;
}

// Makes a timeout or an abort the supervisor carried out part of the run's count (a
// hook that stopped the run has recorded its own reason).
void record_halt(sandbox::ExecutionState& state, const sandbox::HaltRequest& halt) {
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

AgentRunResult run_agent(AgentRunSpec spec) {
  auto warn = [&](const std::string& text) {
    sandbox::append_run_log(spec.store, spec.run, "warning: " + text);
    if (spec.warn) spec.warn(text);
  };
  if (spec.inform) {
    // What the supervisor does is in the run's log too (the person may see it only once
    // the agent has exited: HeldStderr).
    spec.inform = [inform = spec.inform, store = spec.store,
                   run = spec.run](const std::string& text) {
      sandbox::append_run_log(store, run, text);
      inform(text);
    };
  }
  sandbox::LedgerRun run(
      spec.store, {spec.config.capture, spec.config.hooks.policy(), spec.run,
                   fsnap::HostEnv{spec.repo, nullptr, nullptr}, std::nullopt,
                   sandbox::secret_values(spec.config.run.secrets), spec.config.session_windows});
  const AgentAdapter& adapter =
      adapter_for(recorded_agent_kind(spec.meta.agent, spec.meta.command));
  spec.meta.agent = adapter.name();
  const sandbox::PolicySettings& policy = spec.config.policy;
  contain_run(run, spec.config, policy.limits.overridden_by(spec.meta.limits));
  std::vector<std::string> secrets = sandbox::secret_values(spec.config.run.secrets);
  sandbox::HomePreserver preserver(spec.store, run.repo(), spec.run, spec.home,
                                   adapter.preserved_parts(), secrets);
  sandbox::clear_halt(spec.store, spec.run);
  // A run whose supervisor was killed may have left its login and the user's carried
  // configuration behind.
  remove_stale_credentials(spec.store);
  remove_stale_carried(spec.store);

  // The agent's cost: its transcripts, and its own reports (OpenTelemetry), which go on
  // from what the run's earlier agents reported.
  boost::filesystem::path cost_file = fsnap::layout::agent_cost_file(spec.store.dir(), spec.run);
  SpendMeter meter(policy.prices, cost_file);
  double reported_before = read_reported_cost(cost_file);
  if (std::optional<sandbox::LedgerRecord> latest = run.ledger().latest(spec.run);
      latest && latest->has_session()) {
    if (std::optional<AgentSpend> spend = agent_spend(run.ledger().session(*latest))) {
      reported_before = std::max(reported_before, spend->reported_usd);
    }
  }
  ReportedCost reported(cost_file, reported_before);
  // The run's own boundaries (its opening and closing ones) bring its spend up to date,
  // as its hooks' do: after a crash, the opening boundary of the resume counts what the
  // agent spent after the last boundary the crashed run recorded.
  run.transactions().set_step_hook([&] {
    sandbox::Session& s = run.state().session();
    for (const std::string& model :
         meter.update(s, run.state().containment(), run_transcripts(s, {}))) {
      warn(unpriced_model_warning(model));
    }
  });
  HookServer::TelemetryHandler telemetry;
  if (policy.telemetry && adapter.reports_cost()) {
    telemetry = [&reported](const std::string& body) { reported.add_export(body); };
  }
  bool http = spec.config.hooks.transport == "http" && adapter.http_hooks();
  sandbox::PreserveStrategy preserve = spec.config.run.preserve;
  if (http) {
    try {
      run.workspace().watch();
    } catch (const fsnap::Error& e) {
      warn(std::string(e.what()) + "; every tool boundary will look at the whole workspace");
    }
  }

  // Starting the run is one saga: when a step fails, those before it are undone in
  // reverse order — the hooks taken out of the agent's settings, the opening boundary
  // followed by a record that the run did not start, the login taken out of its HOME,
  // the run recorded as ended — and nothing is left half-done.
  sandbox::RunMeta& meta = spec.meta;
  std::unique_ptr<PreparedHome> home;
  std::unique_ptr<InProcessHooks> in_process;
  sandbox::Subscription containment_news;
  std::unique_ptr<HookServer> telemetry_only;
  std::string telemetry_url;
  auto stop_servers = [&] {
    if (in_process) in_process->stop();
    if (telemetry_only) telemetry_only->stop();
  };
  // Held while this process supervises the run; the agent's guard keeps a part until
  // its tree has ended, whatever becomes of this process (hooks/run_processes.hpp).
  std::optional<RunProcessLocks> processes;
  // This process's stderr while an interactive agent owns the terminal; held once the
  // agent has the terminal as its own stderr.
  std::unique_ptr<HeldStderr> held;
  auto hold_stderr = [&] {
    if (agent_may_own_terminal(STDIN_FILENO, STDERR_FILENO)) {
      held = HeldStderr::start(fsnap::layout::run_dir(spec.store.dir(), spec.run));
    }
  };
  std::unique_ptr<AgentProcess> agent;
  std::vector<std::string> agent_argv, agent_env;  // what the agent was started with
  std::string opening_commit;
  std::string start_failure;
  sandbox::Saga start("start of run " + spec.run, [&](const sandbox::SagaEvent& e) {
    if (e.kind == sandbox::SagaEvent::Kind::kStepFailed) start_failure = e.error;
  });
  std::shared_ptr<fleet::FleetMember>& member = spec.fleet;
  if (member || spec.config.fleet.enabled()) {
    start.step<void>(
        "fleet lease",
        [&](sandbox::SagaContext&) {
          // Before anything is written for the run: another worker may own it.
          if (!member) {
            member = join_fleet(spec.store, spec.config, spec.run, spec.workspace.string(),
                                fleet::FleetMember::Join::kClaim, warn);
          }
        },
        [&] {
          if (member) member->finish();
        });
  }
  start.step<void>(
      "run record",
      [&](sandbox::SagaContext&) {
        // Refused while a process of the run lives: another supervisor, or the agent of
        // one that died, still being ended.
        processes = RunProcessLocks::take(spec.store, spec.run);
        // The run is running from here on (others' clean-ups leave its HOME alone).
        meta.pid = ::getpid();
        meta.home = spec.home.string();
        meta.exit_code.reset();
        meta.ended_at.clear();
        meta.save(spec.store);
      },
      [&] {
        meta.exit_code = 127;
        meta.ended_at = now_text();
        meta.save(spec.store);
      });
  start.step<void>(
      "agent home",
      [&](sandbox::SagaContext&) {
        home = adapter.prepare_home(
            {spec.home, spec.workspace, spec.user, spec.config.run.home, warn,
             fsnap::layout::agent_answers_file(spec.store.dir(), adapter.name())});
        record_carried(spec.home, home->carried());
      },
      [&] {
        home->finish();
        forget_carried(spec.home);
      });
  start.step<void>(
      "opening boundary",
      [&](sandbox::SagaContext&) {
        // The workspace as the agent finds it. (When watched, this capture walks the
        // tree; the ones at tool boundaries don't.)
        opening_commit = run.transactions()
                             .checkpoint(
                                 {"", fsnap::Phase::kCheckpoint, "", "", spec.run},
                                 [&](sandbox::Session& s) {
                                   // What the run counted goes on; a stop, an abort and the clock
                                   // start afresh.
                                   run.state().restart_containment(/*keep_count=*/true);
                                   sandbox::record_run_start(s, spec.start_summary);
                                 },
                                 spec.start_summary)
                             .boundary.record.commit;
      },
      [&] {
        std::string reason = "the run could not start: " + start_failure;
        run.transactions().checkpoint(
            {"", fsnap::Phase::kCheckpoint, "", "", spec.run},
            [&](sandbox::Session& s) {
              sandbox::record_run_status(s, {"failed", reason});
            },
            reason);
      });
  start.step<void>(
      "hooks",
      [&](sandbox::SagaContext&) {
        if (http) {
          in_process = std::make_unique<InProcessHooks>(
              run, preserver,
              HookOptions{secrets, &meter, /*supervised=*/true, warn, spec.resumed_session},
              telemetry, preserve == sandbox::PreserveStrategy::kOnToolUse, member.get());
          adapter.install_hooks(spec.home, {spec.hook_command, in_process->url()});
          telemetry_url = in_process->telemetry_url();
          // The hooks are answered in this process: containment's decisions reach the
          // user as they are made, not only when the run ends.
          if (spec.inform) {
            containment_news = run.transactions().events().safety.subscribe(
                [inform = spec.inform](const policy::SafetyEvent& e) {
                  inform(
                      "containment (" + std::string(policy::halt_reason_name(e.type)) +
                      "): " + e.reason +
                      (policy::stops_chain(e.type) ? "; stopping the run" : "; the run goes on"));
                });
          }
        } else {
          adapter.install_hooks(spec.home, {spec.hook_command, ""});
          if (telemetry) {
            telemetry_only = std::make_unique<HookServer>(nullptr, nullptr, telemetry);
            telemetry_url = telemetry_only->telemetry_url();
          }
        }
      },
      [&] {
        containment_news = {};
        stop_servers();
        adapter.uninstall_hooks(spec.home);
      });
  start.step<void>("agent", [&](sandbox::SagaContext&) {
    std::vector<std::string> extra = {"HOME=" + spec.home.string(), "SHADOWBOX_RUN=" + spec.run,
                                      "SHADOWBOX_RUN_HOME=" + spec.home.string(),
                                      "SHADOWBOX_NO_PROGRESS=1"};
    for (std::string& v : adapter.environment(spec.home)) extra.push_back(std::move(v));
    extra.insert(extra.end(), spec.env.begin(), spec.env.end());
    for (std::string& v : loopback_without_proxy()) extra.push_back(std::move(v));
    if (!telemetry_url.empty()) {
      for (std::string& v : telemetry_environment(telemetry_url)) extra.push_back(std::move(v));
    }
    // The agent's configuration is the run's HOME, never the user's own.
    std::vector<std::string> names = spec.config.run.env;
    std::vector<std::string> withheld = adapter.withheld_variables();
    std::erase_if(names, [&](const std::string& name) {
      return std::find(withheld.begin(), withheld.end(), name) != withheld.end();
    });
    try {
      become_subreaper();
    } catch (const std::exception& e) {
      warn(std::string(e.what()) + "; processes the agent leaves behind may outlive a stopped run");
    }
    agent_argv = adapter.run_argv(spec.argv);
    agent_env = agent_environment(names, extra);
    agent = std::make_unique<AgentProcess>(
        agent_argv, spec.workspace, agent_env,
        AgentGuardOptions{spec.config.policy.kill_grace, processes->tree_fd()});
    hold_stderr();
  });
  start.run();
  std::optional<policy::TimePoint> deadline = run.state().containment()->deadline();
  AgentRunResult result;
  meta.agent_pid = agent->pid();
  try {
    meta.save(spec.store);
  } catch (const std::exception& e) {
    warn(e.what());
  }
  std::string timeout_reason = "the run's time is up";
  std::optional<std::chrono::seconds> timeout =
      policy.limits.overridden_by(spec.meta.limits).timeout;
  if (timeout) timeout_reason += " (timeout " + std::to_string(timeout->count()) + " s)";
  // Every second while the agent runs: its login kept in step, and its session data
  // preserved between tool calls too (a conversation goes on without them; a crash
  // loses at most a second).
  auto last_tick = std::chrono::steady_clock::now();
  // The store is packed beside the agent, by a process of its own (no tool boundary
  // waits, and no end of the run either), when maintenance is due.
  MaintenanceHelpers maintenances;
  auto last_maintenance_check = std::chrono::steady_clock::now();
  auto maintain_when_due = [&] {
    maintenances.reap();
    if (!spec.config.auto_maintenance || !spec.maintain_detached) return;
    if (std::chrono::steady_clock::now() - last_maintenance_check < std::chrono::seconds(10))
      return;
    last_maintenance_check = std::chrono::steady_clock::now();
    maintenances.add(spec.maintain_detached(/*run_ended=*/false));
  };
  // How often the session data is preserved while the agent runs (run.preserve), if at
  // all.
  std::optional<std::chrono::seconds> preserve_every;
  if (preserve == sandbox::PreserveStrategy::kOnToolUse) preserve_every = std::chrono::seconds(1);
  if (preserve == sandbox::PreserveStrategy::kPeriodic) {
    preserve_every = spec.config.run.preserve_interval;
  }
  auto last_preserved = std::chrono::steady_clock::now();
  // A run this worker lost: recorded once; the agent's tree ended if it has not stopped
  // (told so at its next tool call) within the lease's time.
  std::optional<std::chrono::steady_clock::time_point> lost_at;
  bool lost_ended = false;
  std::string refs_seen;  // the run's checkpoints and HOME as last handed to the fleet
  auto follow_fleet = [&] {
    if (!member) return;
    if (!member->lost()) {
      // Command hooks record boundaries in other processes: what they wrote (or the
      // HOME preserved here) goes to the fleet once it is there.
      if (in_process) return;
      std::string refs = run.repo()->ref_target(fsnap::layout::run_ref(spec.run)).value_or("") +
                         run.repo()->ref_target(fsnap::layout::home_ref(spec.run)).value_or("");
      if (refs != refs_seen) member->boundary_recorded();
      refs_seen = refs;
      return;
    }
    if (!lost_at) {
      lost_at = std::chrono::steady_clock::now();
      if (spec.inform)
        spec.inform("stopping the agent: worker " + member->lost_to() + " took the run over");
      auto record = [&] { record_lost_run(run, spec.config, member->lost_to()); };
      try {
        if (in_process) {
          in_process->exclusive(record);
        } else {
          record();
        }
      } catch (const std::exception& e) {
        warn(std::string("could not record the loss of the run: ") + e.what());
      }
    } else if (!lost_ended &&
               std::chrono::steady_clock::now() - *lost_at >= spec.config.fleet.lease_ttl) {
      lost_ended = true;
      try {
        sandbox::request_halt(
            spec.store, spec.run,
            {"aborted", "aborted: worker " + member->lost_to() + " took the run over", false});
      } catch (const std::exception& e) {
        warn(e.what());
      }
    }
  };
  auto while_running = [&] {
    if (std::chrono::steady_clock::now() - last_tick < std::chrono::seconds(1)) return;
    last_tick = std::chrono::steady_clock::now();
    follow_fleet();
    maintain_when_due();
    home->tick();
    if (!preserve_every || last_tick - last_preserved < *preserve_every) return;
    last_preserved = last_tick;
    if (in_process) {
      in_process->preserve_between_events();
    } else {
      preserve_logged(preserver, spec.store, spec.run);
    }
  };
  result.halt = supervise(*agent, spec, deadline, timeout_reason, while_running, maintenances);
  // An agent whose own launcher would start it again (the same command line) is started
  // again by its supervisor, the run going on — a few times in a row at most.
  for (int again = 0; again < 3 && !result.halt; ++again) {
    std::optional<AgentExit> exit = agent->exit();
    if (!exit || exit->signal != 0 || !adapter.asks_to_start_again(exit->status)) break;
    if (spec.inform) spec.inform("the agent asked to be started again; starting it again");
    held.reset();  // its screen is gone; the next one gets the terminal, not the held file
    try {
      agent = std::make_unique<AgentProcess>(
          agent_argv, spec.workspace, agent_env,
          AgentGuardOptions{spec.config.policy.kill_grace, processes->tree_fd()});
      hold_stderr();
    } catch (const std::exception& e) {
      warn(std::string("could not start the agent again: ") + e.what());
      break;
    }
    meta.agent_pid = agent->pid();
    try {
      meta.save(spec.store);
    } catch (const std::exception& e) {
      warn(e.what());
    }
    result.halt = supervise(*agent, spec, deadline, timeout_reason, while_running, maintenances);
  }
  // The agent has exited (for good): what was said meanwhile, to the terminal.
  held.reset();
  result.exit = agent->exit().value_or(AgentExit{1, 0});
  agent.reset();
  // No event is answered after this (the one in flight, if any, is waited for): from
  // here on this thread alone uses the run and its repository.
  stop_servers();
  // Whatever happened: keep the agent's session data (unless only asked for), and the
  // files as they are now.
  if (preserve != sandbox::PreserveStrategy::kOnDemand) {
    try {
      preserver.preserve_now();
    } catch (const std::exception& e) {
      warn(std::string("could not preserve the agent's session data: ") + e.what());
    }
  }
  home->finish();
  forget_carried(spec.home);
  try {
    // A call whose outcome the agent wrote after its last hook event ends as it says.
    settle_late_outcomes(adapter, run, run_transcripts(run.state().session(), {}),
                         HookOptions{secrets, &meter, /*supervised=*/true, warn, ""});
  } catch (const std::exception& e) {
    warn(std::string("could not end the calls whose outcome the agent wrote last: ") + e.what());
  }
  try {
    // A call the agent began and never reported (the agent ended first) does not stay
    // open.
    run.transactions().close_open_calls(
        "the agent ended before the call reported an outcome (it may or may not have run)");
  } catch (const std::exception& e) {
    warn(std::string("could not close the calls the agent left open: ") + e.what());
  }
  // A hook event records a checkpoint: none since the opening one means the agent
  // reported nothing.
  std::vector<fsnap::Checkpoint> newest = run.repo()->log(spec.run, 1);
  bool agent_reported = !newest.empty() && newest.front().commit != opening_commit;
  sandbox::RunStatus status = status_of(result.exit, result.halt);
  sandbox::StepResult closing = run.transactions().checkpoint(
      {"", fsnap::Phase::kCheckpoint, "", "", spec.run},
      [&](sandbox::Session& s) {
        if (result.halt) record_halt(run.state(), *result.halt);
        run.state().record_containment();
        sandbox::record_run_status(s, status);
      },
      status.reason);
  if (!agent_reported && run.repo()->read_checkpoint(opening_commit).tree !=
                             run.repo()->read_checkpoint(closing.boundary.record.commit).tree) {
    warn(kNotReporting + adapter.silent_hooks_hint());
  }
  run.transactions().set_step_hook(nullptr);
  meta.exit_code = result.exit.code();
  meta.ended_at = now_text();
  meta.save(spec.store);
  // The run's end to the fleet: its last checkpoints, its record, the lease released.
  if (member) member->finish();
  // The run has ended: what it left loose is packed, and the retention limits applied
  // (this run is finished, so to it too), by a maintenance of its own that `run` does
  // not wait for.
  if (spec.config.auto_maintenance && spec.maintain_detached) {
    spec.maintain_detached(/*run_ended=*/true);
  }
  return result;
}

}  // namespace hooks
