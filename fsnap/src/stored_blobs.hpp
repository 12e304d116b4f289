// Stored blobs — large file content that zlib cannot shrink (media, archives, model
// weights: already compressed) written as loose objects whose zlib stream holds the
// bytes as they are (deflate's stored blocks), at the speed of a copy instead of that
// of a compressor that gains nothing. git and libgit2 read such an object as any other:
// a zlib stream is a zlib stream. Private to fsnap.
//
// libgit2's loose backend cannot do it (at compression level 0 it writes no zlib stream
// at all), so a write-only backend of our own does, under the object database's own
// stream: libgit2 still hashes what is written (SHA-1 with collision detection), skips
// an object some backend already holds, and hands the id to the backend at the end.
#pragma once

#include <git2/odb_backend.h>

#include <cstdint>
#include <string_view>

#include <boost/filesystem/path.hpp>

namespace fsnap {

// The prefix of the temporary file of an object being written (objects/<prefix>XXXXXX),
// which maintenance removes once it is old.
inline constexpr std::string_view kStoredObjectTempPrefix = "tmp_object_stored_";

// Whether the file open at fd, of size bytes, looks as if zlib's fastest level cannot
// shrink it by a twentieth: 64 KiB read at its start, its middle and its end each do not
// shrink. (A file some of whose samples shrink is compressed as usual.) Reads with pread;
// false if a read fails (the caller's own read reports it).
bool resists_compression(int fd, std::uint64_t size);

// A new object database backend that writes streamed objects into objects_dir as loose
// objects of stored deflate blocks (file mode 0400, directories 0700, as the store's
// loose backend makes them) and can do nothing else: added to an object database above
// its loose and pack backends, it takes the streams git_odb_open_wstream opens. Owned
// by that database once added.
git_odb_backend* new_stored_blob_backend(const boost::filesystem::path& objects_dir);

}  // namespace fsnap
