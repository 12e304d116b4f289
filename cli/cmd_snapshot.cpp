// `shadowbox snapshot`: checkpoint the workspace, with a ledger record. With --phase
// pre_tool / post_tool it is a boundary of an external tool call (the transaction core's
// begin and succeed).
#include <iostream>

#include "background_maintenance.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "runs/redaction.hpp"

namespace cli {

namespace {
// A label is a line of the commit message: long enough for a sentence, not for a file.
constexpr std::size_t kMaxLabelBytes = 1024;
}  // namespace

int cmd_snapshot(const Context& context, const Args& parsed) {
  fsnap::CheckpointMeta meta;
  meta.tag = parsed.value_or("--tag", "");
  meta.tool_call_id = parsed.value_or("--tool-call-id", "");
  meta.tool_name = parsed.value_or("--tool-name", "");
  meta.run = parsed.value_or("--run", std::string(fsnap::kDefaultRun));
  meta.move_tag = parsed.has("--force");
  if (meta.move_tag && meta.tag.empty())
    throw parsed.usage_error("--force moves a --tag; none given");
  if (std::optional<std::string> phase = parsed.value("--phase")) {
    std::optional<fsnap::Phase> p = fsnap::parse_phase(*phase);
    if (!p || *p == fsnap::Phase::kSafety || *p == fsnap::Phase::kDenied) {
      throw parsed.usage_error("--phase must be pre_tool, post_tool, checkpoint or manual, not " +
                               fsnap::quote_input(*phase));
    }
    meta.phase = *p;
  }
  bool tool_phase = meta.phase == fsnap::Phase::kPreTool || meta.phase == fsnap::Phase::kPostTool;
  if (tool_phase && meta.tool_call_id.empty()) {
    throw parsed.usage_error("--phase " + std::string(fsnap::to_string(meta.phase)) +
                             " needs --tool-call-id");
  }
  meta.label = parsed.value_or("--label", "");
  if (tool_phase && !meta.label.empty()) {
    throw parsed.usage_error("--label names a checkpoint or manual snapshot; a " +
                             std::string(fsnap::to_string(meta.phase)) +
                             " boundary is named by its tool call");
  }
  if (meta.label.size() > kMaxLabelBytes) {
    throw parsed.usage_error("--label is " + std::to_string(meta.label.size()) +
                             " bytes long; at most " + std::to_string(kMaxLabelBytes));
  }

  // What goes into the ledger: never a secret (run.secrets, credential shapes).
  std::vector<std::string> secrets = runs::secret_values(context.config.run.secrets);
  auto recorded = [&](const std::string& text) { return runs::redact(text, secrets); };
  std::unique_ptr<runs::LedgerRun> run = context.open_run(meta.run, true);
  sandbox::ToolTransactions& tx = run->transactions();
  sandbox::StepResult result;
  switch (meta.phase) {
    case fsnap::Phase::kPreTool:
      result =
          tx.begin({meta.tool_call_id, meta.tool_name, recorded(parsed.value_or("--input", "")),
                    std::nullopt, parsed.value_or("--parent-call-id", "")},
                   {.tag = meta.tag, .move_tag = meta.move_tag});
      break;
    case fsnap::Phase::kPostTool:
      result = tx.succeed(meta.tool_call_id, recorded(parsed.value_or("--result", "")), meta.tag, 0,
                          meta.move_tag);
      break;
    default:
      result = tx.checkpoint(meta, nullptr, recorded(parsed.value_or("--result", "")));
      break;
  }
  fsnap::Checkpoint checkpoint = run->repo()->read_checkpoint(result.boundary.record.commit);
  maintain_in_background(context);
  if (context.options.json) {
    print_json(std::cout, checkpoint_json(checkpoint));
  } else {
    std::cout << checkpoint_line(checkpoint) << '\n';
    print_skipped(std::cout, checkpoint);
  }
  return 0;
}

}  // namespace cli
