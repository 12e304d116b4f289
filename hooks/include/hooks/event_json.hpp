// Agents' hook events made readable by Poco's JSON parser, whatever valid JSON the
// agent emitted.
//
// Node's JSON.stringify writes a lone UTF-16 surrogate as "\ud800", and a tool input
// may nest deeper than Poco's parser goes (128 levels, recursively): either made the
// event unreadable, and an event shadowbox cannot read is a tool call it cannot
// record. readable_event_json rewrites exactly those (and raw control bytes and invalid
// UTF-8 inside strings, which a lenient writer may emit) and checks the rest is JSON,
// in one pass without recursion.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hooks {

// Values nested deeper than this (the event object itself is level 1) are replaced by
// a string saying how many bytes were left out: shadowbox keeps summaries of tool
// inputs, never whole ones, and Poco's recursive parser and printer stay shallow.
inline constexpr std::size_t kMaxEventDepth = 64;

// json with every lone surrogate escape replaced by U+FFFD, every invalid UTF-8 byte
// and raw control byte inside a string by its escape or U+FFFD, and every value nested
// deeper than kMaxEventDepth by a string "[N bytes nested deeper than 64 levels]".
// Error kInvalidArgument naming the byte offset when json is not JSON (one value,
// whitespace around it).
std::string readable_event_json(std::string_view json);

// The string value of the key "hook_event_name" of the top-level object of json, read
// however broken the rest of it is; "" when there is none to be found.
std::string scan_event_name(std::string_view json);

}  // namespace hooks
