// What the conversation cuts of Codex and Gemini (codex_session_cut.cpp,
// gemini_session_cut.cpp) share: an agent's session file read as JSON lines — written
// by the agent, preserved by shadowbox, so each line is checked —, the session files of
// a HOME, the new session's id and the times a new file is named and stamped with.
// Private to hooks.
//
// Thread-safety: pure functions (random_uuid draws from a thread-safe source).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <Poco/JSON/Object.h>
#include <boost/filesystem/path.hpp>

namespace hooks::session_file {

// One line of a session file.
struct Line {
  std::size_t number = 0;  // 1 for the first
  std::string text;        // without its newline
  Poco::JSON::Object::Ptr object;
};

// The lines of file, each a JSON object (keys in their order); blank lines are skipped.
// A last line without its newline that is not JSON is left out: the agent was writing
// it when the file was copied. Error kCorrupt naming the file and the line for any other
// line that is not a JSON object; kIo if the file cannot be read.
std::vector<Line> read_lines(const boost::filesystem::path& file);

// The regular files below home/root whose path relative to home (generic, "/") matches,
// sorted. None if home/root is not a directory.
std::vector<boost::filesystem::path> files_below(
    const boost::filesystem::path& home, const std::string& root,
    const std::function<bool(const std::string& relative)>& matches);

// A random UUID, lowercase: version 4, or version 7 (its first 48 bits the time in
// milliseconds since the epoch, as Codex's thread ids are).
std::string random_uuid(int version);

// The time now in UTC as strftime's format writes it; with_millis adds ".mmmZ" (ISO
// 8601 as the agents stamp their records: "2026-11-26T16:02:38.560Z").
std::string utc_now(const char* format, bool with_millis = false);

// The time an agent stamped a record with, "2026-11-26T16:02:38.560Z" (any number of
// fraction digits, or none), or nullopt if text is not one.
std::optional<std::chrono::system_clock::time_point> parse_utc_time(const std::string& text);

// o as one compact JSON line (without its newline).
std::string json_line(const Poco::JSON::Object::Ptr& o);

}  // namespace hooks::session_file
