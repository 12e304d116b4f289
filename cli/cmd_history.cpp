// `shadowbox log`, `show` and `diff`: read the history.
#include <algorithm>
#include <iostream>
#include <optional>
#include <typeindex>

#include <Poco/JSON/Parser.h>

#include "call_log.hpp"
#include "commands.hpp"
#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "hooks/adapter_state_diff.hpp"
#include "output.hpp"
#include "sandbox/ledger.hpp"
#include "sandbox/rollback_policy.hpp"
#include "sandbox/slice_types.hpp"

namespace cli {

namespace {

std::shared_ptr<fsnap::ShadowRepo> open_repo(const Context& context) {
  return context.open_repo(context.open_store(false));
}

// The ledger record of a checkpoint, or nullopt (also for a damaged one: the history
// is still shown).
std::optional<sandbox::LedgerRecord> record_of(const sandbox::Ledger& ledger,
                                               const fsnap::Checkpoint& c) {
  try {
    return ledger.read(c);
  } catch (const fsnap::Error&) {
    return std::nullopt;
  }
}

// " ok 12ms: summary" / " failed 12ms, rolled back: summary" for a record with an outcome.
std::string outcome_text(const sandbox::LedgerRecord& r) {
  if (!r.success && r.result_summary.empty()) return "";
  std::string text = !r.success ? " --" : *r.success ? " ok" : " failed";
  if (r.elapsed_ms) text += " " + std::to_string(*r.elapsed_ms) + "ms";
  if (!r.rollback.empty()) text += ", " + rollback_text(r, 200);
  // The error alone: the summary of a call that was not rolled back starts with why.
  std::string summary = r.result_summary;
  if (!r.rollback_reason.empty() && summary.rfind(r.rollback_reason + ": ", 0) == 0) {
    summary.erase(0, r.rollback_reason.size() + 2);
  }
  if (!summary.empty()) text += ": " + one_line(summary, 60);
  return text;
}

// The record's rollback as JSON: {"outcome", "reason"}, or null.
Poco::Dynamic::Var rollback_json(const sandbox::LedgerRecord& r) {
  if (r.rollback.empty()) return Poco::Dynamic::Var();
  Poco::JSON::Object::Ptr out = make_object();
  out->set("outcome", r.rollback);
  out->set("reason", r.rollback_reason.empty() ? Poco::Dynamic::Var()
                                               : Poco::Dynamic::Var(r.rollback_reason));
  auto paths = [](const std::vector<std::pair<std::string, std::string>>& list) {
    Poco::JSON::Array::Ptr array = new Poco::JSON::Array;
    for (const auto& [path, why] : list) {
      Poco::JSON::Object::Ptr item = make_object();
      item->set("path", path);
      item->set("why", why);
      array->add(item);
    }
    return array;
  };
  out->set("kept", paths(r.rollback_kept));
  out->set("unrestored", paths(r.rollback_unrestored));
  return out;
}

Poco::JSON::Object::Ptr record_json(const sandbox::LedgerRecord& r) {
  Poco::JSON::Parser parser;
  return parser.parse(r.to_json()).extract<Poco::JSON::Object::Ptr>();
}

// The checkpoint REF names (sandbox::Ledger::resolve: every form, failed:<id> too).
fsnap::Checkpoint resolve(const std::shared_ptr<fsnap::ShadowRepo>& repo, const std::string& ref) {
  return sandbox::Ledger(repo).resolve(ref);
}

// The tree of a checkpoint's parent, or "" (the empty tree) for the first of a run.
std::string parent_tree(const fsnap::ShadowRepo& repo, const fsnap::Checkpoint& checkpoint) {
  if (checkpoint.parent.empty()) return "";
  return repo.read_checkpoint(checkpoint.parent).tree;
}

}  // namespace

int cmd_log(const Context& context, const Args& parsed) {
  std::size_t limit = parsed.count("--max-count").value_or(0);  // usage errors before any I/O
  std::shared_ptr<fsnap::ShadowRepo> repo = open_repo(context);
  sandbox::Ledger ledger(repo);
  std::string run = parsed.value_or("--run", "");
  if (!run.empty() && !repo->has_run(run)) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound, "no run named " + fsnap::quote_input(run));
  }
  bool per_checkpoint = context.options.json || parsed.has("--checkpoints");
  std::vector<fsnap::Checkpoint> checkpoints;
  if (per_checkpoint) checkpoints = repo->log(run, limit);
  if (context.options.json) {
    Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
    for (const fsnap::Checkpoint& c : checkpoints) {
      Poco::JSON::Object::Ptr item = checkpoint_json(c);
      std::optional<sandbox::LedgerRecord> r = record_of(ledger, c);
      item->set("success",
                r && r->success ? Poco::Dynamic::Var(*r->success) : Poco::Dynamic::Var());
      item->set("result_summary", r ? r->result_summary : std::string());
      item->set("rollback", r ? rollback_json(*r) : Poco::Dynamic::Var());
      out->add(item);
    }
    print_json(std::cout, out);
  } else if (parsed.has("--checkpoints")) {
    for (const fsnap::Checkpoint& c : checkpoints) {
      std::optional<sandbox::LedgerRecord> r = record_of(ledger, c);
      std::cout << checkpoint_line(c) << (r ? outcome_text(*r) : "") << '\n';
      if (std::string lost = r ? unrestored_text(*r) : ""; !lost.empty()) {
        std::cout << "    " << lost << '\n';
      }
    }
  } else {
    std::vector<LogRow> rows =
        newest_log_rows(*repo, run, ledger, context.workspace.string(), limit);
    print_log_rows(std::cout, rows, kTableWidth);
  }
  return 0;
}

namespace {

// `show --json`: the checkpoint, its changes and its ledger record with the whole
// session, materialised from its tree.
void print_show_json(const sandbox::Ledger& ledger, const fsnap::Checkpoint& checkpoint,
                     const std::vector<fsnap::TreeChange>& changes,
                     const std::optional<sandbox::LedgerRecord>& record) {
  Poco::JSON::Object::Ptr out = checkpoint_json(checkpoint);
  out->set("changes", changes_json(changes));
  Poco::Dynamic::Var ledger_json;
  if (record) {
    Poco::JSON::Object::Ptr json = record_json(*record);
    if (!record->session_tree.empty()) {
      Poco::JSON::Parser parser;
      json->set("session", parser.parse(ledger.session_json(*record)));
    }
    ledger_json = json;
  }
  out->set("ledger", ledger_json);
  print_json(std::cout, out);
}

// The checkpoint's own lines of `show`: id, commit, run, phase, tool, tag, times.
void print_checkpoint_lines(const fsnap::Checkpoint& checkpoint) {
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
}

// The record's lines of `show`: outcome, rollback, undo, paths, input, session.
void print_record_lines(const sandbox::Ledger& ledger, const fsnap::CheckpointMeta& meta,
                        const sandbox::LedgerRecord& record) {
  if (record.success || !record.result_summary.empty()) {
    std::cout << "outcome     " << outcome_text(record) << '\n';
  }
  if (!record.rollback.empty()) {
    std::string text = rollback_text(record, std::string::npos);
    if (record.rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kRollBack)) {
      text += ": the workspace as the call left it is failed:" + meta.tool_call_id;
    }
    std::cout << "rollback     " << text << '\n';
  } else if (meta.phase == fsnap::Phase::kSafety && !meta.tool_call_id.empty()) {
    std::cout << "rollback     the workspace as the failed call left it, before its rollback\n";
  }
  if (!record.undoes.empty()) {
    std::cout << "undoes       tool call " << fsnap::quote_path(record.undoes)
              << " (its file changes reversed; reverse them back with: shadowbox undo "
              << fsnap::quote_path(meta.tool_call_id) << ")\n";
  }
  if (record.paths) {
    std::string paths;
    for (const std::string& p : *record.paths) {
      paths += (paths.empty() ? "" : ", ") + fsnap::quote_path(p);
    }
    std::cout << "paths        " << one_line(paths, 200) << '\n';
  }
  if (!record.input_summary.empty()) {
    std::cout << "input        " << record.input_summary.substr(0, 200) << '\n';
  }
  if (!record.has_session()) return;
  try {
    sandbox::SessionSnapshot session = ledger.session(record);
    std::cout << "session      " << counted(session.slices.size(), "slice", "slices") << ":";
    for (const auto& [type, items] : session.slices) {
      std::cout << ' ' << sandbox::SliceTypes::name_of(type) << '(' << items.size() << ')';
    }
    std::cout << '\n';
  } catch (const std::exception& e) {
    std::cout << "session      (cannot be decoded here: " << e.what() << ")\n";
  }
}

}  // namespace

int cmd_show(const Context& context, const Args& parsed) {
  std::shared_ptr<fsnap::ShadowRepo> repo = open_repo(context);
  sandbox::Ledger ledger(repo);
  fsnap::Checkpoint checkpoint = ledger.resolve(parsed.operands()[0]);
  std::vector<fsnap::TreeChange> changes =
      repo->diff_trees(parent_tree(*repo, checkpoint), checkpoint.tree);
  std::optional<sandbox::LedgerRecord> record = record_of(ledger, checkpoint);
  if (context.options.json) {
    print_show_json(ledger, checkpoint, changes, record);
    return 0;
  }
  print_checkpoint_lines(checkpoint);
  if (record) print_record_lines(ledger, checkpoint.meta, *record);
  std::cout << '\n'
            << changes.size() << " change" << (changes.size() == 1 ? "" : "s")
            << (checkpoint.parent.empty() ? " (whole tree)" : " since the previous checkpoint")
            << ":\n";
  for (const fsnap::TreeChange& change : changes) std::cout << change_line(change) << '\n';
  return 0;
}

// The session snapshot a checkpoint's record holds (Error kNotFound without one).
sandbox::SessionSnapshot session_at(const sandbox::Ledger& ledger, const fsnap::Checkpoint& c) {
  std::optional<sandbox::LedgerRecord> record = ledger.read(c);
  if (!record || !record->has_session()) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "checkpoint " + c.id + " has no session snapshot in its record");
  }
  return ledger.session(*record);
}

// The agent sessions' part of `diff --session --json`: {"added": [ids], "removed":
// [ids], "changed": [{"session_id", "messages_added", "ended", "last_activity_at"}],
// "session_data": [{"status", "path"}]}.
Poco::JSON::Object::Ptr agent_sessions_json(const hooks::AdapterStateDiff& d) {
  Poco::JSON::Object::Ptr out = make_object();
  Poco::JSON::Array::Ptr added = new Poco::JSON::Array;
  for (const hooks::AgentSession& s : d.added) added->add(s.session_id);
  Poco::JSON::Array::Ptr removed = new Poco::JSON::Array;
  for (const hooks::AgentSession& s : d.removed) removed->add(s.session_id);
  Poco::JSON::Array::Ptr changed = new Poco::JSON::Array;
  for (const hooks::SessionChange& c : d.changed) {
    Poco::JSON::Object::Ptr item = make_object();
    item->set("session_id", c.session_id);
    item->set("messages_added", c.messages_added());
    item->set("ended", c.ended);
    item->set("last_activity_at", c.last_activity_after);
    changed->add(item);
  }
  out->set("added", added);
  out->set("removed", removed);
  out->set("changed", changed);
  out->set("session_data", changes_json(d.session_data));
  return out;
}

void print_agent_sessions(const hooks::AdapterStateDiff& d) {
  for (const hooks::AgentSession& s : d.added) {
    std::cout << "agent session " << s.session_id << ": started (" << s.source << ")\n";
  }
  for (const hooks::AgentSession& s : d.removed) {
    std::cout << "agent session " << s.session_id << ": gone\n";
  }
  for (const hooks::SessionChange& c : d.changed) {
    std::size_t n = c.messages_added();
    std::cout << "agent session " << c.session_id << ": " << n << " message" << (n == 1 ? "" : "s")
              << " added" << (c.ended ? ", ended" : "") << '\n';
  }
  for (const fsnap::TreeChange& change : d.session_data) {
    std::cout << "agent session data: " << change_line(change) << '\n';
  }
}

namespace {

Poco::Dynamic::Var encode_item(std::type_index type, const statekit::Item& item) {
  return sandbox::SliceTypes::find(type)->encode(item.get());
}

std::string item_count(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " item" : " items");
}

// A modified slice as diff --session shows it: its sizes, the positions whose items
// differ and how many its window dropped; line is its line of text. A slice a count
// window bounds loses its oldest items from the front while the others keep their
// positions (the first one's is SliceItems::start()), so two versions are lined up by
// position and the positions only the older one holds count as dropped, not changed. A
// slice rebuilt from scratch starts again at 0, and is compared index by index.
Poco::JSON::Object::Ptr modified_slice(std::type_index type, const statekit::SliceItems& before,
                                       const statekit::SliceItems& after, std::string& line) {
  bool aligned = after.start() >= before.start();
  std::size_t shift =
      aligned ? after.start() - before.start() : 0;   // after[i] is before[i + shift]
  std::size_t origin = aligned ? before.start() : 0;  // the position of before[0]
  std::size_t dropped = std::min(shift, before.size());
  Poco::JSON::Array::Ptr changed = new Poco::JSON::Array;
  for (std::size_t i = dropped; i < std::max(before.size(), shift + after.size()); ++i) {
    bool in_before = i < before.size();
    bool in_after = i >= shift && i - shift < after.size();
    Poco::Dynamic::Var was = in_before ? encode_item(type, before[i]) : Poco::Dynamic::Var();
    Poco::Dynamic::Var now = in_after ? encode_item(type, after[i - shift]) : Poco::Dynamic::Var();
    if (in_before && in_after && was.toString() == now.toString()) continue;
    Poco::JSON::Object::Ptr change = make_object();
    change->set("index", origin + i);
    change->set("before", was);
    change->set("after", now);
    changed->add(change);
  }
  Poco::JSON::Object::Ptr entry = make_object();
  entry->set("before", before.size());
  entry->set("after", after.size());
  entry->set("dropped", dropped);
  entry->set("changed", changed);
  line = "M " + sandbox::SliceTypes::name_of(type) + " (" + std::to_string(before.size()) + " -> " +
         item_count(after.size()) + ", " + std::to_string(changed->size()) + " changed" +
         (dropped == 0 ? "" : ", " + std::to_string(dropped) + " dropped by its window") + ")";
  return entry;
}

}  // namespace

// `diff --session REF REF2`: the slices added, removed and modified between two
// checkpoints' session snapshots; a modified slice with the positions whose items differ
// and how many its window dropped.
int diff_sessions(const Context& context, const Args& parsed) {
  if (parsed.operands().size() != 2) {
    throw parsed.usage_error("--session compares two checkpoints: give REF and REF2");
  }
  std::shared_ptr<fsnap::ShadowRepo> repo = open_repo(context);
  sandbox::Ledger ledger(repo);
  fsnap::Checkpoint from = ledger.resolve(parsed.operands()[0]);
  fsnap::Checkpoint to = ledger.resolve(parsed.operands()[1]);
  sandbox::SessionSnapshot before = session_at(ledger, from);
  sandbox::SessionSnapshot after = session_at(ledger, to);
  sandbox::SnapshotDiff diff = sandbox::SessionSnapshot::diff(before, after);
  auto items_json = [&](std::type_index type, const statekit::SliceItems& items) {
    Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
    for (std::size_t i = 0; i < items.size(); ++i) out->add(encode_item(type, items[i]));
    return out;
  };
  Poco::JSON::Object::Ptr added = make_object();
  Poco::JSON::Object::Ptr removed = make_object();
  Poco::JSON::Object::Ptr modified = make_object();
  std::vector<std::string> lines;
  for (const auto& [type, items] : diff.added) {
    std::string name = sandbox::SliceTypes::name_of(type);
    added->set(name, items_json(type, items));
    lines.push_back("A " + name + " (" + item_count(items.size()) + ")");
  }
  for (const auto& [type, items] : diff.removed) {
    std::string name = sandbox::SliceTypes::name_of(type);
    removed->set(name, items_json(type, items));
    lines.push_back("D " + name + " (" + item_count(items.size()) + ")");
  }
  for (const auto& [type, versions] : diff.modified) {
    modified->set(sandbox::SliceTypes::name_of(type),
                  modified_slice(type, versions.first, versions.second, lines.emplace_back()));
  }
  hooks::AdapterStateDiff agents = hooks::diff_adapter_states(before.slice<hooks::AgentSession>(),
                                                              after.slice<hooks::AgentSession>());
  if (from.meta.run == to.meta.run) {
    agents.session_data =
        hooks::session_data_changes(*repo, to.meta.run, from.created_at, to.created_at);
  }
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("from", checkpoint_json(from));
    out->set("to", checkpoint_json(to));
    out->set("added", added);
    out->set("removed", removed);
    out->set("modified", modified);
    out->set("agent_sessions", agent_sessions_json(agents));
    print_json(std::cout, out);
    return 0;
  }
  std::sort(lines.begin(), lines.end(),
            [](const std::string& a, const std::string& b) { return a.substr(2) < b.substr(2); });
  for (const std::string& line : lines) std::cout << line << '\n';
  print_agent_sessions(agents);
  return 0;
}

int cmd_diff(const Context& context, const Args& parsed) {
  if (parsed.has("--session")) return diff_sessions(context, parsed);
  std::string from_tree;
  std::string to_tree;
  Poco::JSON::Object::Ptr out = make_object();
  if (parsed.operands().size() == 2) {
    std::shared_ptr<fsnap::ShadowRepo> repo = open_repo(context);
    fsnap::Checkpoint from = resolve(repo, parsed.operands()[0]);
    fsnap::Checkpoint to = resolve(repo, parsed.operands()[1]);
    std::vector<fsnap::TreeChange> changes = repo->diff_trees(from.tree, to.tree);
    std::string patch = parsed.has("--name-status") && !context.options.json
                            ? std::string()
                            : repo->unified_diff(from.tree, to.tree);
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
  std::unique_ptr<runs::LedgerRun> run = context.open_run(std::string(fsnap::kDefaultRun), false);
  fsnap::HostFilesystem& workspace = run->workspace();
  fsnap::Checkpoint from = resolve(workspace.shared_repo(), parsed.operands()[0]);
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
