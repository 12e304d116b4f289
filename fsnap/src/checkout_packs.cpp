#include "checkout_packs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <boost/filesystem/operations.hpp>

#include "fsnap/posix.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

// A version-2 pack index: magic, version, a fan-out table of 256 counts, then per
// object its id (20 bytes), CRC (4) and offset (4; with the top bit set, the number of
// an 8-byte offset in a table after them), then the pack's checksum and its own.
constexpr std::size_t kFanout = 8;
constexpr std::size_t kIds = kFanout + 256 * 4;
constexpr std::size_t kTrailer = 40;
constexpr std::size_t kPackHeader = 12;
constexpr std::size_t kPackTrailer = 20;
constexpr unsigned kBlobType = 3;  // a pack entry's type for a whole blob
// An entry's header (type and size, 7 bits a byte) fits this for any 64-bit size.
constexpr std::size_t kMaxEntryHeader = 10;

std::uint32_t be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         u[3];
}

// Opens a regular file for reading, never through a symlink and never blocking on a
// FIFO; -1 if it is not one. size is set to its size.
int open_regular(const fs::path& file, std::uint64_t& size) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  size = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

// Whether index is a well-formed version-2 index (its sizes, not its content: what it
// names is checked where it is used); objects is set to its object count.
bool valid_index(const std::string& index, std::uint32_t& objects) {
  if (index.size() < kIds + kTrailer || std::memcmp(index.data(), "\377tOc", 4) != 0 ||
      be32(index.data() + 4) != 2) {
    return false;
  }
  std::uint32_t previous = 0;
  for (std::size_t i = 0; i < 256; ++i) {
    std::uint32_t count = be32(index.data() + kFanout + i * 4);
    if (count < previous) return false;
    previous = count;
  }
  objects = previous;
  std::uint64_t tables = kIds + std::uint64_t{objects} * 28 + kTrailer;
  return tables <= index.size() && (index.size() - tables) % 8 == 0;
}

// A zlib inflate stream kept for one thread (set up once: see pack_writer.cpp's
// Deflater).
class Inflater {
 public:
  Inflater() { ok_ = ::inflateInit(&z_) == Z_OK; }
  ~Inflater() {
    if (ok_) ::inflateEnd(&z_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Whether in starts with a zlib stream that decompresses to expected exactly; if so,
  // returns its length.
  std::optional<std::size_t> matches(std::string_view in, std::string_view expected) {
    if (!ok_ || ::inflateReset(&z_) != Z_OK) return std::nullopt;
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    std::size_t done = 0;
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(out_);
      z_.avail_out = sizeof out_;
      int rc = ::inflate(&z_, Z_NO_FLUSH);
      std::size_t produced = sizeof out_ - z_.avail_out;
      if (produced > expected.size() - done ||
          std::memcmp(out_, expected.data() + done, produced) != 0) {
        return std::nullopt;
      }
      done += produced;
      if (rc == Z_STREAM_END) break;
      if (rc != Z_OK) return std::nullopt;  // cut short, corrupt, or asks for a dictionary
    }
    if (done != expected.size()) return std::nullopt;
    return in.size() - z_.avail_in;
  }

 private:
  z_stream z_{};
  bool ok_ = false;
  char out_[64 * 1024];
};

}  // namespace

CheckoutPacks::CheckoutPacks(CheckoutPacks&&) noexcept = default;

CheckoutPacks& CheckoutPacks::operator=(CheckoutPacks&& other) noexcept {
  std::swap(packs_, other.packs_);
  return *this;
}

CheckoutPacks::~CheckoutPacks() {
  for (const Pack& p : packs_) ::close(p.fd);
}

CheckoutPacks CheckoutPacks::open(const fs::path& pack_dir) {
  CheckoutPacks out;
  std::vector<fs::path> indexes;
  boost::system::error_code ec;
  for (fs::directory_iterator it(pack_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".idx") indexes.push_back(it->path());
  }
  std::sort(indexes.begin(), indexes.end());
  std::uint64_t budget = kMaxIndexBytes;
  for (const fs::path& idx : indexes) {
    if (out.packs_.size() == kMaxPacks) break;
    // git's cruft packs hold what nothing reaches: not worth reading.
    boost::system::error_code exists_ec;
    if (fs::exists(fs::path(idx).replace_extension(".mtimes"), exists_ec)) continue;
    Pack pack;
    std::uint64_t index_size = 0;
    int index_fd = open_regular(idx, index_size);
    if (index_fd < 0) continue;
    bool read = index_size <= budget && index_size >= kIds + kTrailer;
    if (read) {
      pack.index.resize(static_cast<std::size_t>(index_size));
      read = read_all_at(index_fd, pack.index.data(), pack.index.size(), 0);
    }
    ::close(index_fd);
    if (!read || !valid_index(pack.index, pack.objects)) continue;
    pack.fd = open_regular(fs::path(idx).replace_extension(".pack"), pack.size);
    if (pack.fd < 0) continue;
    char header[kPackHeader];
    std::uint32_t version = 0;
    if (pack.size >= kPackHeader + kPackTrailer && read_all_at(pack.fd, header, sizeof header, 0)) {
      version = std::memcmp(header, "PACK", 4) == 0 ? be32(header + 4) : 0;
    }
    if (version != 2 && version != 3) {
      ::close(pack.fd);
      continue;
    }
    budget -= index_size;
    out.packs_.push_back(std::move(pack));
  }
  return out;
}

std::optional<std::uint64_t> CheckoutPacks::offset_of(const Pack& pack, const git_oid& id) {
  const char* index = pack.index.data();
  unsigned first = id.id[0];
  std::uint32_t lo = first == 0 ? 0 : be32(index + kFanout + (first - 1) * 4);
  std::uint32_t hi = be32(index + kFanout + first * 4);
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    int cmp = std::memcmp(index + kIds + std::size_t{mid} * GIT_OID_RAWSZ, id.id, GIT_OID_RAWSZ);
    if (cmp == 0) {
      std::size_t offsets = kIds + std::size_t{pack.objects} * 24;
      std::uint32_t small = be32(index + offsets + std::size_t{mid} * 4);
      if ((small & 0x80000000u) == 0) return small;
      std::uint64_t at =
          offsets + std::uint64_t{pack.objects} * 4 + std::uint64_t{small & 0x7fffffffu} * 8;
      if (at + 8 > pack.index.size() - kTrailer) return std::nullopt;
      return (std::uint64_t{be32(index + at)} << 32) | be32(index + at + 4);
    }
    if (cmp < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return std::nullopt;
}

bool CheckoutPacks::compressed_blob(const git_oid& id, std::string_view content,
                                    std::string& compressed) const {
  thread_local Inflater inflater;
  thread_local std::string entry;
  for (const Pack& pack : packs_) {
    std::optional<std::uint64_t> offset = offset_of(pack, id);
    if (!offset || *offset < kPackHeader || *offset >= pack.size - kPackTrailer) continue;
    // The entry's header and at most what zlib can make of content: a stream of git's
    // for it is never longer.
    std::uint64_t room = pack.size - kPackTrailer - *offset;
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(
        room, kMaxEntryHeader + ::compressBound(static_cast<uLong>(content.size()))));
    entry.resize(want);
    if (!read_all_at(pack.fd, entry.data(), want, *offset)) continue;
    auto c = static_cast<unsigned char>(entry[0]);
    unsigned type = (c >> 4) & 7;
    std::uint64_t size = c & 0x0f;
    std::size_t header = 1;
    for (unsigned shift = 4; (c & 0x80) != 0 && header < want && shift < 64; shift += 7) {
      c = static_cast<unsigned char>(entry[header++]);
      size |= std::uint64_t{c & 0x7fu} << shift;
    }
    if ((c & 0x80) != 0 || type != kBlobType || size != content.size()) continue;
    std::optional<std::size_t> length =
        inflater.matches(std::string_view(entry).substr(header), content);
    if (!length) continue;
    compressed.assign(entry, header, *length);
    return true;
  }
  return false;
}

}  // namespace fsnap
