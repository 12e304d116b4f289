// `shadowbox restore REF [--dry-run]`: make the workspace exactly a checkpoint.
#include <iostream>

#include "commands.hpp"
#include "fsnap/path_quoting.hpp"
#include "output.hpp"

namespace cli {

int cmd_restore(const Context& context, const Args& args) {
  CommandArgs parsed("restore", args, {"--run"}, {"--dry-run"});
  parsed.expect_operands(1, 1, "restore REF [--dry-run] [--run RUN]");
  fsnap::HostFilesystem workspace = context.open_workspace(false);
  fsnap::Checkpoint target = workspace.repo().resolve(parsed.operands()[0]);
  fsnap::RestoreOptions options;
  options.dry_run = parsed.has("--dry-run");
  options.run = parsed.value_or("--run", target.meta.run);
  fsnap::RestoreReport report = workspace.restore_checkpoint(target, options);

  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("target", checkpoint_json(target));
    out->set("dry_run", options.dry_run);
    out->set("changes", changes_json(report.changes));
    out->set("safety", report.safety ? Poco::Dynamic::Var(checkpoint_json(*report.safety))
                                     : Poco::Dynamic::Var());
    Poco::JSON::Array::Ptr kept = new Poco::JSON::Array;
    for (const std::string& path : report.kept) kept->add(sanitize_utf8(path));
    out->set("kept", kept);
    print_json(std::cout, out);
    return 0;
  }
  std::cout << (options.dry_run ? "would restore " : "restored ") << target.id << " ("
            << report.changes.size() << " change" << (report.changes.size() == 1 ? "" : "s")
            << ")\n";
  for (const fsnap::TreeChange& change : report.changes) std::cout << change_line(change) << '\n';
  for (const std::string& dir : report.kept) {
    std::cout << "kept " << fsnap::quote_path(dir) << "/ (it holds paths that are not captured)\n";
  }
  if (report.safety) {
    std::cout << "safety checkpoint " << report.safety->id
              << " taken first; undo with: shadowbox restore " << report.safety->id << '\n';
  }
  return 0;
}

}  // namespace cli
