#include "fsnap/checkpoint.hpp"

#include <cstdio>
#include <ctime>
#include <sstream>
#include "fsnap/enum_names.hpp"

#include "fsnap/path_quoting.hpp"

namespace fsnap {

namespace {

constexpr EnumName<Phase> kPhaseNames[] = {
    {Phase::kPreTool, "pre_tool"},      {Phase::kPostTool, "post_tool"},
    {Phase::kCheckpoint, "checkpoint"}, {Phase::kManual, "manual"},
    {Phase::kSafety, "safety"},         {Phase::kDenied, "denied"}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// "Skipped: <size> <reason> <quoted path>"
std::string format_skipped(const SkippedPath& s) {
  return std::to_string(s.size) + " " + s.reason + " " + quote_path(s.path);
}

bool parse_skipped(std::string_view value, SkippedPath& out) {
  std::size_t a = value.find(' ');
  if (a == std::string_view::npos) return false;
  std::size_t b = value.find(' ', a + 1);
  if (b == std::string_view::npos) return false;
  try {
    out.size = std::stoull(std::string(value.substr(0, a)));
  } catch (const std::exception&) {
    return false;
  }
  out.reason = std::string(value.substr(a + 1, b - a - 1));
  auto path = unquote_path(value.substr(b + 1));
  if (!path) return false;
  out.path = *path;
  return true;
}

// "Large-File-Copy: <name> <mtime ns> <quoted path>"
std::string format_copy(const SkippedPath& s) {
  return s.copy->name + " " + std::to_string(s.copy->mtime_ns) + " " + quote_path(s.path);
}

// Gives the skipped path a copy line names its copy; false for a malformed line.
bool parse_copy(std::string_view value, std::vector<SkippedPath>& skipped) {
  std::size_t a = value.find(' ');
  if (a == std::string_view::npos) return false;
  std::size_t b = value.find(' ', a + 1);
  if (b == std::string_view::npos) return false;
  LargeFileCopy copy;
  copy.name = std::string(value.substr(0, a));
  try {
    copy.mtime_ns = std::stoll(std::string(value.substr(a + 1, b - a - 1)));
  } catch (const std::exception&) {
    return false;
  }
  auto path = unquote_path(value.substr(b + 1));
  if (!path) return false;
  for (SkippedPath& s : skipped) {
    if (s.path == *path) s.copy = std::move(copy);
  }
  return true;
}

// A label on one line, always in double quotes, so that spaces at its ends survive the
// trailer's trimming.
std::string quoted_label(std::string_view label) {
  std::string quoted = quote_path(label);
  return quoted.front() == '"' ? quoted : "\"" + quoted + "\"";
}

}  // namespace

std::string_view to_string(Phase phase) {
  return name_of(kPhaseNames, phase, "unknown");
}

std::optional<Phase> parse_phase(std::string_view s) {
  return value_of(kPhaseNames, s);
}

std::string format_checkpoint_message(const Checkpoint& c) {
  std::string subject(to_string(c.meta.phase));
  if (!c.meta.tool_name.empty()) subject += " " + c.meta.tool_name;
  if (!c.meta.tool_call_id.empty()) subject += " " + c.meta.tool_call_id;
  if (!c.meta.tag.empty()) subject += " [" + c.meta.tag + "]";

  std::string body;
  if (!c.skipped.empty()) {
    body += std::to_string(c.skipped.size()) + (c.skipped.size() == 1 ? " path" : " paths") +
            " not captured (see Skipped trailers).\n\n";
  }
  std::string trailers;
  auto add = [&](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    trailers.append(key).append(": ").append(value).append("\n");
  };
  add("Checkpoint-Id", c.id);
  add("Phase", to_string(c.meta.phase));
  add("Run-Id", c.meta.run);
  add("Tag", c.meta.tag);
  if (!c.meta.label.empty()) add("Label", quoted_label(c.meta.label));
  add("Tool-Name", c.meta.tool_name);
  add("Tool-Call-Id", c.meta.tool_call_id);
  add("Created-At", format_timestamp(c.created_at));
  for (const SkippedPath& s : c.skipped) {
    add("Skipped", format_skipped(s));
    if (s.copy) add("Large-File-Copy", format_copy(s));
  }
  return subject + "\n\n" + body + trailers;
}

bool parse_checkpoint_message(std::string_view message, Checkpoint& c) {
  // Trailers are the "Key: value" lines of the last paragraph.
  std::size_t end = message.size();
  while (end > 0 && message[end - 1] == '\n') --end;
  std::size_t start = message.rfind("\n\n", end);
  if (start == std::string_view::npos) return false;
  std::string_view block = message.substr(start + 2, end - start - 2);

  bool have_id = false, have_phase = false;
  c.skipped.clear();
  std::vector<std::string_view> copies;  // matched to the skipped paths at the end
  std::size_t pos = 0;
  while (pos <= block.size()) {
    std::size_t nl = block.find('\n', pos);
    std::string_view line = block.substr(pos, nl == std::string_view::npos ? block.npos : nl - pos);
    pos = nl == std::string_view::npos ? block.size() + 1 : nl + 1;
    std::size_t colon = line.find(": ");
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view value = trim(line.substr(colon + 2));
    if (key == "Checkpoint-Id") {
      c.id = std::string(value);
      have_id = true;
    } else if (key == "Phase") {
      auto phase = parse_phase(value);
      if (!phase) return false;
      c.meta.phase = *phase;
      have_phase = true;
    } else if (key == "Run-Id") {
      c.meta.run = std::string(value);
    } else if (key == "Tag") {
      c.meta.tag = std::string(value);
    } else if (key == "Label") {
      if (std::optional<std::string> label = unquote_path(value)) c.meta.label = *label;
    } else if (key == "Tool-Name") {
      c.meta.tool_name = std::string(value);
    } else if (key == "Tool-Call-Id") {
      c.meta.tool_call_id = std::string(value);
    } else if (key == "Created-At") {
      if (auto t = parse_timestamp(value)) c.created_at = *t;
    } else if (key == "Skipped") {
      SkippedPath s;
      if (parse_skipped(value, s)) c.skipped.push_back(std::move(s));
    } else if (key == "Large-File-Copy") {
      copies.push_back(value);
    }
  }
  for (std::string_view copy : copies) parse_copy(copy, c.skipped);
  return have_id && have_phase;
}

std::string format_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  long frac = static_cast<long>(us % 1000000);
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_timestamp(std::string_view s) {
  int y, mo, d, h, mi, sec;
  long frac = 0;
  char z = 0;
  std::string str(s);
  int n = std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6ld%c", &y, &mo, &d, &h, &mi, &sec,
                      &frac, &z);
  if (n != 8 || z != 'Z') {
    frac = 0;
    n = std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z);
    if (n != 7 || z != 'Z') return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  std::time_t secs = timegm(&tm);
  return std::chrono::system_clock::time_point(std::chrono::seconds(secs)) +
         std::chrono::microseconds(frac);
}

}  // namespace fsnap
