// `shadowbox export RUN --branch NAME [--force]`: the run's tool calls as a branch of the
// git repository the workspace is in (hooks::export_run), touching nothing else of it.
#include <iostream>

#include "commands.hpp"
#include "fsnap/path_quoting.hpp"
#include "hooks/run_export.hpp"
#include "output.hpp"

namespace cli {

int cmd_export(const Context& context, const Args& parsed) {
  std::optional<std::string> branch = parsed.value("--branch");
  if (!branch || branch->empty()) throw parsed.usage_error("--branch NAME is needed");
  const std::string& run = parsed.operands()[0];
  fsnap::Store store = context.open_store(false);
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  hooks::RunExport exported = hooks::export_run(repo, context.workspace, context.config.capture,
                                                run, *branch, parsed.has("--force"));
  const fsnap::BranchExportResult& result = exported.branch;
  std::vector<const hooks::ExportedStep*> committed;
  std::vector<const hooks::ExportedStep*> unchanged_calls;
  for (const hooks::ExportedStep& step : exported.steps) {
    if (step.commit) {
      committed.push_back(&step);
    } else if (!step.tool_call_id.empty()) {
      unchanged_calls.push_back(&step);
    }
  }

  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("run", run);
    out->set("branch", *branch);
    out->set("ref", result.ref);
    out->set("repository", result.repository);
    out->set("base", result.base.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(result.base));
    out->set("tip", result.tip.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(result.tip));
    out->set("replaced", result.replaced);
    Poco::JSON::Array::Ptr commits = new Poco::JSON::Array;
    for (const hooks::ExportedStep* step : committed) {
      Poco::JSON::Object::Ptr item = make_object();
      item->set("commit", *step->commit);
      item->set("subject", sanitize_utf8(step->subject));
      auto or_null = [](const std::string& s) {
        return s.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(sanitize_utf8(s));
      };
      item->set("tool_call_id", or_null(step->tool_call_id));
      item->set("tool_name", or_null(step->tool_name));
      item->set("outcome", or_null(step->outcome));
      item->set("cost_usd",
                step->cost_usd ? Poco::Dynamic::Var(*step->cost_usd) : Poco::Dynamic::Var());
      item->set("checkpoint", step->checkpoint);
      commits->add(item);
    }
    out->set("commits", commits);
    Poco::JSON::Array::Ptr unchanged = new Poco::JSON::Array;
    for (const hooks::ExportedStep* step : unchanged_calls) {
      unchanged->add(sanitize_utf8(step->tool_call_id));
    }
    out->set("unchanged_calls", unchanged);
    Poco::JSON::Array::Ptr ignored = new Poco::JSON::Array;
    for (const std::string& path : result.ignored) ignored->add(sanitize_utf8(path));
    out->set("ignored", ignored);
    print_json(std::cout, out);
    return 0;
  }
  std::size_t n = committed.size();
  std::cout << (result.replaced ? "replaced" : "made") << " branch " << *branch << " of "
            << result.repository << ": " << n << (n == 1 ? " commit" : " commits") << " of run "
            << run << " on top of "
            << (result.base.empty() ? std::string("nothing (no commit yet)")
                                    : "HEAD " + result.base.substr(0, 12))
            << '\n';
  for (const hooks::ExportedStep* step : committed) {
    std::cout << "  " << step->commit->substr(0, 12) << ' ' << step->subject << '\n';
  }
  if (!unchanged_calls.empty()) {
    std::cout << unchanged_calls.size()
              << (unchanged_calls.size() == 1 ? " tool call" : " tool calls")
              << " changed no exported file (no commit)\n";
  }
  if (!result.ignored.empty()) {
    std::cout << "left out (the repository ignores them):";
    for (const std::string& path : result.ignored) std::cout << ' ' << fsnap::quote_path(path);
    std::cout << '\n';
  }
  std::cout << "HEAD, the index and the work tree are as they were; see it with: git log "
            << *branch << '\n';
  return 0;
}

}  // namespace cli
