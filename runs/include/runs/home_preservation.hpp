// The preservation of an agent's ephemeral HOME: the parts an agent needs to resume a
// session (its transcripts; never credentials, and secrets redacted) are committed to
// the run's home ref (refs/shadowbox/home/<run>), and rebuilt into a fresh HOME for a
// resume.
//
// Thread-safety: HomePreserver is for one thread at a time; it borrows the process's
// ShadowRepo and takes the store lock for each write.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"

namespace runs {

// Preserves one HOME: parts (directories or files relative to HOME) are copied with secrets
// redacted and committed to the run's home ref.
class HomePreserver {
 public:
  HomePreserver(fsnap::Store store, std::shared_ptr<fsnap::ShadowRepo> repo, std::string run,
                boost::filesystem::path home, std::vector<std::string> parts,
                std::vector<std::string> secrets);

  // Preserves the HOME unless no file of its parts changed (path, size, mtime in ns,
  // inode) since the last time; returns whether it did. Throws Error (and tries again
  // next time) if it cannot.
  bool preserve();
  // Preserves the HOME whether it changed or not; returns the preserved tree's id.
  std::string preserve_now();

 private:
  std::string signature() const;

  fsnap::Store store_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;
  std::string run_;
  boost::filesystem::path home_;
  std::vector<std::string> parts_;
  std::vector<std::string> secrets_;
  std::string last_;  // signature of the last preserved state
};

// The preserved HOME tree of run (hex id), or nullopt if it has none.
std::optional<std::string> preserved_home(const fsnap::ShadowRepo& repo, const std::string& run);
// When run's HOME was last preserved, or nullopt.
std::optional<std::chrono::system_clock::time_point> home_preserved_at(
    const fsnap::ShadowRepo& repo, const std::string& run);
// Rebuilds the preserved HOME of run into dir (which must not exist). Error kNotFound
// if the run has no preserved data.
void rebuild_home(const fsnap::ShadowRepo& repo, const std::string& run,
                  const boost::filesystem::path& dir);

}  // namespace runs
