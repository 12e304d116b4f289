// `shadowbox restore REF [--dry-run]`: make the workspace exactly a checkpoint.
//
// With a ledger record at REF, the run's STATE slices go back too (LOG slices keep
// everything), and the result is recorded as a new checkpoint. `restore
// pre:<call id>` of a call that has no outcome yet is that call's rollback: the
// failure is logged, as the in-process ToolRunner logs it.
#include <iostream>

#include "commands.hpp"
#include "fsnap/path_quoting.hpp"
#include "output.hpp"
#include "sandbox/tool_boundaries.hpp"

namespace cli {

int cmd_restore(const Context& context, const Args& args) {
  CommandArgs parsed("restore", args, {"--run", "--result"}, {"--dry-run"});
  parsed.expect_operands(1, 1, "restore REF [--dry-run] [--run RUN] [--result TEXT]");
  const std::string& ref = parsed.operands()[0];
  bool dry_run = parsed.has("--dry-run");
  fsnap::HostFilesystem workspace = context.open_workspace(false);
  fsnap::Checkpoint target = workspace.repo().resolve(ref);
  sandbox::Ledger ledger(workspace.store());
  sandbox::ToolBoundaries boundaries(workspace, ledger, parsed.value_or("--run", target.meta.run));
  std::optional<sandbox::LedgerRecord> target_record = ledger.read(target);
  bool tool_rollback =
      !dry_run && ref.rfind("pre:", 0) == 0 && target_record && !target_record->success.has_value();
  sandbox::BoundaryResult result =
      tool_rollback ? boundaries.rollback_tool(
                          target.meta.tool_call_id,
                          parsed.value_or("--result", "rolled back by shadowbox restore"))
                    : boundaries.restore(target, dry_run);
  const fsnap::RestoreReport& report = *result.restore;

  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("target", checkpoint_json(target));
    out->set("dry_run", dry_run);
    out->set("changes", changes_json(report.changes));
    out->set("safety", report.safety ? Poco::Dynamic::Var(checkpoint_json(*report.safety))
                                     : Poco::Dynamic::Var());
    Poco::JSON::Array::Ptr kept = new Poco::JSON::Array;
    for (const std::string& path : report.kept) kept->add(sanitize_utf8(path));
    out->set("kept", kept);
    out->set("recorded", dry_run ? Poco::Dynamic::Var()
                                 : Poco::Dynamic::Var(checkpoint_json(result.checkpoint)));
    out->set("tool_rollback", tool_rollback);
    print_json(std::cout, out);
    return 0;
  }
  std::cout << (dry_run ? "would restore " : "restored ") << target.id << " ("
            << report.changes.size() << " change" << (report.changes.size() == 1 ? "" : "s")
            << ")\n";
  for (const fsnap::TreeChange& change : report.changes) std::cout << change_line(change) << '\n';
  for (const std::string& dir : report.kept) {
    std::cout << "kept " << fsnap::quote_path(dir) << "/ (it holds paths that are not captured)\n";
  }
  if (tool_rollback) {
    std::cout << "rolled back tool call " << target.meta.tool_call_id
              << "; its failure is logged\n";
  }
  if (report.safety) {
    std::cout << "safety checkpoint " << report.safety->id
              << " taken first; undo with: shadowbox restore " << report.safety->id << '\n';
  }
  return 0;
}

}  // namespace cli
