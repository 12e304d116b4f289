#include "output.hpp"

#include <ostream>

#include <Poco/JSON/Stringifier.h>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"

namespace cli {

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if there is none.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (len == 0 || c > 0xF4 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  // Overlong, surrogate and out-of-range forms.
  if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;
  if (c == 0xED && byte(i + 1) >= 0xA0) return 0;
  if (c == 0xF0 && byte(i + 1) < 0x90) return 0;
  if (c == 0xF4 && byte(i + 1) >= 0x90) return 0;
  return len;
}

Poco::Dynamic::Var entry_json(const std::optional<fsnap::TreeEntryInfo>& entry) {
  if (!entry) return Poco::Dynamic::Var();
  Poco::JSON::Object::Ptr object = make_object();
  object->set("type", std::string(fsnap::to_string(entry->type)));
  object->set("executable", entry->executable);
  object->set("oid", entry->oid);
  return object;
}

}  // namespace

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string hex_bytes(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

Poco::JSON::Object::Ptr make_object() {
  return new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
}

void set_path(Poco::JSON::Object& object, const std::string& key, std::string_view path) {
  if (fsnap::is_valid_utf8(path)) {
    object.set(key, std::string(path));
  } else {
    object.set(key, sanitize_utf8(path));
    object.set(key + "_hex", hex_bytes(path));
  }
}

Poco::JSON::Object::Ptr checkpoint_json(const fsnap::Checkpoint& checkpoint) {
  Poco::JSON::Object::Ptr object = make_object();
  object->set("id", checkpoint.id);
  object->set("commit", checkpoint.commit);
  object->set("tree", checkpoint.tree);
  object->set("parent", checkpoint.parent);
  object->set("tag", sanitize_utf8(checkpoint.meta.tag));
  object->set("label", sanitize_utf8(checkpoint.meta.label));
  object->set("phase", std::string(fsnap::to_string(checkpoint.meta.phase)));
  object->set("tool_call_id", sanitize_utf8(checkpoint.meta.tool_call_id));
  object->set("tool_name", sanitize_utf8(checkpoint.meta.tool_name));
  object->set("run", sanitize_utf8(checkpoint.meta.run));
  object->set("created_at", fsnap::format_timestamp(checkpoint.created_at));
  Poco::JSON::Array::Ptr skipped = new Poco::JSON::Array;
  for (const fsnap::SkippedPath& s : checkpoint.skipped) {
    Poco::JSON::Object::Ptr item = make_object();
    set_path(*item, "path", s.path);
    item->set("reason", s.reason);
    item->set("size", s.size);
    // A file over the size limit: the name of the store's copy of it (null: none).
    item->set("copy", s.copy ? Poco::Dynamic::Var(s.copy->name) : Poco::Dynamic::Var());
    skipped->add(item);
  }
  object->set("skipped", skipped);
  return object;
}

Poco::JSON::Object::Ptr change_json(const fsnap::TreeChange& change) {
  Poco::JSON::Object::Ptr object = make_object();
  object->set("status", std::string(1, fsnap::status_letter(change.kind)));
  set_path(*object, "path", change.path);
  object->set("before", entry_json(change.before));
  object->set("after", entry_json(change.after));
  return object;
}

Poco::JSON::Array::Ptr changes_json(const std::vector<fsnap::TreeChange>& changes) {
  Poco::JSON::Array::Ptr array = new Poco::JSON::Array;
  for (const fsnap::TreeChange& change : changes) array->add(change_json(change));
  return array;
}

void print_json(std::ostream& out, const Poco::JSON::Object::Ptr& value) {
  value->stringify(out);
  out << '\n';
}

void print_json(std::ostream& out, const Poco::JSON::Array::Ptr& value) {
  value->stringify(out);
  out << '\n';
}

std::string checkpoint_line(const fsnap::Checkpoint& checkpoint) {
  std::string line = checkpoint.id + "  " + checkpoint.commit.substr(0, 12) + "  " +
                     fsnap::format_timestamp(checkpoint.created_at) + "  " +
                     fsnap::quote_path(checkpoint.meta.run) + "  " +
                     std::string(fsnap::to_string(checkpoint.meta.phase));
  if (!checkpoint.meta.tool_name.empty())
    line += " " + fsnap::quote_path(checkpoint.meta.tool_name);
  if (!checkpoint.meta.tool_call_id.empty()) {
    line += " " + fsnap::quote_path(checkpoint.meta.tool_call_id);
  }
  if (!checkpoint.meta.tag.empty()) line += "  tag:" + fsnap::quote_path(checkpoint.meta.tag);
  if (!checkpoint.meta.label.empty()) {
    line += "  label:" + fsnap::quote_path(checkpoint.meta.label);
  }
  if (!checkpoint.skipped.empty()) {
    line += "  (" + std::to_string(checkpoint.skipped.size()) + " skipped)";
  }
  return line;
}

std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string change_line(const fsnap::TreeChange& change) {
  std::string line =
      std::string(1, fsnap::status_letter(change.kind)) + "  " + fsnap::quote_path(change.path);
  if (change.kind == fsnap::TreeChange::Kind::kTypeChanged && change.before && change.after) {
    line += " (" + std::string(fsnap::to_string(change.before->type)) + " -> " +
            std::string(fsnap::to_string(change.after->type)) + ")";
  } else if (change.kind == fsnap::TreeChange::Kind::kModified && change.before && change.after &&
             change.before->executable != change.after->executable) {
    line += change.after->executable ? " (+x)" : " (-x)";
  }
  if (change.kind != fsnap::TreeChange::Kind::kTypeChanged) {
    const auto& entry = change.after ? change.after : change.before;
    if (entry && entry->type == fsnap::EntryType::kDirectory) line += "/";
  }
  return line;
}

void print_skipped(std::ostream& out, const fsnap::Checkpoint& checkpoint) {
  for (const fsnap::SkippedPath& s : checkpoint.skipped) {
    std::string copy = s.reason != fsnap::kOverMaxFileSize ? ""
                       : s.copy                            ? "; a copy is kept"
                                                           : "; no copy could be kept";
    out << "skipped: " << fsnap::quote_path(s.path) << " (" << s.reason << copy << ")\n";
  }
}

std::string describe_checkpoint(const fsnap::Checkpoint& c) {
  std::string text = "they were at checkpoint " + c.id;
  std::string call =
      fsnap::quote_input(c.meta.tool_name) + " call " + fsnap::quote_input(c.meta.tool_call_id);
  if (c.meta.phase == fsnap::Phase::kPreTool) return text + " (before " + call + ")";
  if (c.meta.phase == fsnap::Phase::kPostTool) return text + " (after " + call + ")";
  return text;
}

}  // namespace cli
