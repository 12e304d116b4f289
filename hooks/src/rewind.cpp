#include "hooks/rewind.hpp"

#include <algorithm>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store_layout.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_session_state.hpp"
#include "runs/home_preservation.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/ledger.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using sandbox::Error;
using sandbox::ErrorCode;

namespace {

std::string now_text() {
  return fsnap::format_timestamp(std::chrono::system_clock::now());
}

// The agent session that made the call at record: the one with the newest activity in
// the session the record holds (its tool calls update it).
std::string session_at(const sandbox::Ledger& ledger, const sandbox::LedgerRecord& record) {
  if (!record.has_session()) return {};
  sandbox::SessionSnapshot session = ledger.session(record);
  statekit::Slice<AgentSession> sessions = session.slice<AgentSession>();
  const AgentSession* newest = nullptr;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const AgentSession& s = sessions[i];
    if (s.session_id.empty()) continue;
    if (newest == nullptr || s.last_activity_at >= newest->last_activity_at) newest = &s;
  }
  return newest != nullptr ? newest->session_id : std::string();
}

// The preserved HOMEs a conversation can be cut in, oldest first: the one the call's
// pre-tool record names (an agent may write its transcript a moment after the hook
// runs, so it can lack the call's turn), the one its post-tool record names, and the
// newest. Each must be of run's preserved history: a record names it, and a record may
// have been written by someone else.
std::vector<std::string> home_candidates(const fsnap::ShadowRepo& repo,
                                         const sandbox::Ledger& ledger, const std::string& run,
                                         const sandbox::LedgerRecord& record) {
  std::optional<std::string> tip = repo.ref_target(fsnap::layout::home_ref(run));
  if (!tip) return {};
  std::vector<std::string> out;
  auto add = [&](const std::string& commit) {
    if (commit.empty() || std::find(out.begin(), out.end(), commit) != out.end()) return;
    if (repo.descends_from(*tip, commit)) out.push_back(commit);
  };
  add(record.home_commit);
  try {
    fsnap::Checkpoint post = ledger.resolve("post:" + record.tool_call_id);
    if (std::optional<sandbox::LedgerRecord> after = ledger.read(post)) add(after->home_commit);
  } catch (const Error&) {
    // The call never ended (the run crashed in it): the newest HOME is all there is.
  }
  add(*tip);
  return out;
}

// Sets plan.target and plan.record to the pre_tool checkpoint request.ref names in the
// run, and its ledger record; throws (message begun by why) when it is not one.
void resolve_target(const sandbox::Ledger& ledger, const RewindRequest& request,
                    const std::string& why, RewindPlan& plan) {
  plan.target = ledger.resolve(request.ref);
  std::string ref = fsnap::quote_input(request.ref);
  if (plan.target.meta.run != request.run) {
    throw Error(ErrorCode::kInvalidArgument,
                why + ref + " is a checkpoint of run " + fsnap::quote_input(plan.target.meta.run));
  }
  if (plan.target.meta.phase != fsnap::Phase::kPreTool) {
    throw Error(ErrorCode::kInvalidArgument,
                why + ref + " is a " + std::string(fsnap::to_string(plan.target.meta.phase)) +
                    " checkpoint; a rewind goes back to just before a tool call: give its "
                    "pre_tool checkpoint (pre:<tool call id>; `shadowbox log --run " +
                    request.run + "` lists them)");
  }
  std::optional<sandbox::LedgerRecord> record = ledger.read(plan.target);
  if (!record) {
    throw Error(ErrorCode::kNotFound,
                why + "checkpoint " + plan.target.id + " has no ledger record");
  }
  plan.record = *record;
}

// Makes plan.home the newest preserved HOME of the run, from the target's on, in which
// the adapter finds the session to cut at point; the cut (plan.home_commit says which
// HOME it was). Throws kNotFound when none holds it.
SessionCut cut_home(fsnap::ShadowRepo& repo, const sandbox::Ledger& ledger,
                    const AgentAdapter& adapter, const std::string& run,
                    const SessionCutPoint& point, RewindPlan& plan) {
  std::string missing;
  for (const std::string& commit : home_candidates(repo, ledger, run, plan.record)) {
    std::optional<std::string> tree = repo.commit_tree(commit);
    if (!tree) continue;
    boost::system::error_code ec;
    fs::remove_all(plan.home, ec);
    fs::create_directories(plan.home.parent_path());
    runs::materialize_home(repo, *tree, plan.home);
    fs::permissions(plan.home, fs::owner_all);
    try {
      SessionCut cut = adapter.cut_session(plan.home, point);
      plan.home_commit = commit;
      return cut;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotFound) throw;
      missing = e.what();
    }
  }
  throw Error(ErrorCode::kNotFound, missing.empty()
                                        ? "it has no preserved agent data (" +
                                              fsnap::layout::home_ref(run) + " is missing)"
                                        : missing);
}

}  // namespace

RewindPlan prepare_rewind(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                          const RewindRequest& request) {
  const std::string& run = request.run;
  std::string why = "cannot rewind run " + fsnap::quote_input(run) + ": ";
  sandbox::Ledger ledger(repo);
  RewindPlan plan;
  resolve_target(ledger, request, why, plan);
  std::optional<runs::RunMeta> parent = runs::RunMeta::load(store, run);
  if (!parent) {
    throw Error(ErrorCode::kNotFound,
                why +
                    "it is not a run of an agent (shadowbox run starts those); `shadowbox "
                    "restore " +
                    plan.target.id + "` puts its files back");
  }
  plan.session_id = session_at(ledger, plan.record);
  if (plan.session_id.empty()) {
    throw Error(ErrorCode::kNotFound,
                why + "it recorded no agent session by " + fsnap::quote_input(request.ref));
  }
  fs::path run_dir = fsnap::layout::run_dir(store.dir(), request.new_run);
  if (fs::exists(run_dir) || repo->has_run(request.new_run)) {
    throw Error(ErrorCode::kConflict, "cannot rewind into run " +
                                          fsnap::quote_input(request.new_run) +
                                          ": it exists already (choose another --run-id)");
  }
  plan.agent = recorded_agent_kind(parent->agent, parent->command);
  const AgentAdapter& adapter = adapter_for(plan.agent);
  SessionCutPoint point{plan.session_id, plan.record.tool_call_id, plan.record.tool_name,
                        plan.record.input_summary, plan.target.created_at};
  plan.home = fsnap::layout::run_home_dir(store.dir(), request.new_run);
  // Nothing of the fork stays when it cannot be made.
  auto discard = [&run_dir] {
    boost::system::error_code ec;
    fs::remove_all(run_dir, ec);
  };
  try {
    SessionCut cut = cut_home(*repo, ledger, adapter, run, point, plan);
    plan.meta.run = request.new_run;
    plan.meta.workspace = request.workspace;
    plan.meta.command =
        parent->command.empty() ? std::vector<std::string>{"claude"} : parent->command;
    plan.meta.agent = adapter.name();
    plan.meta.started_at = now_text();
    plan.meta.limits = parent->limits;
    plan.meta.forked_from =
        runs::RunFork{run, plan.target.id, plan.record.tool_call_id, plan.meta.started_at};
    ResumeCommand command{plan.meta.command,       cut.session_id, request.extra_args,
                          request.only_extra_args, /*fork=*/true,  cut.resume_args};
    plan.argv = adapter.resume_argv(command);
    plan.env = {std::string(kResumeSessionVariable) + "=" + cut.session_id,
                std::string(kResumeForkVariable) + "=1"};
  } catch (const Error& e) {
    discard();
    throw Error(e.code(), why + e.what());
  } catch (...) {
    discard();
    throw;
  }
  return plan;
}

}  // namespace hooks
