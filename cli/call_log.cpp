#include "call_log.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

#include <Poco/JSON/Parser.h>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "output.hpp"
#include "sandbox/rollback_policy.hpp"

namespace cli {

namespace {

// The keys of a tool's input that say what it works on, in the order they are looked
// for: a shell's command (Claude Code's Bash, Codex, Gemini's run_shell_command), a
// file tool's file, a search's pattern, a fetch's URL, a search's query, a task's
// description.
constexpr const char* kTellingKeys[] = {"command",       "cmd",    "file_path",  "notebook_path",
                                        "absolute_path", "path",   "pattern",    "url",
                                        "query",         "prompt", "description"};
// The keys whose value is a path.
bool is_path_key(std::string_view key) {
  return key == "file_path" || key == "notebook_path" || key == "absolute_path" || key == "path";
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string without_prefix(const std::string& text, std::string_view prefix) {
  return starts_with(text, prefix) ? text.substr(prefix.size()) : text;
}

// The JSON string that starts at text[i] (just after its opening quote), decoded as
// far as it goes (an input cut short ends inside one).
std::string json_string_at(const std::string& text, std::size_t i) {
  std::string out;
  while (i < text.size() && text[i] != '"') {
    char c = text[i++];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i >= text.size()) break;
    char e = text[i++];
    switch (e) {
      case 'n':
      case 'r':
      case 't':
        out += ' ';
        break;
      case 'u': {
        if (i + 4 > text.size()) return out;
        unsigned code = 0;
        try {
          code = static_cast<unsigned>(std::stoul(text.substr(i, 4), nullptr, 16));
        } catch (const std::exception&) {
          return out;
        }
        i += 4;
        // (A surrogate pair's halves become U+FFFD each: a summary, not a decoder.)
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          if (code >= 0xD800 && code <= 0xDFFF) code = 0xFFFD;
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        out += e;  // \" \\ \/ and the rest
    }
  }
  return out;
}

// The string value of key at the top of a JSON object cut short, if it shows one.
std::optional<std::string> scan_string(const std::string& text, const std::string& key) {
  std::string quoted = "\"" + key + "\"";
  for (std::size_t at = text.find(quoted); at != std::string::npos;
       at = text.find(quoted, at + 1)) {
    std::size_t i = at + quoted.size();
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    if (i >= text.size() || text[i] != ':') continue;
    ++i;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    if (i >= text.size() || text[i] != '"') continue;
    return json_string_at(text, i + 1);
  }
  return std::nullopt;
}

// A path as the workspace names it: relative when inside it.
std::string relative_to(const std::string& path, const std::string& workspace) {
  if (workspace.empty() || path.size() <= workspace.size() + 1) return path;
  std::string root = workspace.back() == '/' ? workspace : workspace + "/";
  return starts_with(path, root) ? path.substr(root.size()) : path;
}

// The value of a telling key as text: a string as it is, a list of words (a command
// as argv) joined with spaces.
std::optional<std::string> value_text(const Poco::Dynamic::Var& value) {
  if (value.isString()) return value.extract<std::string>();
  if (value.type() == typeid(Poco::JSON::Array::Ptr)) {
    Poco::JSON::Array::Ptr words = value.extract<Poco::JSON::Array::Ptr>();
    std::string out;
    for (std::size_t i = 0; i < words->size(); ++i) {
      out += (out.empty() ? "" : " ") + words->get(static_cast<unsigned>(i)).toString();
    }
    return out;
  }
  return std::nullopt;
}

// "11-26 19:45:38": a row's time, UTC, to the second (the year is in `--checkpoints`).
std::string short_time(std::chrono::system_clock::time_point t) {
  std::string iso = fsnap::format_timestamp(t);  // 2026-11-26T19:45:38.123456Z
  return iso.size() >= 19 ? iso.substr(5, 5) + " " + iso.substr(11, 8) : iso;
}

std::optional<sandbox::LedgerRecord> read_record(const sandbox::Ledger& ledger,
                                                 const fsnap::Checkpoint* c) {
  if (c == nullptr) return std::nullopt;
  try {
    return ledger.read(*c);
  } catch (const fsnap::Error&) {
    return std::nullopt;  // a damaged record: the row says what the checkpoint does
  }
}

// Why a failed call was not rolled back, without the words that say it was not.
std::string rollback_why(const sandbox::LedgerRecord& r) {
  constexpr std::string_view kRefused = "rollback refused: ";
  std::string_view why = r.rollback_reason;
  if (why.substr(0, kRefused.size()) == kRefused) why.remove_prefix(kRefused.size());
  return std::string(why);
}

// A row being put together from its checkpoints (oldest first).
struct Gathered {
  const fsnap::Checkpoint* first = nullptr;
  const fsnap::Checkpoint* pre = nullptr;     // the call's pre_tool checkpoint
  const fsnap::Checkpoint* end = nullptr;     // the checkpoint that ended it
  const fsnap::Checkpoint* denied = nullptr;  // containment refused it
  const fsnap::Checkpoint* last = nullptr;
  const fsnap::Checkpoint* safety = nullptr;  // taken before its rollback
  bool ended = false;
  // Whether its first checkpoint is where it began: a checkpoint of no call, or a call's
  // start (a call seen from its end may have begun before the checkpoints read).
  bool begun() const { return first->meta.tool_call_id.empty() || first == pre || first == denied; }
};

// Outcome and details of a call from the record that ended it.
void describe_end(const sandbox::LedgerRecord& r, LogRow& row) {
  const std::string& summary = r.result_summary;
  if (r.success && *r.success) {
    row.outcome = "ok";
    return;
  }
  if (starts_with(summary, "denied by the agent")) {
    row.outcome = "denied";
    row.details.push_back(without_prefix(summary, "denied by the agent: "));
    return;
  }
  if (starts_with(summary, "not executed")) {
    row.outcome = "no outcome";
    row.details.push_back(without_prefix(summary, "not executed: "));
    return;
  }
  if (!r.success) {
    row.outcome = "-";
    if (!summary.empty()) row.details.push_back(summary);
    return;
  }
  // Failed. The error alone: the summary of a call that was not rolled back starts with why.
  std::string error = summary;
  if (!r.rollback_reason.empty() && starts_with(error, r.rollback_reason + ": ")) {
    error.erase(0, r.rollback_reason.size() + 2);
  }
  bool rolled_back = r.rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kRollBack);
  row.outcome = rolled_back ? "rolled back" : "failed";
  std::string what = rollback_text(r, 80);
  if (what == "rolled back") what.clear();
  std::string detail = what;
  if (!error.empty()) detail += (detail.empty() ? "" : ": ") + error;
  if (!detail.empty()) row.details.push_back(detail);
  if (std::string lost = unrestored_text(r); !lost.empty()) row.details.push_back(lost);
}

LogRow describe(const Gathered& g, const sandbox::Ledger& ledger, const std::string& workspace) {
  LogRow row;
  const fsnap::Checkpoint& first = *g.first;
  row.run = first.meta.run;
  row.at = first.created_at;
  const fsnap::Checkpoint& last = *g.last;
  row.first = first;
  row.last = last;
  if (g.end != nullptr) row.end = *g.end;
  if (g.safety != nullptr) row.safety = *g.safety;
  if (first.meta.tool_call_id.empty()) {
    // A checkpoint of no call.
    row.ref = first.id;
    row.outcome = std::string(fsnap::to_string(first.meta.phase));
    std::optional<sandbox::LedgerRecord> r = read_record(ledger, &first);
    row.what = r ? r->result_summary : "";
    if (!first.meta.label.empty()) {
      row.what = "label:" + fsnap::quote_path(first.meta.label) +
                 (row.what.empty() ? "" : "  " + row.what);
    }
    if (!first.meta.tag.empty()) {
      row.what = "tag:" + first.meta.tag + (row.what.empty() ? "" : "  " + row.what);
    }
  } else {
    row.ref = first.meta.tool_call_id;
    for (const fsnap::Checkpoint* c : {g.pre, g.end, g.denied, g.first}) {
      if (c != nullptr && row.tool.empty()) row.tool = c->meta.tool_name;
    }
    std::optional<sandbox::LedgerRecord> pre = read_record(ledger, g.pre);
    std::optional<sandbox::LedgerRecord> end = read_record(ledger, g.end);
    std::optional<sandbox::LedgerRecord> denied = read_record(ledger, g.denied);
    const std::optional<sandbox::LedgerRecord>& input = pre ? pre : end ? end : denied;
    // What its input works on; else the paths it changes (a file tool's pre-tool record
    // names them whole, where its recorded input may be cut before them); else its
    // input as recorded (compact JSON already).
    if (input) row.what = input_text(input->input_summary, workspace);
    if (row.what.empty() && pre && pre->paths) {
      for (const std::string& p : *pre->paths) {
        row.what += (row.what.empty() ? "" : " ") + fsnap::quote_path(p);
      }
    }
    if (row.what.empty() && input) row.what = input->input_summary;
    if (g.denied != nullptr) {
      row.outcome = "refused";
      if (denied) row.details.push_back(without_prefix(denied->result_summary, "denied: "));
    } else if (end) {
      describe_end(*end, row);
    } else if (pre && pre->success) {
      describe_end(*pre, row);  // its end's record is damaged; the start's has the outcome too
    } else {
      row.outcome = g.ended ? "-" : "not ended";
    }
  }
  if (std::size_t n = last.skipped.size(); n != 0) {
    row.details.push_back(counted(n, "path", "paths") + " not captured (shadowbox show " + last.id +
                          " names " + (n == 1 ? "it" : "them") + ")");
  }
  return row;
}

// The rows of checkpoints (newest first, as ShadowRepo::log gives them), oldest first.
std::vector<Gathered> gather(const std::vector<fsnap::Checkpoint>& checkpoints) {
  std::vector<Gathered> gathered;
  std::map<std::pair<std::string, std::string>, std::size_t> open;  // (run, call) -> row
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    const fsnap::Checkpoint& c = *it;
    const std::string& call = c.meta.tool_call_id;
    if (call.empty()) {
      gathered.push_back({&c, nullptr, nullptr, nullptr, &c, nullptr, true});
      continue;
    }
    std::pair<std::string, std::string> key{c.meta.run, call};
    auto found = open.find(key);
    if (found == open.end() || gathered[found->second].ended) {
      // (A call id seen again once its call ended is another call's.)
      gathered.push_back({&c, nullptr, nullptr, nullptr, &c, nullptr, false});
      found = open.insert_or_assign(key, gathered.size() - 1).first;
    }
    Gathered& g = gathered[found->second];
    g.last = &c;
    switch (c.meta.phase) {
      case fsnap::Phase::kPreTool:
        if (g.pre == nullptr) g.pre = &c;
        break;
      case fsnap::Phase::kDenied:
        g.denied = &c;
        g.ended = true;
        break;
      case fsnap::Phase::kSafety:
        g.safety = &c;
        break;  // taken before the call's rollback: the call goes on to its end
      default:
        g.end = &c;
        g.ended = true;
    }
  }
  return gathered;
}

}  // namespace

std::string one_line(const std::string& text, std::size_t limit) {
  std::string out = text.substr(0, limit);
  for (char& ch : out) {
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  return out + (text.size() > limit ? "..." : "");
}

std::string rollback_text(const sandbox::LedgerRecord& r, std::size_t limit) {
  if (r.rollback.empty()) return "";
  if (r.rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kUnchanged)) {
    return "nothing to roll back";
  }
  if (r.rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kRollBack)) {
    if (r.rollback_kept.empty()) return "rolled back";
    std::string kept;
    for (const auto& [path, why] : r.rollback_kept) {
      kept += (kept.empty() ? "" : "; ") + fsnap::quote_path(path) + ": " + why;
    }
    std::size_t n = r.rollback_kept.size();
    return "rolled back, kept " + std::to_string(n) + (n == 1 ? " path" : " paths") + " (" +
           one_line(kept, limit) + ")";
  }
  std::string what = r.rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kRefuse)
                         ? "rollback refused"
                     : r.rollback == sandbox::to_string(sandbox::RollbackDecision::Kind::kKeep)
                         ? "kept"
                         : one_line(r.rollback, 20);  // a record of a newer shadowbox
  std::string why = rollback_why(r);
  return why.empty() ? what : what + " (" + one_line(why, limit) + ")";
}

std::string unrestored_text(const sandbox::LedgerRecord& r) {
  if (r.phase == fsnap::Phase::kPreTool) return "";  // said once, under the call's end
  std::string text;
  for (const auto& [path, why] : r.rollback_unrestored) {
    text += (text.empty() ? "NOT restored: " : ", ") + fsnap::quote_path(path) + " (" + why + ")";
  }
  return text;
}

std::string input_text(const std::string& input, const std::string& workspace) {
  if (input.empty() || input.front() != '{') return input;
  Poco::JSON::Object::Ptr object;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(input);
    if (parsed.type() == typeid(Poco::JSON::Object::Ptr)) {
      object = parsed.extract<Poco::JSON::Object::Ptr>();
    }
  } catch (const std::exception&) {
    // Cut short (the records keep a few thousand bytes of an input): read it as far as it goes.
  }
  for (const char* key : kTellingKeys) {
    std::optional<std::string> text;
    if (object) {
      if (object->has(key)) text = value_text(object->get(key));
    } else {
      text = scan_string(input, key);
    }
    if (!text || text->empty()) continue;
    return is_path_key(key) ? relative_to(*text, workspace) : *text;
  }
  return "";
}

std::vector<LogRow> newest_log_rows(const fsnap::ShadowRepo& repo, const std::string& run,
                                    const sandbox::Ledger& ledger, const std::string& workspace,
                                    std::size_t limit) {
  // The newest checkpoints, more of them until the rows shown begin among them (a call
  // whose start is older would be shown where it ends, and without its input).
  for (std::size_t window = limit == 0 ? 0 : 4 * limit + 16;; window *= 4) {
    std::vector<fsnap::Checkpoint> checkpoints = repo.log(run, window);
    std::vector<Gathered> gathered = gather(checkpoints);
    bool whole = window == 0 || checkpoints.size() < window;
    std::size_t shown = limit == 0 ? gathered.size() : std::min(limit, gathered.size());
    bool begun = std::all_of(gathered.end() - static_cast<std::ptrdiff_t>(shown), gathered.end(),
                             [](const Gathered& g) { return g.begun(); });
    if (!whole && !begun) continue;
    std::vector<LogRow> rows;
    for (auto it = gathered.rbegin(); rows.size() < shown; ++it) {
      rows.push_back(describe(*it, ledger, workspace));
    }
    return rows;
  }
}

void print_log_rows(std::ostream& out, const std::vector<LogRow>& rows, std::size_t width) {
  // Under the reference: past the time ("11-26 19:45:38") and its gap.
  constexpr std::size_t kDetailIndent = 16;
  for (std::size_t i = 0; i < rows.size();) {
    // A table for each run's rows in a row.
    const std::string& run = rows[i].run;
    TextTable table(
        {{"TIME (UTC)"}, {"CALL/CHECKPOINT"}, {"TOOL", false, 12}, {"OUTCOME"}, {"WHAT"}});
    for (; i < rows.size() && rows[i].run == run; ++i) {
      const LogRow& row = rows[i];
      table.add_row({short_time(row.at), row.ref, row.tool, row.outcome, row.what});
      for (const std::string& detail : row.details) table.add_line(detail, kDetailIndent);
    }
    out << "run " << printable(fsnap::quote_path(run)) << '\n';
    table.print(out, width);
    if (i != rows.size()) out << '\n';
  }
}

}  // namespace cli
