#include "hooks/claude_code_project_hooks.hpp"

#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store.hpp"
#include "hooks/claude_code_settings.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The events of one tool call: the project's hooks must record all of them, into one
// store, for a hook for every project to leave any to them — a call whose before is in
// one store and whose failure is in another is rolled back by neither.
constexpr const char* kToolEvents[] = {"PreToolUse", "PostToolUse", "PostToolUseFailure"};

bool is_tool_event(const std::string& event) {
  return std::find(std::begin(kToolEvents), std::end(kToolEvents), event) != std::end(kToolEvents);
}

bool runs_one_of(const fs::path& program, const std::vector<fs::path>& programs) {
  for (const fs::path& p : programs) {
    boost::system::error_code ec;
    if (fs::equivalent(program, p, ec) && !ec) return true;
  }
  return false;
}

// Stands for the workspace's own store, which a shared hook records into.
const std::string kOwnStore;

// The stores of the workspace the settings' genuine shadowbox hooks record event into
// (by real path; kOwnStore for shared ones).
std::set<std::string> recording_stores(const std::vector<std::string>& settings,
                                       const std::string& event, const ProjectHooksQuery& query) {
  std::set<std::string> stores;
  for (const std::string& text : settings) {
    for (const ProjectHookCommand& hook : project_hook_commands(text, event)) {
      if (hook.store.empty()) {
        std::optional<fs::path> program =
            query.count_shared ? program_on_path(hook.program, query.path, query.project)
                               : std::nullopt;
        if (program && runs_one_of(*program, query.programs)) stores.insert(kOwnStore);
        continue;
      }
      if (!runs_one_of(hook.program, query.programs) ||
          !fsnap::Store::is_store_of(hook.store, query.workspace)) {
        continue;
      }
      boost::system::error_code ec;
      fs::path real = fs::canonical(hook.store, ec);
      if (!ec) stores.insert(real.string());
    }
  }
  return stores;
}

}  // namespace

ProjectHooksFinding find_project_hooks(const ProjectHooksQuery& query, const std::string& event) {
  ProjectHooksFinding finding;
  // The files Claude Code started in the project directory runs the hooks of.
  std::vector<fs::path> files = {query.project / ".claude" / "settings.json",
                                 query.project / ".claude" / "settings.local.json"};
  boost::system::error_code ec;
  if (!fs::equivalent(query.project, query.workspace, ec)) {
    files.push_back(query.workspace / ".claude" / "settings.local.json");
  }
  std::vector<std::string> settings;
  bool looks_like_ours = false;
  bool switched_off = false;
  for (const fs::path& file : files) {
    std::optional<std::string> text = read_project_settings(file);
    if (!text) continue;
    looks_like_ours = looks_like_ours || has_shadowbox_hooks(*text);
    // It switches off the project's hooks of every file.
    switched_off = switched_off || disables_all_hooks(*text);
    settings.push_back(std::move(*text));
  }
  if (!switched_off) {
    std::vector<std::string> needed{event};
    if (is_tool_event(event)) needed.assign(std::begin(kToolEvents), std::end(kToolEvents));
    std::optional<std::set<std::string>> common;
    for (const std::string& e : needed) {
      std::set<std::string> stores = recording_stores(settings, e, query);
      if (common) {
        std::set<std::string> both;
        std::set_intersection(common->begin(), common->end(), stores.begin(), stores.end(),
                              std::inserter(both, both.begin()));
        stores = std::move(both);
      }
      common = std::move(stores);
    }
    finding.records_event = common && !common->empty();
  }
  // (A shared hook asking records anyway, and finds itself among them.)
  if (!finding.records_event && looks_like_ours && query.count_shared) {
    // The same words for every event, so that a run's log says it once.
    finding.lookalike =
        std::string(
            "the project's .claude settings hold hooks that look like shadowbox's but "
            "would not record its events") +
        (switched_off ? " (they switch every hook off)"
                      : " (only hooks exactly as `shadowbox hooks install` writes them, "
                        "running this shadowbox into a store of this workspace for every "
                        "event of a tool call, count)") +
        ": shadowbox's hooks for every project record them";
  }
  return finding;
}

std::optional<fs::path> program_on_path(const std::string& name, const std::string& path,
                                        const fs::path& dir) {
  if (path.empty()) return std::nullopt;  // the shell's own default: not told here
  std::size_t begin = 0;
  for (;;) {
    std::size_t end = path.find(':', begin);
    std::string entry = path.substr(begin, end == std::string::npos ? end : end - begin);
    fs::path base = entry.empty() ? dir : entry[0] == '/' ? fs::path(entry) : dir / entry;
    fs::path candidate = base / name;
    boost::system::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) return std::nullopt;
    begin = end + 1;
  }
}

std::optional<fs::path> project_settings_disabling_hooks(const fs::path& workspace) {
  for (const char* name : {"settings.json", "settings.local.json"}) {
    fs::path file = workspace / ".claude" / name;
    std::optional<std::string> text = read_project_settings(file);
    if (text && disables_all_hooks(*text)) return file;
  }
  return std::nullopt;
}

}  // namespace hooks
