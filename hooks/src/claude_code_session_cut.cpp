#include "hooks/claude_code_session_cut.hpp"

#include <fstream>
#include <sstream>
#include <vector>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "hooks/claude_code_home.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using sandbox::Error;
using sandbox::ErrorCode;

namespace {

// The session's transcript under home, or an empty path.
fs::path find_transcript(const fs::path& home, const std::string& session_id) {
  boost::system::error_code ec;
  for (const std::string& part : claude_code_preserved_parts()) {
    fs::path root = home / part;
    if (!fs::is_directory(root, ec)) continue;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      std::string relative = part + "/" + it->path().lexically_relative(root).generic_string();
      if (is_transcript_path(relative, session_id) &&
          fs::is_regular_file(fs::symlink_status(it->path(), ec))) {
        return it->path();
      }
    }
  }
  return {};
}

std::string text_of(const Poco::JSON::Object::Ptr& o, const std::string& key) {
  if (o.isNull() || !o->has(key) || o->isNull(key)) return {};
  Poco::Dynamic::Var v = o->get(key);
  return v.isString() ? v.extract<std::string>() : std::string();
}

// Whether an assistant line holds a tool_use block with id.
bool holds_tool_use(const Poco::JSON::Object::Ptr& message, const std::string& id) {
  if (message.isNull()) return false;
  Poco::JSON::Array::Ptr content = message->getArray("content");
  if (content.isNull()) return false;
  for (std::size_t i = 0; i < content->size(); ++i) {
    Poco::JSON::Object::Ptr block = content->getObject(static_cast<unsigned>(i));
    if (!block.isNull() && text_of(block, "type") == "tool_use" && text_of(block, "id") == id) {
      return true;
    }
  }
  return false;
}

}  // namespace

TranscriptCut cut_claude_code_transcript(const fs::path& home, const SessionCutPoint& point) {
  TranscriptCut cut;
  cut.transcript = find_transcript(home, point.session_id);
  std::string session = fsnap::quote_input(point.session_id);
  if (cut.transcript.empty()) {
    throw Error(ErrorCode::kNotFound,
                "the preserved data holds no transcript of agent session " + session);
  }
  std::ifstream in(cut.transcript.string(), std::ios::binary);
  std::vector<std::string> lines;
  std::vector<Poco::JSON::Object::Ptr> entries;
  for (std::string line; std::getline(in, line);) {
    Poco::JSON::Object::Ptr entry;
    if (!line.empty()) {
      try {
        Poco::JSON::Parser parser;
        Poco::Dynamic::Var parsed = parser.parse(line);
        if (parsed.type() == typeid(Poco::JSON::Object::Ptr)) {
          entry = parsed.extract<Poco::JSON::Object::Ptr>();
        }
      } catch (const Poco::Exception&) {
      }
      // A line cut short by a crash can only be the last one: it is dropped with the rest.
      if (entry.isNull() && in.peek() != std::char_traits<char>::eof()) {
        throw Error(ErrorCode::kCorrupt, "line " + std::to_string(lines.size() + 1) + " of " +
                                             cut.transcript.filename().string() +
                                             " (agent session " + session +
                                             ") is not a JSON object");
      }
    }
    lines.push_back(std::move(line));
    entries.push_back(entry);
  }
  if (in.bad()) throw Error(ErrorCode::kIo, "cannot read " + cut.transcript.string());

  // The line with the call, then the first line of its turn (Claude Code writes one
  // line per content block of a message, each with the API message's id).
  std::size_t call = entries.size();
  for (std::size_t i = 0; i < entries.size() && call == entries.size(); ++i) {
    if (!entries[i].isNull() && text_of(entries[i], "type") == "assistant" &&
        holds_tool_use(entries[i]->getObject("message"), point.tool_call_id)) {
      call = i;
    }
  }
  if (call == entries.size()) {
    throw Error(ErrorCode::kNotFound, "the transcript of agent session " + session +
                                          " holds no tool call " +
                                          fsnap::quote_input(point.tool_call_id));
  }
  std::string message_id = text_of(entries[call]->getObject("message"), "id");
  std::size_t first = call;
  while (!message_id.empty() && first > 0) {
    const Poco::JSON::Object::Ptr& before = entries[first - 1];
    if (before.isNull() || text_of(before, "type") != "assistant" ||
        text_of(before->getObject("message"), "id") != message_id) {
      break;
    }
    --first;
  }
  cut.last_kept_uuid = text_of(entries[first], "parentUuid");
  bool found = false;
  for (std::size_t i = 0; i < first && !found; ++i) {
    found = !entries[i].isNull() && text_of(entries[i], "uuid") == cut.last_kept_uuid;
  }
  if (cut.last_kept_uuid.empty() || !found) {
    throw Error(ErrorCode::kCorrupt, "the turn of tool call " +
                                         fsnap::quote_input(point.tool_call_id) +
                                         " in the transcript of agent session " + session +
                                         " does not follow a message of it");
  }
  cut.kept_lines = first;
  cut.dropped_lines = lines.size() - first;
  std::string kept;
  for (std::size_t i = 0; i < first; ++i) kept += lines[i] + '\n';
  fsnap::write_file_atomically(cut.transcript, kept, 0600);
  return cut;
}

}  // namespace hooks
