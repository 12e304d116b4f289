// CheckoutPacks — the pack files of a checkout's repository as a source of compressed
// blobs for a first capture: a file the repository already holds as a whole blob goes
// into the capture's own pack as the bytes git compressed it to, instead of being
// compressed again. Private to fsnap.
//
// The packs are in the workspace, which shadowbox does not trust: an index may name
// other bytes with a file's id, and a pack may be truncated or rewritten at any moment
// (by the agent's next command). So nothing in the store is or refers to one of their
// files, and nothing is taken from them unchecked: bytes are handed out only once they
// have been decompressed here to exactly the content the caller read from the file
// (whose id the caller computed itself), and the caller writes them into the store.
// Index files are read into memory (a mapped file that someone truncates kills the
// reader), kMaxIndexBytes of them in all; packs are read with pread. Deltas are not
// used: such a file is compressed as any other. Thread-safe after open().
#pragma once

#include <git2/oid.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace fsnap {

class CheckoutPacks {
 public:
  // Index bytes read at most: past that (some 4.7 million objects), the remaining packs
  // are not used and their files are compressed as any other.
  static constexpr std::uint64_t kMaxIndexBytes = std::uint64_t{128} << 20;
  // Packs used at most (each is searched for every file; git repacks past 50).
  static constexpr std::size_t kMaxPacks = 64;

  // The packs in pack_dir (a version-2 .idx beside a .pack of version 2 or 3). One that
  // cannot be read or does not look like a pack is left out; never throws.
  static CheckoutPacks open(const boost::filesystem::path& pack_dir);

  CheckoutPacks() = default;
  CheckoutPacks(CheckoutPacks&&) noexcept;
  CheckoutPacks& operator=(CheckoutPacks&&) noexcept;
  ~CheckoutPacks();

  // Whether a pack holds the blob id as a whole object whose bytes decompress to
  // content exactly; if so, compressed is set to them (the zlib stream, without the
  // pack's entry header), to be written as they are.
  bool compressed_blob(const git_oid& id, std::string_view content, std::string& compressed) const;

  // How many packs are used.
  std::size_t size() const { return packs_.size(); }

 private:
  struct Pack {
    int fd = -1;
    std::uint64_t size = 0;     // of the pack file when opened
    std::string index;          // the whole .idx
    std::uint32_t objects = 0;  // as the index's fan-out table says
  };

  // The offset of id's entry in pack, if its index names id.
  static std::optional<std::uint64_t> offset_of(const Pack& pack, const git_oid& id);

  std::vector<Pack> packs_;
};

}  // namespace fsnap
