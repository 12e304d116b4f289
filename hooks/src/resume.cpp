#include "hooks/resume.hpp"

#include <unistd.h>

#include <ctime>
#include <set>

#include "fsnap/enum_names.hpp"
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
  state = ResumableState{*chosen, {}, "", false, std::nullopt, 0, false};
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    if (!sessions[i].session_id.empty()) state->sessions.push_back(sessions[i]);
  }
  if (std::optional<runs::RunStatus> status = runs::latest_run_status(session)) {
    state->run_status = status->status;
  }
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
  const AgentAdapter& adapter =
      adapter_for(meta ? recorded_agent_kind(meta->agent, meta->command) : AgentKind::kClaudeCode);
  if (std::optional<std::string> tree = runs::preserved_home(*repo, run)) {
    for (const fsnap::TreeChange& c : repo->diff_trees("", *tree)) {
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

std::optional<ResumeValidation> parse_resume_validation(std::string_view text) {
  static constexpr fsnap::EnumName<ResumeValidation> kNames[] = {
      {ResumeValidation::kStrict, "strict"},
      {ResumeValidation::kRelaxed, "relaxed"},
      {ResumeValidation::kNone, "none"}};
  return fsnap::value_of(kNames, text);
}

std::vector<std::string> resume_problems(const ResumableState& state, ResumeValidation validation,
                                         const std::string& workspace, std::chrono::seconds max_age,
                                         std::chrono::system_clock::time_point now) {
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
  if (validation == ResumeValidation::kNone) return problems;
  if (state.session.session_id.empty()) problems.push_back("no agent session id was recorded");
  if (!state.home_preserved) {
    problems.push_back("the transcript of agent session " + state.session.session_id +
                       " is not in the preserved data");
  }
  if (validation == ResumeValidation::kRelaxed) return problems;
  if (!state.session.cwd.empty() && state.session.cwd != workspace) {
    problems.push_back("the agent session ran in " + state.session.cwd + ", not in " + workspace);
  }
  if (state.last_activity && max_age.count() > 0 && now - *state.last_activity > max_age) {
    problems.push_back("the run's last activity (" + fsnap::format_timestamp(*state.last_activity) +
                       ") is older than run.resume_max_age");
  }
  if (state.run_status == "complete") problems.push_back("the run is complete");
  if (state.session.complete) {
    problems.push_back("agent session " + state.session.session_id + " ended");
  }
  return problems;
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
  std::vector<std::string> problems =
      resume_problems(*state, request.validation, request.workspace, request.max_age, request.now);
  if (!problems.empty()) {
    std::string text;
    for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
    // What only strict validation refuses (a complete run, an ended session, another
    // path, an old run) a person may mean to go on with: said how.
    if (request.validation == ResumeValidation::kStrict &&
        resume_problems(*state, ResumeValidation::kRelaxed, request.workspace, request.max_age,
                        request.now)
            .empty()) {
      text += " (to resume it all the same: shadowbox resume " + run + " --validation relaxed)";
    }
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
  plan.meta.workspace = request.workspace;
  if (plan.meta.command.empty()) plan.meta.command = {"claude"};
  plan.agent = recorded_agent_kind(plan.meta.agent, plan.meta.command);
  plan.meta.agent = std::string(agent_kind_name(plan.agent));
  const AgentAdapter& adapter = adapter_for(plan.agent);
  if (!adapter.has_session_data(plan.home, state->session.session_id)) {
    throw Error(ErrorCode::kNotFound,
                "cannot resume run " + quoted + ": the transcript of agent session " +
                    state->session.session_id + " is not in its preserved data");
  }
  plan.env = {std::string(kResumeSessionVariable) + "=" + state->session.session_id,
              std::string(kResumeForkVariable) + "=" + (request.fork ? "1" : "0")};
  // The run's own command (a resume's would repeat the options resume added).
  try {
    plan.argv = adapter.resume_argv({plan.meta.command, state->session.session_id,
                                     request.extra_args, request.only_extra_args, request.fork});
  } catch (const Error& e) {
    throw Error(e.code(), "cannot resume run " + quoted + ": " + e.what());
  }
  return plan;
}

}  // namespace hooks
