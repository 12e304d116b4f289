// HomeChunks — how preservation keeps a large transcript: in pieces, so that a boundary
// writes what the agent appended since the last one instead of the whole file again.
// Private to runs.
//
// An agent's transcript (Claude Code's, Codex CLI's: JSON lines) grows by a few
// kilobytes a turn, up to tens of megabytes in a long session. Kept as one blob, every
// boundary read, redacted, hashed, compressed and stored all of it: a cost and a store
// that grew with the session. A file named *.jsonl larger than kChunkedFileMin is kept
// instead as a tree named <file name><kChunkedSuffix> beside where the file would be,
// holding its content cut into chunks "000000", "000001"... in order. A chunk ends
// after the first newline that is followed by '{' (the start of the next JSON line) at
// or past kChunkTarget bytes from the chunk's start, and not inside a PEM private key
// block (from its BEGIN line to its END, which an agent that read a key in two tool
// calls writes into two JSON lines); the last one runs to the end of the file. A cut
// depends only on the bytes up to it and the one after, so appending to the file
// changes only its last chunk and adds new ones.
//
// A chunk whose end and digest are those of the same chunk at the last preservation
// keeps its blob. The digest is xxHash's XXH3 (128 bits, a few times faster than reading
// the file): no cryptographic digest, since the only one who could make two chunks
// collide is the agent that writes the file, and all it would get is an older line of
// its own transcript kept in place of a newer one — what it can write there anyway.
//
// Each chunk is redacted on its own. That hides what redacting the whole file hides:
// a configured secret or a credential's shape never spans a newline that starts a '{'
// line (a file is not cut when a secret holds a newline), and no cut falls inside a
// private key block.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/tree_change.hpp"

namespace runs {

// The suffix of the tree that holds a chunked file's pieces.
inline constexpr std::string_view kChunkedSuffix = ".shadowbox-chunks";
// The size a chunk reaches before it may end.
inline constexpr std::size_t kChunkTarget = std::size_t{64} << 10;
// Files up to this size are kept whole. (At four chunks' worth, a transcript of 60 to
// 256 KiB, rewritten whole at each boundary, cost two to three times what a chunked
// one of 400 KiB does: hook_event_bench --transcript-kb.)
inline constexpr std::size_t kChunkedFileMin = kChunkTarget;

// Whether the file at path (relative to HOME), of size bytes, is kept in chunks when
// secrets are redacted from it.
bool kept_in_chunks(std::string_view path, std::size_t size,
                    const std::vector<std::string>& secrets);

// Where each chunk of content ends (the offset past its last byte), in order; the last
// is content.size().
std::vector<std::size_t> chunk_ends(std::string_view content);

// Reads the open file fd to its end, calling visit with each chunk's bytes in order, cut
// as chunk_ends cuts; no more than a chunk and a read's worth is held at once. Throws
// sandbox::Error (kIo) if a read fails; name is the file's, for the message.
void for_each_chunk(int fd, const std::string& name,
                    const std::function<void(std::string_view)>& visit);

// The name of chunk index in its tree ("000042").
std::string chunk_name(std::size_t index);
// The path of chunk index of the file at path, in a preserved HOME tree
// ("a/t.jsonl.shadowbox-chunks/000042").
std::string chunk_path(std::string_view path, std::size_t index);

// Whether path (relative to HOME) is or lies in a tree of chunks: preservation leaves a
// file of the agent's so named out, so that no name of the tree is taken twice.
bool in_chunk_tree(std::string_view path);

// The path of the file a path of a preserved HOME tree stands for: a chunk's path
// ("a/t.jsonl.shadowbox-chunks/000003") gives its file's ("a/t.jsonl"); any other path
// is its own.
std::string home_file_path(std::string_view tree_path);

// changes between two preserved HOME trees as changes of the files they stand for: the
// changes of one file's chunks (and of the file kept whole before or after) are one,
// whose before and after hold no object id (a file kept in chunks has none).
std::vector<fsnap::TreeChange> home_file_changes(std::vector<fsnap::TreeChange> changes);

// Joins every tree of chunks that a materialized HOME at dir holds into its file, and
// removes the chunks. The store may have been written by someone else: a tree of chunks
// whose entries are not regular files named "000000", "000001"... in order, or whose
// file's name is taken, or that is reached through a symbolic link, is left as it is.
// Throws sandbox::Error (kIo) if a file cannot be written.
void join_chunked_files(const boost::filesystem::path& dir);

}  // namespace runs
