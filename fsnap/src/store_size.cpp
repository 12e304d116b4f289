#include "store_size.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"

namespace fsnap {

namespace {

namespace fs = boost::filesystem;

constexpr int kShared = -1;  // reached from more than one run, or from no run's refs

// Calls visit on every object reachable from tip; visit returns whether to go on below.
template <typename Visit>
void walk_from(const ShadowRepo::Impl& impl, const git_oid& tip, Visit visit) {
  std::vector<git_oid> stack{tip};
  while (!stack.empty()) {
    git_oid id = stack.back();
    stack.pop_back();
    if (!visit(id)) continue;
    git_object* obj = nullptr;
    if (git_object_lookup(&obj, impl.repo.get(), &id, GIT_OBJECT_ANY) != 0) {
      git_error_clear();
      continue;
    }
    if (git_object_type(obj) == GIT_OBJECT_COMMIT) {
      auto* commit = reinterpret_cast<git_commit*>(obj);
      stack.push_back(*git_commit_tree_id(commit));
      for (unsigned i = 0; i < git_commit_parentcount(commit); ++i) {
        stack.push_back(*git_commit_parent_id(commit, i));
      }
    } else if (git_object_type(obj) == GIT_OBJECT_TREE) {
      auto* tree = reinterpret_cast<git_tree*>(obj);
      for (std::size_t i = 0; i < git_tree_entrycount(tree); ++i) {
        const git_tree_entry* e = git_tree_entry_byindex(tree, i);
        git_object_t type = git_tree_entry_type(e);
        if (type == GIT_OBJECT_TREE || type == GIT_OBJECT_BLOB)
          stack.push_back(*git_tree_entry_id(e));
      }
    }
    git_object_free(obj);
  }
}

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

}  // namespace

std::vector<std::string> runs_over_size(const ShadowRepo::Impl& impl, std::uint64_t max_bytes,
                                        const std::set<std::string>& keep) {
  std::uint64_t on_disk = object_bytes_on_disk(impl.git_dir / "objects");
  if (max_bytes == 0 || on_disk <= max_bytes) return {};

  // Every object's size, and the scale from sizes to bytes on disk.
  std::unordered_map<git_oid, std::uint64_t, OidHash, OidEq> size_of;
  std::uint64_t all_sizes = 0;
  git::check(git_odb_foreach(
                 impl.odb.get(),
                 [](const git_oid* oid, void* payload) {
                   auto* sizes = static_cast<decltype(size_of)*>(payload);
                   sizes->emplace(*oid, 0);
                   return 0;
                 },
                 &size_of),
             "cannot list objects");
  for (auto& [oid, size] : size_of) {
    std::size_t length = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (git_odb_read_header(&length, &type, impl.odb.get(), &oid) == 0) size = length;
    git_error_clear();
    all_sizes += size;
  }
  if (all_sizes == 0) return {};
  double scale = static_cast<double>(on_disk) / static_cast<double>(all_sizes);

  // Who reaches each object: the ledger and tags first (shared), then each run.
  std::map<std::string, std::vector<git_oid>> tips;  // by run ("" for shared)
  git_reference_iterator* raw = nullptr;
  git::check(git_reference_iterator_new(&raw, impl.repo.get()), "cannot list refs");
  git::ReferenceIterator it(raw);
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, it.get()) == 0) {
    git::Reference owned(ref);
    git_reference* resolved = nullptr;
    if (git_reference_resolve(&resolved, ref) == 0) {
      git_oid tip = *git_reference_target(resolved);
      git_reference_free(resolved);
      // Of the ledger, its newest tree: gc starts the notes' history afresh when it drops
      // anything (the session trees the kept records name go on their runs' chains).
      if (std::string(git_reference_name(ref)) == layout::kNotesRef) {
        git_commit* commit = nullptr;
        if (git_commit_lookup(&commit, impl.repo.get(), &tip) != 0) {
          git_error_clear();
          continue;
        }
        tip = *git_commit_tree_id(commit);
        git_commit_free(commit);
      }
      tips[run_of_ref(git_reference_name(ref))].push_back(tip);
    }
  }
  std::vector<std::string> runs;
  std::unordered_map<git_oid, int, OidHash, OidEq> owner;
  for (const auto& [run, run_tips] : tips) {
    int index = run.empty() ? kShared : static_cast<int>(runs.size());
    if (!run.empty()) runs.push_back(run);
    OidSet seen;
    for (const git_oid& tip : run_tips) {
      walk_from(impl, tip, [&](const git_oid& id) {
        if (!seen.insert(id).second) return false;
        auto [at, fresh] = owner.emplace(id, index);
        if (!fresh && at->second != index) at->second = kShared;
        return true;
      });
    }
  }
  std::uint64_t live = 0;
  std::vector<std::uint64_t> alone(runs.size(), 0);
  for (const auto& [oid, who] : owner) {
    auto size = size_of.find(oid);
    std::uint64_t bytes = size != size_of.end() ? size->second : 0;
    live += bytes;
    if (who != kShared) alone[static_cast<std::size_t>(who)] += bytes;
  }
  double excess = scale * static_cast<double>(live) - static_cast<double>(max_bytes);
  if (excess <= 0) return {};

  // Candidates, oldest first by their newest checkpoint; the newest run stays.
  struct Candidate {
    std::string run;
    std::chrono::system_clock::time_point newest;
    std::uint64_t alone;
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
    excess -= scale * static_cast<double>(c.alone);
  }
  return out;
}

}  // namespace fsnap
