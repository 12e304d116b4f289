// `shadowbox rewind RUN --to REF [-- ARGS]`: a new run forked from a pre-tool checkpoint
// of RUN — the workspace and the session's slices as at REF, and the agent resuming its
// conversation cut just before that call. What is checked and cut is
// hooks::prepare_rewind; the agent is supervised by hooks::run_agent.
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/agent_run.hpp"
#include "hooks/fleet_run.hpp"
#include "hooks/rewind.hpp"
#include "hooks/workspace_claim.hpp"
#include "run_spec.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/ledger.hpp"

namespace cli {

int cmd_rewind(const Context& context, const Args& parsed) {
  std::string run = parsed.operands()[0];
  std::string fork = parsed.value_or("--run-id", runs::new_run_id());
  if (fork == run) throw parsed.usage_error("--run-id must name a new run, not the one rewound");
  std::optional<std::string> ref = parsed.value("--to");
  if (!ref) throw parsed.usage_error("--to REF is needed: the pre_tool checkpoint to go back to");
  runs::PolicyLimits limits = limit_options(parsed);
  context.refuse_unprotectable_workspace();  // the fork records, as run does
  fsnap::Store store = context.open_store(false);
  if (std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run)) {
    refuse_hooks_switched_off(context, hooks::recorded_agent_kind(meta->agent, meta->command));
  }
  // One live run per workspace: the rewound one, were it running here, is refused too.
  hooks::WorkspaceClaim claim = hooks::WorkspaceClaim::take(context.workspace, store, fork);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);

  hooks::RewindRequest request;
  request.run = run;
  request.ref = *ref;
  request.new_run = fork;
  request.workspace = context.workspace.string();
  request.extra_args.assign(parsed.operands().begin() + 1, parsed.operands().end());
  request.only_extra_args = parsed.has("--only-args");
  hooks::RewindPlan plan = hooks::prepare_rewind(store, repo, request);
  std::string point = "pre:" + plan.record.tool_call_id + " (checkpoint " + plan.target.id + ")";

  // The files and the session's slices as at REF, in the fork: a restore, after a
  // safety checkpoint of the workspace as it is now.
  std::size_t changes = 0;
  std::optional<fsnap::Checkpoint> safety;
  try {
    std::unique_ptr<runs::LedgerRun> ledger_run = context.open_run(fork, true, repo);
    sandbox::ToolTransactions& tx = ledger_run->transactions();
    // The fork's first boundary: the workspace as it is, no session yet.
    sandbox::StepResult start = tx.checkpoint({"", fsnap::Phase::kCheckpoint, "", "", fork},
                                              nullptr, "run " + fork + " forks run " + run);
    sandbox::StepResult restored = tx.restore(ledger_run->log().boundary_at(plan.target),
                                              "rewound from run " + run + " at " + point);
    if (restored.restore) {
      changes = restored.restore->changes.size() + restored.restore->large_files.size();
      safety = restored.restore->safety;
    }
    // The session is REF's but for the rewound run's own lifecycle: the fork's starts
    // here (else its start would read as the rewound run's supervisor having died).
    tx.restore_slices(start.boundary, {"run.lifecycle", "run.status"},
                      "the lifecycle of run " + fork + " starts afresh");
  } catch (...) {
    boost::system::error_code ec;
    boost::filesystem::remove_all(fsnap::layout::run_dir(store.dir(), fork), ec);
    throw;
  }
  std::cerr << "shadowbox: run " << fork << " rewinds run " << run << " to " << point
            << ": the workspace as it was (" << changes << (changes == 1 ? " change" : " changes")
            << (safety ? "; safety checkpoint " + safety->id + " taken first" : std::string())
            << "), agent session " << plan.session_id << " cut just before the call\n";

  std::shared_ptr<fleet::FleetMember> member = hooks::join_fleet(
      store, context.config, fork, context.workspace.string(), fleet::FleetMember::Join::kClaim,
      [](const std::string& text) { std::cerr << "shadowbox: warning: " << text << '\n'; });
  hooks::AgentRunSpec spec = spec_for(context, store, repo, fork, plan.agent);
  spec.home = plan.home;
  spec.argv = plan.argv;
  spec.env = plan.env;
  spec.resumed_session = plan.session_id;
  spec.start_summary = "run forked from run " + run + " at " + point;
  spec.meta = plan.meta;
  spec.meta.limits = plan.meta.limits.overridden_by(limits);
  spec.fleet = member;
  return report(context, store, repo, fork, hooks::run_agent(std::move(spec)));
}

}  // namespace cli
