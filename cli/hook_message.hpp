// HookMessage — one hook event as the thin hook client (`shadowbox-hook`) hands it to
// the store's watch daemon, and the daemon's reply. Header-only, standard library only:
// the thin client links nothing else.
//
// Both are sequences of fields: a u32 little-endian length, then that many bytes. The
// watch daemon carries them as an opaque message (fsnap's WatchDaemonClient::message).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cli {

// What the thin client sends.
struct HookMessage {
  static constexpr std::string_view kTag = "hook-event-1";
  std::string cwd;                // the hook process's
  std::vector<std::string> args;  // its arguments (no argv[0])
  // Its whole environment: some variables decide what is recorded (the run, the
  // workspace), run.secrets what is redacted. (The socket is the user's alone: 0600
  // in the 0700 store.)
  std::vector<std::pair<std::string, std::string>> env;
  std::string event;  // stdin: the event's JSON
};

// What the daemon answers: the hook's exit status and output, or that the client must
// run the full command itself (nothing was recorded).
struct HookReply {
  bool fall_back = false;
  std::string why;  // with fall_back
  int exit_code = 0;
  std::string out;
  std::string err;
};

// The answer for an event that could not be recorded: loud where the person and the
// agent look. A tool event, or one whose name cannot be found, blocks (exit 2, the
// agent reads why); another must not (a blocked Stop would keep the agent from
// stopping) and is shown to the person.
inline HookReply unrecorded_reply(const std::string& event_name, const std::string& why) {
  HookReply r;
  r.err =
      "shadowbox: cannot record " + (event_name.empty() ? "the event" : event_name) + ": " + why;
  // (BeforeTool and AfterTool are Gemini CLI's names.)
  if (event_name.empty() || event_name == "PreToolUse" || event_name == "BeforeTool") {
    r.err += " (the tool call is blocked so that it cannot make a change shadowbox could not undo)";
  }
  r.err += "\n";
  // An event whose name cannot be found may be a call about to run: it blocks too.
  bool tool_event = event_name.empty() || event_name == "PreToolUse" ||
                    event_name == "PostToolUse" || event_name == "PostToolUseFailure" ||
                    event_name == "BeforeTool" || event_name == "AfterTool";
  r.exit_code = tool_event ? 2 : 1;
  return r;
}

namespace hook_wire {

inline void put(std::string& buf, std::string_view field) {
  auto n = static_cast<std::uint32_t>(field.size());
  for (int i = 0; i < 4; ++i) buf.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  buf.append(field);
}

// Reads the fields of a buffer in order; nullopt past its end.
class Fields {
 public:
  explicit Fields(std::string_view data) : data_(data) {}
  std::optional<std::string> next() {
    if (data_.size() < 4) return std::nullopt;
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
      n |= static_cast<std::uint32_t>(static_cast<unsigned char>(data_[i])) << (8 * i);
    data_.remove_prefix(4);
    if (data_.size() < n) return std::nullopt;
    std::string out(data_.substr(0, n));
    data_.remove_prefix(n);
    return out;
  }

 private:
  std::string_view data_;
};

inline std::optional<std::size_t> count(Fields& f) {
  std::optional<std::string> s = f.next();
  if (!s || s->empty() || s->size() > 9) return std::nullopt;
  std::size_t n = 0;
  for (char c : *s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

}  // namespace hook_wire

inline std::string encode(const HookMessage& m) {
  std::string buf;
  hook_wire::put(buf, HookMessage::kTag);
  hook_wire::put(buf, m.cwd);
  hook_wire::put(buf, std::to_string(m.args.size()));
  for (const std::string& a : m.args) hook_wire::put(buf, a);
  hook_wire::put(buf, std::to_string(m.env.size()));
  for (const auto& [name, value] : m.env) {
    hook_wire::put(buf, name);
    hook_wire::put(buf, value);
  }
  hook_wire::put(buf, m.event);
  return buf;
}

// The message in data; nullopt if it is not one.
inline std::optional<HookMessage> decode_message(std::string_view data) {
  hook_wire::Fields f(data);
  HookMessage m;
  std::optional<std::string> tag = f.next();
  std::optional<std::string> cwd = f.next();
  if (!tag || *tag != HookMessage::kTag || !cwd) return std::nullopt;
  m.cwd = *cwd;
  std::optional<std::size_t> n = hook_wire::count(f);
  if (!n) return std::nullopt;
  for (std::size_t i = 0; i < *n; ++i) {
    std::optional<std::string> a = f.next();
    if (!a) return std::nullopt;
    m.args.push_back(std::move(*a));
  }
  n = hook_wire::count(f);
  if (!n) return std::nullopt;
  for (std::size_t i = 0; i < *n; ++i) {
    std::optional<std::string> name = f.next();
    std::optional<std::string> value = f.next();
    if (!name || !value) return std::nullopt;
    m.env.emplace_back(std::move(*name), std::move(*value));
  }
  std::optional<std::string> event = f.next();
  if (!event) return std::nullopt;
  m.event = std::move(*event);
  return m;
}

inline std::string encode(const HookReply& r) {
  std::string buf;
  hook_wire::put(buf, r.fall_back ? "fall-back" : "answer");
  hook_wire::put(buf, r.why);
  hook_wire::put(buf, std::to_string(r.exit_code));
  hook_wire::put(buf, r.out);
  hook_wire::put(buf, r.err);
  return buf;
}

// The reply in data; nullopt if it is not one.
inline std::optional<HookReply> decode_reply(std::string_view data) {
  hook_wire::Fields f(data);
  HookReply r;
  std::optional<std::string> kind = f.next();
  std::optional<std::string> why = f.next();
  std::optional<std::size_t> code = hook_wire::count(f);
  std::optional<std::string> out = f.next();
  std::optional<std::string> err = f.next();
  if (!kind || (*kind != "fall-back" && *kind != "answer") || !why || !code || !out || !err) {
    return std::nullopt;
  }
  r.fall_back = *kind == "fall-back";
  r.why = std::move(*why);
  r.exit_code = static_cast<int>(*code);
  r.out = std::move(*out);
  r.err = std::move(*err);
  return r;
}

}  // namespace cli
