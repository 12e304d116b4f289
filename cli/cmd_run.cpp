// `shadowbox run`, `runs`, `resume` and `abort`: arguments and output. The
// supervision of the agent is hooks::run_agent; resume's checks are hooks::prepare_resume.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <set>
#include <thread>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/agent_run.hpp"
#include "hooks/fleet_run.hpp"
#include "hooks/resume.hpp"
#include "hooks/run_list.hpp"
#include "hooks/run_policy.hpp"
#include "hooks/workspace_claim.hpp"
#include "output.hpp"
#include "run_figures.hpp"
#include "run_spec.hpp"
#include "runs/home_preservation.hpp"
#include "runs/redaction.hpp"
#include "runs/run_meta.hpp"
#include "runs_table.hpp"
#include "shell.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

// What came of a resume.
struct ResumeOutcome {
  int code = 0;          // what the command exits with
  bool refused = false;  // the agent did not take the session up (expired, or unknown)
};

// Resumes the run request names in this workspace (claimed), a fleet's run only by its
// owner: prepares it (Error kConflict / kNotFound saying why it cannot go on), runs the
// agent and reports how it ended.
ResumeOutcome resume_run(const Context& context, const fsnap::Store& store,
                         const hooks::ResumeRequest& request, const runs::PolicyLimits& limits) {
  const std::string& run = request.run;
  hooks::WorkspaceClaim claim = hooks::WorkspaceClaim::take(context.workspace, store, run);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  // In a fleet, only the run's owner resumes it: refused before anything is prepared.
  std::shared_ptr<fleet::FleetMember> member = hooks::join_fleet(
      store, context.config, run, context.workspace.string(), fleet::FleetMember::Join::kClaim,
      [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; });
  hooks::ResumePlan plan;
  try {
    plan = hooks::prepare_resume(store, repo, request);
  } catch (...) {
    if (member) member->finish();
    throw;
  }
  const std::string& session = plan.session.session_id;
  std::cerr << "shadowbox: resuming run " << run << " from agent session " << session
            << (request.fork ? " (forked)" : "") << '\n';
  hooks::AgentRunSpec spec = resume_spec(context, store, repo, run, plan, limits,
                                         "run resumed from agent session " + session);
  spec.fleet = member;
  hooks::AgentRunResult result = hooks::run_agent(std::move(spec));
  ResumeOutcome outcome{report(context, store, repo, run, result), false};
  if (result.halt || outcome.code == 0) return outcome;
  // An agent that exits with an error before its first hook event did not get to work:
  // it refused the session it was asked to go on with.
  outcome.refused = !result.agent_reported;
  std::string what =
      outcome.refused
          ? "the agent did not take up agent session " + session + ": it exited with status " +
                std::to_string(outcome.code) +
                " before it reported anything (the session may have expired, or be unknown to "
                "it: what it printed says which); the run and its sessions are as they were"
          : "the agent exited with status " + std::to_string(outcome.code) +
                " while resuming session " + session;
  runs::append_run_log(store, run, "resume: " + what);
  std::cerr << "shadowbox: error: " << what << '\n';
  return outcome;
}

// With run.auto_resume: the run `run` goes on with instead of starting one — the run
// --run-id names if it exists, else the newest run of this command in the workspace —
// and the exit status of its resume; nullopt (said why) to start a new run. A run
// --run-id names that cannot go on is an Error (kConflict).
std::optional<int> resume_instead(const Context& context, const Args& parsed,
                                  const fsnap::Store& store, const runs::PolicyLimits& limits) {
  auto fresh = [](const std::string& why) -> std::optional<int> {
    std::cerr << "shadowbox: run.auto_resume: " << why << "; starting a new run\n";
    return std::nullopt;
  };
  std::optional<std::string> named = parsed.value("--run-id");
  std::optional<std::string> run =
      named ? (runs::RunMeta::load(store, *named) ? named : std::nullopt)
            : hooks::newest_run_of(store, context.workspace.string(), parsed.operands());
  if (!run) return named ? std::nullopt : fresh("no earlier run of this command here");
  hooks::ResumeRequest request;
  request.run = *run;
  request.checks = resume_checks(context);
  request.checks.command = parsed.operands();
  std::optional<hooks::ResumableState> state =
      hooks::find_resumable_state(store, context.open_repo(store), *run);
  std::vector<std::string> problems;
  if (state) problems = hooks::resume_problems(*state, request.checks);
  if (!state) problems.push_back("it recorded no agent session");
  if (!problems.empty()) {
    std::string text;
    for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
    if (named) {
      throw fsnap::Error(fsnap::ErrorCode::kConflict,
                         "run " + fsnap::quote_input(*run) + " exists already and " +
                             "run.auto_resume cannot go on with it: " + text);
    }
    return fresh("run " + *run + " cannot go on (" + text + ")");
  }
  ResumeOutcome outcome = resume_run(context, store, request, limits);
  if (!outcome.refused) return outcome.code;
  return named ? std::optional<int>(outcome.code) : fresh("the agent refused run " + *run);
}

}  // namespace

int cmd_run(const Context& context, const Args& parsed) {
  std::string run = parsed.value_or("--run-id", runs::new_run_id());
  runs::PolicyLimits limits = limit_options(parsed);
  std::optional<hooks::AgentKind> agent;
  if (parsed.has("--agent")) {
    std::string kind = *parsed.value("--agent");
    agent = hooks::parse_agent_kind(kind);
    if (!agent) {
      throw parsed.usage_error("--agent must be one of " + hooks::agent_kind_names() + ", not " +
                               fsnap::quote_input(kind));
    }
  } else {
    agent = hooks::detect_agent_kind(parsed.operands());
    if (!agent) {
      throw parsed.usage_error(
          "shadowbox does not know the agent " + fsnap::quote_input(parsed.operands().front()) +
          " (it knows claude, codex and gemini by name); name its kind with --agent (one of " +
          hooks::agent_kind_names() +
          "; an application built on the Claude Agent SDK, or a script that starts an agent, "
          "is --agent claude-sdk)");
    }
  }
  refuse_hooks_switched_off(context, *agent);
  fsnap::Store store = context.open_store(true);
  if (context.config.run.auto_resume) {
    if (std::optional<int> code = resume_instead(context, parsed, store, limits)) return *code;
  }
  // One live run per workspace: held until the agent has ended.
  hooks::WorkspaceClaim claim = hooks::WorkspaceClaim::take(context.workspace, store, run);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  fs::path home = fsnap::layout::run_home_dir(store.dir(), run);
  if (fs::exists(fsnap::layout::run_dir(store.dir(), run)) || repo->has_run(run)) {
    // Resume is the way on only for a run with an agent session to resume.
    std::optional<hooks::ResumableState> state = hooks::find_resumable_state(store, repo, run);
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       "run " + fsnap::quote_input(run) + " exists already (" +
                           (state ? "resume it with: shadowbox resume " + run
                                  : "it has no agent session to resume; choose another --run-id") +
                           ")");
  }
  // In a fleet, the run is claimed before anything of it is written here.
  std::shared_ptr<fleet::FleetMember> member = hooks::join_fleet(
      store, context.config, run, context.workspace.string(), fleet::FleetMember::Join::kClaim,
      [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; });
  fs::create_directories(home);
  std::string command;
  for (const std::string& a : parsed.operands()) command += (command.empty() ? "" : " ") + a;
  std::cerr << "shadowbox: run " << run << " (store " << store.dir().string() << ")\n";
  hooks::AgentRunSpec spec = spec_for(context, store, repo, run, *agent);
  spec.home = home;
  spec.argv = parsed.operands();
  // The command line may hold a secret (a prompt, a header): redacted before it is cut.
  spec.start_summary =
      "run started: " + runs::redacted_summary(command, context.secret_values(), 200);
  spec.meta.run = run;
  spec.meta.workspace = context.workspace.string();
  spec.meta.command = parsed.operands();
  spec.meta.agent = std::string(hooks::agent_kind_name(*agent));
  spec.meta.started_at = now_text();
  spec.meta.limits = limits;
  spec.fleet = member;
  return report(context, store, repo, run, hooks::run_agent(std::move(spec)));
}

int cmd_runs(const Context& context, const Args& parsed) {
  fsnap::Store store = context.open_store(false);
  std::vector<hooks::RunInfo> runs =
      hooks::list_runs(store, context.open_repo(store), context.config.run.resume_max_age,
                       std::chrono::system_clock::now());
  if (context.options.json) {
    Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
    for (const hooks::RunInfo& r : runs) {
      Poco::JSON::Object::Ptr o = make_object();
      o->set("run", r.run);
      o->set("status", r.status);
      o->set("agent", r.agent.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(r.agent));
      o->set("session_id",
             r.session_id.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(r.session_id));
      o->set("resumable", r.resumable);
      o->set("checkpoints", r.checkpoints);
      o->set("started_at", r.started_at);
      o->set("last_activity", r.last_activity);
      o->set("exit_code", r.exit_code ? Poco::Dynamic::Var(*r.exit_code) : Poco::Dynamic::Var());
      o->set("halt_reason",
             r.halt_reason.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(r.halt_reason));
      set_figures_json(*o, r.figures, r.unpriced_models);
      o->set("gaps", r.gaps);
      Poco::JSON::Array::Ptr sessions = new Poco::JSON::Array;
      for (const hooks::AgentSession& s : r.sessions) {
        Poco::JSON::Object::Ptr item = make_object();
        item->set("session_id", s.session_id);
        item->set("source", s.source);
        item->set("started_by", s.started_by);
        item->set("started_at", s.captured_at);
        item->set("last_activity_at", s.last_activity_at);
        item->set("message_count", s.message_count);
        item->set("complete", s.complete);
        item->set("cwd", s.cwd);
        item->set("resumed_from", s.resumed_from.empty() ? Poco::Dynamic::Var()
                                                         : Poco::Dynamic::Var(s.resumed_from));
        sessions->add(item);
      }
      o->set("sessions", sessions);
      if (r.forked_from) {
        Poco::JSON::Object::Ptr fork = make_object();
        fork->set("run", r.forked_from->run);
        fork->set("checkpoint", r.forked_from->checkpoint);
        fork->set("tool_call_id", r.forked_from->tool_call_id);
        fork->set("at", r.forked_from->at);
        o->set("forked_from", fork);
      } else {
        o->set("forked_from", Poco::Dynamic::Var());
      }
      out->add(o);
    }
    print_json(std::cout, out);
    return 0;
  }
  print_runs_table(std::cout, runs, parsed.has("--wide"));
  for (const hooks::RunInfo& r : runs) {
    if (!r.forked_from) continue;
    std::cout << r.run << ": forked from run " << r.forked_from->run
              << " at pre:" << r.forked_from->tool_call_id;
    if (parsed.has("--wide")) {
      std::cout << " (checkpoint " << r.forked_from->checkpoint << ") by shadowbox rewind";
    }
    std::cout << '\n';
  }
  for (const hooks::RunInfo& r : runs) {
    if (r.gaps == 0) continue;
    std::fprintf(stderr,
                 "shadowbox: warning: run %s has %zu hook event%s that could not be recorded "
                 "(its history has gaps); why: %s\n",
                 r.run.c_str(), r.gaps, r.gaps == 1 ? "" : "s",
                 fsnap::layout::run_log_file(store.dir(), r.run).string().c_str());
  }
  return 0;
}

int cmd_resume(const Context& context, const Args& parsed) {
  std::string run = parsed.operands()[0];
  hooks::ResumeRequest request = resume_request(context, parsed, run);
  runs::PolicyLimits limits = limit_options(parsed);
  context.refuse_unprotectable_workspace();  // an agent there records all the user owns
  fsnap::Store store = context.open_store(false);
  if (std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run)) {
    refuse_hooks_switched_off(context, hooks::recorded_agent_kind(meta->agent, meta->command));
  }
  return resume_run(context, store, request, limits).code;
}

int cmd_abort(const Context& context, const Args& parsed) {
  std::string run = parsed.operands()[0];
  std::string reason = parsed.value_or("--reason", "by shadowbox abort");
  fsnap::Store store = context.open_store(false);
  std::unique_ptr<runs::LedgerRun> ledger_run = context.open_run(run, false);
  hooks::abort_run(*ledger_run, context.config, reason);
  std::cerr << "shadowbox: asked run " << run << " to stop: " << reason << '\n';
  // Its supervisor ends the agent's tree at once: SIGTERM, SIGKILL after the kill grace,
  // again for what was forked meanwhile. Wait to say it did.
  // (At most kMaxDuration: a steady_clock time point holds that much from now.)
  auto waited =
      std::min(3 * context.config.policy.kill_grace + std::chrono::seconds(10), runs::kMaxDuration);
  auto until = std::chrono::steady_clock::now() + waited;
  while (std::chrono::steady_clock::now() < until) {
    std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
    if (!meta || !meta->running()) {
      std::cerr << "shadowbox: run " << run << " stopped\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::cerr << "shadowbox: error: run " << run << " did not stop within "
            << std::chrono::duration_cast<std::chrono::seconds>(waited).count()
            << " s; the abort is recorded, so no further tool call of it is admitted\n";
  return 1;
}

int cmd_preserve(const Context& context, const Args& parsed) {
  std::string run = parsed.operands()[0];
  fsnap::Store store = context.open_store(false);
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
  if (!meta || meta->home.empty()) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "run " + fsnap::quote_input(run) +
                           " has no agent HOME to preserve (shadowbox run starts one)");
  }
  if (!meta->capture_state) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       "run " + fsnap::quote_input(run) +
                           " keeps no agent session data: it was started with run.capture_state "
                           "false");
  }
  if (!fs::is_directory(meta->home)) {
    throw fsnap::Error(
        fsnap::ErrorCode::kNotFound,
        "the agent HOME of run " + fsnap::quote_input(run) + " is gone (" + meta->home + ")");
  }
  // Beside a running supervisor, too: each preservation is a commit on the run's home
  // ref under the store lock.
  const hooks::AgentAdapter& adapter =
      hooks::adapter_for(hooks::recorded_agent_kind(meta->agent, meta->command));
  std::string tree = runs::HomePreserver(store, context.open_repo(store), run, meta->home,
                                         adapter.preserved_parts(),
                                         runs::secret_values(context.config.run.secrets))
                         .preserve_now();
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("run", run);
    out->set("home", meta->home);
    out->set("tree", tree);
    print_json(std::cout, out);
    return 0;
  }
  std::cout << "preserved the agent session data of run " << run << " (tree " << tree.substr(0, 12)
            << ")\n";
  return 0;
}

}  // namespace cli
