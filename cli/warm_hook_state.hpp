// WarmHookState — what the watch daemon keeps from one relayed hook event to the next,
// where a hook process starts from nothing each time: the store's repository open (its
// packs' indexes, the checkpoints already parsed) and, for each run, its HOME preserver
// (the files it kept, by stat data and chunk digests) and its spend meter (how far it
// has read the transcripts); and the hook command lines it has parsed. Without them an event reads
// the whole transcript twice over, once to price it and once to preserve it: a cost that grows with
// the session. A meter holds what it read of each request (a megabyte or two for thousands of
// them), so only the runs used last are kept.
//
// Thread-safety: one thread at a time (the daemon answers one request after another).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "arguments.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_spend.hpp"
#include "runs/home_preservation.hpp"
#include "runs/pricing.hpp"

namespace cli {

class WarmHookState {
 public:
  // Preservers, and meters, kept at most: a new one lets go of the one used longest ago.
  static constexpr std::size_t kMaxKept = 8;

  // The store's repository, opened by open the first time.
  template <typename Open>
  std::shared_ptr<fsnap::ShadowRepo> repo(Open open) {
    if (!repo_) repo_ = open();
    return repo_;
  }

  // The preserver of run's HOME at home (the parts of it kept, and the secrets redacted
  // from them, as given) into store, through repo (this object's): the one of an
  // earlier event given the same, else a new one.
  runs::HomePreserver& preserver(const fsnap::Store& store,
                                 const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                 const std::string& run, const boost::filesystem::path& home,
                                 const std::vector<std::string>& parts,
                                 const std::vector<std::string>& secrets);

  // The spend meter of run, pricing with prices and reading the agent's reported cost
  // from reported: the one of an earlier event given the same, else a new one.
  hooks::SpendMeter& meter(const std::string& run, const runs::PriceTable& prices,
                           const boost::filesystem::path& reported);
  // The hook command line argv was parsed into before, or null: a thin client sends the
  // same one with every event of its hook.
  const CommandLine* command_line(const std::vector<std::string>& argv) const {
    auto found = lines_.find(argv);
    return found != lines_.end() ? &found->second : nullptr;
  }
  // Keeps line as what argv parses into.
  void keep_command_line(const std::vector<std::string>& argv, const CommandLine& line) {
    if (lines_.size() >= 4 * kMaxKept) lines_.clear();
    lines_.insert_or_assign(argv, line);
  }

  // How many preservers and meters are kept.
  std::size_t preservers_kept() const { return preservers_.size(); }
  std::size_t meters_kept() const { return meters_.size(); }

 private:
  struct Preserver {
    std::uint64_t used = 0;
    std::unique_ptr<runs::HomePreserver> preserver;
  };
  struct Meter {
    std::uint64_t used = 0;
    runs::PriceTable prices;
    boost::filesystem::path reported;
    std::unique_ptr<hooks::SpendMeter> meter;
  };

  std::shared_ptr<fsnap::ShadowRepo> repo_;
  std::uint64_t uses_ = 0;
  std::map<std::string, Preserver> preservers_;
  std::map<std::string, Meter> meters_;
  std::map<std::vector<std::string>, CommandLine> lines_;
};

}  // namespace cli
