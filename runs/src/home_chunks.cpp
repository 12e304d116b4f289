#include "home_chunks.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include <boost/filesystem/operations.hpp>

#include "fsnap/posix.hpp"
#include "sandbox/errors.hpp"

namespace runs {

namespace fs = boost::filesystem;

namespace {

constexpr std::size_t kChunkNameLength = 6;

// A tree of chunks' name and the '/' after it, as a path holds it.
const std::string kChunkedDir = std::string(kChunkedSuffix) + "/";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The index a chunk's name gives ("000042": 42), or nullopt if it is not one: at least
// six digits, written as chunk_name writes them.
std::optional<std::size_t> chunk_index(std::string_view name) {
  if (name.size() < kChunkNameLength || name.size() > 12) return std::nullopt;
  std::size_t index = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  if (chunk_name(index) != name) return std::nullopt;
  return index;
}

// The chunk's name in path if path lies in a tree of chunks, else "".
std::string_view chunk_of(std::string_view path) {
  std::size_t at = path.find(kChunkedDir);
  return at == std::string_view::npos ? std::string_view() : path.substr(at + kChunkedDir.size());
}

// Finds the cuts of one chunk as its bytes come. A cut is past a newline followed by '{',
// at kChunkTarget bytes from the chunk's start or more, and never inside a PEM private
// key block as redact() finds them (redaction.cpp's redact_private_keys: a "-----BEGIN
// <label>-----" whose label says PRIVATE KEY, up to "-----END <label>-----", or to the
// end of the text without one). A key an agent read in two tool calls has its BEGIN in
// one JSON line and its END in a later one: cut between them, the later chunk would hold
// the rest of the key with no BEGIN of its own, and not be redacted. What is inside a
// block is told from the bytes before the cut alone, as the cut is, and in one pass over
// them however often more bytes come.
class CutFinder {
 public:
  // The end of the chunk that bytes (its bytes so far) begin, or npos if bytes hold
  // none of its cuts yet.
  std::size_t next(std::string_view bytes) {
    for (std::size_t at = std::max(scan_from_, kChunkTarget - 1); at + 1 < bytes.size(); ++at) {
      const void* found = std::memchr(bytes.data() + at, '\n', bytes.size() - at - 1);
      if (found == nullptr) break;
      at = static_cast<std::size_t>(static_cast<const char*>(found) - bytes.data());
      if (bytes[at + 1] == '{' && outside_key(bytes, at + 1)) return at + 1;
    }
    // A newline that ends what came may still be followed by a '{'.
    scan_from_ = bytes.empty() ? 0 : std::max(scan_from_, bytes.size() - 1);
    return std::string_view::npos;
  }

 private:
  // Whether bytes[0, end) closes every private key block it opens (and has no BEGIN
  // whose header is still to come).
  bool outside_key(std::string_view bytes, std::size_t end) {
    static constexpr std::string_view kBegin = "-----BEGIN ";
    static constexpr std::string_view kDashes = "-----";
    std::string_view text = bytes.substr(0, end);
    while (true) {
      if (!footer_.empty()) {
        std::size_t f = text.find(footer_, footer_from_);
        if (f == std::string_view::npos) {
          footer_from_ = std::max(footer_from_, text.size() >= footer_.size()
                                                    ? text.size() - footer_.size() + 1
                                                    : std::size_t{0});
          return false;
        }
        begin_from_ = f + footer_.size();
        footer_.clear();
      }
      std::size_t b = text.find(kBegin, begin_from_);
      if (b == std::string_view::npos) {
        begin_from_ =
            std::max(begin_from_, text.size() >= kBegin.size() ? text.size() - kBegin.size() + 1
                                                               : std::size_t{0});
        return true;
      }
      std::size_t header_end = text.find(kDashes, b + kBegin.size());
      if (header_end == std::string_view::npos) {
        begin_from_ = b;  // its label is not all here yet
        return false;
      }
      std::string_view label = text.substr(b + kBegin.size(), header_end - b - kBegin.size());
      if (label.find("PRIVATE KEY") == std::string_view::npos) {
        begin_from_ = header_end;
        continue;
      }
      footer_ = "-----END " + std::string(label) + "-----";
      footer_from_ = header_end;
    }
  }

  std::size_t scan_from_ = 0;    // where a newline may start a cut
  std::size_t begin_from_ = 0;   // where the next BEGIN is looked for
  std::string footer_;           // the END of the open block ("" when none is open)
  std::size_t footer_from_ = 0;  // where it is looked for
};

sandbox::Error io_error(const std::string& what, int err) {
  return sandbox::Error(sandbox::ErrorCode::kIo, fsnap::errno_message(what, err));
}

// The chunk files of the tree of chunks at chunks in order, or nullopt if it is not one
// (see join_chunked_files).
std::optional<std::vector<fs::path>> chunk_files(const fs::path& chunks) {
  std::map<std::size_t, fs::path> found;
  boost::system::error_code ec;
  for (fs::directory_iterator it(chunks, ec), end; !ec && it != end; it.increment(ec)) {
    std::optional<std::size_t> index = chunk_index(it->path().filename().string());
    if (!index || fs::symlink_status(it->path(), ec).type() != fs::regular_file || ec) {
      return std::nullopt;
    }
    found.emplace(*index, it->path());
  }
  if (ec || found.empty() || found.rbegin()->first != found.size() - 1) return std::nullopt;
  std::vector<fs::path> out;
  for (auto& [index, file] : found) out.push_back(std::move(file));
  return out;
}

// Writes the chunks, in order, into a new file at target.
void join(const std::vector<fs::path>& chunks, const fs::path& target) {
  struct stat first {};
  if (::lstat(chunks.front().c_str(), &first) != 0) {
    throw io_error("cannot read " + chunks.front().string(), errno);
  }
  fsnap::UniqueFd out(::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             first.st_mode & 07777));
  if (!out.valid()) throw io_error("cannot create " + target.string(), errno);
  try {
    for (const fs::path& chunk : chunks) {
      fsnap::UniqueFd in(::open(chunk.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      std::string content;
      if (!in.valid() || !fsnap::read_all(in.get(), content)) {
        throw io_error("cannot read " + chunk.string(), errno);
      }
      if (!fsnap::write_all(out.get(), content.data(), content.size())) {
        throw io_error("cannot write " + target.string(), errno);
      }
    }
  } catch (...) {
    ::unlink(target.c_str());  // no half file: the chunks stay, and a retry joins them
    throw;
  }
}

}  // namespace

bool kept_in_chunks(std::string_view path, std::size_t size,
                    const std::vector<std::string>& secrets) {
  if (size <= kChunkedFileMin || !ends_with(path, ".jsonl")) return false;
  return std::none_of(secrets.begin(), secrets.end(), [](const std::string& secret) {
    return secret.find('\n') != std::string::npos;
  });
}

std::vector<std::size_t> chunk_ends(std::string_view content) {
  std::vector<std::size_t> ends;
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t cut = CutFinder().next(content.substr(start));
    start = cut == std::string_view::npos ? content.size() : start + cut;
    ends.push_back(start);
  }
  return ends;
}

void for_each_chunk(int fd, const std::string& name,
                    const std::function<void(std::string_view)>& visit) {
  constexpr std::size_t kRead = std::size_t{256} << 10;
  std::string pending;  // the bytes read from the current chunk's start on
  CutFinder cuts;
  while (true) {
    std::size_t had = pending.size();
    pending.resize(had + kRead);
    ssize_t n = ::read(fd, pending.data() + had, kRead);
    if (n < 0 && errno == EINTR) {
      pending.resize(had);
      continue;
    }
    if (n < 0) throw io_error("cannot read " + name, errno);
    pending.resize(had + static_cast<std::size_t>(n));
    if (n == 0) break;
    std::size_t start = 0;
    while (true) {
      std::string_view rest(pending.data() + start, pending.size() - start);
      std::size_t cut = cuts.next(rest);
      if (cut == std::string_view::npos) break;
      visit(rest.substr(0, cut));
      start += cut;
      cuts = CutFinder();
    }
    pending.erase(0, start);
  }
  if (!pending.empty()) visit(pending);
}

std::string chunk_name(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "%06zu", index);
  return name;
}

std::string chunk_path(std::string_view path, std::size_t index) {
  return std::string(path) + kChunkedDir + chunk_name(index);
}

bool in_chunk_tree(std::string_view path) {
  return ends_with(path, kChunkedSuffix) || path.find(kChunkedDir) != std::string_view::npos;
}

std::string home_file_path(std::string_view tree_path) {
  std::size_t at = tree_path.find(kChunkedDir);
  if (at == std::string_view::npos && ends_with(tree_path, kChunkedSuffix)) {
    at = tree_path.size() - kChunkedSuffix.size();
  }
  return std::string(at == std::string_view::npos ? tree_path : tree_path.substr(0, at));
}

std::vector<fsnap::TreeChange> home_file_changes(std::vector<fsnap::TreeChange> changes) {
  // The changes that stand for each file, in the order their files first come.
  std::vector<std::string> order;
  std::map<std::string, std::vector<fsnap::TreeChange>> by_file;
  for (fsnap::TreeChange& change : changes) {
    std::string file = home_file_path(change.path);
    auto [it, added] = by_file.try_emplace(file);
    if (added) order.push_back(file);
    it->second.push_back(std::move(change));
  }
  std::vector<fsnap::TreeChange> out;
  for (const std::string& file : order) {
    std::vector<fsnap::TreeChange>& group = by_file[file];
    if (group.size() == 1 && group.front().path == file) {
      out.push_back(std::move(group.front()));
      continue;
    }
    // The file is there on a side if it is kept whole there, or its first chunk is (a
    // first chunk that did not change is there on both sides).
    const fsnap::TreeChange* whole = nullptr;
    const fsnap::TreeChange* first = nullptr;
    for (const fsnap::TreeChange& c : group) {
      if (c.path == file) whole = &c;
      if (chunk_of(c.path) == chunk_name(0)) first = &c;
    }
    bool chunked = whole == nullptr || group.size() > 1;
    auto there = [&](bool before) {
      auto side = [&](const fsnap::TreeChange& c) {
        return before ? c.before.has_value() : c.after.has_value();
      };
      if (whole != nullptr && side(*whole)) return true;
      return first != nullptr ? side(*first) : chunked;
    };
    fsnap::TreeChange merged;
    merged.path = file;
    bool before = there(true);
    bool after = there(false);
    merged.kind = !before  ? fsnap::TreeChange::Kind::kAdded
                  : !after ? fsnap::TreeChange::Kind::kDeleted
                           : fsnap::TreeChange::Kind::kModified;
    if (before) merged.before = fsnap::TreeEntryInfo{};
    if (after) merged.after = fsnap::TreeEntryInfo{};
    out.push_back(std::move(merged));
  }
  return out;
}

void join_chunked_files(const fs::path& dir) {
  std::vector<fs::path> trees;
  boost::system::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (ends_with(it->path().filename().string(), kChunkedSuffix) &&
        fs::symlink_status(it->path(), ec).type() == fs::directory_file) {
      trees.push_back(it->path());
      it.disable_recursion_pending();
    }
  }
  if (ec) throw io_error("cannot read " + dir.string(), ec.value());
  for (const fs::path& tree : trees) {
    std::string name = tree.filename().string();
    fs::path target = tree.parent_path() / name.substr(0, name.size() - kChunkedSuffix.size());
    std::optional<std::vector<fs::path>> chunks = chunk_files(tree);
    if (!chunks || target.filename().empty() ||
        fs::symlink_status(target, ec).type() != fs::file_not_found) {
      continue;  // not one of preservation's: left as it is
    }
    join(*chunks, target);
    fs::remove_all(tree);
  }
}

}  // namespace runs
