// The preservation of an agent's ephemeral HOME: the parts an agent needs to resume a
// session (its transcripts; never credentials, and secrets redacted) are committed to
// the run's home ref (refs/shadowbox/home/<run>), and rebuilt into a fresh HOME for a
// resume.
//
// Thread-safety: HomePreserver is for one thread at a time; it borrows the process's
// ShadowRepo and takes the store lock for each write.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/clock.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "fsnap/tree_change.hpp"

namespace runs {

struct HomeFile;

// Preserves one HOME: the regular files of parts (directories or files relative to HOME)
// are read with secrets redacted, and their tree committed to the run's home ref. No copy
// is made: files are read in place, never through a symbolic link below HOME. A file
// whose stat data (size, mtime and ctime in ns, inode) is as it was at an earlier
// preservation of this object, and was then older than two seconds, is not read again:
// its blob from then is used (a file rewritten within the same clock tick as it was
// read keeps its stat data, so a file that young is always read). A large transcript
// (a *.jsonl file over 64 KiB) is kept in chunks of about 64 KiB cut at its lines
// (runs/src/home_chunks.hpp): when it has grown, only the chunks whose bytes changed
// (compared by an XXH3 digest) are redacted and written again, so what a preservation
// costs and stores follows what the agent appended, not the length of the session.
class HomePreserver {
 public:
  // clock (the system's if null) says how old a file is.
  HomePreserver(fsnap::Store store, std::shared_ptr<fsnap::ShadowRepo> repo, std::string run,
                boost::filesystem::path home, std::vector<std::string> parts,
                std::vector<std::string> secrets,
                std::shared_ptr<const fsnap::Clock> clock = nullptr);

  // Preserves the HOME unless no file of its parts changed (path, size, mtime and
  // ctime in ns, inode) since the last time; returns whether it did. Throws Error (and tries again
  // next time) if it cannot.
  bool preserve();
  // Preserves the HOME whether it changed or not; returns the preserved tree's id.
  std::string preserve_now();
  // How many files the last preservation read (the others were unchanged).
  std::size_t files_read() const { return files_read_; }

 private:
  // A chunk of a file kept in chunks: where it ends, the XXH3 digest of its bytes as read
  // (before redaction), and its blob. The digest stays in memory: written to the store
  // beside the redacted chunk, it would let a reader test guesses of a secret offline.
  struct KeptChunk {
    std::size_t end = 0;
    std::string digest;
    std::string blob;
  };
  // A file as an earlier preservation wrote it: the stat data it had then ("" if it was
  // too young to be trusted), and its blob, or its chunks.
  struct KeptFile {
    std::string stamp;
    std::string blob;
    std::vector<KeptChunk> chunks;
  };
  // One entry of the tree being written: its path in the tree, its blob ("" while it is
  // to be written from content), and where its id is kept.
  struct PendingEntry {
    std::string path;
    std::string blob;
    std::string content;
    std::string* kept_blob = nullptr;
  };

  std::string preserve_files(const std::vector<HomeFile>& files);
  // Reads the file at path, open as fd, in chunks: adds an entry for each chunk to
  // entries, and the chunks to kept; a chunk whose end and digest are those of the same
  // chunk of earlier (what was kept of the file before, if anything) keeps its blob.
  void add_chunks(int fd, const std::string& path, const KeptFile* earlier, KeptFile& kept,
                  std::vector<PendingEntry>& entries);

  fsnap::Store store_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;
  std::string run_;
  boost::filesystem::path home_;
  std::vector<std::string> parts_;
  std::vector<std::string> secrets_;
  std::shared_ptr<const fsnap::Clock> clock_;
  std::string last_;                      // signature of the last preserved state
  std::map<std::string, KeptFile> kept_;  // by path, files old enough to be trusted
  std::size_t files_read_ = 0;
};

// The preserved HOME tree of run (hex id), or nullopt if it has none.
std::optional<std::string> preserved_home(const fsnap::ShadowRepo& repo, const std::string& run);
// When run's HOME was last preserved, or nullopt.
std::optional<std::chrono::system_clock::time_point> home_preserved_at(
    const fsnap::ShadowRepo& repo, const std::string& run);
// Writes the preserved HOME tree into dir (which must not exist), each file kept in
// chunks joined into one.
void materialize_home(const fsnap::ShadowRepo& repo, const std::string& tree,
                      const boost::filesystem::path& dir);
// What changed between two preserved HOME trees (ShadowRepo::diff_trees), by the files
// they stand for: a file kept in chunks is one change, under its own path.
std::vector<fsnap::TreeChange> home_changes(const fsnap::ShadowRepo& repo, const std::string& from,
                                            const std::string& to);
// Rebuilds the preserved HOME of run into dir (which must not exist). Error kNotFound
// if the run has no preserved data.
void rebuild_home(const fsnap::ShadowRepo& repo, const std::string& run,
                  const boost::filesystem::path& dir);

}  // namespace runs
