// Codex's conversation cut before a tool call (codex_adapter.hpp says what it does).
//
// A rollout is the thread's record, one JSON line each: session_meta first, then
// response_item lines (the conversation the model is sent: messages, reasoning, function
// calls and their outputs), event_msg, turn_context, token_usage_record and world_state
// lines. A resume rebuilds the model's history from the response_items in file order,
// so the lines before a model turn are the conversation up to it.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/codex_adapter.hpp"
#include "sandbox/errors.hpp"
#include "session_file.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

using Poco::JSON::Object;
using sandbox::Error;
using sandbox::ErrorCode;
using session_file::Line;

constexpr const char* kSessions = ".codex/sessions";

std::string text_of(const Object::Ptr& o, const std::string& key) {
  return o ? o->optValue<std::string>(key, "") : "";
}

// The payload of a line of type type, or null.
Object::Ptr payload_of(const Line& line, const std::string& type) {
  return text_of(line.object, "type") == type ? line.object->getObject("payload") : nullptr;
}

// Whether a response_item payload is something the model said: an item of its reply.
bool is_model_output(const Object::Ptr& item) {
  static const std::set<std::string> kReplyItems = {
      "reasoning",       "function_call",    "custom_tool_call",     "local_shell_call",
      "web_search_call", "tool_search_call", "image_generation_call"};
  std::string type = text_of(item, "type");
  return kReplyItems.count(type) != 0 ||
         (type == "message" && text_of(item, "role") == "assistant");
}

// Whether a response_item payload is the model's call call_id.
bool is_call(const Object::Ptr& item, const std::string& call_id) {
  std::string type = text_of(item, "type");
  return (type == "function_call" || type == "custom_tool_call" || type == "local_shell_call") &&
         text_of(item, "call_id") == call_id;
}

// The index of the line of the call in lines (its last, should a resumed thread have
// recorded it twice), or -1.
long call_line(const std::vector<Line>& lines, const std::string& call_id) {
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (is_call(payload_of(lines[i], "response_item"), call_id)) return static_cast<long>(i);
  }
  return -1;
}

// Whether an event_msg payload is the record of something the model said (what the CLI
// shows of a reply: its message, its reasoning).
bool is_model_event(const Object::Ptr& event) {
  static const std::set<std::string> kReplyEvents = {"agent_message", "agent_reasoning",
                                                     "agent_reasoning_raw_content",
                                                     "agent_reasoning_section_break"};
  std::string type = text_of(event, "type");
  if (kReplyEvents.count(type) != 0) return true;
  if (type != "item_started" && type != "item_completed" && type != "item_updated") return false;
  std::string item = text_of(event ? event->getObject("item") : nullptr, "type");
  return item == "AgentMessage" || item == "Reasoning";
}

// The first line of the model's reply that holds the call at lines[call]: the items of
// one reply (reasoning, a message, parallel calls) and the events that show them follow
// each other, with only other events between; what the model was sent (a user message,
// a call's output), a response's token_usage_record or a new turn's context ends the
// walk back.
std::size_t reply_start(const std::vector<Line>& lines, std::size_t call) {
  std::size_t start = call;
  for (std::size_t i = call; i-- > 1;) {
    std::string type = text_of(lines[i].object, "type");
    if (type == "event_msg") {
      if (is_model_event(payload_of(lines[i], "event_msg"))) start = i;
      continue;
    }
    if (type != "response_item" || !is_model_output(payload_of(lines[i], "response_item"))) break;
    start = i;
  }
  return start;
}

// The rollout's first line, checked to be thread thread's session_meta: its payload.
Object::Ptr session_meta(const fs::path& file, const std::vector<Line>& lines,
                         const std::string& thread) {
  Object::Ptr meta = lines.empty() ? nullptr : payload_of(lines.front(), "session_meta");
  if (!meta || text_of(meta, "id") != thread) {
    throw Error(ErrorCode::kCorrupt, file.string() + " does not start with the session_meta of " +
                                         "Codex thread " + fsnap::quote_input(thread));
  }
  return meta;
}

// A rollout of a thread and where in it a call is.
struct CallInRollout {
  fs::path file;
  std::vector<Line> lines;
  std::size_t call = 0;  // the call's line
};

// The rollout of thread in home that holds call (a thread has one; a copy elsewhere
// would be found too). Error kNotFound, kCorrupt (codex_cut_session says when).
// The rollouts of thread in home (named as Codex names them).
std::vector<fs::path> rollouts_of(const fs::path& home, const std::string& thread) {
  return session_file::files_below(home, kSessions, [&](const std::string& relative) {
    return relative.ends_with("-" + thread + ".jsonl") &&
           fs::path(relative).filename().string().starts_with("rollout-");
  });
}

CallInRollout find_call(const fs::path& home, const std::string& thread, const std::string& call) {
  std::vector<fs::path> rollouts = rollouts_of(home, thread);
  if (rollouts.empty()) {
    throw Error(ErrorCode::kNotFound, "no rollout of Codex thread " + fsnap::quote_input(thread) +
                                          " in " + (home / kSessions).string());
  }
  std::optional<CallInRollout> found;
  for (const fs::path& file : rollouts) {
    std::vector<Line> lines = session_file::read_lines(file);
    session_meta(file, lines, thread);
    long at = call_line(lines, call);
    if (at < 0) continue;
    if (found) {
      throw Error(ErrorCode::kCorrupt, "two rollouts of Codex thread " +
                                           fsnap::quote_input(thread) + " hold call " +
                                           fsnap::quote_input(call) + ": " + found->file.string() +
                                           " and " + file.string());
    }
    found = CallInRollout{file, std::move(lines), static_cast<std::size_t>(at)};
  }
  if (!found) {
    throw Error(ErrorCode::kNotFound, "the rollout of Codex thread " + fsnap::quote_input(thread) +
                                          " (" + rollouts.front().string() + ") holds no call " +
                                          fsnap::quote_input(call));
  }
  return std::move(*found);
}

// The new thread's rollout: the original's session_meta with the new thread's id and
// time, and the thread it was forked from (as Codex's own fork names it); then the
// original's lines before cut, as they were.
std::string fork_text(CallInRollout& original, std::size_t cut, const std::string& thread,
                      const std::string& new_thread) {
  Object::Ptr meta = session_meta(original.file, original.lines, thread);
  std::string now = session_file::utc_now("%Y-%m-%dT%H:%M:%S", true);
  meta->set("id", new_thread);
  if (meta->has("session_id")) meta->set("session_id", new_thread);
  meta->set("forked_from_id", thread);
  meta->set("timestamp", now);
  original.lines.front().object->set("timestamp", now);
  std::string text = session_file::json_line(original.lines.front().object) + "\n";
  for (std::size_t i = 1; i < cut; ++i) text += original.lines[i].text + "\n";
  return text;
}

// Writes text as the rollout of new_thread, named and placed as Codex does by today's
// date. Error kConflict if the thread has one.
void write_rollout(const fs::path& home, const std::string& new_thread, const std::string& text) {
  if (!session_file::files_below(home, kSessions, [&](const std::string& relative) {
         return relative.ends_with("-" + new_thread + ".jsonl");
       }).empty()) {
    throw Error(ErrorCode::kConflict,
                "a rollout of Codex thread " + fsnap::quote_input(new_thread) + " exists");
  }
  fs::path dir = home / kSessions / session_file::utc_now("%Y/%m/%d");
  fs::path file =
      dir / ("rollout-" + session_file::utc_now("%Y-%m-%dT%H-%M-%S") + "-" + new_thread + ".jsonl");
  boost::system::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create " + dir.string() + ": " + ec.message());
  if (!fsnap::create_file_atomically(file, text)) {
    throw Error(ErrorCode::kConflict, file.string() + " exists");
  }
}

}  // namespace

SessionCut codex_cut_session(const fs::path& home, const SessionCutPoint& point,
                             const std::string& new_thread_id) {
  if (point.session_id.empty() || point.tool_call_id.empty() || new_thread_id.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "a Codex conversation is cut before a call named by thread and call id");
  }
  CallInRollout original = find_call(home, point.session_id, point.tool_call_id);
  std::size_t cut = reply_start(original.lines, original.call);
  write_rollout(home, new_thread_id, fork_text(original, cut, point.session_id, new_thread_id));
  return SessionCut{new_thread_id, {}};
}

SessionCut codex_fork_session(const fs::path& home, const std::string& thread,
                              const std::string& new_thread_id) {
  if (thread.empty() || new_thread_id.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "a Codex thread is forked by its id, to a new id");
  }
  std::vector<fs::path> rollouts = rollouts_of(home, thread);
  if (rollouts.size() != 1) {
    throw Error(rollouts.empty() ? ErrorCode::kNotFound : ErrorCode::kCorrupt,
                std::to_string(rollouts.size()) + " rollouts of Codex thread " +
                    fsnap::quote_input(thread) + " in " + (home / kSessions).string() +
                    " (a fork copies one)");
  }
  CallInRollout whole{rollouts.front(), session_file::read_lines(rollouts.front()), 0};
  std::size_t end = whole.lines.size();
  write_rollout(home, new_thread_id, fork_text(whole, end, thread, new_thread_id));
  return SessionCut{new_thread_id, {}};
}

}  // namespace hooks
