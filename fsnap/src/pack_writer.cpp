#include "pack_writer.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

constexpr int kCompressionLevel = 1;  // as loose objects: maintenance packs tighter

void put_be32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

// The entry header of a pack object: type and size, 4 bits then 7 per byte.
std::size_t put_header(unsigned char* out, git_object_t type, std::size_t size) {
  std::size_t n = 0;
  unsigned char c = static_cast<unsigned char>((static_cast<unsigned>(type) << 4) | (size & 0x0f));
  size >>= 4;
  while (size != 0) {
    out[n++] = c | 0x80;
    c = static_cast<unsigned char>(size & 0x7f);
    size >>= 7;
  }
  out[n++] = c;
  return n;
}

// SHA-1 through OpenSSL (the pack's and the index's trailing checksums).
class Sha1 {
 public:
  Sha1() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha1(), nullptr) != 1) {
      throw Error(ErrorCode::kIo, "cannot start a SHA-1 digest");
    }
  }
  void update(const void* data, std::size_t n) { EVP_DigestUpdate(ctx_.get(), data, n); }
  void final(unsigned char out[20]) {
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_.get(), out, &len);
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

// A deflate stream kept for one thread: setting one up allocates some 270 KB, which
// glibc hands back to the kernel at every free — per object, that cost more than the
// compression itself.
class Deflater {
 public:
  Deflater() {
    if (::deflateInit(&z_, kCompressionLevel) != Z_OK) {
      throw Error(ErrorCode::kIo, "cannot start compressing");
    }
  }
  ~Deflater() { ::deflateEnd(&z_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // Appends data, compressed, to out (from offset at); returns the compressed size.
  std::size_t compress(std::string_view data, std::vector<unsigned char>& out, std::size_t at) {
    ::deflateReset(&z_);
    out.resize(at + ::deflateBound(&z_, static_cast<uLong>(data.size())));
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z_.avail_in = static_cast<uInt>(data.size());
    z_.next_out = out.data() + at;
    z_.avail_out = static_cast<uInt>(out.size() - at);
    if (::deflate(&z_, Z_FINISH) != Z_STREAM_END) {
      throw Error(ErrorCode::kIo, "cannot compress an object");
    }
    return out.size() - at - z_.avail_out;
  }

 private:
  z_stream z_{};
};

// Writes n bytes of data to fd at offset; path names the file in the error.
void write_at(int fd, const void* data, std::size_t n, std::uint64_t offset, const fs::path& path) {
  if (!write_all_at(fd, data, n, offset))
    throw system_error("cannot write " + path.string(), errno);
}

// Syncs and closes fd (closed on every path, an error thrown or not).
void sync_and_close(UniqueFd fd, const fs::path& path) {
  if (::fsync(fd.get()) != 0) throw system_error("cannot sync " + path.string(), errno);
  if (::close(fd.release()) != 0) throw system_error("cannot close " + path.string(), errno);
}

}  // namespace

PackWriter::PackWriter(fs::path pack_dir) : pack_dir_(std::move(pack_dir)) {}

PackWriter::~PackWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void PackWriter::open_file() {
  boost::system::error_code ec;
  fs::create_directories(pack_dir_, ec);
  std::string tmpl = (pack_dir_ / "tmp_pack_XXXXXX").string();
  fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd_ < 0) throw system_error("cannot create a pack in " + pack_dir_.string(), errno);
  tmp_ = tmpl;
  ::fchmod(fd_, 0400);  // objects are the user's files: readable by the user alone
  std::string header = "PACK";
  put_be32(header, 2);
  put_be32(header, 0);  // the count, filled in by finish()
  write_at(fd_, header.data(), header.size(), 0, tmp_);
  end_ = header.size();
}

void PackWriter::append(const git_oid& oid, std::string_view data, git_object_t type,
                        std::string_view compressed, std::unique_lock<std::mutex>& lock) {
  thread_local Deflater deflater;
  thread_local std::vector<unsigned char> buf;
  lock.unlock();  // compressing is the work that runs in parallel
  buf.resize(16);
  std::size_t head = put_header(buf.data(), type, data.size());
  std::size_t n = head;
  if (compressed.empty()) {
    n += deflater.compress(data, buf, head);
  } else {
    buf.resize(head + compressed.size());
    std::memcpy(buf.data() + head, compressed.data(), compressed.size());
    n += compressed.size();
  }
  auto crc = static_cast<std::uint32_t>(::crc32(0, buf.data(), static_cast<uInt>(n)));
  lock.lock();
  write_at(fd_, buf.data(), n, end_, tmp_);
  entries_.push_back(Entry{oid, end_, crc});
  end_ += n;
}

bool PackWriter::add(const git_oid& oid, std::string_view data, git_object_t type,
                     std::string_view compressed) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Taken before it is written: a thread that finds it meanwhile only needs its id.
  if (!ids_.insert(oid).second) return false;
  if (fd_ < 0) {
    pending_bytes_ += data.size();
    pending_.push_back(Pending{oid, std::string(data), type, std::string(compressed)});
    if (pending_.size() < kMinPackObjects && pending_bytes_ < kMinPackBytes) return true;
    open_file();
    std::vector<Pending> pending = std::move(pending_);
    pending_.clear();
    for (const Pending& p : pending) append(p.oid, p.data, p.type, p.compressed, lock);
    return true;
  }
  append(oid, data, type, compressed, lock);
  return true;
}

bool PackWriter::contains(const git_oid& oid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ids_.count(oid) != 0;
}

fs::path PackWriter::finish(git_odb* loose) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) {
    for (const Pending& p : pending_) write_object(loose, p.data, p.type);
    pending_.clear();
    return {};
  }
  std::string count;
  put_be32(count, static_cast<std::uint32_t>(entries_.size()));
  write_at(fd_, count.data(), count.size(), 8, tmp_);

  // The trailer: SHA-1 of everything before it (read back from the page cache).
  Sha1 sha;
  std::vector<char> chunk(1 << 20);
  for (std::uint64_t at = 0; at < end_;) {
    ssize_t n = ::pread(fd_, chunk.data(), std::min<std::uint64_t>(chunk.size(), end_ - at),
                        static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw system_error("cannot read back " + tmp_.string(), n < 0 ? errno : EIO);
    sha.update(chunk.data(), static_cast<std::size_t>(n));
    at += static_cast<std::uint64_t>(n);
  }
  unsigned char pack_sha[20];
  sha.final(pack_sha);
  write_at(fd_, pack_sha, sizeof pack_sha, end_, tmp_);
  UniqueFd fd(std::exchange(fd_, -1));
  try {
    sync_and_close(std::move(fd), tmp_);
  } catch (...) {
    ::unlink(tmp_.c_str());
    throw;
  }

  git_oid name_oid;
  std::memcpy(name_oid.id, pack_sha, sizeof pack_sha);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &name_oid);
  fs::path pack = pack_dir_ / ("pack-" + std::string(hex) + ".pack");
  fs::path idx = pack_dir_ / ("pack-" + std::string(hex) + ".idx");
  std::string index = index_of(pack_sha);
  fs::path idx_tmp = idx;
  idx_tmp += ".tmp";
  UniqueFd ifd(::open(idx_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0400));
  if (!ifd.valid()) {
    int err = errno;
    ::unlink(tmp_.c_str());
    throw system_error("cannot create " + idx_tmp.string(), err);
  }
  try {
    write_at(ifd.get(), index.data(), index.size(), 0, idx_tmp);
    sync_and_close(std::move(ifd), idx_tmp);
    if (::rename(tmp_.c_str(), pack.c_str()) != 0)
      throw system_error("cannot move into place " + pack.string(), errno);
    if (::rename(idx_tmp.c_str(), idx.c_str()) != 0)
      throw system_error("cannot move into place " + idx.string(), errno);
  } catch (...) {
    ::unlink(tmp_.c_str());
    ::unlink(idx_tmp.c_str());
    throw;
  }
  fsync_path(pack_dir_);
  return idx;
}

// The version-2 index: fan-out, sorted ids, CRCs, offsets (large ones in a second
// table), the pack's checksum, then the index's own.
std::string PackWriter::index_of(const unsigned char pack_sha[20]) {
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return std::memcmp(a.oid.id, b.oid.id, GIT_OID_RAWSZ) < 0;
  });
  std::string out = "\377tOc";
  put_be32(out, 2);
  std::size_t at = 0;
  for (unsigned byte = 0; byte < 256; ++byte) {
    while (at < entries_.size() && entries_[at].oid.id[0] <= byte) ++at;
    put_be32(out, static_cast<std::uint32_t>(at));
  }
  for (const Entry& e : entries_) out.append(reinterpret_cast<const char*>(e.oid.id), 20);
  for (const Entry& e : entries_) put_be32(out, e.crc);
  std::string large;
  std::uint32_t large_count = 0;
  for (const Entry& e : entries_) {
    if (e.offset < 0x80000000u) {
      put_be32(out, static_cast<std::uint32_t>(e.offset));
    } else {
      put_be32(out, 0x80000000u | large_count++);
      put_be32(large, static_cast<std::uint32_t>(e.offset >> 32));
      put_be32(large, static_cast<std::uint32_t>(e.offset));
    }
  }
  out += large;
  out.append(reinterpret_cast<const char*>(pack_sha), 20);
  Sha1 sha;
  sha.update(out.data(), out.size());
  unsigned char idx_sha[20];
  sha.final(idx_sha);
  out.append(reinterpret_cast<const char*>(idx_sha), 20);
  return out;
}

}  // namespace fsnap
