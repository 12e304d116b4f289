// Output of the shadowbox executable: JSON shapes (docs/architecture.md, "CLI
// contract") built with Poco::JSON, and one-line human formats. Path names are raw
// bytes; JSON gets a valid-UTF-8 rendering (invalid bytes as U+FFFD) plus "<key>_hex"
// with the exact bytes whenever the name is not valid UTF-8, and human output quotes
// names like git.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"
#include "fsnap/tree_change.hpp"

namespace cli {

// s with every byte sequence that is not valid UTF-8 replaced by U+FFFD.
std::string sanitize_utf8(std::string_view s);
// Lowercase hex of the bytes of s.
std::string hex_bytes(std::string_view s);

// A JSON object that keeps keys in insertion order.
Poco::JSON::Object::Ptr make_object();
// Sets object[key] to the path, and object[key + "_hex"] when it is not valid UTF-8.
void set_path(Poco::JSON::Object& object, const std::string& key, std::string_view path);

// {"id","commit","tree","parent","tag","phase","tool_call_id","tool_name","run",
//  "created_at","skipped":[{"path","reason","size"}]}
Poco::JSON::Object::Ptr checkpoint_json(const fsnap::Checkpoint& checkpoint);
// {"status":"A|D|M|T","path","before":{"type","executable","oid"}|null,"after":…}
Poco::JSON::Object::Ptr change_json(const fsnap::TreeChange& change);
Poco::JSON::Array::Ptr changes_json(const std::vector<fsnap::TreeChange>& changes);

// Writes a JSON value and a newline.
void print_json(std::ostream& out, const Poco::JSON::Object::Ptr& value);
void print_json(std::ostream& out, const Poco::JSON::Array::Ptr& value);

// "<id>  <commit:12>  <created_at>  <run>  <subject>" where subject is the phase, tool
// name, call id and tag.
std::string checkpoint_line(const fsnap::Checkpoint& checkpoint);
// "they were at checkpoint ID (before Write call toolu_1)": a checkpoint in a sentence.
std::string describe_checkpoint(const fsnap::Checkpoint& checkpoint);
// "1 checkpoint", "2 checkpoints": n and the word for that many.
std::string counted(std::size_t n, std::string_view one, std::string_view many);
// "M  path" ("T  path (file -> directory)" for a type change); names quoted like git.
std::string change_line(const fsnap::TreeChange& change);
// Human lines describing the skipped paths of a checkpoint ("skipped: path (reason)").
void print_skipped(std::ostream& out, const fsnap::Checkpoint& checkpoint);

}  // namespace cli
