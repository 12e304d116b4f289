#include "hooks/claude_code_session_cut.hpp"

#include <vector>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "hooks/claude_code_home.hpp"
#include "sandbox/errors.hpp"
#include "session_file.hpp"

namespace hooks {

namespace fs = boost::filesystem;
using sandbox::Error;
using sandbox::ErrorCode;

namespace {

// The session's transcript under home, or an empty path.
fs::path find_transcript(const fs::path& home, const std::string& session_id) {
  for (const std::string& part : claude_code_preserved_parts()) {
    std::vector<fs::path> found = session_file::files_below(
        home, part,
        [&](const std::string& relative) { return is_transcript_path(relative, session_id); });
    if (!found.empty()) return found.front();
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
  // (A last line cut short by a crash is left out: it goes with the rest.)
  std::vector<session_file::Line> lines = session_file::read_lines(cut.transcript);
  std::vector<Poco::JSON::Object::Ptr> entries;
  for (const session_file::Line& line : lines) entries.push_back(line.object);

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
  for (std::size_t i = 0; i < first; ++i) kept += lines[i].text + '\n';
  fsnap::write_file_atomically(cut.transcript, kept, 0600);
  return cut;
}

}  // namespace hooks
