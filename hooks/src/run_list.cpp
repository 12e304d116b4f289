#include "hooks/run_list.hpp"

#include "hooks/agent_kind.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store_layout.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/resume.hpp"
#include "hooks/run_processes.hpp"
#include "runs/run_lifecycle.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/ledger.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The status of a run from what it recorded, and what of it lives. (A run whose agent
// outlives its supervisor, being ended, is crashed: it says so, and is not resumable.)
std::string status_of(const std::optional<runs::RunMeta>& meta,
                      const std::optional<ResumableState>& state, const std::string& recorded,
                      RunProcesses alive) {
  if (alive == RunProcesses::kSupervised && meta && !meta->exit_code) return "running";
  if (recorded == "complete" || recorded == "failed" || recorded == "killed" ||
      recorded == "halted" || recorded == "crashed") {
    return recorded;
  }
  if (meta && meta->exit_code) {
    // Recorded before run statuses were: from the exit status alone.
    return *meta->exit_code == 0 ? "complete" : *meta->exit_code > 128 ? "killed" : "failed";
  }
  if (meta || state || !recorded.empty()) return "crashed";
  return "-";
}

}  // namespace

std::string run_status(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                       const std::string& run) {
  std::optional<ResumableState> state = find_resumable_state(store, repo, run);
  std::string recorded;
  if (state) {
    recorded = state->run_status;
  } else if (std::optional<sandbox::LedgerRecord> latest = sandbox::Ledger(repo).latest(run);
             latest && latest->has_session()) {
    if (auto status = runs::latest_run_status(sandbox::Ledger(repo).session(*latest))) {
      recorded = status->status;
    }
  }
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
  return status_of(meta, state, recorded, run_processes(store, run, meta));
}

RunInfo describe_run(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                     const std::string& name, std::chrono::seconds resume_max_age,
                     std::chrono::system_clock::time_point now) {
  sandbox::Ledger ledger(repo);
  RunInfo info;
  info.run = name;
  std::vector<fsnap::Checkpoint> chain = repo->log(name, 0);
  info.checkpoints = chain.size();
  if (!chain.empty()) {
    info.started_at = fsnap::format_timestamp(chain.back().created_at);
    info.last_activity = fsnap::format_timestamp(chain.front().created_at);
  }
  std::optional<ResumableState> state = find_resumable_state(store, repo, name);
  std::string recorded;
  std::optional<sandbox::LedgerRecord> latest = ledger.latest(name);
  sandbox::SessionSnapshot session;
  if (latest && latest->has_session()) session = ledger.session(*latest);
  if (state) {
    info.session_id = state->session.session_id;
    info.sessions = state->sessions;
    recorded = state->run_status;
  } else if (auto status = runs::latest_run_status(session)) {
    recorded = status->status;
  }
  info.figures = runs::run_stats(session);
  info.figures.cost_usd = std::round(info.figures.cost_usd * 1e6) / 1e6;  // to the micro-dollar
  if (std::optional<AgentSpend> spend = agent_spend(session)) {
    info.unpriced_models = spend->unknown_models;
  }
  if (std::optional<policy::ContainmentState> counted = sandbox::containment_state(session)) {
    if (counted->halted_by && recorded == "halted") {
      info.halt_reason = std::string(policy::halt_reason_name(*counted->halted_by));
    }
  }
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, name);
  if (meta) {
    // (A timestamp of format_timestamp's form: those of a run.json written by hand are
    // left out, so that runs sort by time.)
    if (fsnap::parse_timestamp(meta->started_at)) info.started_at = meta->started_at;
    info.exit_code = meta->exit_code;
    info.forked_from = meta->forked_from;
    // Runs recorded before the kind was kept are known by their command.
    info.agent = std::string(agent_kind_name(recorded_agent_kind(meta->agent, meta->command)));
  }
  if (state) {
    ResumeChecks checks;
    checks.workspace = meta ? meta->workspace : state->session.cwd;
    checks.max_age = resume_max_age;
    checks.now = now;
    info.resumable = resume_problems(*state, checks).empty();
  }
  info.gaps = runs::count_gaps(store, name);
  info.status = status_of(meta, state, recorded, run_processes(store, name, meta));
  return info;
}

std::vector<RunInfo> list_runs(const fsnap::Store& store,
                               const std::shared_ptr<fsnap::ShadowRepo>& repo,
                               std::chrono::seconds resume_max_age,
                               std::chrono::system_clock::time_point now) {
  std::set<std::string> names;
  for (const std::string& r : repo->runs()) names.insert(r);
  boost::system::error_code ec;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  if (fs::is_directory(runs, ec)) {
    for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      // A folder no run could have made (an older version let a bad name through).
      if (!fsnap::layout::is_valid_run_name(name)) continue;
      if (fs::exists(fsnap::layout::run_meta_file(store.dir(), name)) ||
          runs::count_gaps(store, name) != 0) {
        names.insert(name);
      }
    }
  }
  std::vector<RunInfo> out;
  for (const std::string& name : names) {
    out.push_back(describe_run(store, repo, name, resume_max_age, now));
  }
  // The timestamps have one form and width, so their text sorts as their time does.
  std::stable_sort(out.begin(), out.end(),
                   [](const RunInfo& a, const RunInfo& b) { return a.started_at < b.started_at; });
  return out;
}

}  // namespace hooks
