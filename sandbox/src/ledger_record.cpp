#include "sandbox/ledger_record.hpp"

#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "sandbox/containment.hpp"
#include "sandbox/errors.hpp"

namespace sandbox {

namespace {

// v2 names the session tree; v1 held the session inline.
constexpr const char* kFormat = "shadowbox.ledger.v2";
constexpr const char* kFormatV1 = "shadowbox.ledger.v1";

// [{"path", "why"}, ...]
Poco::JSON::Array::Ptr paths_json(const std::vector<std::pair<std::string, std::string>>& paths) {
  Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
  for (const auto& [path, why] : paths) {
    Poco::JSON::Object::Ptr item = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
    item->set("path", path);
    item->set("why", why);
    out->add(item);
  }
  return out;
}

// 40 lowercase hex digits.
bool is_commit_id(const std::string& id) {
  return id.size() == 40 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string text(const Poco::JSON::Object::Ptr& o, const std::string& key) {
  return o->has(key) && !o->isNull(key) ? o->getValue<std::string>(key) : std::string();
}

}  // namespace

void LedgerRecord::set_outcome(const CallOutcome& outcome) {
  input_summary = outcome.input_summary;
  success = outcome.success;
  result_summary = outcome.result_summary;
  elapsed_ms = outcome.elapsed_ms;
  rollback = outcome.rollback;
  rollback_reason = outcome.rollback_reason;
  rollback_kept = outcome.rollback_kept;
  rollback_unrestored = outcome.rollback_unrestored;
  agent_denied = outcome.agent_denied;
}

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
  if (!rollback.empty()) {
    Poco::JSON::Object::Ptr fate = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
    fate->set("outcome", rollback);
    fate->set("reason",
              rollback_reason.empty() ? Poco::Dynamic::Var() : Poco::Dynamic::Var(rollback_reason));
    fate->set("kept", paths_json(rollback_kept));
    if (!rollback_unrestored.empty()) fate->set("unrestored", paths_json(rollback_unrestored));
    o->set("rollback", fate);
  }
  if (agent_denied) o->set("agent_denied", true);
  if (!decision.empty()) o->set("decision", decision);
  if (safety_event) o->set("safety_event", safety_event_json(*safety_event));
  if (!parent_call_id.empty()) o->set("parent_call_id", parent_call_id);
  if (!home_commit.empty()) o->set("home", home_commit);
  if (!undoes.empty()) o->set("undoes", undoes);
  if (paths) {
    Poco::JSON::Array::Ptr list = new Poco::JSON::Array;
    for (const std::string& p : *paths) list->add(p);
    o->set("paths", list);
  }
  if (!session_tree.empty()) {
    Poco::JSON::Object::Ptr session = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
    session->set("tree", session_tree);
    session->set("id", session_stamp.id);
    session->set("session_id", session_stamp.session_id);
    session->set("created_at", fsnap::format_timestamp(session_stamp.created_at));
    o->set("session", session);
  } else if (!session_json.empty()) {
    Poco::JSON::Parser parser(new Poco::JSON::ParseHandler(/*preserveObjectOrder=*/true));
    o->set("session", parser.parse(session_json));
  } else {
    o->set("session", Poco::Dynamic::Var());
  }
  std::ostringstream out;
  o->stringify(out, 1);  // one key per line: readable in `git log --notes=shadowbox`
  out << '\n';
  return out.str();
}

LedgerRecord LedgerRecord::from_json(const std::string& json) {
  LedgerRecord r;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(json);
    if (parsed.type() != typeid(Poco::JSON::Object::Ptr)) {
      throw Error(ErrorCode::kCorrupt, "not a shadowbox ledger record");
    }
    Poco::JSON::Object::Ptr o = parsed.extract<Poco::JSON::Object::Ptr>();
    if (text(o, "format") != kFormat && text(o, "format") != kFormatV1) {
      throw Error(ErrorCode::kCorrupt, "not a shadowbox ledger record");
    }
    r.checkpoint_id = text(o, "checkpoint_id");
    r.commit = text(o, "commit");
    r.run = text(o, "run");
    std::optional<fsnap::Phase> phase = fsnap::parse_phase(text(o, "phase"));
    if (!phase) throw Error(ErrorCode::kCorrupt, "ledger record: bad phase");
    r.phase = *phase;
    r.tool_call_id = text(o, "tool_call_id");
    r.tool_name = text(o, "tool_name");
    r.input_summary = text(o, "input_summary");
    if (o->has("success") && !o->isNull("success")) r.success = o->getValue<bool>("success");
    r.result_summary = text(o, "result_summary");
    if (o->has("elapsed_ms") && !o->isNull("elapsed_ms")) {
      r.elapsed_ms = o->getValue<std::int64_t>("elapsed_ms");
    }
    if (Poco::JSON::Object::Ptr fate = o->getObject("rollback")) {
      r.rollback = text(fate, "outcome");
      r.rollback_reason = text(fate, "reason");
      if (Poco::JSON::Array::Ptr kept = fate->getArray("kept")) {
        for (std::size_t i = 0; i < kept->size(); ++i) {
          Poco::JSON::Object::Ptr k = kept->getObject(i);
          if (!k) throw Error(ErrorCode::kCorrupt, "ledger record: bad rollback.kept");
          r.rollback_kept.emplace_back(text(k, "path"), text(k, "why"));
        }
      }
      if (Poco::JSON::Array::Ptr unrestored = fate->getArray("unrestored")) {
        for (std::size_t i = 0; i < unrestored->size(); ++i) {
          Poco::JSON::Object::Ptr u = unrestored->getObject(i);
          if (!u) throw Error(ErrorCode::kCorrupt, "ledger record: bad rollback.unrestored");
          r.rollback_unrestored.emplace_back(text(u, "path"), text(u, "why"));
        }
      }
    }
    r.agent_denied = o->optValue<bool>("agent_denied", false);
    r.decision = text(o, "decision");
    if (o->has("safety_event") && !o->isNull("safety_event")) {
      r.safety_event = safety_event_from_json(o->get("safety_event"));
    }
    r.parent_call_id = text(o, "parent_call_id");
    r.home_commit = text(o, "home");
    if (!r.home_commit.empty() && !is_commit_id(r.home_commit)) {
      throw Error(ErrorCode::kCorrupt, "ledger record: bad home commit");
    }
    r.undoes = text(o, "undoes");
    if (Poco::JSON::Array::Ptr list = o->getArray("paths")) {
      r.paths.emplace();
      for (std::size_t i = 0; i < list->size(); ++i)
        r.paths->push_back(list->getElement<std::string>(i));
    }
    if (Poco::JSON::Object::Ptr session = o->getObject("session");
        session && session->has("tree")) {
      r.session_tree = text(session, "tree");
      r.session_stamp.id = text(session, "id");
      r.session_stamp.session_id = text(session, "session_id");
      std::optional<std::chrono::system_clock::time_point> created =
          fsnap::parse_timestamp(text(session, "created_at"));
      if (!created) throw Error(ErrorCode::kCorrupt, "ledger record: bad session created_at");
      r.session_stamp.created_at = *created;
    } else if (session) {
      std::ostringstream s;
      session->stringify(s);
      r.session_json = s.str();
    }
  } catch (const Poco::Exception& e) {
    throw Error(ErrorCode::kCorrupt, "ledger record: " + e.displayText());
  }
  return r;
}

LedgerRecord LedgerRecord::for_checkpoint(const fsnap::Checkpoint& c, std::string session_tree,
                                          SessionTrees::SessionStamp stamp) {
  LedgerRecord r;
  r.checkpoint_id = c.id;
  r.commit = c.commit;
  r.run = c.meta.run;
  r.phase = c.meta.phase;
  r.tool_call_id = c.meta.tool_call_id;
  r.tool_name = c.meta.tool_name;
  r.session_tree = std::move(session_tree);
  r.session_stamp = std::move(stamp);
  return r;
}

}  // namespace sandbox
