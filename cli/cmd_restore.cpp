// `shadowbox restore REF [--dry-run]`: make the workspace, and the run's STATE slices,
// exactly a checkpoint — always, whatever REF names; `restore REF -- PATH...`: only
// those paths of the files, as `git restore --source=REF -- PATH...` does. And `shadowbox rollback
// CALL_ID`: the failure transaction of an external tool call.
#include <algorithm>
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/path_quoting.hpp"
#include "live_run_notice.hpp"
#include "output.hpp"
#include "runs/redaction.hpp"
#include "sandbox/ledger.hpp"

namespace cli {

namespace {

Poco::JSON::Array::Ptr kept_json(const fsnap::RestoreReport& report) {
  Poco::JSON::Array::Ptr kept = new Poco::JSON::Array;
  for (const std::string& path : report.kept) kept->add(sanitize_utf8(path));
  return kept;
}

Poco::JSON::Array::Ptr unrestored_json(const fsnap::RestoreReport& report) {
  Poco::JSON::Array::Ptr unrestored = new Poco::JSON::Array;
  for (const fsnap::UnrestoredPath& u : report.unrestored) {
    Poco::JSON::Object::Ptr item = make_object();
    item->set("path", sanitize_utf8(u.path));
    item->set("why", u.why);
    unrestored->add(item);
  }
  return unrestored;
}

// What came back from the copies of files over the size limit, and what did not.
void set_large_files_json(Poco::JSON::Object& out, const fsnap::RestoreReport& report) {
  out.set("large_files", changes_json(report.large_files));
  out.set("unrestored", unrestored_json(report));
}

// "N change(s)", files over the size limit put back or removed counted.
std::string changes_text(const fsnap::RestoreReport& report) {
  std::size_t n = report.changes.size() + report.large_files.size();
  return std::to_string(n) + (n == 1 ? " change" : " changes");
}

void print_report(const fsnap::RestoreReport& report, const boost::filesystem::path& workspace) {
  for (const fsnap::TreeChange& change : report.changes) std::cout << change_line(change) << '\n';
  for (const fsnap::TreeChange& change : report.large_files) {
    std::cout << change_line(change) << " (over capture.max_file_size: from its copy)\n";
  }
  for (const fsnap::UnrestoredPath& u : report.unrestored) {
    std::cout << "NOT restored " << fsnap::quote_path(u.path) << ": " << u.why << '\n';
  }
  for (const std::string& path : report.kept) {
    boost::system::error_code ec;
    if (boost::filesystem::is_directory(workspace / path, ec)) {
      std::cout << "kept " << fsnap::quote_path(path)
                << "/ (it holds paths that are not captured)\n";
    } else {
      std::cout << "kept " << fsnap::quote_path(path) << " (it is not captured)\n";
    }
  }
}

void print_safety(const fsnap::RestoreReport& report) {
  if (report.safety) {
    std::cout << "safety checkpoint " << report.safety->id
              << " taken first; undo with: shadowbox restore " << report.safety->id << '\n';
  }
}

// `restore REF --slices TYPE,...`: the named session slices only.
int restore_slices(const Context& context, const Args& parsed, runs::LedgerRun& run,
                   const fsnap::Checkpoint& target) {
  std::vector<std::string> types;
  std::string list = parsed.value_or("--slices", "");
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) types.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  if (types.empty()) throw parsed.usage_error("--slices needs at least one slice type");
  if (parsed.has("--dry-run")) {
    throw parsed.usage_error(
        "--dry-run shows files; see a session's slices change with "
        "diff --session");
  }
  sandbox::StepResult result = run.transactions().restore_slices(
      run.log().boundary_at(target), types, "restored slices " + list + " of " + target.id);
  fsnap::Checkpoint recorded = run.repo()->read_checkpoint(result.boundary.record.commit);
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("target", checkpoint_json(target));
    Poco::JSON::Array::Ptr slices = new Poco::JSON::Array;
    for (const std::string& t : types) slices->add(t);
    out->set("slices", slices);
    out->set("recorded", checkpoint_json(recorded));
    print_json(std::cout, out);
    return 0;
  }
  std::cout << "restored slices " << list << " of " << target.id << " (recorded as checkpoint "
            << recorded.id << ")\n";
  return 0;
}

// A PATH operand of restore as a path relative to the workspace root ("" for the root
// itself): relative ones are the workspace's, absolute ones must lead inside it.
std::string workspace_relative(const Context& context, const std::string& operand) {
  namespace fs = boost::filesystem;
  if (operand.empty()) throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument, "PATH is empty");
  fs::path given(operand);
  fs::path absolute = (given.is_absolute() ? given : context.workspace / given).lexically_normal();
  auto inside = [&](const fs::path& p) -> std::optional<std::string> {
    fs::path rel = p.lexically_relative(context.workspace);
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;
    std::string text = rel.generic_string();
    if (text == ".") return std::string();
    if (!text.empty() && text.back() == '/') text.pop_back();  // "dir/." of "dir/"
    if (text.size() >= 2 && text.compare(text.size() - 2, 2, "/.") == 0)
      text.resize(text.size() - 2);
    return text;
  };
  std::optional<std::string> rel = inside(absolute);
  if (!rel && given.is_absolute()) {
    // The workspace through a symlink (/tmp and /private/tmp): its parent resolved.
    boost::system::error_code ec;
    fs::path parent = fs::weakly_canonical(absolute.parent_path(), ec);
    if (!ec) rel = inside(parent / absolute.filename());
  }
  if (!rel) {
    throw fsnap::Error(fsnap::ErrorCode::kPathEscape,
                       "cannot restore " + fsnap::quote_input(operand) +
                           ": it is outside the workspace " + context.workspace.string() +
                           " (nothing changed)");
  }
  return *rel;
}

// The PATH operands of restore, each once, relative to the workspace root.
std::vector<std::string> named_paths(const Context& context, const Args& parsed) {
  std::vector<std::string> paths;
  for (std::size_t i = 1; i < parsed.operands().size(); ++i) {
    std::string rel = workspace_relative(context, parsed.operands()[i]);
    if (std::find(paths.begin(), paths.end(), rel) == paths.end()) paths.push_back(rel);
  }
  return paths;
}

// "a.txt, src/" for the record and the output ("." for the whole workspace).
std::string paths_text(const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& p : paths) {
    text += (text.empty() ? "" : ", ") + (p.empty() ? std::string(".") : fsnap::quote_path(p));
  }
  return text;
}

}  // namespace

int cmd_restore(const Context& context, const Args& parsed) {
  const std::string& ref = parsed.operands()[0];
  bool dry_run = parsed.has("--dry-run");
  bool some_paths = parsed.operands().size() > 1;
  if (some_paths && parsed.has("--slices")) {
    throw parsed.usage_error("--slices restores session slices, PATH files: give one of them");
  }
  // Checked before anything is opened: a path outside the workspace changes nothing.
  std::optional<std::vector<std::string>> paths;
  if (some_paths) paths = named_paths(context, parsed);
  fsnap::Store store = context.open_store(false);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  fsnap::Checkpoint target = sandbox::Ledger(repo).resolve(ref);
  std::unique_ptr<runs::LedgerRun> run =
      context.open_run(parsed.value_or("--run", target.meta.run), false, repo);
  if (parsed.has("--slices")) return restore_slices(context, parsed, *run, target);
  fsnap::RestoreReport report;
  std::optional<fsnap::Checkpoint> recorded;
  if (dry_run) {
    report = run->workspace().restore_checkpoint(target, {.dry_run = true, .paths = paths});
  } else if (paths) {
    sandbox::StepResult result = run->transactions().restore_paths(
        run->log().boundary_at(target), *paths,
        "restored " + paths_text(*paths) + " of " + target.id + " (files only)");
    if (result.restore) report = std::move(*result.restore);
    recorded = run->repo()->read_checkpoint(result.boundary.record.commit);
  } else {
    sandbox::StepResult result =
        run->transactions().restore(run->log().boundary_at(target), "restored " + target.id);
    if (result.restore) report = std::move(*result.restore);
    recorded = run->repo()->read_checkpoint(result.boundary.record.commit);
  }
  if (!dry_run) {
    tell_live_runs(context, store,
                   "`shadowbox restore` put back " +
                       (paths ? paths_text(*paths) + " as " : std::string("the files as ")) +
                       describe_checkpoint(target),
                   report);
  }

  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("target", checkpoint_json(target));
    out->set("dry_run", dry_run);
    Poco::Dynamic::Var paths_json;
    if (paths) {
      Poco::JSON::Array::Ptr list = new Poco::JSON::Array;
      for (const std::string& p : *paths) list->add(sanitize_utf8(p.empty() ? "." : p));
      paths_json = list;
    }
    out->set("paths", paths_json);
    out->set("changes", changes_json(report.changes));
    out->set("safety", report.safety ? Poco::Dynamic::Var(checkpoint_json(*report.safety))
                                     : Poco::Dynamic::Var());
    out->set("kept", kept_json(report));
    set_large_files_json(*out, report);
    out->set("recorded",
             recorded ? Poco::Dynamic::Var(checkpoint_json(*recorded)) : Poco::Dynamic::Var());
    print_json(std::cout, out);
    return 0;
  }
  std::cout << (dry_run ? "would restore " : "restored ")
            << (paths ? paths_text(*paths) + " of " : std::string()) << target.id << " ("
            << changes_text(report) << ")\n";
  print_report(report, context.workspace);
  print_safety(report);
  if (paths && !dry_run) {
    std::cout << "files only: the run's session slices are as they were (restore " << target.id
              << " without PATH restores them too)\n";
  }
  return 0;
}

int cmd_rollback(const Context& context, const Args& parsed) {
  const std::string& call_id = parsed.operands()[0];
  std::unique_ptr<runs::LedgerRun> run =
      context.open_run(parsed.value_or("--run", std::string(fsnap::kDefaultRun)), false);
  sandbox::FailureResult failure = run->transactions().fail(
      call_id, runs::redact(parsed.value_or("--result", "failed"),
                            runs::secret_values(context.config.run.secrets)));
  fsnap::Checkpoint recorded = run->repo()->read_checkpoint(failure.step.boundary.record.commit);
  const std::optional<fsnap::RestoreReport>& report = failure.step.restore;

  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("tool_call_id", call_id);
    out->set("outcome", std::string(sandbox::to_string(failure.decision.kind)));
    out->set("reason", failure.decision.reason.empty()
                           ? Poco::Dynamic::Var()
                           : Poco::Dynamic::Var(failure.decision.reason));
    Poco::JSON::Array::Ptr refused_by = new Poco::JSON::Array;
    for (const sandbox::BoundaryFact& fact : failure.decision.refused_by) {
      Poco::JSON::Object::Ptr item = make_object();
      item->set("tool_call_id", fact.call_id);
      item->set("tool_name", fact.tool_name);
      item->set("checkpoint", fact.checkpoint_id);
      item->set("run", fact.run.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(fact.run));
      refused_by->add(item);
    }
    out->set("refused_by", refused_by);
    Poco::JSON::Array::Ptr kept = new Poco::JSON::Array;
    for (const sandbox::KeptPath& k : failure.decision.kept) {
      Poco::JSON::Object::Ptr item = make_object();
      item->set("path", k.path.empty() ? k.resource : k.path);
      item->set("why", k.why);
      kept->add(item);
    }
    out->set("kept", kept);
    out->set("changes", changes_json(report ? report->changes : std::vector<fsnap::TreeChange>{}));
    set_large_files_json(*out, report ? *report : fsnap::RestoreReport{});
    out->set("safety", report && report->safety
                           ? Poco::Dynamic::Var(checkpoint_json(*report->safety))
                           : Poco::Dynamic::Var());
    out->set("recorded", checkpoint_json(recorded));
    print_json(std::cout, out);
    return 0;
  }
  switch (failure.decision.kind) {
    case sandbox::RollbackDecision::Kind::kRollBack:
      std::cout << "rolled back tool call " << call_id << " ("
                << changes_text(report ? *report : fsnap::RestoreReport{}) << ")\n";
      if (report) {
        print_report(*report, context.workspace);
        if (report->safety) {
          std::cout << "the workspace as the call left it is checkpoint " << report->safety->id
                    << " (failed:" << call_id << "); undo the rollback with: shadowbox restore "
                    << report->safety->id << '\n';
        }
      }
      for (const sandbox::KeptPath& kept : failure.decision.kept) {
        std::cout << "  kept " << fsnap::quote_path(kept.path.empty() ? kept.resource : kept.path)
                  << ": " << kept.why << '\n';
      }
      break;
    case sandbox::RollbackDecision::Kind::kUnchanged:
      std::cout << "tool call " << call_id << " changed no file: nothing to roll back\n";
      break;
    case sandbox::RollbackDecision::Kind::kRefuse:
    case sandbox::RollbackDecision::Kind::kKeep:
      std::cerr << "shadowbox: warning: tool call " << call_id
                << " was not rolled back: " << failure.decision.reason << '\n';
      break;
  }
  std::cout << "the failure is recorded as checkpoint " << recorded.id << '\n';
  return 0;
}

}  // namespace cli
