#include "stored_blobs.hpp"

#include <fcntl.h>
#include <git2/errors.h>
#include <git2/object.h>
#include <git2/oid.h>
#include <git2/sys/odb_backend.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fsnap/posix.hpp"

namespace fsnap {

namespace {

constexpr std::size_t kSample = 64 << 10;
constexpr std::size_t kOutBuffer = 256 << 10;

// Whether zlib's fastest level shrinks data by a twentieth or more.
bool shrinks(const std::string& data) {
  uLongf out_size = compressBound(data.size());
  std::string out(out_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &out_size,
                reinterpret_cast<const Bytef*>(data.data()), data.size(), 1) != Z_OK) {
    return true;  // (cannot say: compress as usual)
  }
  return out_size * 20 < data.size() * 19;
}

// The backend (libgit2 frees it through free_backend once it owns it).
struct StoredBackend {
  git_odb_backend parent;  // first: libgit2 hands this back
  char* objects_dir;       // malloc'ed
};

// One object being written.
struct StoredStream {
  git_odb_stream parent;  // first: libgit2 hands this back
  const char* objects_dir;
  int fd;
  char* temp_path;  // malloc'ed; null once renamed into place
  z_stream z;
  bool z_ready;
  unsigned char* out;  // kOutBuffer bytes
};

int fail(const std::string& what, int err) {
  git_error_set_str(GIT_ERROR_OS, errno_message(what, err).c_str());
  return -1;
}

// Feeds len bytes at data through the stream's deflate (flush: Z_NO_FLUSH, or Z_FINISH
// to end it) and writes what comes out.
int deflate_out(StoredStream* s, const char* data, std::size_t len, int flush) {
  s->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  s->z.avail_in = static_cast<uInt>(len);
  int rc;
  do {
    s->z.next_out = s->out;
    s->z.avail_out = static_cast<uInt>(kOutBuffer);
    rc = ::deflate(&s->z, flush);
    if (rc == Z_STREAM_ERROR) {
      git_error_set_str(GIT_ERROR_ZLIB, "cannot store an object: zlib failed");
      return -1;
    }
    std::size_t have = kOutBuffer - s->z.avail_out;
    if (have > 0 && !write_all(s->fd, s->out, have)) {
      return fail(std::string("cannot write ") + s->temp_path, errno);
    }
  } while (s->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  return 0;
}

int stream_write(git_odb_stream* stream, const char* buffer, std::size_t len) {
  auto* s = reinterpret_cast<StoredStream*>(stream);
  // (deflate takes an unsigned int's worth at a time.)
  constexpr std::size_t kMax = std::size_t{1} << 30;
  while (len > 0) {
    std::size_t n = len < kMax ? len : kMax;
    if (deflate_out(s, buffer, n, Z_NO_FLUSH) < 0) return -1;
    buffer += n;
    len -= n;
  }
  return 0;
}

int stream_finalize(git_odb_stream* stream, const git_oid* oid) {
  auto* s = reinterpret_cast<StoredStream*>(stream);
  if (deflate_out(s, nullptr, 0, Z_FINISH) < 0) return -1;
  if (::fchmod(s->fd, 0400) != 0) return fail(std::string("cannot finish ") + s->temp_path, errno);
  int fd = s->fd;
  s->fd = -1;
  if (::close(fd) != 0) return fail(std::string("cannot write ") + s->temp_path, errno);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, oid);
  std::string dir = std::string(s->objects_dir) + "/" + std::string(hex, 2);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail("cannot create " + dir, errno);
  }
  std::string path = dir + "/" + (hex + 2);
  if (::rename(s->temp_path, path.c_str()) != 0) return fail("cannot write " + path, errno);
  std::free(s->temp_path);
  s->temp_path = nullptr;
  return 0;
}

void stream_free(git_odb_stream* stream) {
  auto* s = reinterpret_cast<StoredStream*>(stream);
  if (s->fd >= 0) ::close(s->fd);
  if (s->temp_path != nullptr) {
    ::unlink(s->temp_path);
    std::free(s->temp_path);
  }
  if (s->z_ready) ::deflateEnd(&s->z);
  std::free(s->out);
  std::free(s);
}

int backend_writestream(git_odb_stream** out, git_odb_backend* backend, git_object_size_t size,
                        git_object_t type) {
  auto* b = reinterpret_cast<StoredBackend*>(backend);
  auto* s = static_cast<StoredStream*>(std::calloc(1, sizeof(StoredStream)));
  if (s == nullptr) return fail("cannot store an object", ENOMEM);
  s->fd = -1;
  s->objects_dir = b->objects_dir;
  s->parent.backend = backend;
  s->parent.mode = GIT_STREAM_WRONLY;
  s->parent.write = stream_write;
  s->parent.finalize_write = stream_finalize;
  s->parent.free = stream_free;
  std::string temp =
      std::string(b->objects_dir) + "/" + std::string(kStoredObjectTempPrefix) + "XXXXXX";
  s->temp_path = ::strdup(temp.c_str());
  s->out = static_cast<unsigned char*>(std::malloc(kOutBuffer));
  if (s->temp_path == nullptr || s->out == nullptr) {
    stream_free(&s->parent);
    return fail("cannot store an object", ENOMEM);
  }
  s->fd = ::mkostemp(s->temp_path, O_CLOEXEC);
  if (s->fd < 0) {
    int err = errno;
    std::free(s->temp_path);
    s->temp_path = nullptr;  // (nothing to remove)
    stream_free(&s->parent);
    return fail("cannot create a temporary object in " + std::string(b->objects_dir), err);
  }
  if (::deflateInit(&s->z, Z_NO_COMPRESSION) != Z_OK) {
    stream_free(&s->parent);
    git_error_set_str(GIT_ERROR_ZLIB, "cannot store an object: zlib failed");
    return -1;
  }
  s->z_ready = true;
  // The object's header, as a loose object starts: "<type> <size>\0".
  std::string header = std::string(git_object_type2string(type)) + ' ' + std::to_string(size);
  header.push_back('\0');
  if (deflate_out(s, header.data(), header.size(), Z_NO_FLUSH) < 0) {
    stream_free(&s->parent);
    return -1;
  }
  *out = &s->parent;
  return 0;
}

void free_backend(git_odb_backend* backend) {
  auto* b = reinterpret_cast<StoredBackend*>(backend);
  std::free(b->objects_dir);
  std::free(b);
}

}  // namespace

bool resists_compression(int fd, std::uint64_t size) {
  if (size < 3 * kSample) return false;
  for (std::uint64_t at : {std::uint64_t{0}, size / 2 - kSample / 2, size - kSample}) {
    std::string sample(kSample, '\0');
    if (!read_all_at(fd, sample.data(), sample.size(), at) || shrinks(sample)) return false;
  }
  return true;
}

git_odb_backend* new_stored_blob_backend(const boost::filesystem::path& objects_dir) {
  auto* b = static_cast<StoredBackend*>(std::calloc(1, sizeof(StoredBackend)));
  if (b == nullptr) throw std::bad_alloc();
  git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION);
  b->objects_dir = ::strdup(objects_dir.c_str());
  if (b->objects_dir == nullptr) {
    std::free(b);
    throw std::bad_alloc();
  }
  b->parent.writestream = backend_writestream;
  b->parent.free = free_backend;
  return &b->parent;
}

}  // namespace fsnap
