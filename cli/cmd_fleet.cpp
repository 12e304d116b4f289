// `shadowbox fleet runs|push` and `shadowbox recover`: the fleet's runs as its Redis
// knows them, pushing what this worker's runs left queued, and taking over another
// worker's run on this machine (hooks/fleet_run.hpp, fleet/).
#include <cstdio>
#include <iostream>

#include <Poco/JSON/Parser.h>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fleet/fleet_member.hpp"
#include "fleet/redis_client.hpp"
#include "fleet/run_mirror.hpp"
#include "fleet/run_registry.hpp"
#include "fsnap/error.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store_layout.hpp"
#include "fsnap/user_umask.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/fleet_run.hpp"
#include "hooks/resume.hpp"
#include "hooks/workspace_claim.hpp"
#include "output.hpp"
#include "run_spec.hpp"
#include "runs/ledger_run.hpp"
#include "runs/run_meta.hpp"

namespace cli {

namespace fs = boost::filesystem;

namespace {

const fleet::FleetSettings& fleet_settings(const Context& context) {
  if (!context.config.fleet.enabled()) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       "this needs a fleet: the config has no fleet section (fleet.redis, "
                       "fleet.remote; see config/shadowbox.yaml)");
  }
  return context.config.fleet;
}

std::string lease_text(const fleet::FleetRun& run) {
  if (!run.lease_left) return "expired";
  return std::to_string((run.lease_left->count() + 999) / 1000) + "s";
}

// Whether restoring the run's checkpoint target into the workspace only adds files:
// an empty workspace, or one that holds a part of the run's files as the run has them.
// Otherwise a clear error naming a path that would change.
void check_recovery_workspace(fsnap::HostFilesystem& workspace, const fsnap::Checkpoint& target,
                              const std::string& run) {
  fsnap::RestoreReport dry = workspace.restore_checkpoint(target, {.dry_run = true});
  for (const fsnap::TreeChange& change : dry.changes) {
    if (change.kind == fsnap::TreeChange::Kind::kAdded) continue;
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       "the workspace " + fsnap::quote_input(workspace.root().string(), 200) +
                           " holds files run " + fsnap::quote_input(run) +
                           " does not have as they are (" + fsnap::quote_input(change.path) +
                           ", and maybe more): recover into an empty directory, or one at the "
                           "run's last checkpoint");
  }
}

// `fleet push [RUN]`: what this worker's runs have not pushed yet (a run whose process
// ended while the remote was away), and their records brought up to date.
int push_runs(const Context& context, const Args& parsed, fleet::RunRegistry& registry) {
  const fleet::FleetSettings& settings = context.config.fleet;
  std::string me = fleet::worker_id(settings);
  fsnap::Store store = context.open_store(false);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  std::vector<std::string> runs;
  if (parsed.operands().size() > 1) {
    runs.push_back(parsed.operands()[1]);
  } else {
    runs = repo->runs();
  }
  fleet::RunMirror mirror(store, repo, settings.remote, me);
  int failed = 0;
  for (const std::string& run : runs) {
    std::optional<fleet::FleetRun> known = registry.find(run);
    if (!known || known->owner != me) {
      if (parsed.operands().size() > 1) {
        throw fsnap::Error(fsnap::ErrorCode::kConflict,
                           "run " + fsnap::quote_input(run) +
                               (known ? " belongs to worker " + fsnap::quote_input(known->owner)
                                      : std::string(" is not in the fleet")) +
                               "; only its owner pushes it");
      }
      continue;
    }
    try {
      fleet::RunPush pushed = mirror.push(run);
      registry.publish_as_owner(run, me, fleet::lag_record(pushed.left, ""));
      std::cout << "run " << run << ": " << counted(pushed.report.updated.size(), "ref", "refs")
                << " pushed (" << counted(pushed.report.objects, "object", "objects") << "), "
                << counted(pushed.left.checkpoints, "checkpoint", "checkpoints") << " left\n";
      for (const auto& [ref, why] : pushed.report.rejected) {
        std::cerr << "shadowbox: error: run " << run << ": the remote refused " << ref << ": "
                  << why << '\n';
        ++failed;
      }
    } catch (const fsnap::Error& e) {
      std::cerr << "shadowbox: error: run " << run << ": " << e.what() << '\n';
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int cmd_fleet(const Context& context, const Args& parsed) {
  const std::string& action = parsed.operands()[0];
  if (action != "runs" && action != "push") {
    throw parsed.usage_error("expected runs or push, not " + fsnap::quote_input(action));
  }
  const fleet::FleetSettings& settings = fleet_settings(context);
  fleet::RedisClient redis(fleet::RedisEndpoint::parse(settings.redis));
  fleet::RunRegistry registry(redis);
  if (action == "push") return push_runs(context, parsed, registry);
  std::vector<fleet::FleetRun> runs = registry.list();
  if (context.options.json) {
    Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
    for (const fleet::FleetRun& r : runs) {
      Poco::JSON::Object::Ptr o = make_object();
      o->set("run", r.run);
      o->set("owner", r.owner);
      o->set("token", r.token);
      o->set("lease_left_ms",
             r.lease_left ? Poco::Dynamic::Var(r.lease_left->count()) : Poco::Dynamic::Var());
      o->set("updated_at", fsnap::format_timestamp(r.updated_at));
      for (const auto& [name, value] : r.fields) {
        if (name != "run_json") o->set(name, value);
      }
      out->add(o);
    }
    print_json(std::cout, out);
    return 0;
  }
  std::printf("%-32s %-20s %-8s %-9s %-11s %6s %9s %9s  %s\n", "RUN", "OWNER", "LEASE", "STATUS",
              "AGENT", "STEPS", "COST-USD", "UNPUSHED", "UPDATED");
  for (const fleet::FleetRun& r : runs) {
    std::string unpushed = r.field("unpushed_checkpoints");
    if (!r.field("push_error").empty()) unpushed += "!";
    // A run that says it is running with nobody holding its lease lost its worker:
    // `recover` takes it over.
    std::string status = r.field("status");
    if (status == "running" && !r.lease_left) status = "orphaned";
    std::printf("%-32s %-20s %-8s %-9s %-11s %6s %9s %9s  %s\n", r.run.c_str(), r.owner.c_str(),
                lease_text(r).c_str(), status.c_str(), r.field("agent").c_str(),
                r.field("steps").c_str(), r.field("cost_usd").c_str(),
                unpushed.empty() ? "-" : unpushed.c_str(),
                fsnap::format_timestamp(r.updated_at).c_str());
  }
  for (const fleet::FleetRun& r : runs) {
    if (r.field("push_error").empty()) continue;
    std::fprintf(stderr, "shadowbox: warning: run %s: %s cannot push: %s\n", r.run.c_str(),
                 r.owner.c_str(), r.field("push_error").c_str());
  }
  return 0;
}

namespace {

// What the fleet knows of a run: its record (owner, lease) and the run.json it started
// from. Error kNotFound if it knows no such run or no agent was started in it.
struct FleetRecord {
  fleet::FleetRun run;
  runs::RunMeta meta;
};

FleetRecord fleet_record(const fleet::FleetSettings& settings, const std::string& run) {
  fleet::RedisClient redis(fleet::RedisEndpoint::parse(settings.redis));
  std::optional<fleet::FleetRun> known = fleet::RunRegistry(redis).find(run);
  if (!known) {
    throw fsnap::Error(
        fsnap::ErrorCode::kNotFound,
        "the fleet knows no run " + fsnap::quote_input(run) + " (shadowbox fleet runs lists them)");
  }
  if (known->field("run_json").empty()) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "the fleet's record of run " + fsnap::quote_input(run) +
                           " has no run.json: no agent was started in it");
  }
  runs::RunMeta meta = runs::RunMeta::parse(known->field("run_json"),
                                            "the fleet's record of run " + fsnap::quote_input(run));
  return FleetRecord{std::move(*known), std::move(meta)};
}

// Refuses to take a run whose owner's lease still runs, unless force (which fences it).
void check_lease_expired(const fleet::FleetRun& known, const std::string& me, bool force) {
  if (known.owner == me || !known.lease_left || force) return;
  throw fsnap::Error(fsnap::ErrorCode::kConflict,
                     "run " + fsnap::quote_input(known.run) + " belongs to worker " +
                         fsnap::quote_input(known.owner) + ", whose lease runs for another " +
                         std::to_string((known.lease_left->count() + 999) / 1000) +
                         " s; recover it once the lease has expired, or with --force to "
                         "fence " +
                         known.owner);
}

// The run's workspace here, made if missing as under the user's umask (this process's
// is narrower).
void make_workspace(const fs::path& workspace) {
  boost::system::error_code ec;
  if (fs::create_directories(workspace, ec)) {
    fs::permissions(workspace, static_cast<fs::perms>(0777 & ~fsnap::user_umask()), ec);
  }
}

// The recovered run continues here: its run.json names this workspace and no process,
// its agent's session data is rekeyed from the owner's workspace to this one, and the
// agent is resumed under member's lease.
int resume_here(const Context& context, const fsnap::Store& store,
                const std::shared_ptr<fsnap::ShadowRepo>& repo, const FleetRecord& record,
                hooks::ResumeRequest request, const runs::PolicyLimits& limits,
                std::shared_ptr<fleet::FleetMember> member) {
  runs::RunMeta meta = record.meta;
  const std::string& run = record.run.run;
  meta.workspace = context.workspace.string();
  meta.home.clear();
  meta.pid = 0;
  meta.agent_pid = 0;
  meta.save(store);
  request.checks.now = std::chrono::system_clock::now();
  hooks::ResumePlan plan = hooks::prepare_resume(store, repo, request);
  const hooks::AgentAdapter& adapter = hooks::adapter_for(plan.agent);
  std::string from = plan.session.cwd.empty() ? record.meta.workspace : plan.session.cwd;
  adapter.rekey_session_data(plan.home, from, context.workspace.string());
  std::cerr << "shadowbox: resuming agent session " << plan.session.session_id << '\n';
  hooks::AgentRunSpec spec = resume_spec(context, store, repo, run, plan, limits,
                                         "run recovered from worker " + record.run.owner +
                                             ", agent session " + plan.session.session_id);
  spec.fleet = std::move(member);
  return report(context, store, repo, run, hooks::run_agent(std::move(spec)));
}

}  // namespace

int cmd_recover(const Context& context, const Args& parsed) {
  std::string run = parsed.operands()[0];
  // The path differs from the owner's: validation is relaxed unless asked otherwise.
  hooks::ResumeRequest request =
      resume_request(context, parsed, run, hooks::ResumeValidation::kRelaxed);
  runs::PolicyLimits limits = limit_options(parsed);
  bool force = parsed.has("--force");
  const fleet::FleetSettings& settings = fleet_settings(context);
  std::string me = fleet::worker_id(settings);
  auto warn = [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; };

  FleetRecord record = fleet_record(settings, run);
  const fleet::FleetRun& known = record.run;
  check_lease_expired(known, me, force);
  make_workspace(context.workspace);
  fsnap::Store store = context.open_store(true);
  hooks::WorkspaceClaim claim = hooks::WorkspaceClaim::take(context.workspace, store, run);
  if (std::optional<runs::RunMeta> local = runs::RunMeta::load(store, run);
      local && local->running()) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict, "run " + fsnap::quote_input(run) +
                                                        " is running here (pid " +
                                                        std::to_string(local->pid) + ")");
  }
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  fleet::RunMirror mirror(store, repo, settings.remote, me);
  std::unique_ptr<runs::LedgerRun> ledger_run = context.open_run(run, true, repo);

  // The run as its owner pushed it, checked against the workspace before the lease is
  // taken (a refusal leaves the owner untouched); then taken, and fetched again.
  std::string last = mirror.fetch(run, known.owner);
  check_recovery_workspace(ledger_run->workspace(), repo->read_checkpoint(last), run);
  std::shared_ptr<fleet::FleetMember> member = hooks::join_fleet(
      store, context.config, run, context.workspace.string(),
      force ? fleet::FleetMember::Join::kForce : fleet::FleetMember::Join::kTakeOver, warn);
  if (!member) {
    throw fsnap::Error(fsnap::ErrorCode::kIo,
                       "recover needs the fleet's Redis, which cannot be reached");
  }
  try {
    last = mirror.fetch(run, known.owner);
    fsnap::Checkpoint target = repo->read_checkpoint(last);
    check_recovery_workspace(ledger_run->workspace(), target, run);
    fsnap::RestoreReport restored = ledger_run->workspace().restore_checkpoint(target, {});
    std::cerr << "shadowbox: recovered run " << run << " from worker " << known.owner
              << ": the workspace is at its last checkpoint " << target.id << " ("
              << restored.changes.size() << " path" << (restored.changes.size() == 1 ? "" : "s")
              << " written)\n";
    ledger_run.reset();
    return resume_here(context, store, repo, record, std::move(request), limits, member);
  } catch (...) {
    member->finish();
    throw;
  }
}

}  // namespace cli
