#include "hooks/resume.hpp"

#include <unistd.h>

#include <ctime>
#include <set>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store_layout.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/run_processes.hpp"
#include "runs/home_preservation.hpp"
#include "runs/run_lifecycle.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/ledger.hpp"

namespace hooks {

using sandbox::Error;
using sandbox::ErrorCode;

std::optional<ResumableState> find_resumable_state(const fsnap::Store& store,
                                                   const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                                   const std::string& run,
                                                   const std::string& session_id) {
  sandbox::Ledger ledger(repo);
  std::optional<sandbox::LedgerRecord> latest = ledger.latest(run);
  if (!latest || !latest->has_session()) return std::nullopt;
  sandbox::SessionSnapshot session = ledger.session(*latest);
  statekit::Slice<AgentSession> sessions = session.slice<AgentSession>();
  std::optional<ResumableState> state;
  // A session a resume forked is superseded by the fork: it holds all of it, and more.
  std::set<std::string> superseded;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (sessions[i].resumed_from != sessions[i].session_id) {
      superseded.insert(sessions[i].resumed_from);
    }
  }
  const AgentSession* chosen = nullptr;
  const AgentSession* newest = nullptr;
  for (std::size_t i = sessions.size(); i-- > 0;) {
    const AgentSession& s = sessions[i];
    if (s.session_id.empty()) continue;
    if (!session_id.empty()) {
      if (s.session_id == session_id && chosen == nullptr) chosen = &s;
      continue;
    }
    if (newest == nullptr) newest = &s;
    if (chosen == nullptr && s.resumable() && superseded.count(s.session_id) == 0) chosen = &s;
  }
  if (chosen == nullptr) chosen = newest;
  if (chosen == nullptr) {
    if (session_id.empty()) return std::nullopt;
    throw Error(ErrorCode::kNotFound, "run " + fsnap::quote_input(run) +
                                          " recorded no agent session " +
                                          fsnap::quote_input(session_id));
  }
  state = ResumableState{};
  state->session = *chosen;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (!sessions[i].session_id.empty()) state->sessions.push_back(sessions[i]);
  }
  if (std::optional<runs::RunStatus> status = runs::latest_run_status(session)) {
    state->run_status = status->status;
  }
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
  AgentKind kind = meta ? recorded_agent_kind(meta->agent, meta->command) : AgentKind::kClaudeCode;
  const AgentAdapter& adapter = adapter_for(kind);
  if (meta) {
    state->run_workspace = meta->workspace;
    state->run_agent = std::string(agent_kind_name(kind));
    state->run_command = meta->command;
    state->capture_state = meta->capture_state;
  }
  if (std::optional<std::string> tree = runs::preserved_home(*repo, run)) {
    for (const fsnap::TreeChange& c : runs::home_changes(*repo, "", *tree)) {
      if (adapter.is_session_path(c.path, state->session.session_id)) {
        state->home_preserved = true;
        break;
      }
    }
  }
  std::vector<fsnap::Checkpoint> tip = repo->log(run, 1);
  if (!tip.empty()) state->last_activity = tip.front().created_at;
  auto newer = [&](std::optional<std::chrono::system_clock::time_point> t) {
    if (t && (!state->last_activity || *t > *state->last_activity)) state->last_activity = t;
  };
  newer(runs::home_preserved_at(*repo, run));
  newer(fsnap::parse_timestamp(state->session.last_activity_at));
  // By the locks the run's processes hold, not by the recorded pid alone (which the
  // kernel may have given to another process since).
  RunProcesses alive = run_processes(store, run, meta);
  if (alive == RunProcesses::kSupervised && meta && meta->pid != ::getpid()) {
    state->running_pid = meta->pid;
  }
  state->agent_still_running = alive == RunProcesses::kUnsupervised;
  return state;
}

namespace {

// Where the agent session ran: its own cwd, else the run's workspace ("" if neither).
const std::string& recorded_workspace(const ResumableState& state) {
  return state.session.cwd.empty() ? state.run_workspace : state.session.cwd;
}

// The kind of session an agent keeps: an Agent SDK application runs Claude Code, whose
// sessions either resumes.
std::string_view session_kind(const std::string& agent) {
  return agent == agent_kind_name(AgentKind::kClaudeSdk) ? agent_kind_name(AgentKind::kClaudeCode)
                                                         : std::string_view(agent);
}

// What only strict validation checks: the session belongs here and now, to this task.
void add_strict_problems(const ResumableState& state, const ResumeChecks& checks,
                         std::vector<std::string>& problems) {
  const std::string& where = recorded_workspace(state);
  if (where.empty()) {
    problems.push_back("neither agent session " + state.session.session_id +
                       " nor the run recorded the workspace it ran in");
  } else if (where != checks.workspace) {
    problems.push_back("the agent session ran in " + where + ", not in " + checks.workspace);
  }
  if (!state.session.agent.empty() && !state.run_agent.empty() &&
      session_kind(state.session.agent) != session_kind(state.run_agent)) {
    problems.push_back("agent session " + state.session.session_id + " is " + state.session.agent +
                       "'s, and the run resumes " + state.run_agent);
  }
  if (!checks.command.empty() && checks.command != state.run_command) {
    problems.push_back("the run's agent was started with another command line");
  }
  if (state.last_activity && checks.max_age.count() > 0 &&
      checks.now - *state.last_activity > checks.max_age) {
    problems.push_back("the run's last activity (" + fsnap::format_timestamp(*state.last_activity) +
                       ") is older than run.resume_max_age");
  }
  if (state.run_status == "complete" && !checks.reopen) problems.push_back("the run is complete");
}

// What a person who means to go on all the same adds to the command (" (...)"), when
// only what they may overrule stands in the way: an ended session or a complete run
// (--reopen), what only strict validation checks (--validation relaxed), or both.
std::string going_on_all_the_same(const ResumableState& state, const ResumeRequest& request) {
  ResumeChecks checks = request.checks;
  std::string options;
  if (!checks.reopen) {
    checks.reopen = true;
    if (resume_problems(state, checks).empty()) options = " --reopen";
  }
  if (options.empty() && checks.validation == ResumeValidation::kStrict) {
    checks.validation = ResumeValidation::kRelaxed;
    checks.reopen = request.checks.reopen;
    if (resume_problems(state, checks).empty()) {
      options = " --validation relaxed";
    } else if (!checks.reopen) {
      checks.reopen = true;
      if (resume_problems(state, checks).empty()) options = " --validation relaxed --reopen";
    }
  }
  if (options.empty()) return "";
  return " (to resume it all the same: shadowbox resume " + request.run + options + ")";
}

}  // namespace

std::vector<std::string> resume_problems(const ResumableState& state, const ResumeChecks& checks) {
  std::vector<std::string> problems;
  // Whatever the validation: a second agent on the files of one still running would undo
  // its work, and be undone.
  if (state.running_pid != 0) {
    problems.push_back("the run is still running (shadowbox process " +
                       std::to_string(state.running_pid) + ")");
  }
  if (state.agent_still_running) {
    problems.push_back(
        "processes of the run's agent are still running: its supervisor ended, and they are "
        "being ended (SIGTERM, then SIGKILL after policy.kill_grace)");
  }
  if (checks.validation == ResumeValidation::kNone) return problems;
  if (state.session.session_id.empty()) problems.push_back("no agent session id was recorded");
  if (!state.capture_state) {
    problems.push_back("the run kept no agent session data (run.capture_state was off)");
  } else if (!state.home_preserved) {
    problems.push_back("the transcript of agent session " + state.session.session_id +
                       " is not in the preserved data");
  }
  if (state.session.complete && !checks.reopen) {
    problems.push_back("agent session " + state.session.session_id + " ended");
  }
  if (checks.validation == ResumeValidation::kStrict) add_strict_problems(state, checks, problems);
  return problems;
}

std::optional<std::string> newest_run_of(const fsnap::Store& store, const std::string& workspace,
                                         const std::vector<std::string>& command) {
  namespace fs = boost::filesystem;
  std::optional<std::string> newest;
  std::string newest_start;
  boost::system::error_code ec;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  if (!fs::is_directory(runs, ec)) return std::nullopt;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!fsnap::layout::is_valid_run_name(name)) continue;
    std::optional<runs::RunMeta> meta;
    try {
      meta = runs::RunMeta::load(store, name);
    } catch (const std::exception&) {
      continue;
    }
    if (!meta || meta->workspace != workspace || meta->command != command) continue;
    // The timestamps have one form and width: their text sorts as their time does.
    if (!newest || meta->started_at > newest_start) {
      newest = name;
      newest_start = meta->started_at;
    }
  }
  return newest;
}

ResumePlan prepare_resume(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                          const ResumeRequest& request) {
  const std::string& run = request.run;
  std::string quoted = fsnap::quote_input(run);
  std::optional<ResumableState> state;
  try {
    state = find_resumable_state(store, repo, run, request.session_id);
  } catch (const Error& e) {
    throw Error(e.code(), "cannot resume: " + std::string(e.what()));
  }
  if (!state) {
    throw Error(ErrorCode::kNotFound,
                "cannot resume run " + quoted + ": it recorded no agent session");
  }
  std::vector<std::string> problems = resume_problems(*state, request.checks);
  if (!problems.empty()) {
    std::string text;
    for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
    text += going_on_all_the_same(*state, request);
    throw Error(ErrorCode::kConflict, "cannot resume run " + quoted + ": " + text);
  }
  ResumePlan plan;
  plan.session = state->session;
  plan.home = fsnap::layout::resumed_home_dir(
      store.dir(), run, std::to_string(::time(nullptr)) + "-" + std::to_string(::getpid()));
  try {
    runs::rebuild_home(*repo, run, plan.home);
  } catch (const Error& e) {
    throw Error(e.code(), "cannot resume run " + quoted + ": " + e.what());
  }
  plan.meta = runs::RunMeta::load(store, run).value_or(runs::RunMeta{});
  plan.meta.run = run;
  plan.meta.workspace = request.checks.workspace;
  if (plan.meta.command.empty()) plan.meta.command = {"claude"};
  plan.agent = recorded_agent_kind(plan.meta.agent, plan.meta.command);
  plan.meta.agent = std::string(agent_kind_name(plan.agent));
  const AgentAdapter& adapter = adapter_for(plan.agent);
  if (!adapter.has_session_data(plan.home, state->session.session_id)) {
    throw Error(ErrorCode::kNotFound,
                "cannot resume run " + quoted + ": the transcript of agent session " +
                    state->session.session_id + " is not in its preserved data" +
                    (state->capture_state ? "" : " (run.capture_state was off)"));
  }
  plan.env = {std::string(kResumeSessionVariable) + "=" + state->session.session_id,
              std::string(kResumeForkVariable) + "=" + (request.fork ? "1" : "0")};
  try {
    // An agent that cannot fork as it resumes goes on with a copy of the session.
    std::string resumed = state->session.session_id;
    if (request.fork) {
      if (std::optional<SessionCut> copy = adapter.fork_session(plan.home, resumed)) {
        resumed = copy->session_id;
      }
    }
    // The run's own command (a resume's would repeat the options resume added).
    plan.argv = adapter.resume_argv(
        {plan.meta.command, resumed, request.extra_args, request.only_extra_args, request.fork});
  } catch (const Error& e) {
    throw Error(e.code(), "cannot resume run " + quoted + ": " + e.what());
  }
  return plan;
}

}  // namespace hooks
