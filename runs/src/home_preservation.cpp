#include "runs/home_preservation.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <boost/filesystem/operations.hpp>

#include "fsnap/store_layout.hpp"
#include "home_chunks.hpp"
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

// The XXH3 digest of bytes (16 bytes): what tells a chunk that changed from one that did
// not (home_chunks.hpp says why a digest that is not a cryptographic one will do).
std::string digest_of(std::string_view bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, h);
  return std::string(reinterpret_cast<const char*>(canonical.digest), sizeof canonical.digest);
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

void HomePreserver::add_chunks(int fd, const std::string& path, const KeptFile* earlier,
                               KeptFile& kept, std::vector<PendingEntry>& entries) {
  std::size_t end = 0;
  for_each_chunk(fd, (home_ / path).string(), [&](std::string_view bytes) {
    std::size_t i = kept.chunks.size();
    end += bytes.size();
    KeptChunk chunk{end, digest_of(bytes), ""};
    const KeptChunk* was =
        earlier != nullptr && i < earlier->chunks.size() ? &earlier->chunks[i] : nullptr;
    std::string content;
    if (was != nullptr && was->end == chunk.end && was->digest == chunk.digest &&
        !was->blob.empty()) {
      chunk.blob = was->blob;
    } else {
      content = redact(std::string(bytes), secrets_);
    }
    kept.chunks.push_back(std::move(chunk));
    entries.push_back({chunk_path(path, i), kept.chunks.back().blob, std::move(content)});
  });
  // Where each entry's id is kept, now that the chunks no longer move.
  for (std::size_t i = 0; i < kept.chunks.size(); ++i) {
    entries[entries.size() - kept.chunks.size() + i].kept_blob = &kept.chunks[i].blob;
  }
}

std::string HomePreserver::preserve_files(const std::vector<HomeFile>& files) {
  auto now = clock_->now();
  files_read_ = 0;
  std::vector<PendingEntry> entries;
  std::map<std::string, KeptFile> kept;
  for (const HomeFile& f : files) {
    if (in_chunk_tree(f.path)) continue;  // the name of a tree of chunks: see home_chunks.hpp
    auto found = kept_.find(f.path);
    const KeptFile* earlier = found != kept_.end() ? &found->second : nullptr;
    if (earlier != nullptr && !earlier->stamp.empty() && earlier->stamp == stamp_of(f.st)) {
      KeptFile& same = kept[f.path] = *earlier;
      if (same.chunks.empty()) {
        entries.push_back({f.path, same.blob, "", &same.blob});
      } else {
        for (std::size_t i = 0; i < same.chunks.size(); ++i) {
          entries.push_back({chunk_path(f.path, i), same.chunks[i].blob, "", &same.chunks[i].blob});
        }
      }
      continue;
    }
    struct stat st {};
    fsnap::UniqueFd file = open_home_file(home_, f.path, st);
    if (!file.valid()) continue;  // gone, or replaced by what is not kept
    ++files_read_;
    KeptFile& now_kept = kept[f.path];
    now_kept.stamp = old_enough(st, now) ? stamp_of(st) : "";
    if (kept_in_chunks(f.path, static_cast<std::size_t>(st.st_size), secrets_)) {
      add_chunks(file.get(), f.path, earlier, now_kept, entries);
      continue;
    }
    std::string content;
    content.reserve(static_cast<std::size_t>(st.st_size));
    if (!fsnap::read_all(file.get(), content)) {
      throw sandbox::Error(sandbox::ErrorCode::kIo,
                           fsnap::errno_message("cannot read " + (home_ / f.path).string(), errno));
    }
    entries.push_back({f.path, "", redact(content, secrets_), &now_kept.blob});
  }
  std::vector<std::pair<std::string, std::string>> blobs;  // path, blob id
  {
    fsnap::StoreLock lock = store_.lock();
    bool all_there = true;
    for (PendingEntry& e : entries) {
      if (e.blob.empty()) {
        e.blob = repo_->write_blob(e.content);
        *e.kept_blob = e.blob;
      } else if (!repo_->has_object(e.blob)) {
        all_there = false;  // gone with its run's home ref since (gc of a dropped run)
      }
      blobs.emplace_back(std::move(e.path), e.blob);
    }
    if (all_there) {
      std::sort(blobs.begin(), blobs.end());
      std::string tree = write_nested_tree(*repo_, blobs, 0, blobs.size(), 0);
      std::string ref = fsnap::layout::home_ref(run_);
      if (repo_->ref_tree(ref) != tree) repo_->commit_to_ref(ref, tree, "home of run " + run_);
      kept_ = std::move(kept);
      return tree;
    }
  }
  // Something kept was gone: everything is read again.
  kept_.clear();
  return preserve_files(files);
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
  materialize_home(repo, *tree, dir);
}

void materialize_home(const fsnap::ShadowRepo& repo, const std::string& tree, const fs::path& dir) {
  repo.materialize(tree, dir);
  join_chunked_files(dir);
}

std::vector<fsnap::TreeChange> home_changes(const fsnap::ShadowRepo& repo, const std::string& from,
                                            const std::string& to) {
  return home_file_changes(repo.diff_trees(from, to));
}

}  // namespace runs
