#include "large_file_restore.hpp"

#include <algorithm>
#include <map>

namespace fsnap {

namespace {

bool is_large(const SkippedPath& s) {
  return s.reason == kOverMaxFileSize;
}

// Whether the file skipped now is the version the target skipped. A target without a
// copy (a checkpoint older than copies) says only its size.
bool same_version(const SkippedPath& now, const SkippedPath& target) {
  if (!is_large(now)) return false;
  if (!target.copy) return now.size == target.size;
  return now.copy && now.copy->name == target.copy->name;
}

TreeChange large_change(TreeChange::Kind kind, const std::string& path) {
  TreeChange c;
  c.kind = kind;
  c.path = path;
  TreeEntryInfo file{EntryType::kFile, false, ""};
  if (kind != TreeChange::Kind::kAdded) c.before = file;
  if (kind != TreeChange::Kind::kDeleted) c.after = file;
  return c;
}

}  // namespace

LargeFilePlan plan_large_files(const std::vector<SkippedPath>& now,
                               const std::vector<SkippedPath>& target,
                               const LargeFileCopies& copies) {
  std::map<std::string, const SkippedPath*> now_at, target_at;
  for (const SkippedPath& s : now) now_at[s.path] = &s;
  for (const SkippedPath& s : target) target_at[s.path] = &s;
  LargeFilePlan plan;
  for (const SkippedPath& n : now) {
    if (!is_large(n) || !n.copy) {
      plan.untouchable.insert(n.path);  // no way back to it: left as it is
    } else if (target_at.count(n.path) == 0) {
      plan.remove.push_back(n.path);
      plan.changes.push_back(large_change(TreeChange::Kind::kDeleted, n.path));
    }
  }
  for (const SkippedPath& t : target) {
    auto found = now_at.find(t.path);
    const SkippedPath* n = found == now_at.end() ? nullptr : found->second;
    if (!is_large(t)) {
      if (n == nullptr || n->reason != t.reason) {
        plan.unrestored.push_back(
            {t.path, "it is not captured (" + t.reason + ": not a file, directory or symlink)"});
        plan.untouchable.insert(t.path);  // what is there now stays
      }
      continue;
    }
    if (n != nullptr && same_version(*n, t)) {
      plan.untouchable.insert(t.path);
      continue;
    }
    std::string why = copies.why_not(t);
    if (why.empty() && n != nullptr && !(is_large(*n) && n->copy)) {
      why = "the file there now has no copy in the store to come back to, so it stays";
    }
    if (!why.empty()) {
      plan.unrestored.push_back({t.path, why});
      // What is there now stays, whatever it is: a file that has become small (and is
      // captured now) is not deleted for a file that cannot come back.
      plan.untouchable.insert(t.path);
      continue;
    }
    plan.put_back.push_back(t);
    plan.changes.push_back(large_change(
        n != nullptr ? TreeChange::Kind::kModified : TreeChange::Kind::kAdded, t.path));
  }
  return plan;
}

std::vector<std::string> large_file_changes(const std::vector<SkippedPath>& from,
                                            const std::vector<SkippedPath>& to) {
  std::map<std::string, const SkippedPath*> before, after;
  for (const SkippedPath& s : from) {
    if (is_large(s)) before[s.path] = &s;
  }
  for (const SkippedPath& s : to) {
    if (is_large(s)) after[s.path] = &s;
  }
  std::vector<std::string> out;
  for (const auto& [path, s] : before) {
    auto now = after.find(path);
    if (now == after.end() || !same_version(*now->second, *s)) out.push_back(path);
  }
  for (const auto& [path, s] : after) {
    if (before.count(path) == 0) out.push_back(path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void keep_only(LargeFilePlan& plan, const std::set<std::string>& only) {
  auto left_out = [&](const std::string& path) { return only.count(path) == 0; };
  std::erase_if(plan.put_back, [&](const SkippedPath& s) { return left_out(s.path); });
  std::erase_if(plan.remove, left_out);
  std::erase_if(plan.unrestored, [&](const UnrestoredPath& u) { return left_out(u.path); });
  std::erase_if(plan.changes, [&](const TreeChange& c) { return left_out(c.path); });
}

}  // namespace fsnap
