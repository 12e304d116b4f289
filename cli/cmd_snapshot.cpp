// `shadowbox snapshot`: checkpoint the workspace.
#include <iostream>

#include "commands.hpp"
#include "output.hpp"

namespace cli {

int cmd_snapshot(const Context& context, const Args& args) {
  CommandArgs parsed("snapshot", args,
                     {"--tag", "--phase", "--tool-call-id", "--tool-name", "--run"}, {});
  parsed.expect_operands(0, 0,
                         "snapshot [--tag T] [--phase pre_tool|post_tool|checkpoint|manual] "
                         "[--tool-call-id ID] [--tool-name NAME] [--run RUN]");
  fsnap::CheckpointMeta meta;
  meta.tag = parsed.value_or("--tag", "");
  meta.tool_call_id = parsed.value_or("--tool-call-id", "");
  meta.tool_name = parsed.value_or("--tool-name", "");
  meta.run = parsed.value_or("--run", std::string(fsnap::kDefaultRun));
  if (std::optional<std::string> phase = parsed.value("--phase")) {
    std::optional<fsnap::Phase> p = fsnap::parse_phase(*phase);
    if (!p || *p == fsnap::Phase::kSafety) {
      throw UsageError(
          "snapshot: --phase must be pre_tool, post_tool, checkpoint or manual, not '" + *phase +
          "'");
    }
    meta.phase = *p;
  }
  fsnap::HostFilesystem workspace = context.open_workspace(true);
  fsnap::Checkpoint checkpoint = workspace.checkpoint(meta);
  if (context.options.json) {
    print_json(std::cout, checkpoint_json(checkpoint));
  } else {
    std::cout << checkpoint_line(checkpoint) << '\n';
    print_skipped(std::cout, checkpoint);
  }
  return 0;
}

}  // namespace cli
