#include "store_size.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "large_file_copies.hpp"
#include "pack_names.hpp"

namespace fsnap {

namespace {

namespace fs = boost::filesystem;

constexpr int kShared = -1;  // reached from more than one run, or from no run's refs

// The run whose refs ref is one of ("" for the ledger, tags and anything else).
std::string run_of_ref(const std::string& ref) {
  for (std::string_view prefix :
       {layout::kRunRefPrefix, layout::kHomeRefPrefix, layout::kSessionRefPrefix}) {
    if (ref.rfind(prefix, 0) == 0) return ref.substr(prefix.size());
  }
  return "";
}

std::uint64_t object_bytes_on_disk(const fs::path& objects) {
  std::uint64_t total = 0;
  boost::system::error_code ec;
  for (fs::recursive_directory_iterator it(objects, ec), end; !ec && it != end; it.increment(ec)) {
    boost::system::error_code size_ec;
    if (fs::is_regular_file(it->path(), size_ec)) {
      std::uintmax_t size = fs::file_size(it->path(), size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

// The copies of large files the checkpoints of run name: its whole chain, or its newest
// kept ones when it is to be shortened to them.
std::set<std::string> copies_named(const ShadowRepo::Impl& impl, const std::string& run,
                                   std::optional<std::size_t> kept) {
  std::vector<Checkpoint> chain = impl.run_log(run, kept.value_or(0));
  std::set<std::string> out;
  if (kept && *kept == 0) return out;
  for (const Checkpoint& c : chain) {
    for (const SkippedPath& s : c.skipped) {
      if (s.copy) out.insert(s.copy->name);
    }
  }
  return out;
}

}  // namespace

std::set<std::string> large_files_named(const ShadowRepo::Impl& impl,
                                        const std::vector<std::string>& runs) {
  std::set<std::string> out;
  for (const std::string& run : runs) out.merge(copies_named(impl, run, std::nullopt));
  return out;
}

namespace {

// Each object's size (0 where it cannot be read); their total in total.
using ObjectSizes = std::unordered_map<git_oid, std::uint64_t, OidHash, OidEq>;
ObjectSizes object_sizes(const ShadowRepo::Impl& impl, std::uint64_t& total) {
  ObjectSizes size_of;
  git::check(git_odb_foreach(
                 impl.odb.get(),
                 [](const git_oid* oid, void* payload) {
                   static_cast<ObjectSizes*>(payload)->emplace(*oid, 0);
                   return 0;
                 },
                 &size_of),
             "cannot list objects");
  total = 0;
  for (auto& [oid, size] : size_of) {
    std::size_t length = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (git_odb_read_header(&length, &type, impl.odb.get(), &oid) == 0) size = length;
    git_error_clear();
    total += size;
  }
  return size_of;
}

// The tips each run reaches its objects from, by run ("" for the ledger and tags,
// shared): a shortened run's from the trees it keeps.
std::map<std::string, std::vector<RefTip>> tips_by_run(
    const ShadowRepo::Impl& impl, const std::map<std::string, std::vector<git_oid>>& shortened) {
  std::map<std::string, std::vector<RefTip>> groups;
  for (RefTip& tip : ref_tips(impl)) {
    // Of the ledger, its newest tree: gc starts the notes' history afresh when it drops
    // anything (the session trees the kept records name go on their runs' chains).
    if (tip.first == layout::kNotesRef) {
      git_commit* commit = nullptr;
      if (git_commit_lookup(&commit, impl.repo.get(), &tip.second) != 0) {
        git_error_clear();
        continue;
      }
      tip.second = *git_commit_tree_id(commit);
      git_commit_free(commit);
    }
    std::string run = run_of_ref(tip.first);
    auto kept = shortened.find(run);
    if (kept != shortened.end() && tip.first == layout::run_ref(run)) {
      for (const git_oid& tree : kept->second) groups[run].push_back({tip.first, tree});
      continue;
    }
    groups[run].push_back(std::move(tip));
  }
  return groups;
}

// Which run alone holds each large-file copy (its index in runs, or kShared).
std::map<std::string, int> copy_owners(
    const ShadowRepo::Impl& impl, const std::vector<std::string>& runs,
    const std::map<std::string, std::vector<git_oid>>& shortened) {
  std::map<std::string, int> copy_owner;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto kept = shortened.find(runs[i]);
    std::optional<std::size_t> count;
    if (kept != shortened.end()) count = kept->second.size();
    for (const std::string& name : copies_named(impl, runs[i], count)) {
      auto [at, fresh] = copy_owner.emplace(name, static_cast<int>(i));
      if (!fresh && at->second != static_cast<int>(i)) at->second = kShared;
    }
  }
  return copy_owner;
}

// The runs to drop for excess bytes: oldest first by their newest checkpoint, never the
// newest run nor one of keep, until what they alone hold (alone, by index) covers it.
std::vector<std::string> oldest_runs_for(const ShadowRepo::Impl& impl,
                                         const std::vector<std::string>& runs,
                                         const std::vector<double>& alone, double excess,
                                         const std::set<std::string>& keep) {
  struct Candidate {
    std::string run;
    std::chrono::system_clock::time_point newest;
    double alone;  // bytes on disk only this run holds
  };
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<Checkpoint> tip = impl.run_log(runs[i], 1);
    if (tip.empty()) continue;
    candidates.push_back({runs[i], tip.front().created_at, alone[i]});
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.newest < b.newest; });
  if (!candidates.empty()) candidates.pop_back();
  std::vector<std::string> out;
  for (const Candidate& c : candidates) {
    if (excess <= 0) break;
    if (keep.count(c.run)) continue;
    out.push_back(c.run);
    excess -= c.alone;
  }
  return out;
}

}  // namespace

std::vector<std::string> runs_over_size(
    const ShadowRepo::Impl& impl, std::uint64_t max_bytes, const std::set<std::string>& keep,
    const std::map<std::string, std::vector<git_oid>>& shortened) {
  std::uint64_t on_disk = object_bytes_on_disk(impl.git_dir / "objects");
  // The copies of large files, beside the objects: what the store alone holds of each.
  std::map<std::string, std::uint64_t> copy_bytes =
      LargeFileCopies(layout::large_files_dir(layout::store_of_repo(impl.git_dir))).disk_usage();
  std::uint64_t copies_on_disk = 0;
  for (const auto& [name, bytes] : copy_bytes) copies_on_disk += bytes;
  if (max_bytes == 0 || on_disk + copies_on_disk <= max_bytes) return {};

  // Every object's size, and the scale from sizes to bytes on disk.
  std::uint64_t all_sizes = 0;
  ObjectSizes size_of = object_sizes(impl, all_sizes);
  double scale =
      all_sizes == 0 ? 0.0 : static_cast<double>(on_disk) / static_cast<double>(all_sizes);

  // Who reaches each object: the ledger and tags (shared), and each run.
  std::vector<std::string> runs;
  std::unordered_map<git_oid, int, OidHash, OidEq> owner;
  for (const auto& [run, tips] : tips_by_run(impl, shortened)) {
    int index = run.empty() ? kShared : static_cast<int>(runs.size());
    if (!run.empty()) runs.push_back(run);
    for (const git_oid& id : name_objects_from(impl, tips).order) {
      auto [at, fresh] = owner.emplace(id, index);
      if (!fresh && at->second != index) at->second = kShared;
    }
  }
  // Bytes on disk: the objects' sizes scaled, the copies' blocks as they are.
  double live = 0;
  std::vector<double> alone(runs.size(), 0);
  auto count = [&](int who, double bytes) {
    live += bytes;
    if (who != kShared) alone[static_cast<std::size_t>(who)] += bytes;
  };
  for (const auto& [oid, who] : owner) {
    auto size = size_of.find(oid);
    count(who, scale * static_cast<double>(size != size_of.end() ? size->second : 0));
  }
  if (copies_on_disk > 0) {
    for (const auto& [name, who] : copy_owners(impl, runs, shortened)) {
      auto bytes = copy_bytes.find(name);
      if (bytes != copy_bytes.end()) count(who, static_cast<double>(bytes->second));
    }
  }
  double excess = live - static_cast<double>(max_bytes);
  if (excess <= 0) return {};
  return oldest_runs_for(impl, runs, alone, excess, keep);
}

}  // namespace fsnap
