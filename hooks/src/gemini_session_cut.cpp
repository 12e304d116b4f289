// Gemini's conversation cut before a tool call (gemini_adapter.hpp says what it does).
//
// A chat file is a log the CLI replays on resume (0.61.0's loadConversationRecord): a
// header {sessionId, projectHash, startTime, lastUpdated, kind}, message records {id,
// type: "user"|"gemini"|"info"|..., content, ...} — a record whose id was seen replaces
// that message in place (a model turn is written when its reply has come, and again with
// toolCalls once its calls are done) —, {"$set": {...}} updates of the header ("messages"
// replaces every message), and {"$rewindTo": id}, which drops that message and those
// after it. The cut replays it the same way and writes what it keeps as a new chat.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Poco/JSON/Array.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "hooks/agent_adapter.hpp"
#include "hooks/gemini_adapter.hpp"
#include "sandbox/errors.hpp"
#include "session_file.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

using Poco::JSON::Array;
using Poco::JSON::Object;
using sandbox::Error;
using sandbox::ErrorCode;
using session_file::Line;

constexpr const char* kChats = ".gemini/tmp";

// One message of a chat, as the record that holds it now says.
struct Message {
  std::string type;
  std::string record;  // a JSON line
  std::string timestamp;
  std::vector<std::string> calls;  // a model turn: the tools it called, once recorded
};

// A chat file replayed.
struct Chat {
  fs::path file;
  Object::Ptr header = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  std::vector<std::string> order;  // message ids, oldest first
  std::map<std::string, Message> messages;

  std::string header_text(const std::string& key) const {
    return header->optValue<std::string>(key, "");
  }
  std::string type_at(std::size_t i) const { return messages.at(order[i]).type; }
};

bool is_string(const Object::Ptr& o, const std::string& key) {
  return o->has(key) && o->get(key).isString();
}

// The tools a model turn's record names as called: its toolCalls (added once they are
// done) and the functionCall parts of its content (as a resume writes it).
std::vector<std::string> called_tools(const Object::Ptr& o) {
  std::vector<std::string> out;
  for (const char* key : {"toolCalls", "content"}) {
    Array::Ptr items = o->getArray(key);
    for (std::size_t i = 0; items && i < items->size(); ++i) {
      Object::Ptr item = items->getObject(static_cast<unsigned>(i));
      if (item && std::string(key) == "content") item = item->getObject("functionCall");
      if (item && is_string(item, "name")) out.push_back(item->getValue<std::string>("name"));
    }
  }
  return out;
}

// Adds (or replaces in place) the message record o, whose line text is.
void put_message(Chat& chat, const Object::Ptr& o, const std::string& text, std::size_t line) {
  if (!is_string(o, "type")) {
    throw Error(ErrorCode::kCorrupt, chat.file.string() + ", line " + std::to_string(line) +
                                         ", is a message without a type");
  }
  std::string id = o->getValue<std::string>("id");
  if (chat.messages.count(id) == 0) chat.order.push_back(id);
  chat.messages[id] = Message{o->getValue<std::string>("type"), text,
                              o->optValue<std::string>("timestamp", ""), called_tools(o)};
}

// Adds the messages of a header or $set record's "messages" array.
void put_messages(Chat& chat, const Object::Ptr& record, std::size_t line) {
  Array::Ptr messages = record->getArray("messages");
  if (!messages) return;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    Object::Ptr m = messages->getObject(static_cast<unsigned>(i));
    if (m && is_string(m, "id")) put_message(chat, m, session_file::json_line(m), line);
  }
}

void merge_header(Chat& chat, const Object::Ptr& record) {
  std::vector<std::string> keys;
  record->getNames(keys);
  for (const std::string& key : keys) {
    if (key != "messages") chat.header->set(key, record->get(key));
  }
}

// Drops message id and those after it; all of them when there is no such message.
void rewind_to(Chat& chat, const std::string& id) {
  std::size_t from = 0;
  while (from < chat.order.size() && chat.order[from] != id) ++from;
  if (from == chat.order.size()) from = 0;
  for (std::size_t i = from; i < chat.order.size(); ++i) chat.messages.erase(chat.order[i]);
  chat.order.resize(from);
}

// The chat file replayed as the CLI does. Error kCorrupt when it is not a chat.
Chat replay(const fs::path& file) {
  Chat chat;
  chat.file = file;
  for (const Line& line : session_file::read_lines(file)) {
    const Object::Ptr& o = line.object;
    if (is_string(o, "$rewindTo")) {
      rewind_to(chat, o->getValue<std::string>("$rewindTo"));
    } else if (is_string(o, "id")) {
      put_message(chat, o, line.text, line.number);
    } else if (Object::Ptr set = o->getObject("$set")) {
      if (set->getArray("messages")) {
        chat.order.clear();
        chat.messages.clear();
        put_messages(chat, set, line.number);
      }
      merge_header(chat, set);
    } else if (is_string(o, "sessionId") && is_string(o, "projectHash")) {
      merge_header(chat, o);
      put_messages(chat, o, line.number);
    }
  }
  if (chat.header_text("sessionId").empty() || chat.header_text("projectHash").empty()) {
    throw Error(ErrorCode::kCorrupt,
                file.string() + " is not a Gemini chat: it names no sessionId and projectHash");
  }
  return chat;
}

bool has_model_turn(const Chat& chat) {
  for (std::size_t i = 0; i < chat.order.size(); ++i) {
    if (chat.type_at(i) == "gemini") return true;
  }
  return false;
}

// How many messages of the chat were written before the call (point.called_at): those
// up to the first stamped later (all of them when the time is not known). Error kCorrupt
// for a message whose time cannot be read.
std::size_t written_before_call(const Chat& chat, const SessionCutPoint& point) {
  if (!point.called_at) return chat.order.size();
  for (std::size_t i = 0; i < chat.order.size(); ++i) {
    const Message& m = chat.messages.at(chat.order[i]);
    std::optional<std::chrono::system_clock::time_point> at =
        session_file::parse_utc_time(m.timestamp);
    if (!at) {
      throw Error(ErrorCode::kCorrupt, chat.file.string() + ": message " +
                                           fsnap::quote_input(chat.order[i]) +
                                           " has no time Gemini CLI stamps its messages with");
    }
    if (*at > *point.called_at) return i;
  }
  return chat.order.size();
}

// The index of the model turn that made the call: the chat's last "gemini" message
// written before the call, after which the model was sent nothing (no "user" message)
// before it. Gemini's hooks name no call, so this is the turn the chat was waiting on
// when the call was about to run. Error kNotFound when there is no such turn, or it
// names its calls and none is point.tool_name.
std::size_t calling_turn(const Chat& chat, const SessionCutPoint& point) {
  std::string about = "the chat of Gemini session " + fsnap::quote_input(point.session_id) + " (" +
                      chat.file.string() + ")";
  std::string call = "call " + fsnap::quote_input(point.tool_call_id) +
                     (point.tool_name.empty() ? "" : " (" + point.tool_name + ")");
  std::size_t end = written_before_call(chat, point);
  std::size_t turn = end;
  for (std::size_t i = end; i-- > 0 && turn == end;) {
    if (chat.type_at(i) == "gemini") turn = i;
  }
  if (turn == end) {
    throw Error(ErrorCode::kNotFound, about + " holds no model turn made before " + call);
  }
  for (std::size_t i = turn + 1; i < end; ++i) {
    if (chat.type_at(i) == "user") {
      throw Error(ErrorCode::kNotFound,
                  about + " goes on after its last model turn: it is not as it was when " + call +
                      " was about to run");
    }
  }
  const std::vector<std::string>& calls = chat.messages.at(chat.order[turn]).calls;
  if (!calls.empty() && !point.tool_name.empty() &&
      std::find(calls.begin(), calls.end(), point.tool_name) == calls.end()) {
    throw Error(ErrorCode::kNotFound,
                about + ": the model turn before " + call + " called no " + point.tool_name);
  }
  return turn;
}

// The chat of session in home the CLI resumes: of every chat file of the session (a
// resume may leave a stray one beside the original, holding no model turn), one with
// model turns and the newest update. Error kNotFound when there is none.
Chat resumed_chat(const fs::path& home, const std::string& session) {
  std::vector<fs::path> files = session_file::files_below(home, kChats, [&](const std::string& p) {
    return p.find("/chats/session-") != std::string::npos &&
           p.ends_with("-" + session.substr(0, 8) + ".jsonl");
  });
  std::optional<Chat> chat;
  for (const fs::path& file : files) {
    Chat c = replay(file);
    if (c.header_text("sessionId") != session) continue;
    if (!chat || std::make_pair(has_model_turn(c), c.header_text("lastUpdated")) >
                     std::make_pair(has_model_turn(*chat), chat->header_text("lastUpdated"))) {
      chat = std::move(c);
    }
  }
  if (!chat) {
    throw Error(ErrorCode::kNotFound, "no chat of Gemini session " + fsnap::quote_input(session) +
                                          " in " + (home / kChats).string());
  }
  return std::move(*chat);
}

// The new session's chat: the original's header with the new id and times (without a
// "summary" of the whole session, which would describe what was cut); then the messages
// before cut, each as last written.
std::string fork_text(const Chat& chat, std::size_t cut, const std::string& new_session) {
  std::string now = session_file::utc_now("%Y-%m-%dT%H:%M:%S", true);
  Object::Ptr header = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  header->set("sessionId", new_session);
  header->set("projectHash", chat.header->get("projectHash"));
  header->set("startTime", now);
  header->set("lastUpdated", now);
  std::vector<std::string> keys;
  chat.header->getNames(keys);
  for (const std::string& key : keys) {
    if (!header->has(key) && key != "summary") header->set(key, chat.header->get(key));
  }
  std::string text = session_file::json_line(header) + "\n";
  for (std::size_t i = 0; i < cut; ++i) text += chat.messages.at(chat.order[i]).record + "\n";
  return text;
}

// Writes text as the chat of new_session in dir, named as the CLI names it. Error
// kConflict if a chat there has the same first 8 characters of id (the CLI tells
// sessions' files apart by them).
void write_chat(const fs::path& dir, const std::string& new_session, const std::string& text) {
  std::string short_id = new_session.substr(0, 8);
  boost::system::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.ends_with("-" + short_id + ".jsonl") || name.ends_with("-" + short_id + ".json")) {
      throw Error(ErrorCode::kConflict,
                  "a chat of a session starting " + short_id + " exists in " + dir.string());
    }
  }
  fs::path file =
      dir / ("session-" + session_file::utc_now("%Y-%m-%dT%H-%M") + "-" + short_id + ".jsonl");
  if (!fsnap::create_file_atomically(file, text)) {
    throw Error(ErrorCode::kConflict, file.string() + " exists");
  }
}

}  // namespace

SessionCut gemini_cut_session(const fs::path& home, const SessionCutPoint& point,
                              const std::string& new_session_id) {
  if (point.session_id.size() < 8 || new_session_id.size() < 8) {
    throw Error(ErrorCode::kInvalidArgument,
                "a Gemini conversation is cut in a session named by its id");
  }
  Chat chat = resumed_chat(home, point.session_id);
  std::size_t cut = calling_turn(chat, point);
  write_chat(chat.file.parent_path(), new_session_id, fork_text(chat, cut, new_session_id));
  return SessionCut{new_session_id, {}};
}

SessionCut gemini_fork_session(const fs::path& home, const std::string& session,
                               const std::string& new_session_id) {
  if (session.size() < 8 || new_session_id.size() < 8) {
    throw Error(ErrorCode::kInvalidArgument, "a Gemini session is forked by its id, to a new id");
  }
  Chat chat = resumed_chat(home, session);
  write_chat(chat.file.parent_path(), new_session_id,
             fork_text(chat, chat.order.size(), new_session_id));
  return SessionCut{new_session_id, {}};
}

}  // namespace hooks
