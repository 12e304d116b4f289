#include "hooks/boundary_effects.hpp"

#include "fsnap/path_quoting.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

namespace {

using statekit::Effect;

std::string describe_changes(const std::vector<fsnap::TreeChange>& changes) {
  std::string text;
  std::size_t shown = 0;
  for (const fsnap::TreeChange& c : changes) {
    if (c.after && c.after->type == fsnap::EntryType::kDirectory && c.before) continue;
    if (shown++ == 10) {
      text += ", ...";
      break;
    }
    const char* verb = c.kind == fsnap::TreeChange::Kind::kAdded     ? "restored "
                       : c.kind == fsnap::TreeChange::Kind::kDeleted ? "removed "
                                                                     : "reverted ";
    text += (text.empty() ? "" : ", ") + std::string(verb) + fsnap::quote_path(c.path);
  }
  return text;
}

// "a.bin (why), b.bin (why)", at most 10 of them.
std::string describe_unrestored(const std::vector<fsnap::UnrestoredPath>& unrestored) {
  std::string text;
  std::size_t shown = 0;
  for (const fsnap::UnrestoredPath& u : unrestored) {
    if (shown++ == 10) {
      text += ", and " + std::to_string(unrestored.size() - 10) + " more";
      break;
    }
    text += (text.empty() ? "" : ", ") + fsnap::quote_path(u.path) + " (" + u.why + ")";
  }
  return text;
}

}  // namespace

statekit::Effects failure_effects(const AgentEvent& event, const sandbox::FailureResult& failure) {
  const std::string& tool = event.tool_name;
  const std::string& call = event.tool_use_id;
  switch (failure.decision.kind) {
    case sandbox::RollbackDecision::Kind::kKeep:
      return {};
    case sandbox::RollbackDecision::Kind::kRefuse:
      return {Effect::of(TellAgent{"PostToolUseFailure",
                                   "shadowbox did NOT roll back this failed " + tool + " call (" +
                                       call + "): " + failure.decision.reason +
                                       ". Its changes are still in the workspace."}),
              Effect::of(TellUser{"shadowbox did not roll back the failed " + tool + " call " +
                                  call + ": " + failure.decision.reason +
                                  ". Its changes are still in the workspace."})};
    case sandbox::RollbackDecision::Kind::kUnchanged:
      return {};  // nothing to undo, nothing to say
    case sandbox::RollbackDecision::Kind::kRollBack:
      break;
  }
  const std::optional<fsnap::RestoreReport>& report = failure.step.restore;
  std::string kept;
  if (!failure.decision.kept.empty()) {
    kept = " It kept what this call may not have changed alone: ";
    std::size_t shown = 0;
    for (const sandbox::KeptPath& k : failure.decision.kept) {
      if (shown++ == 10) {
        kept += "; ...";
        break;
      }
      kept += (shown == 1 ? "" : "; ") + fsnap::quote_path(k.path.empty() ? k.resource : k.path) +
              " (" + k.why + ")";
    }
    kept += ".";
  }
  // Files over the size limit put back from their copies are changes too.
  std::vector<fsnap::TreeChange> put_back;
  if (report) {
    put_back = report->changes;
    put_back.insert(put_back.end(), report->large_files.begin(), report->large_files.end());
  }
  if (!report || (put_back.empty() && report->unrestored.empty())) {
    return {Effect::of(TellAgent{"PostToolUseFailure",
                                 "shadowbox checked the workspace after this failed " + tool +
                                     " call (" + call + "): it had changed nothing." + kept})};
  }
  std::string changes = describe_changes(put_back);
  std::string left_as = " What it left is checkpoint " + report->safety->id +
                        " (shadowbox diff pre:" + call + " failed:" + call +
                        "; shadowbox restore failed:" + call + " brings it back).";
  if (!report->unrestored.empty()) {
    // What could not be put back is said first: the model must not take it for restored.
    std::string lost = describe_unrestored(report->unrestored);
    std::string rolled_back = put_back.empty() ? "" : " Rolled back: " + changes + ".";
    return {Effect::of(TellAgent{
                "PostToolUseFailure",
                "shadowbox could NOT roll back all of this failed " + tool + " call (" + call +
                    "): these paths are NOT as they were before it, and could "
                    "not be put back: " +
                    lost + "." + rolled_back + kept + " The failed state is kept as checkpoint " +
                    report->safety->id + " (shadowbox restore " + report->safety->id +
                    " brings it back)."}),
            Effect::of(TellUser{"shadowbox could not roll back all of the failed " + tool +
                                " call " + call + ": NOT restored: " + lost + "." + rolled_back +
                                kept + left_as})};
  }
  std::string what = failure.decision.kept.empty() ? "the workspace" : "this call's own changes";
  return {
      Effect::of(TellAgent{"PostToolUseFailure",
                           "shadowbox rolled back " + what + " to before this failed " + tool +
                               " call (" + call + "): " + changes + "." + kept +
                               " The failed state is kept as checkpoint " + report->safety->id +
                               " (shadowbox restore " + report->safety->id + " brings it back)."}),
      Effect::of(TellUser{"shadowbox rolled back the failed " + tool + " call " + call +
                          (failure.decision.kept.empty() ? "" : " (its own changes)") + ": " +
                          changes + "." + kept + left_as})};
}

statekit::Effects denial_effects(const AgentEvent& event, const policy::SafetyEvent& safety) {
  bool stops_run = policy::stops_run(safety.type);
  std::string halt_reason(policy::halt_reason_name(safety.type));
  DenyCall deny{"shadowbox denied this " + event.tool_name + " call: " + safety.reason +
                    (stops_run ? ". The run is stopped (" + halt_reason + ")." : "."),
                ""};
  statekit::Effects effects;
  effects.push_back(
      Effect::of(LogToRun{"containment denied " + event.tool_name + " call " + event.tool_use_id +
                          " (" + halt_reason + "): " + safety.reason}));
  if (stops_run) {
    deny.stop_reason = "shadowbox stopped the run: " + safety.reason + " (" + halt_reason + ")";
    effects.push_back(Effect::of(RequestHalt{halt_reason, safety.reason}));
  }
  effects.insert(effects.begin(), Effect::of(std::move(deny)));
  return effects;
}

HookVerdict perform_boundary_effects(const statekit::Effects& effects, runs::LedgerRun& run) {
  HookVerdict verdict;
  std::string warnings;
  auto warn = [&](const std::string& text) {
    warnings += (warnings.empty() ? "" : "\n") + ("shadowbox: warning: " + text);
  };
  statekit::EffectRunner runner;
  runner.handle<TellAgent>([&](const TellAgent& t) { verdict.context = t.context; });
  runner.handle<TellUser>([&](const TellUser& t) { verdict.notice = t.text; });
  runner.handle<DenyCall>([&](const DenyCall& d) {
    verdict.deny = d.reason;
    verdict.stop = d.stop_reason;
  });
  runner.handle<RequestHalt>([&](const RequestHalt& h) {
    runs::request_halt(run.store(), run.run(), {h.halt_reason, h.reason, true});
  });
  runner.handle<LogToRun>(
      [&](const LogToRun& l) { runs::append_run_log(run.store(), run.run(), l.line); });
  runner.handle<WarnUser>([&](const WarnUser& w) { warn(w.text); });
  for (const statekit::EffectOutcome& o : runner.run_all(effects)) {
    if (!o.ok) warn(o.error);
  }
  verdict.message = warnings;
  return verdict;
}

}  // namespace hooks
