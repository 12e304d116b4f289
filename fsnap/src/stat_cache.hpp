// StatCache — what the last capture saw of every captured entry (stat data and object
// id), so the next capture re-reads only files whose stat data changed. Like git's
// index: an entry is trusted only if size, mtime and ctime (ns), inode and mode all
// match and its mtime is older than the start of the scan that recorded it (the
// racy-timestamp guard: a file modified within the same clock tick as the scan is
// always re-read). Private to fsnap.
//
// The file is versioned and checksummed, written atomically, and bound to one
// workspace; a cache that is missing, corrupt or for another workspace is ignored
// (everything is re-read), so the cache can make a capture slower but never wrong.
#pragma once

#include <git2/oid.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace fsnap {

// The checksum a stat cache file ends with, of its bytes after the magic: fast, 64 bits,
// to tell a file cut short or damaged. (Here for the tests, which write files of their own.)
std::uint64_t stat_cache_checksum(std::string_view body);

// What the cache knows about one entry of a directory. A watch daemon holds one for every
// file of the workspace, so it is kept to 56 bytes: the name is not here but in its
// DirRecord's names (where name_at and the name's length place it), and the size, the
// kind of entry (one of git's four modes) and the name's length (at most 255 bytes, a
// name's most on Linux) share one word.
struct StatEntry {
  // Sizes from this one on are recorded as this one, which is never trusted: a file of
  // 8 PiB or more is read again every time.
  static constexpr std::uint64_t kMaxSize = (std::uint64_t{1} << 53) - 1;
  // A name's most bytes.
  static constexpr std::size_t kMaxNameSize = 255;

  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  std::uint64_t ino = 0;
  git_oid oid{};
  std::uint32_t name_at = 0;

  // The file's size (kMaxSize for kMaxSize or more).
  std::uint64_t size() const { return packed_ & kMaxSize; }
  void set_size(std::uint64_t size) { packed_ = (packed_ & ~kMaxSize) | std::min(size, kMaxSize); }
  // The git mode: 0100644, 0100755, 0120000 or 040000 (0 before one is set).
  std::uint32_t mode() const;
  // Sets the mode; false (nothing set) for a mode that is none of the four.
  bool set_mode(std::uint32_t mode);
  // The length of the entry's name.
  std::size_t name_size() const { return static_cast<std::size_t>(packed_ >> 56); }
  void set_name_size(std::size_t n) {
    packed_ = (packed_ & ~(std::uint64_t{0xff} << 56)) | (std::uint64_t{n & 0xff} << 56);
  }

 private:
  static constexpr int kKindShift = 53;
  std::uint64_t packed_ = 0;  // size (53 bits), kind (3), name length (8)
};
static_assert(sizeof(StatEntry) == 4 * 8 + GIT_OID_RAWSZ + 4, "a StatEntry holds no padding");

// The entries of one directory (sorted by name) and the tree id they made. The entries'
// names are held back to back in one buffer, not one string each.
class DirRecord {
 public:
  git_oid tree{};
  // The entries; their names are name(e). Callers may change anything but the names'
  // places, and may remove entries (their names' bytes stay, unused, until the record
  // is rebuilt).
  std::vector<StatEntry> entries;

  // Makes room for count entries whose names take name_bytes in all.
  void reserve(std::size_t count, std::size_t name_bytes);
  // Appends an entry named name with stat (whose own name's place and length are
  // ignored) and returns it. Names must be added in ascending order. Throws kIo for a
  // name over StatEntry::kMaxNameSize bytes, or a directory whose names do not fit 4 GiB.
  StatEntry& add(std::string_view name, const StatEntry& stat = {});
  // The name of e, one of this record's entries.
  std::string_view name(const StatEntry& e) const {
    return {names_.data() + e.name_at, e.name_size()};
  }
  // Frees the capacity the record does not use (once it is final: it is then kept).
  void shrink_to_fit();
  // Bytes the names take (with those of removed entries).
  std::size_t name_bytes() const { return names_.size(); }

 private:
  std::string names_;
};

// The stat cache of one workspace.
class StatCache {
 public:
  // Loads the cache for workspace from file; an unusable file gives an empty cache.
  static StatCache load(const boost::filesystem::path& file, const std::string& workspace);
  // Writes the cache atomically (temporary file + rename). Throws kIo.
  void save(const boost::filesystem::path& file) const;

  // The record of directory dir ("" is the root), or nullptr.
  const DirRecord* find_dir(const std::string& dir) const;
  // The entry name in a directory record, or nullptr.
  static const StatEntry* find_entry(const DirRecord& record, std::string_view name);

  // Drops the record of directory dir and those of every directory below it that its
  // records name (a directory that is gone). Costs what it drops, not the cache's size.
  void drop_subtree(const std::string& dir);
  // Sets the record of a directory.
  void put_dir(const std::string& dir, DirRecord record) { dirs_[dir] = std::move(record); }
  // Start of the scan that recorded this cache (ns since the epoch).
  std::int64_t scan_started_ns() const { return scan_started_ns_; }
  void set_scan_started_ns(std::int64_t ns) { scan_started_ns_ = ns; }
  const std::string& workspace() const { return workspace_; }
  void set_workspace(std::string w) { workspace_ = std::move(w); }
  std::size_t dir_count() const { return dirs_.size(); }

 private:
  std::string workspace_;
  std::int64_t scan_started_ns_ = 0;
  std::unordered_map<std::string, DirRecord> dirs_;
};

}  // namespace fsnap
