#include "stat_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "tree_encoding.hpp"

namespace fsnap {

namespace {

constexpr char kMagic[8] = {'S', 'B', 'S', 'T', 'A', 'T', '0', '1'};
// An entry's bytes in the file after its name: mode, size, mtime, ctime, inode, id.
constexpr std::size_t kEntryStatBytes = 4 + 4 * 8 + GIT_OID_RAWSZ;

class Writer {
 public:
  template <typename T>
  void put(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_bytes(std::string_view s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }
  void put_oid(const git_oid& oid) {
    out_.append(reinterpret_cast<const char*>(oid.id), GIT_OID_RAWSZ);
  }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  template <typename T>
  bool get(T& v) {
    if (data_.size() - pos_ < sizeof v) return false;
    std::memcpy(&v, data_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return true;
  }
  bool get_bytes(std::string_view& s) {
    std::uint32_t n;
    if (!get(n) || data_.size() - pos_ < n) return false;
    s = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool get_bytes(std::string& s) {
    std::string_view v;
    if (!get_bytes(v)) return false;
    s.assign(v);
    return true;
  }
  bool get_oid(git_oid& oid) {
    if (data_.size() - pos_ < GIT_OID_RAWSZ) return false;
    std::memcpy(oid.id, data_.data() + pos_, GIT_OID_RAWSZ);
    pos_ += GIT_OID_RAWSZ;
    return true;
  }
  bool skip(std::size_t n) {
    if (data_.size() - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

bool read_whole_file(const boost::filesystem::path& file, std::string& out) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) {
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (ok && got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) got += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

// The bytes the names of the next n entries of r take (r is a copy: nothing is read).
std::size_t name_bytes(Reader r, std::uint32_t n) {
  std::size_t total = 0;
  std::string_view name;
  for (std::uint32_t i = 0; i < n && r.get_bytes(name) && r.skip(kEntryStatBytes); ++i) {
    total += name.size();
  }
  return total;
}

bool parse(std::string_view data, const std::string& workspace, StatCache& cache,
           std::vector<std::pair<std::string, DirRecord>>& dirs) {
  if (data.size() < sizeof kMagic + 8 || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return false;
  }
  std::string_view body = data.substr(sizeof kMagic, data.size() - sizeof kMagic - 8);
  std::uint64_t stored;
  std::memcpy(&stored, data.data() + data.size() - 8, 8);
  if (stored != stat_cache_checksum(body)) return false;

  Reader r(body);
  std::string recorded_workspace;
  std::int64_t started;
  std::uint64_t dir_count;
  if (!r.get_bytes(recorded_workspace) || recorded_workspace != workspace || !r.get(started) ||
      !r.get(dir_count)) {
    return false;
  }
  cache.set_scan_started_ns(started);
  dirs.reserve(dir_count);
  for (std::uint64_t d = 0; d < dir_count; ++d) {
    std::string path;
    DirRecord record;
    std::uint32_t n;
    if (!r.get_bytes(path) || !r.get_oid(record.tree) || !r.get(n)) return false;
    // Every entry takes at least a name's length and its stat data: a count the rest of
    // the file cannot hold is damage, not a size to reserve.
    if (n > data.size() / (4 + kEntryStatBytes)) return false;
    record.reserve(n, name_bytes(r, n));
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string_view name;
      StatEntry e;
      std::uint32_t mode = 0;
      std::uint64_t size = 0;
      if (!r.get_bytes(name) || !r.get(mode) || !r.get(size) || !r.get(e.mtime_ns) ||
          !r.get(e.ctime_ns) || !r.get(e.ino) || !r.get_oid(e.oid) ||
          name.size() > StatEntry::kMaxNameSize || !e.set_mode(mode)) {
        return false;
      }
      e.set_size(size);
      // Sorted and unique, as every record written is: lookups search them.
      if (i > 0 && !(record.name(record.entries.back()) < name)) return false;
      record.add(name, e);
    }
    dirs.emplace_back(std::move(path), std::move(record));
  }
  return r.at_end();
}

}  // namespace

std::uint64_t stat_cache_checksum(std::string_view data) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ data.size();
  std::size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  for (; i < data.size(); ++i)
    h = (h ^ static_cast<unsigned char>(data[i])) * 0x94D049BB133111EBull;
  return h ^ (h >> 29);
}

namespace {

// Git's four modes of a tree entry, by the kind a StatEntry keeps (0: none yet).
constexpr std::uint32_t kModesByKind[] = {0, kModeFile, kModeExec, kModeLink, kModeTree};

}  // namespace

std::uint32_t StatEntry::mode() const {
  std::uint64_t kind = (packed_ >> kKindShift) & 7;
  return kind < std::size(kModesByKind) ? kModesByKind[kind] : 0;
}

bool StatEntry::set_mode(std::uint32_t mode) {
  for (std::uint64_t kind = 1; kind < std::size(kModesByKind); ++kind) {
    if (kModesByKind[kind] == mode) {
      packed_ = (packed_ & ~(std::uint64_t{7} << kKindShift)) | (kind << kKindShift);
      return true;
    }
  }
  return false;
}

void DirRecord::reserve(std::size_t count, std::size_t name_bytes) {
  entries.reserve(count);
  names_.reserve(name_bytes);
}

StatEntry& DirRecord::add(std::string_view name, const StatEntry& stat) {
  if (name.size() > StatEntry::kMaxNameSize) {
    throw Error(ErrorCode::kIo, "a name of " + std::to_string(name.size()) +
                                    " bytes, more than a file system holds");
  }
  if (names_.size() + name.size() > UINT32_MAX) {
    throw Error(ErrorCode::kIo, "a directory's names take more than 4 GiB");
  }
  StatEntry& e = entries.emplace_back(stat);
  e.name_at = static_cast<std::uint32_t>(names_.size());
  e.set_name_size(name.size());
  names_.append(name);
  return e;
}

void DirRecord::shrink_to_fit() {
  entries.shrink_to_fit();
  names_.shrink_to_fit();
}

StatCache StatCache::load(const boost::filesystem::path& file, const std::string& workspace) {
  StatCache cache;
  cache.workspace_ = workspace;
  std::string data;
  if (!read_whole_file(file, data)) return cache;
  std::vector<std::pair<std::string, DirRecord>> dirs;
  if (!parse(data, workspace, cache, dirs)) {
    cache.scan_started_ns_ = 0;
    return cache;
  }
  cache.dirs_.reserve(dirs.size());
  for (auto& [path, record] : dirs) cache.dirs_.emplace(std::move(path), std::move(record));
  return cache;
}

void StatCache::save(const boost::filesystem::path& file) const {
  Writer w;
  w.str().append(kMagic, sizeof kMagic);
  w.put_bytes(workspace_);
  w.put<std::int64_t>(scan_started_ns_);
  w.put<std::uint64_t>(dirs_.size());
  for (const auto& [path, record] : dirs_) {
    w.put_bytes(path);
    w.put_oid(record.tree);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(record.entries.size()));
    for (const StatEntry& e : record.entries) {
      w.put_bytes(record.name(e));
      w.put(e.mode());
      w.put(e.size());
      w.put(e.mtime_ns);
      w.put(e.ctime_ns);
      w.put(e.ino);
      w.put_oid(e.oid);
    }
  }
  std::string& data = w.str();
  std::uint64_t sum = stat_cache_checksum(std::string_view(data).substr(sizeof kMagic));
  data.append(reinterpret_cast<const char*>(&sum), sizeof sum);

  write_file_atomically(file, data);
}

const DirRecord* StatCache::find_dir(const std::string& dir) const {
  auto it = dirs_.find(dir);
  return it == dirs_.end() ? nullptr : &it->second;
}

const StatEntry* StatCache::find_entry(const DirRecord& record, std::string_view name) {
  auto it = std::lower_bound(
      record.entries.begin(), record.entries.end(), name,
      [&record](const StatEntry& e, std::string_view n) { return record.name(e) < n; });
  return it != record.entries.end() && record.name(*it) == name ? &*it : nullptr;
}

void StatCache::drop_subtree(const std::string& dir) {
  std::vector<std::string> pending{dir};
  while (!pending.empty()) {
    std::string at = std::move(pending.back());
    pending.pop_back();
    auto it = dirs_.find(at);
    if (it == dirs_.end()) continue;
    for (const StatEntry& e : it->second.entries) {
      if (e.mode() != kModeTree) continue;
      std::string_view name = it->second.name(e);
      pending.push_back(at.empty() ? std::string(name) : at + "/" + std::string(name));
    }
    dirs_.erase(it);
  }
}

}  // namespace fsnap
