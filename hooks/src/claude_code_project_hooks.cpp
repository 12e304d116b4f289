#include "hooks/claude_code_project_hooks.hpp"

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

bool runs_one_of(const std::string& program, const std::vector<fs::path>& programs) {
  for (const fs::path& p : programs) {
    boost::system::error_code ec;
    if (fs::equivalent(program, p, ec) && !ec) return true;
  }
  return false;
}

// The stores of workspace the settings' genuine shadowbox hooks record event into (by
// real path).
std::set<std::string> recording_stores(const std::vector<std::string>& settings,
                                       const std::string& event, const fs::path& workspace,
                                       const std::vector<fs::path>& programs) {
  std::set<std::string> stores;
  for (const std::string& text : settings) {
    for (const ProjectHookCommand& hook : project_hook_commands(text, event)) {
      if (!runs_one_of(hook.program, programs) ||
          !fsnap::Store::is_store_of(hook.store, workspace)) {
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

ProjectHooksFinding find_project_hooks(const fs::path& workspace, const std::string& event,
                                       const std::vector<fs::path>& programs) {
  ProjectHooksFinding finding;
  std::vector<std::string> settings;
  bool looks_like_ours = false;
  bool switched_off = false;
  for (const char* name : {"settings.json", "settings.local.json"}) {
    std::optional<std::string> text = read_project_settings(workspace / ".claude" / name);
    if (!text) continue;
    looks_like_ours = looks_like_ours || has_shadowbox_hooks(*text);
    // It switches off the project's hooks of both files.
    switched_off = switched_off || disables_all_hooks(*text);
    settings.push_back(std::move(*text));
  }
  if (!switched_off) {
    std::vector<std::string> needed{event};
    if (is_tool_event(event)) needed.assign(std::begin(kToolEvents), std::end(kToolEvents));
    std::optional<std::set<std::string>> common;
    for (const std::string& e : needed) {
      std::set<std::string> stores = recording_stores(settings, e, workspace, programs);
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
  if (!finding.records_event && looks_like_ours) {
    // The same words for every event, so that a run's log says it once.
    finding.lookalike =
        std::string(
            "the project's .claude settings hold hooks that look like shadowbox's but "
            "would not record its events") +
        (switched_off ? " (they switch every hook off)"
                      : " (only hooks exactly as `shadowbox hooks install --scope project` "
                        "writes them, running this shadowbox into a store of this workspace "
                        "for every event of a tool call, count)") +
        ": shadowbox's hooks for every project record them";
  }
  return finding;
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
