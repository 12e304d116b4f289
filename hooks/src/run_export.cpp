#include "hooks/run_export.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "fsnap/error.hpp"
#include "hooks/agent_spend.hpp"
#include "sandbox/ledger.hpp"
#include "sandbox/rollback_policy.hpp"

namespace hooks {

namespace {

// A commit subject's length, as git's own advice has it.
constexpr std::size_t kSubjectLimit = 72;
// How much of a call's input and result a commit's body keeps.
constexpr std::size_t kBodyLimit = 2000;

// text on one line (newlines and tabs as spaces), cut after limit bytes ("...").
std::string one_line(const std::string& text, std::size_t limit) {
  std::string out = text.substr(0, limit);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out + (text.size() > limit ? "..." : "");
}

// What became of a call, from the record that ended it (Tool-Outcome).
std::string outcome_of(const sandbox::LedgerRecord& end) {
  using Kind = sandbox::RollbackDecision::Kind;
  if (!end.success) return "unknown";
  if (*end.success) return "ok";
  if (end.result_summary.rfind("not executed", 0) == 0) return "not executed";
  if (end.rollback == sandbox::to_string(Kind::kRollBack)) {
    std::size_t kept = end.rollback_kept.size();
    if (kept == 0) return "failed, rolled back";
    return "failed, rolled back (kept " + std::to_string(kept) + (kept == 1 ? " path)" : " paths)");
  }
  if (end.rollback == sandbox::to_string(Kind::kRefuse)) return "failed, rollback refused";
  if (end.rollback == sandbox::to_string(Kind::kKeep)) return "failed, kept";
  return "failed";
}

std::string cost_text(double usd) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", usd);
  return text;
}

// How much of a call's input its subject has room for, after "<tool>: ".
std::size_t input_room(const std::string& tool_name) {
  constexpr std::size_t kLeast = 24;
  return std::max(kLeast, kSubjectLimit - std::min(kSubjectLimit, tool_name.size() + 2));
}

// "<tool>: <input>", or "<tool> <call id>" for a call whose input is not known.
std::string call_subject(const std::string& tool_name, const std::string& call_id,
                         const std::string& input) {
  if (input.empty()) return one_line(tool_name + " " + call_id, kSubjectLimit);
  return one_line(tool_name, kSubjectLimit) + ": " + one_line(input, input_room(tool_name));
}

// A tool call's commit message: subject, the input when the subject cut it, the result,
// trailers.
std::string call_message(const ExportedStep& step, const sandbox::LedgerRecord& pre,
                         const sandbox::LedgerRecord& end, const std::string& run) {
  std::string body;
  const std::string& input = pre.input_summary;
  if (input.size() > input_room(step.tool_name)) {
    body += "Input: " + one_line(input, kBodyLimit) + "\n";
  }
  if (!end.result_summary.empty())
    body += "Result: " + one_line(end.result_summary, kBodyLimit) + "\n";
  std::string trailers = "Tool-Name: " + one_line(step.tool_name, 200) + "\n" +
                         "Tool-Call-Id: " + one_line(step.tool_call_id, 200) + "\n" +
                         "Tool-Outcome: " + step.outcome + "\n";
  if (step.cost_usd) trailers += "Tool-Cost-USD: " + cost_text(*step.cost_usd) + "\n";
  trailers += "Shadowbox-Run: " + run + "\nShadowbox-Checkpoint: " + step.checkpoint + "\n";
  return step.subject + "\n\n" + (body.empty() ? "" : body + "\n") + trailers;
}

std::string plain_message(const ExportedStep& step, const std::string& body,
                          const std::string& run) {
  return step.subject + "\n\n" + (body.empty() ? "" : body + "\n\n") + "Shadowbox-Run: " + run +
         "\nShadowbox-Checkpoint: " + step.checkpoint + "\n";
}

// The run's spend charged when a record was written, if it metered one.
std::optional<double> charged_at(const sandbox::Ledger& ledger,
                                 const sandbox::LedgerRecord& record) {
  try {
    std::optional<AgentSpend> spend = agent_spend(ledger.session(record));
    if (spend) return spend->charged_usd;
  } catch (const fsnap::Error&) {
    // A session that cannot be read says nothing of the cost.
  }
  return std::nullopt;
}

// Turns a run's checkpoints, oldest first, into the steps of its export: a call's
// pre_tool checkpoint opens it and the checkpoint that ends it is its commit; any other
// checkpoint that records files (of no call, or a call ended twice) is a commit of its own.
class StepCollector {
 public:
  StepCollector(sandbox::Ledger& ledger, std::string run) : ledger_(ledger), run_(std::move(run)) {}

  // Adds c's step, if it makes one, to request and out.
  void add(const fsnap::Checkpoint& c, fsnap::BranchExportRequest& request, RunExport& out) {
    std::optional<sandbox::LedgerRecord> record;
    try {
      record = ledger_.read(c);
    } catch (const fsnap::Error&) {
      // A damaged record: the checkpoint counts as one of no call.
    }
    fsnap::Phase phase = record ? record->phase : c.meta.phase;
    std::string call_id = record ? record->tool_call_id : c.meta.tool_call_id;
    if (phase == fsnap::Phase::kPreTool && record && !call_id.empty()) {
      begin(call_id, *record);
      return;
    }
    if (phase == fsnap::Phase::kPreTool || phase == fsnap::Phase::kSafety ||
        phase == fsnap::Phase::kDenied) {
      return;  // what changed up to it is the next step's
    }
    ExportedStep step;
    step.checkpoint = c.id;
    std::string message;
    auto call = begun_.find(call_id);
    if (record && !call_id.empty() && call != begun_.end() && ended_.count(call_id) == 0) {
      ended_.insert(call_id);
      const sandbox::LedgerRecord& pre = call->second.first;
      step.tool_call_id = call_id;
      step.tool_name = pre.tool_name.empty() ? record->tool_name : pre.tool_name;
      step.outcome = outcome_of(*record);
      step.cost_usd = call->second.second;
      step.subject = call_subject(step.tool_name, call_id, pre.input_summary);
      message = call_message(step, pre, *record, run_);
    } else {
      std::string summary = record ? record->result_summary : "";
      step.subject =
          summary.empty() ? "files changed outside tool calls" : one_line(summary, kSubjectLimit);
      message = plain_message(
          step, summary.size() > kSubjectLimit ? one_line(summary, kBodyLimit) : "", run_);
    }
    request.steps.push_back({c.tree, message, c.created_at});
    out.steps.push_back(step);
  }

 private:
  // A call's pre_tool record, and what the agent spent up to it since the call before.
  void begin(const std::string& call_id, const sandbox::LedgerRecord& record) {
    std::optional<double> cost;
    if (std::optional<double> now = charged_at(ledger_, record)) {
      cost = std::max(0.0, *now - charged_);
      charged_ = *now;
    }
    begun_.insert_or_assign(call_id, std::make_pair(record, cost));
  }

  sandbox::Ledger& ledger_;
  std::string run_;
  std::map<std::string, std::pair<sandbox::LedgerRecord, std::optional<double>>> begun_;
  std::set<std::string> ended_;
  double charged_ = 0;
};

// The run's checkpoints, oldest first; throws when there is no such run or it has none.
std::vector<fsnap::Checkpoint> checkpoints_of(fsnap::ShadowRepo& repo, const std::string& run) {
  if (!repo.has_run(run)) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound, "no run named " + fsnap::quote_input(run));
  }
  std::vector<fsnap::Checkpoint> checkpoints = repo.log(run, 0);
  if (checkpoints.empty()) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound, "run " + run + " has no checkpoint");
  }
  std::reverse(checkpoints.begin(), checkpoints.end());
  return checkpoints;
}

}  // namespace

RunExport export_run(const std::shared_ptr<fsnap::ShadowRepo>& repo,
                     const boost::filesystem::path& workspace, const fsnap::CaptureOptions& capture,
                     const std::string& run, const std::string& branch, bool force) {
  std::vector<fsnap::Checkpoint> checkpoints = checkpoints_of(*repo, run);
  sandbox::Ledger ledger(repo);
  RunExport out;
  fsnap::BranchExportRequest request;
  request.branch = branch;
  request.force = force;

  const fsnap::Checkpoint& first = checkpoints.front();
  ExportedStep start;
  start.checkpoint = first.id;
  start.subject = "the workspace as run " + run + " began";
  request.start = {first.tree,
                   plain_message(start,
                                 "Work in the workspace that HEAD did not hold when the run "
                                 "began (or since HEAD moved).",
                                 run),
                   first.created_at};
  request.start_skipped = first.skipped;
  out.steps.push_back(start);

  StepCollector steps(ledger, run);
  for (const fsnap::Checkpoint& c : checkpoints) steps.add(c, request, out);

  out.branch = fsnap::export_branch(*repo, workspace, capture, request);
  out.steps.front().commit = out.branch.start_commit;
  for (std::size_t i = 0; i < out.branch.commits.size(); ++i) {
    out.steps[i + 1].commit = out.branch.commits[i];
  }
  return out;
}

}  // namespace hooks
