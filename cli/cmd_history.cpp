// `shadowbox log`, `show` and `diff`: read the history.
#include <iostream>

#include "commands.hpp"
#include "fsnap/path_quoting.hpp"
#include "output.hpp"

namespace cli {

namespace {

fsnap::ShadowRepo open_repo(const Context& context) {
  fsnap::Store store = context.open_store(false);
  return fsnap::ShadowRepo::open(store.repo_dir(), false);
}

// The tree of a checkpoint's parent, or "" (the empty tree) for the first of a run.
std::string parent_tree(const fsnap::ShadowRepo& repo, const fsnap::Checkpoint& checkpoint) {
  if (checkpoint.parent.empty()) return "";
  return repo.read_checkpoint(checkpoint.parent).tree;
}

}  // namespace

int cmd_log(const Context& context, const Args& args) {
  CommandArgs parsed("log", args, {"--run", "-n"}, {}, {{"--max-count", "-n"}});
  parsed.expect_operands(0, 0, "log [--run RUN] [-n N]");
  std::size_t limit = parsed.count("-n").value_or(0);  // usage errors before any I/O
  fsnap::ShadowRepo repo = open_repo(context);
  std::vector<fsnap::Checkpoint> checkpoints = repo.log(parsed.value_or("--run", ""), limit);
  if (context.options.json) {
    Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
    for (const fsnap::Checkpoint& c : checkpoints) out->add(checkpoint_json(c));
    print_json(std::cout, out);
  } else {
    for (const fsnap::Checkpoint& c : checkpoints) std::cout << checkpoint_line(c) << '\n';
  }
  return 0;
}

int cmd_show(const Context& context, const Args& args) {
  CommandArgs parsed("show", args, {}, {});
  parsed.expect_operands(1, 1, "show REF");
  fsnap::ShadowRepo repo = open_repo(context);
  fsnap::Checkpoint checkpoint = repo.resolve(parsed.operands()[0]);
  std::vector<fsnap::TreeChange> changes =
      repo.diff_trees(parent_tree(repo, checkpoint), checkpoint.tree);
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = checkpoint_json(checkpoint);
    out->set("changes", changes_json(changes));
    print_json(std::cout, out);
    return 0;
  }
  const fsnap::CheckpointMeta& meta = checkpoint.meta;
  std::cout << "checkpoint   " << checkpoint.id << '\n'
            << "commit       " << checkpoint.commit << '\n'
            << "run          " << fsnap::quote_path(meta.run) << '\n'
            << "phase        " << fsnap::to_string(meta.phase) << '\n';
  if (!meta.tool_name.empty())
    std::cout << "tool         " << fsnap::quote_path(meta.tool_name) << '\n';
  if (!meta.tool_call_id.empty()) {
    std::cout << "tool call    " << fsnap::quote_path(meta.tool_call_id) << '\n';
  }
  if (!meta.tag.empty()) std::cout << "tag          " << fsnap::quote_path(meta.tag) << '\n';
  std::cout << "created      " << fsnap::format_timestamp(checkpoint.created_at) << '\n'
            << "parent       "
            << (checkpoint.parent.empty() ? "(first of its run)" : checkpoint.parent) << '\n';
  print_skipped(std::cout, checkpoint);
  std::cout << '\n'
            << changes.size() << " change" << (changes.size() == 1 ? "" : "s")
            << (checkpoint.parent.empty() ? " (whole tree)" : " since the previous checkpoint")
            << ":\n";
  for (const fsnap::TreeChange& change : changes) std::cout << change_line(change) << '\n';
  return 0;
}

int cmd_diff(const Context& context, const Args& args) {
  CommandArgs parsed("diff", args, {}, {"--name-status"});
  parsed.expect_operands(1, 2, "diff REF [REF2] [--name-status]");
  std::string from_tree;
  std::string to_tree;
  Poco::JSON::Object::Ptr out = make_object();
  if (parsed.operands().size() == 2) {
    fsnap::ShadowRepo repo = open_repo(context);
    fsnap::Checkpoint from = repo.resolve(parsed.operands()[0]);
    fsnap::Checkpoint to = repo.resolve(parsed.operands()[1]);
    std::vector<fsnap::TreeChange> changes = repo.diff_trees(from.tree, to.tree);
    std::string patch = parsed.has("--name-status") && !context.options.json
                            ? std::string()
                            : repo.unified_diff(from.tree, to.tree);
    out->set("from", checkpoint_json(from));
    out->set("to", checkpoint_json(to));
    out->set("changes", changes_json(changes));
    out->set("patch", sanitize_utf8(patch));
    if (context.options.json) {
      print_json(std::cout, out);
    } else if (parsed.has("--name-status")) {
      for (const fsnap::TreeChange& change : changes) std::cout << change_line(change) << '\n';
    } else {
      std::cout << patch;
    }
    return 0;
  }
  // One REF: compare it with the live workspace (captured, not recorded).
  fsnap::HostFilesystem workspace = context.open_workspace(false);
  fsnap::Checkpoint from = workspace.repo().resolve(parsed.operands()[0]);
  std::string live = workspace.capture_tree();
  std::vector<fsnap::TreeChange> changes = workspace.repo().diff_trees(from.tree, live);
  if (context.options.json) {
    out->set("from", checkpoint_json(from));
    out->set("to", "workspace");
    out->set("changes", changes_json(changes));
    out->set("patch", sanitize_utf8(workspace.repo().unified_diff(from.tree, live)));
    print_json(std::cout, out);
  } else if (parsed.has("--name-status")) {
    for (const fsnap::TreeChange& change : changes) std::cout << change_line(change) << '\n';
  } else {
    std::cout << workspace.repo().unified_diff(from.tree, live);
  }
  return 0;
}

}  // namespace cli
