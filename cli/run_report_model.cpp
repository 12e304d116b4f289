#include "run_report_model.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <string_view>

#include "call_log.hpp"
#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "output.hpp"
#include "run_figures.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_stats.hpp"
#include "sandbox/ledger.hpp"
#include "sandbox/rollback_policy.hpp"
#include "shell.hpp"

namespace cli {

namespace {

using Poco::JSON::Array;
using Poco::JSON::Object;

std::optional<sandbox::LedgerRecord> record_at(const sandbox::Ledger& ledger,
                                               const fsnap::Checkpoint& c) {
  try {
    return ledger.read(c);
  } catch (const fsnap::Error&) {
    return std::nullopt;  // a damaged record: the entry says what its checkpoint does
  }
}

// log's outcome words as the report says them (call_log.hpp lists log's).
std::string call_outcome(const LogRow& row, const std::optional<sandbox::LedgerRecord>& end) {
  const std::string& o = row.outcome;
  if (o == "refused") return "denied by a limit";
  if (o == "denied") return "denied by the agent";
  if (o == "no outcome") return "not executed";
  if (o == "failed" && end &&
      end->rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kRefuse)) {
    return "rollback refused";
  }
  return o;
}

// The text of a diff kept within kDiffBytes (cut at a line's end) and the run's budget.
ReportDiff cut_diff(const std::string& whole, std::size_t& spent) {
  ReportDiff diff;
  diff.full_bytes = whole.size();
  diff.full_lines = static_cast<std::size_t>(std::count(whole.begin(), whole.end(), '\n'));
  if (whole.empty()) return diff;
  if (spent >= kDiffBudget) {
    diff.over_budget = true;
    diff.cut = true;
    return diff;
  }
  std::string text = whole;
  if (text.size() > kDiffBytes) {
    std::size_t end = text.rfind('\n', kDiffBytes);
    text.resize(end == std::string::npos ? kDiffBytes : end + 1);
    diff.cut = true;
  }
  diff.text = sanitize_utf8(text);
  spent += diff.text.size();
  return diff;
}

// The changes and the diff from one checkpoint to another.
void set_changes(ReportEntry& entry, const fsnap::ShadowRepo& repo, const fsnap::Checkpoint& from,
                 const fsnap::Checkpoint& to, std::size_t& spent) {
  entry.from_checkpoint = from.id;
  entry.to_checkpoint = to.id;
  for (const fsnap::TreeChange& change : repo.diff_trees(from.tree, to.tree)) {
    std::string line = change_line(change);  // "M  path", quoted like git
    entry.changes.push_back({line.substr(0, 1), sanitize_utf8(line.substr(3))});
  }
  if (!entry.changes.empty()) entry.diff = cut_diff(repo.unified_diff(from.tree, to.tree), spent);
}

// The entry of one row of the log.
ReportEntry entry_of(const LogRow& row, const sandbox::Ledger& ledger, std::size_t& spent) {
  ReportEntry entry;
  entry.at = fsnap::format_timestamp(row.at);
  entry.ref = row.ref;
  entry.input = sanitize_utf8(row.what);
  for (const std::string& d : row.details) entry.details.push_back(sanitize_utf8(d));
  bool call = !row.first.meta.tool_call_id.empty();
  const fsnap::Checkpoint& ended = row.end ? *row.end : row.last;
  std::optional<sandbox::LedgerRecord> record = record_at(ledger, ended);
  if (call) {
    entry.kind = "call";
    entry.tool = sanitize_utf8(row.tool);
    entry.outcome = call_outcome(row, record);
    if (record) entry.elapsed_ms = record->elapsed_ms;
    // A rolled-back call's changes are those its safety checkpoint kept.
    set_changes(entry, ledger.repo(), row.first, row.safety ? *row.safety : row.last, spent);
  } else {
    entry.kind = "checkpoint";
    entry.outcome = row.outcome;
  }
  if (record) {
    std::string json = sanitize_utf8(record->to_json());
    entry.record_bytes = json.size();
    if (json.size() > kRecordBytes) json.resize(kRecordBytes);
    entry.record = sanitize_utf8(json);  // (a cut inside a character)
  }
  return entry;
}

// The run's figures as the record of checkpoint c holds them, if it holds a session.
std::optional<ReportPoint> point_at(const sandbox::Ledger& ledger, const fsnap::Checkpoint& c) {
  std::optional<sandbox::LedgerRecord> record = record_at(ledger, c);
  if (!record || !record->has_session()) return std::nullopt;
  try {
    runs::RunStats stats = runs::run_stats(ledger.session(*record));
    return ReportPoint{fsnap::format_timestamp(c.created_at), c.id, stats.steps,
                       std::round(stats.cost_usd * 1e6) / 1e6};
  } catch (const std::exception&) {
    return std::nullopt;  // a session this process cannot decode: no point
  }
}

// The moves of the run's lifecycle, as its newest record's session holds them.
std::vector<ReportMove> moves_of(const sandbox::Ledger& ledger, const std::string& run) {
  std::vector<ReportMove> out;
  std::optional<sandbox::LedgerRecord> latest = ledger.latest(run);
  if (!latest || !latest->has_session()) return out;
  for (const runs::RunLifecycle& m :
       ledger.session(*latest).slice<runs::RunLifecycle>().to_vector()) {
    out.push_back({fsnap::format_timestamp(m.at), m.from, m.state, m.event, m.reason});
  }
  return out;
}

// s as a word of a shell command line: as it is when nothing in it is special.
std::string word(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("._:/@%+=,-").find(c) != std::string_view::npos;
  });
  return plain ? s : shell_quote(s);
}

// What a person types next: resume it, rewind it to its last call's start, inspect it.
std::vector<std::string> next_commands(const RunReport& report) {
  const std::string run = word(report.info.run);
  std::vector<std::string> out;
  if (report.info.resumable) out.push_back("shadowbox resume " + run);
  std::string last_call;
  for (const ReportEntry& e : report.entries) {
    if (e.kind == "call") last_call = e.ref;
  }
  if (!last_call.empty()) {
    out.push_back("shadowbox rewind " + run + " --to " + word("pre:" + last_call));
    out.push_back("shadowbox show " + word("post:" + last_call));
  }
  out.push_back("shadowbox log --run " + run);
  out.push_back("shadowbox states " + run);
  return out;
}

Array::Ptr strings_json(const std::vector<std::string>& list) {
  Array::Ptr out = new Array;
  for (const std::string& s : list) out->add(s);
  return out;
}

Poco::Dynamic::Var optional_json(const auto& value) {
  return value ? Poco::Dynamic::Var(*value) : Poco::Dynamic::Var();
}

Object::Ptr entry_json(const ReportEntry& e) {
  Object::Ptr out = make_object();
  out->set("kind", e.kind);
  out->set("at", e.at);
  out->set("ref", e.ref);
  out->set("tool", e.tool);
  out->set("input", e.input);
  out->set("outcome", e.outcome);
  out->set("details", strings_json(e.details));
  out->set("elapsed_ms", optional_json(e.elapsed_ms));
  out->set("from", e.from_checkpoint);
  out->set("to", e.to_checkpoint);
  Array::Ptr changes = new Array;
  for (const ReportChange& c : e.changes) {
    Object::Ptr change = make_object();
    change->set("status", c.status);
    change->set("path", c.path);
    changes->add(change);
  }
  out->set("changes", changes);
  Object::Ptr diff = make_object();
  diff->set("text", e.diff.text);
  diff->set("bytes", e.diff.full_bytes);
  diff->set("lines", e.diff.full_lines);
  diff->set("cut", e.diff.cut);
  diff->set("over_budget", e.diff.over_budget);
  out->set("diff", diff);
  out->set("record", e.record);
  out->set("record_bytes", e.record_bytes);
  return out;
}

}  // namespace

RunReport build_run_report(const Context& context, const std::string& run) {
  fsnap::Store store = context.open_store(false);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
  if (!repo->has_run(run) && !meta) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "no run named " + fsnap::quote_input(run) + " (shadowbox runs lists them)");
  }
  RunReport report;
  report.info = hooks::describe_run(store, repo, run, context.config.run.resume_max_age,
                                    std::chrono::system_clock::now());
  report.limits = context.config.policy.limits;
  if (meta) {
    report.command = meta->command;
    for (const runs::RunStart& start : meta->resumes) report.resumes.push_back(start.started_at);
    report.limits = report.limits.overridden_by(meta->limits);
  }
  sandbox::Ledger ledger(repo);
  std::vector<LogRow> rows = newest_log_rows(*repo, run, ledger, context.workspace.string(), 0);
  std::reverse(rows.begin(), rows.end());
  // Where each row ends, by commit: a row that begins right after one (no call open
  // between them) with other files began after a change no call made.
  std::map<std::string, const fsnap::Checkpoint*> ends;
  for (const LogRow& row : rows) ends[row.last.commit] = &row.last;
  std::size_t spent = 0;
  for (const LogRow& row : rows) {
    auto before = ends.find(row.first.parent);
    if (before != ends.end() && before->second->tree != row.first.tree) {
      ReportEntry between;
      between.kind = "between";
      between.at = fsnap::format_timestamp(row.first.created_at);
      between.outcome = "files changed";
      set_changes(between, *repo, *before->second, row.first, spent);
      report.entries.push_back(std::move(between));
    }
    report.entries.push_back(entry_of(row, ledger, spent));
    if (std::optional<ReportPoint> point = point_at(ledger, row.last)) {
      report.points.push_back(*point);
    }
  }
  for (const ReportEntry& e : report.entries) {
    report.diffs_over_budget += e.diff.over_budget ? 1 : 0;
  }
  report.moves = moves_of(ledger, run);
  for (const ReportMove& m : report.moves) {
    ReportEntry marker;
    marker.kind = "lifecycle";
    marker.at = m.at;
    marker.outcome = m.event;
    marker.input = m.from + " -> " + m.to + (m.reason.empty() ? "" : ": " + m.reason);
    report.entries.push_back(std::move(marker));
  }
  // One timeline: the timestamps have one form, so their text sorts as their time does.
  std::stable_sort(report.entries.begin(), report.entries.end(),
                   [](const ReportEntry& a, const ReportEntry& b) { return a.at < b.at; });
  const statekit::MachineGraph& graph = runs::run_lifecycle().graph();
  report.states = graph.states();
  bool known = std::find(report.states.begin(), report.states.end(), report.info.status) !=
               report.states.end();
  report.current = known ? report.info.status : report.moves.empty() ? "" : report.moves.back().to;
  report.commands = next_commands(report);
  return report;
}

Object::Ptr run_report_json(const RunReport& r) {
  Object::Ptr out = make_object();
  const hooks::RunInfo& info = r.info;
  out->set("run", info.run);
  out->set("agent", info.agent);
  out->set("status", info.status);
  out->set("current_state", r.current);
  out->set("halt_reason",
           info.halt_reason.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(info.halt_reason));
  Array::Ptr sessions = new Array;
  for (const hooks::AgentSession& s : info.sessions) sessions->add(s.session_id);
  out->set("session_id", info.session_id);
  out->set("sessions", sessions);
  out->set("started_at", info.started_at);
  out->set("last_activity", info.last_activity);
  out->set("command", strings_json(r.command));
  out->set("resumes", strings_json(r.resumes));
  if (info.forked_from) {
    Object::Ptr fork = make_object();
    fork->set("run", info.forked_from->run);
    fork->set("checkpoint", info.forked_from->checkpoint);
    fork->set("tool_call_id", info.forked_from->tool_call_id);
    fork->set("at", info.forked_from->at);
    out->set("forked_from", fork);
  } else {
    out->set("forked_from", Poco::Dynamic::Var());
  }
  set_figures_json(*out, info.figures, info.unpriced_models);
  out->set("checkpoints", info.checkpoints);
  out->set("gaps", info.gaps);
  Object::Ptr limits = make_object();
  limits->set("max_steps", optional_json(r.limits.max_steps));
  limits->set("max_cost_usd", optional_json(r.limits.max_cost_usd));
  limits->set("max_retries_total", optional_json(r.limits.max_retries_total));
  limits->set("timeout_s", r.limits.timeout ? Poco::Dynamic::Var(r.limits.timeout->count())
                                            : Poco::Dynamic::Var());
  out->set("limits", limits);
  out->set("commands", strings_json(r.commands));
  Array::Ptr entries = new Array;
  for (const ReportEntry& e : r.entries) entries->add(entry_json(e));
  out->set("entries", entries);
  Array::Ptr points = new Array;
  for (const ReportPoint& p : r.points) {
    Object::Ptr point = make_object();
    point->set("at", p.at);
    point->set("checkpoint", p.checkpoint);
    point->set("steps", p.steps);
    point->set("cost_usd", p.cost_usd);
    points->add(point);
  }
  out->set("points", points);
  Array::Ptr moves = new Array;
  for (const ReportMove& m : r.moves) {
    Object::Ptr move = make_object();
    move->set("at", m.at);
    move->set("from", m.from);
    move->set("to", m.to);
    move->set("event", m.event);
    move->set("reason", m.reason);
    moves->add(move);
  }
  out->set("moves", moves);
  out->set("states", strings_json(r.states));
  Object::Ptr cuts = make_object();
  cuts->set("diff_bytes", kDiffBytes);
  cuts->set("diff_budget_bytes", kDiffBudget);
  cuts->set("record_bytes", kRecordBytes);
  cuts->set("diffs_over_budget", r.diffs_over_budget);
  out->set("cuts", cuts);
  return out;
}

}  // namespace cli
