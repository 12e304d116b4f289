#include "sandbox/ledger.hpp"

#include <sstream>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "fsnap/error.hpp"
#include "sandbox/checkpoint_store.hpp"
#include "sandbox/execution_state.hpp"

namespace sandbox {

namespace {

constexpr const char* kFormat = "shadowbox.ledger.v1";

std::string text(const Poco::JSON::Object::Ptr& o, const std::string& key) {
  return o->has(key) && !o->isNull(key) ? o->getValue<std::string>(key) : std::string();
}

// The filesystem checkpoint a composite snapshot recorded, if it has one.
const fsnap::FilesystemSnapshot* host_snapshot(const CompositeSnapshot& snap) {
  for (const auto& [name, value] : snap.resources) {
    const fsnap::FilesystemSnapshot* fs = value.get<fsnap::FilesystemSnapshot>();
    if (fs != nullptr && !fs->commit.empty()) return fs;
  }
  return nullptr;
}

LedgerRecord record_of(const ToolCheckpoint& c, const CompositeSnapshot& snap,
                       const fsnap::FilesystemSnapshot& fs) {
  LedgerRecord r;
  r.checkpoint_id = fs.id;
  r.commit = fs.commit;
  r.run = snap.metadata.run;
  r.phase = snap.metadata.phase;
  r.tool_call_id = c.tool_call_id;
  r.tool_name = c.tool_name;
  r.input_summary = c.params;
  r.success = c.success;
  r.result_summary = c.result_summary;
  if (c.elapsed) r.elapsed_ms = c.elapsed->count();
  r.session_json = snap.session.to_json();
  return r;
}

}  // namespace

std::string LedgerRecord::to_json() const {
  Poco::JSON::Object::Ptr o = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("format", kFormat);
  o->set("checkpoint_id", checkpoint_id);
  o->set("commit", commit);
  o->set("run", run);
  o->set("phase", std::string(fsnap::to_string(phase)));
  o->set("tool_call_id", tool_call_id);
  o->set("tool_name", tool_name);
  o->set("input_summary", input_summary);
  o->set("success", success ? Poco::Dynamic::Var(*success) : Poco::Dynamic::Var());
  o->set("result_summary", result_summary);
  o->set("elapsed_ms", elapsed_ms ? Poco::Dynamic::Var(*elapsed_ms) : Poco::Dynamic::Var());
  Poco::JSON::Parser parser(new Poco::JSON::ParseHandler(/*preserveObjectOrder=*/true));
  o->set("session", session_json.empty() ? Poco::Dynamic::Var() : parser.parse(session_json));
  std::ostringstream out;
  o->stringify(out, 1);  // one key per line: readable in `git log --notes=shadowbox`
  out << '\n';
  return out.str();
}

LedgerRecord LedgerRecord::from_json(const std::string& json) {
  LedgerRecord r;
  try {
    Poco::JSON::Parser parser;
    Poco::JSON::Object::Ptr o = parser.parse(json).extract<Poco::JSON::Object::Ptr>();
    if (text(o, "format") != kFormat) throw std::invalid_argument("not a shadowbox ledger record");
    r.checkpoint_id = text(o, "checkpoint_id");
    r.commit = text(o, "commit");
    r.run = text(o, "run");
    std::optional<fsnap::Phase> phase = fsnap::parse_phase(text(o, "phase"));
    if (!phase) throw std::invalid_argument("ledger record: bad phase");
    r.phase = *phase;
    r.tool_call_id = text(o, "tool_call_id");
    r.tool_name = text(o, "tool_name");
    r.input_summary = text(o, "input_summary");
    if (o->has("success") && !o->isNull("success")) r.success = o->getValue<bool>("success");
    r.result_summary = text(o, "result_summary");
    if (o->has("elapsed_ms") && !o->isNull("elapsed_ms")) {
      r.elapsed_ms = o->getValue<std::int64_t>("elapsed_ms");
    }
    if (Poco::JSON::Object::Ptr session = o->getObject("session")) {
      std::ostringstream s;
      session->stringify(s);
      r.session_json = s.str();
    }
  } catch (const Poco::Exception& e) {
    throw std::invalid_argument("ledger record: " + e.displayText());
  }
  return r;
}

LedgerRecord LedgerRecord::for_checkpoint(const fsnap::Checkpoint& c,
                                          const SessionSnapshot& session) {
  LedgerRecord r;
  r.checkpoint_id = c.id;
  r.commit = c.commit;
  r.run = c.meta.run;
  r.phase = c.meta.phase;
  r.tool_call_id = c.meta.tool_call_id;
  r.tool_name = c.meta.tool_name;
  r.session_json = session.to_json();
  return r;
}

Ledger::Ledger(fsnap::Store store)
    : store_(std::move(store)), repo_(fsnap::ShadowRepo::open(store_.repo_dir(), false)) {}

void Ledger::write(const LedgerRecord& record) {
  fsnap::StoreLock lock = store_.lock();
  repo_.set_note(record.commit, record.to_json());
}

std::optional<LedgerRecord> Ledger::read(const fsnap::Checkpoint& checkpoint) const {
  std::optional<std::string> note = repo_.note(checkpoint.commit);
  if (!note) return std::nullopt;
  return LedgerRecord::from_json(*note);
}

std::optional<LedgerRecord> Ledger::latest(const std::string& run) const {
  // Newest first, in growing windows: usually the tip has a record, and only that
  // one note is read.
  std::size_t seen = 0;
  for (std::size_t window = 1;; window *= 8) {
    std::vector<fsnap::Checkpoint> chain;
    try {
      chain = repo_.log(run, window);
    } catch (const fsnap::Error& e) {
      if (e.code() == fsnap::ErrorCode::kNotFound) return std::nullopt;  // no such run yet
      throw;
    }
    for (std::size_t i = seen; i < chain.size(); ++i) {
      if (std::optional<LedgerRecord> r = read(chain[i])) return r;
    }
    if (chain.size() < window) return std::nullopt;
    seen = chain.size();
  }
}

std::vector<LedgerRecord> Ledger::records(const std::string& run) const {
  std::vector<fsnap::Checkpoint> chain = repo_.log(run, 0);
  std::vector<LedgerRecord> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (std::optional<LedgerRecord> r = read(*it)) out.push_back(std::move(*r));
  }
  return out;
}

void Ledger::rollback_to_tool(ExecutionState& state, const std::string& tool_call_id) {
  fsnap::Checkpoint pre;
  try {
    pre = repo_.resolve("pre:" + tool_call_id);
  } catch (const fsnap::Error& e) {
    throw std::out_of_range("no pre-tool checkpoint for tool call '" + tool_call_id +
                            "': " + e.what());
  }
  std::optional<LedgerRecord> record = read(pre);
  if (!record) {
    throw std::out_of_range("the pre-tool checkpoint of '" + tool_call_id +
                            "' has no ledger record");
  }
  CompositeSnapshot target;
  target.id = record->checkpoint_id;
  target.session = record->session();
  target.metadata.phase = fsnap::Phase::kPreTool;
  target.metadata.tool_call_id = record->tool_call_id;
  target.metadata.tool_name = record->tool_name;
  target.metadata.run = record->run;
  for (const ResourceRegistry::Entry* entry : state.resources().snapshotable()) {
    if (entry->snapshot_type != typeid(fsnap::FilesystemSnapshot)) continue;
    fsnap::FilesystemSnapshot fs;
    fs.id = pre.id;
    fs.commit = pre.commit;
    fs.tag = pre.meta.tag;
    fs.created_at = pre.created_at;
    fs.skipped = pre.skipped;
    target.resources.emplace(entry->name, ResourceSnapshot::of(std::move(fs)));
    break;
  }
  state.restore(target);
}

std::function<void(const ToolCheckpoint&)> Ledger::sink() {
  return [this](const ToolCheckpoint& c) {
    const fsnap::FilesystemSnapshot* pre = host_snapshot(c.pre_snapshot);
    if (pre == nullptr) return;  // nothing on disk to attach records to
    write(record_of(c, c.pre_snapshot, *pre));
    const std::optional<CompositeSnapshot>& end =
        c.post_snapshot ? c.post_snapshot : c.rollback_snapshot;
    if (end) {
      if (const fsnap::FilesystemSnapshot* fs = host_snapshot(*end)) write(record_of(c, *end, *fs));
    }
  };
}

}  // namespace sandbox
