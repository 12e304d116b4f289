// `shadowbox undo CALL_ID`: reverse one tool call's file changes and keep every later
// change (sandbox::ToolTransactions::undo), recorded as a call of its own that `undo`
// reverses in turn.
#include <iostream>

#include "commands.hpp"
#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "live_run_notice.hpp"
#include "output.hpp"
#include "sandbox/ledger.hpp"

namespace cli {

namespace {

std::string_view outcome_name(sandbox::UndoResult::Outcome outcome) {
  switch (outcome) {
    case sandbox::UndoResult::Outcome::kUndone:
      return "undone";
    case sandbox::UndoResult::Outcome::kNothing:
      return "nothing";
    case sandbox::UndoResult::Outcome::kRefused:
      return "refused";
  }
  return "unknown";
}

// The run CALL_ID is in: --run, else the run of its pre-tool checkpoint, else default
// (where undo says it has none).
std::string run_of(const Context& context, const Args& parsed, const std::string& call_id) {
  if (std::optional<std::string> run = parsed.value("--run")) return *run;
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(context.open_store(false));
  try {
    return repo->resolve("pre:" + call_id).meta.run;
  } catch (const fsnap::Error& e) {
    if (e.code() != fsnap::ErrorCode::kNotFound) throw;
    return std::string(fsnap::kDefaultRun);
  }
}

Poco::JSON::Array::Ptr path_why_json(const std::vector<std::pair<std::string, std::string>>& list) {
  Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
  for (const auto& [path, why] : list) {
    Poco::JSON::Object::Ptr item = make_object();
    item->set("path", sanitize_utf8(path));
    item->set("why", sanitize_utf8(why));
    out->add(item);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> conflicts_of(const sandbox::UndoResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const sandbox::UndoResult::UndoConflict& c : r.conflicts) out.emplace_back(c.path, c.why);
  return out;
}

std::vector<std::pair<std::string, std::string>> kept_of(const sandbox::UndoResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const sandbox::KeptPath& k : r.kept) out.emplace_back(k.path, k.why);
  return out;
}

void print_json_result(const sandbox::UndoResult& r, const runs::LedgerRun& run) {
  Poco::JSON::Object::Ptr out = make_object();
  out->set("tool_call_id", r.call_id);
  out->set("tool_name", r.tool_name);
  out->set("outcome", std::string(outcome_name(r.outcome)));
  out->set("reason", r.reason.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(r.reason));
  out->set("conflicts", path_why_json(conflicts_of(r)));
  out->set("kept", path_why_json(kept_of(r)));
  out->set("undo_call_id",
           r.undo_call_id.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(r.undo_call_id));
  Poco::JSON::Array::Ptr paths = new Poco::JSON::Array;
  for (const std::string& p : r.paths) paths->add(sanitize_utf8(p));
  out->set("paths", paths);
  const fsnap::RestoreReport report = r.restore.value_or(fsnap::RestoreReport{});
  out->set("changes", changes_json(report.changes));
  out->set("large_files", changes_json(report.large_files));
  std::vector<std::pair<std::string, std::string>> unrestored;
  for (const fsnap::UnrestoredPath& u : report.unrestored) unrestored.emplace_back(u.path, u.why);
  out->set("unrestored", path_why_json(unrestored));
  auto checkpoint = [&](const std::optional<sandbox::Boundary>& b) {
    return b ? Poco::Dynamic::Var(checkpoint_json(run.repo()->read_checkpoint(b->record.commit)))
             : Poco::Dynamic::Var();
  };
  out->set("safety", checkpoint(r.begin));
  out->set("recorded", checkpoint(r.end));
  print_json(std::cout, out);
}

void print_undone(const sandbox::UndoResult& r) {
  const fsnap::RestoreReport& report = *r.restore;
  std::size_t n = report.changes.size() + report.large_files.size();
  std::cout << "undid tool call " << r.call_id << " (" << r.tool_name << "): " << n
            << (n == 1 ? " change" : " changes") << '\n';
  for (const fsnap::TreeChange& change : report.changes) std::cout << change_line(change) << '\n';
  for (const fsnap::TreeChange& change : report.large_files) {
    std::cout << change_line(change) << " (over capture.max_file_size: from its copy)\n";
  }
  for (const fsnap::UnrestoredPath& u : report.unrestored) {
    std::cout << "NOT undone " << fsnap::quote_path(u.path) << ": " << u.why << '\n';
  }
  for (const std::string& path : report.kept) {
    std::cout << "kept " << fsnap::quote_path(path) << " (it holds paths that are not captured)\n";
  }
  for (const sandbox::KeptPath& k : r.kept) {
    std::cout << "kept " << fsnap::quote_path(k.path) << ": " << k.why << '\n';
  }
  std::cout << "recorded as tool call " << r.undo_call_id
            << " (the files before it: pre:" << r.undo_call_id
            << "); undo the undo with: shadowbox undo " << r.undo_call_id << '\n'
            << "files only: the run's session slices are as they were\n";
}

}  // namespace

int cmd_undo(const Context& context, const Args& parsed) {
  const std::string& call_id = parsed.operands()[0];
  std::unique_ptr<runs::LedgerRun> run = context.open_run(run_of(context, parsed, call_id), false);
  sandbox::UndoResult result = run->transactions().undo(call_id);
  if (result.outcome == sandbox::UndoResult::Outcome::kUndone && result.restore) {
    tell_live_runs(context, run->store(),
                   "`shadowbox undo` reversed what " + fsnap::quote_input(result.tool_name) +
                       " call " + fsnap::quote_input(call_id) + " changed",
                   *result.restore);
  }
  int status = result.outcome == sandbox::UndoResult::Outcome::kRefused ? 1 : 0;
  if (context.options.json) {
    print_json_result(result, *run);
    return status;
  }
  switch (result.outcome) {
    case sandbox::UndoResult::Outcome::kUndone:
      print_undone(result);
      break;
    case sandbox::UndoResult::Outcome::kNothing:
      std::cout << "nothing to undo: tool call " << call_id << " (" << result.tool_name
                << "): " << result.reason << '\n';
      break;
    case sandbox::UndoResult::Outcome::kRefused:
      std::cerr << "shadowbox: error: cannot undo tool call " << call_id << " (" << result.tool_name
                << "): " << result.reason << "; nothing was changed:\n";
      for (const sandbox::UndoResult::UndoConflict& c : result.conflicts) {
        std::cerr << "  " << fsnap::quote_path(c.path) << ": " << c.why << '\n';
      }
      break;
  }
  return status;
}

}  // namespace cli
