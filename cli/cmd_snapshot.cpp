// `shadowbox snapshot`: checkpoint the workspace, with a ledger record.
#include <iostream>

#include "commands.hpp"
#include "output.hpp"
#include "sandbox/tool_boundaries.hpp"

namespace cli {

int cmd_snapshot(const Context& context, const Args& args) {
  CommandArgs parsed(
      "snapshot", args,
      {"--tag", "--phase", "--tool-call-id", "--tool-name", "--run", "--input", "--result"}, {});
  const char* synopsis =
      "snapshot [--tag T] [--phase pre_tool|post_tool|checkpoint|manual] [--tool-call-id ID] "
      "[--tool-name NAME] [--run RUN] [--input TEXT] [--result TEXT]";
  parsed.expect_operands(0, 0, synopsis);
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
  bool tool_phase = meta.phase == fsnap::Phase::kPreTool || meta.phase == fsnap::Phase::kPostTool;
  if (tool_phase && meta.tool_call_id.empty()) {
    throw UsageError("snapshot: --phase " + std::string(fsnap::to_string(meta.phase)) +
                     " needs --tool-call-id");
  }

  fsnap::HostFilesystem workspace = context.open_workspace(true);
  sandbox::Ledger ledger(workspace.store());
  sandbox::ToolBoundaries boundaries(workspace, ledger, meta.run);
  sandbox::BoundaryResult result;
  switch (meta.phase) {
    case fsnap::Phase::kPreTool:
      result = boundaries.pre_tool(meta.tool_call_id, meta.tool_name,
                                   parsed.value_or("--input", ""), meta.tag);
      break;
    case fsnap::Phase::kPostTool:
      result = boundaries.post_tool(meta.tool_call_id, parsed.value_or("--result", ""), meta.tag);
      break;
    default:
      result = boundaries.checkpoint(meta);
      break;
  }
  if (context.options.json) {
    print_json(std::cout, checkpoint_json(result.checkpoint));
  } else {
    std::cout << checkpoint_line(result.checkpoint) << '\n';
    print_skipped(std::cout, result.checkpoint);
  }
  return 0;
}

}  // namespace cli
