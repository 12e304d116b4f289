// PackWriter — writes the objects of one large capture into a single pack file, as
// they come, instead of one loose object file each: on a first snapshot of 100,000
// files, creating 100,000 files costs more than hashing and compressing them.
// Private to fsnap.
//
// Objects are compressed by the calling thread (level 1, like loose objects), or come
// compressed already (blobs of a checkout's packs: checkout_packs.hpp), and are
// appended under a lock; nothing is deltified (maintenance repacks later). finish()
// writes the pack's trailer and its version-2 index, syncs both and moves them into
// the pack directory, the .pack before the .idx; until then the objects are readable
// through nothing, so finish() comes before anything refers to them. Destroyed
// unfinished, it removes its temporary file. Objects larger than kStreamedBlobSize
// do not belong in it: they stay loose, for restore to stream.
#pragma once

#include <git2/oid.h>
#include <git2/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "shadow_repo_impl.hpp"

namespace fsnap {

class PackWriter {
 public:
  // Objects held in memory until there are this many (or this many bytes of them):
  // a capture that writes fewer leaves them loose, as every later capture does, and
  // maintenance packs them with the rest.
  static constexpr std::size_t kMinPackObjects = 256;
  static constexpr std::size_t kMinPackBytes = std::size_t{8} << 20;

  // A pack to be written into pack_dir (created when needed).
  explicit PackWriter(boost::filesystem::path pack_dir);
  ~PackWriter();
  PackWriter(const PackWriter&) = delete;
  PackWriter& operator=(const PackWriter&) = delete;

  // Adds the object oid (whose content and type are given; the caller computed the id);
  // false if it was added already. compressed, if given, is data's zlib stream, written
  // as it is (bytes another pack holds, which the caller decompressed to data) instead
  // of compressing data. Thread-safe. Throws kIo.
  bool add(const git_oid& oid, std::string_view data, git_object_t type,
           std::string_view compressed = {});
  // Whether oid was added. Thread-safe.
  bool contains(const git_oid& oid) const;

  // Completes the pack and puts it in place; returns its .idx path. With fewer objects
  // than the thresholds above, writes them to loose instead and returns an empty path.
  // Throws kIo.
  boost::filesystem::path finish(git_odb* loose);

 private:
  struct Entry {
    git_oid oid;
    std::uint64_t offset;
    std::uint32_t crc;
  };
  struct Pending {
    git_oid oid;
    std::string data;
    git_object_t type;
    std::string compressed;  // data's zlib stream, when the caller had one
  };

  void open_file();
  // Compresses an object (with lock released) unless compressed holds it already, and
  // writes it at the end of the pack.
  void append(const git_oid& oid, std::string_view data, git_object_t type,
              std::string_view compressed, std::unique_lock<std::mutex>& lock);
  std::string index_of(const unsigned char pack_sha[20]);

  boost::filesystem::path pack_dir_;
  boost::filesystem::path tmp_;
  int fd_ = -1;  // the temporary pack file, once open
  mutable std::mutex mutex_;
  std::uint64_t end_ = 0;  // where the next object goes
  std::vector<Entry> entries_;
  std::vector<Pending> pending_;
  std::size_t pending_bytes_ = 0;
  OidSet ids_;
};

}  // namespace fsnap
