#include "runs/home_preservation.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store_layout.hpp"
#include "home_files.hpp"
#include "runs/redaction.hpp"
#include "sandbox/errors.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

// A file's stat data as preservation compares it: size, mtime and ctime in ns, inode.
std::string stamp_of(const struct stat& st) {
  return std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
         std::to_string(st.st_mtim.tv_nsec) + ':' + std::to_string(st.st_ctim.tv_sec) + '.' +
         std::to_string(st.st_ctim.tv_nsec) + ':' + std::to_string(st.st_ino);
}

// The files' paths and stat data, one line each: what preserve() compares.
std::string signature_of(const std::vector<HomeFile>& files) {
  std::string out;
  for (const HomeFile& f : files) out += f.path + '\0' + stamp_of(f.st) + '\n';
  return out;
}

// Whether a file with this stat data, read at now, can be trusted to have other stat
// data once it is written again: the clock a file system stamps files with moves in
// ticks, so a file written again within the tick it was read in may keep its stamp.
bool old_enough(const struct stat& st, std::chrono::system_clock::time_point now) {
  constexpr auto kMargin = std::chrono::seconds(2);
  auto changed = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(std::max(st.st_mtim.tv_sec, st.st_ctim.tv_sec))));
  return changed + kMargin < now;
}

// Writes the tree of files[begin, end) (path, blob id; sorted by path), whose paths
// share their first prefix bytes (their directory's path and its '/'), and its
// subtrees; returns its id. The caller holds the store lock.
std::string write_nested_tree(fsnap::ShadowRepo& repo,
                              const std::vector<std::pair<std::string, std::string>>& files,
                              std::size_t begin, std::size_t end, std::size_t prefix) {
  std::vector<fsnap::ObjectEntry> entries;
  for (std::size_t i = begin; i < end;) {
    const std::string& path = files[i].first;
    std::size_t slash = path.find('/', prefix);
    if (slash == std::string::npos) {
      entries.push_back({path.substr(prefix), files[i].second, false});
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < end && files[j].first.compare(0, slash + 1, path, 0, slash + 1) == 0) ++j;
    entries.push_back({path.substr(prefix, slash - prefix),
                       write_nested_tree(repo, files, i, j, slash + 1), true});
    i = j;
  }
  return repo.write_tree(entries);
}

}  // namespace

HomePreserver::HomePreserver(fsnap::Store store, std::shared_ptr<fsnap::ShadowRepo> repo,
                             std::string run, fs::path home, std::vector<std::string> parts,
                             std::vector<std::string> secrets,
                             std::shared_ptr<const fsnap::Clock> clock)
    : store_(std::move(store)),
      repo_(std::move(repo)),
      run_(std::move(run)),
      home_(std::move(home)),
      parts_(std::move(parts)),
      secrets_(std::move(secrets)),
      clock_(clock ? std::move(clock) : std::make_shared<fsnap::SystemClock>()) {}

bool HomePreserver::preserve() {
  std::vector<HomeFile> files = list_home_files(home_, parts_);
  std::string now = signature_of(files);
  if (!last_.empty() && now == last_) {
    files_read_ = 0;
    return false;
  }
  last_.clear();
  preserve_files(files);
  last_ = std::move(now);
  return true;
}

std::string HomePreserver::preserve_now() {
  return preserve_files(list_home_files(home_, parts_));
}

std::string HomePreserver::preserve_files(const std::vector<HomeFile>& files) {
  auto now = clock_->now();
  files_read_ = 0;
  std::vector<std::pair<std::string, std::string>> blobs;  // path, blob id ("": to write)
  std::vector<std::string> contents;                       // of the files to write, in order
  std::map<std::string, KeptFile> kept;
  for (const HomeFile& f : files) {
    std::string stamp = stamp_of(f.st);
    auto found = kept_.find(f.path);
    if (found != kept_.end() && found->second.stamp == stamp) {
      blobs.emplace_back(f.path, found->second.blob);
      kept.insert(*found);
      continue;
    }
    struct stat st {};
    std::optional<std::string> content = read_home_file(home_, f.path, st);
    if (!content) continue;  // gone, or replaced by what is not kept
    ++files_read_;
    blobs.emplace_back(f.path, "");
    contents.push_back(redact(*content, secrets_));
    if (old_enough(st, now)) kept[f.path] = KeptFile{stamp_of(st), ""};
  }
  fsnap::StoreLock lock = store_.lock();
  std::size_t next = 0;
  for (auto& [path, blob] : blobs) {
    if (blob.empty()) {
      blob = repo_->write_blob(contents[next++]);
      if (auto k = kept.find(path); k != kept.end()) k->second.blob = blob;
    } else if (!repo_->has_object(blob)) {
      // Gone with its run's home ref since (gc of a dropped run): read again.
      kept.erase(path);
      struct stat st {};
      std::optional<std::string> content = read_home_file(home_, path, st);
      ++files_read_;
      blob = content ? repo_->write_blob(redact(*content, secrets_)) : "";
    }
  }
  std::erase_if(blobs, [](const auto& entry) { return entry.second.empty(); });
  std::string tree = write_nested_tree(*repo_, blobs, 0, blobs.size(), 0);
  std::string ref = fsnap::layout::home_ref(run_);
  if (repo_->ref_tree(ref) != tree) repo_->commit_to_ref(ref, tree, "home of run " + run_);
  kept_ = std::move(kept);
  return tree;
}

std::optional<std::string> preserved_home(const fsnap::ShadowRepo& repo, const std::string& run) {
  return repo.ref_tree(fsnap::layout::home_ref(run));
}

std::optional<std::chrono::system_clock::time_point> home_preserved_at(
    const fsnap::ShadowRepo& repo, const std::string& run) {
  return repo.ref_time(fsnap::layout::home_ref(run));
}

void rebuild_home(const fsnap::ShadowRepo& repo, const std::string& run, const fs::path& dir) {
  std::optional<std::string> tree = preserved_home(repo, run);
  if (!tree) {
    throw sandbox::Error(sandbox::ErrorCode::kNotFound,
                         "run " + fsnap::quote_input(run) + " has no preserved agent data (" +
                             fsnap::layout::home_ref(run) + " is missing)");
  }
  repo.materialize(*tree, dir);
}

}  // namespace runs
