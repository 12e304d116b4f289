#include "sandbox/rollback_policy.hpp"

#include <fnmatch.h>

#include <algorithm>

#include "fsnap/enum_names.hpp"

namespace sandbox {

std::string_view to_string(RollbackDecision::Kind kind) {
  using Kind = RollbackDecision::Kind;
  static constexpr fsnap::EnumName<Kind> kNames[] = {{Kind::kRollBack, "rolled_back"},
                                                     {Kind::kRefuse, "refused"},
                                                     {Kind::kKeep, "kept"},
                                                     {Kind::kUnchanged, "unchanged"}};
  return fsnap::name_of(kNames, kind, "unknown");
}

namespace {

// Whether path is one of paths, or — when it is a directory — above one of them (made
// for it).
bool covers(const std::set<std::string>& paths, const std::string& path, bool directory) {
  auto it = paths.lower_bound(path);
  return it != paths.end() && it->compare(0, path.size(), path) == 0 &&
         (it->size() == path.size() || (directory && (*it)[path.size()] == '/'));
}

// Whether path lies below dir.
bool below(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::string describe(const BoundaryFact& fact) {
  if (!fact.run.empty()) {
    return "run " + fact.run + " (" +
           (fact.call_id.empty() ? "checkpoint " + fact.checkpoint_id
                                 : fact.tool_name + " " + fact.call_id) +
           ")";
  }
  if (fact.call_id.empty()) {
    return std::string(fact.phase == fsnap::Phase::kManual
                           ? "a snapshot taken outside any tool call"
                           : "an edit made outside any tool call") +
           (fact.checkpoint_id.empty() ? "" : " (checkpoint " + fact.checkpoint_id + ")");
  }
  return fact.tool_name + " " + fact.call_id;
}

// Who else can have made a change to resource's path seen at the end of window: ""
// when only the failed call can have, else a few words naming them.
std::string others_who_can_have_changed(const ChangeWindow& window, const std::string& call_id,
                                        const std::string& resource, const std::string& path) {
  auto dirs = window.directories.find(resource);
  bool directory = dirs != window.directories.end() && dirs->second.count(path) != 0;
  const BoundaryFact& fact = window.seen_at;
  // Another run's work, a restore, an edit between calls: nobody's call of this run.
  bool own_run_call = fact.run.empty() && !window.open.empty() &&
                      !(fact.call_id.empty() && fact.phase == fsnap::Phase::kCheckpoint);
  if (!own_run_call) return "changed by " + describe(fact);
  // Whether call runs inside the failed call (at any depth).
  auto inside_failed = [&](const OpenCall& call) {
    std::string parent = call.parent;
    for (std::size_t depth = 0; !parent.empty() && depth < window.open.size(); ++depth) {
      if (parent == call_id) return true;
      auto outer = std::find_if(window.open.begin(), window.open.end(),
                                [&](const OpenCall& c) { return c.id == parent; });
      if (outer == window.open.end()) return false;
      parent = outer->parent;
    }
    return false;
  };
  bool failed_call_can = false;
  std::string others;
  for (const OpenCall& call : window.open) {
    // A call's named paths are workspace paths: a resource that cannot say which of its
    // paths changed ("") can be changed by any call.
    if (call.paths && !path.empty() && !covers(*call.paths, path, directory)) continue;
    if (call.id == call_id || inside_failed(call)) {
      failed_call_can = true;
    } else {
      others += (others.empty() ? "" : ", ") + call.tool_name + " " + call.id;
    }
  }
  if (!others.empty()) return "changed while " + others + " ran too";
  if (!failed_call_can) return "changed outside any tool call";
  return "";
}

// A directory is the failed call's only when everything below it is: removing or
// replacing it would take the rest along. Adds such directories to not_its_own.
void keep_directories_of_kept_paths(
    const std::map<std::string, std::set<std::string>>& differing,
    std::map<std::pair<std::string, std::string>, std::string>& not_its_own) {
  for (const auto& [resource, paths] : differing) {
    for (const std::string& path : paths) {
      auto key = std::make_pair(resource, path);
      if (not_its_own.count(key) != 0) continue;
      for (auto it = paths.upper_bound(path); it != paths.end() && below(*it, path); ++it) {
        auto inner = not_its_own.find({resource, *it});
        if (inner != not_its_own.end()) {
          not_its_own.emplace(key, "holds " + *it + ", " + inner->second);
          break;
        }
      }
    }
  }
}

// The first three kept paths with their reasons, and how many more.
std::string name_kept(const std::vector<KeptPath>& kept_paths) {
  std::string named;
  std::size_t shown = 0;
  for (const KeptPath& kept : kept_paths) {
    if (shown++ == 3) {
      named += " and " + std::to_string(kept_paths.size() - 3) + " more";
      break;
    }
    named += (named.empty() ? "" : "; ") + (kept.path.empty() ? kept.resource : kept.path) + " (" +
             kept.why + ")";
  }
  return named;
}

}  // namespace

std::optional<std::string> RollbackPolicy::keeps(const FailedCall& call) const {
  if (!rollback_on_failure) return "not rolled back by configuration";
  if (keep_failed_tools.count(call.tool) != 0) return "not rolled back by configuration";
  for (const KeepRule& rule : keep_failures) {
    if (!rule.tool.empty() && rule.tool != call.tool) continue;
    if (!rule.command.empty() && ::fnmatch(rule.command.c_str(), call.command.c_str(), 0) != 0) {
      continue;
    }
    if (!rule.exit_codes.empty() &&
        (!call.exit_code || std::find(rule.exit_codes.begin(), rule.exit_codes.end(),
                                      *call.exit_code) == rule.exit_codes.end())) {
      continue;
    }
    std::string which = rule.command.empty() ? call.tool : "'" + rule.command + "'";
    return "kept by configuration (rollback.keep_failures: " + which +
           (call.exit_code ? " exiting " + std::to_string(*call.exit_code) : "") + ")";
  }
  return std::nullopt;
}

RollbackDecision RollbackPolicy::decide(
    const FailedCall& call, const std::string& call_id, const std::vector<ChangeWindow>& windows,
    const std::map<std::string, std::set<std::string>>& differing) const {
  RollbackDecision decision;
  if (std::optional<std::string> why = keeps(call)) {
    decision.kind = RollbackDecision::Kind::kKeep;
    decision.reason = *why;
    return decision;
  }
  bool anything = std::any_of(differing.begin(), differing.end(),
                              [](const auto& part) { return !part.second.empty(); });
  if (!anything) {
    decision.kind = RollbackDecision::Kind::kUnchanged;
    decision.reason = "nothing to roll back: the call changed no file";
    return decision;
  }

  // Each differing path, with why it is not the failed call's alone (first reason).
  std::map<std::pair<std::string, std::string>, std::string> not_its_own;
  std::vector<const BoundaryFact*> refusing;
  for (const ChangeWindow& window : windows) {
    bool refused_here = false;
    for (const auto& [resource, paths] : window.changed) {
      auto now = differing.find(resource);
      if (now == differing.end()) continue;
      for (const std::string& path : paths) {
        if (now->second.count(path) == 0) continue;  // as it was again: nothing to undo
        std::string why = others_who_can_have_changed(window, call_id, resource, path);
        if (why.empty()) continue;
        not_its_own.emplace(std::make_pair(resource, path), why);
        refused_here = true;
      }
    }
    if (refused_here) refusing.push_back(&window.seen_at);
  }
  keep_directories_of_kept_paths(differing, not_its_own);
  for (const auto& [resource, paths] : differing) {
    for (const std::string& path : paths) {
      auto why = not_its_own.find({resource, path});
      if (why == not_its_own.end()) {
        decision.restore[resource].insert(path);
      } else {
        decision.kept.push_back(KeptPath{resource, path, why->second});
      }
    }
  }
  for (const BoundaryFact* fact : refusing) decision.refused_by.push_back(*fact);
  if (decision.kept.empty()) return decision;

  std::string named = name_kept(decision.kept);
  if (decision.restore.empty()) {
    decision.kind = RollbackDecision::Kind::kRefuse;
    decision.reason =
        "rollback refused: nothing changed since this call started is its alone: " + named;
  } else {
    decision.reason = "rolled back what only this call can have changed; kept " + named;
  }
  return decision;
}

}  // namespace sandbox
