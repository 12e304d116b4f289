#include "warm_hook_state.hpp"

namespace cli {

namespace fs = boost::filesystem;

runs::HomePreserver& WarmHookState::preserver(const fsnap::Store& store,
                                              const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                              const std::string& run, const fs::path& home,
                                              const std::vector<std::string>& parts,
                                              const std::vector<std::string>& secrets) {
  std::string key = store.dir().string() + '\0' + run + '\0' + home.string();
  for (const std::vector<std::string>* list : {&parts, &secrets}) {
    key += '\0';
    for (const std::string& item : *list) key += item + '\n';
  }
  auto found = preservers_.find(key);
  if (found != preservers_.end()) return *found->second;
  if (preservers_.size() >= kMaxRuns) preservers_.clear();
  auto made = std::make_unique<runs::HomePreserver>(store, repo, run, home, parts, secrets);
  return *preservers_.emplace(key, std::move(made)).first->second;
}

hooks::SpendMeter& WarmHookState::meter(const std::string& run, const runs::PriceTable& prices,
                                        const fs::path& reported) {
  auto found = meters_.find(run);
  if (found != meters_.end() && found->second.prices.entries() == prices.entries() &&
      found->second.reported == reported) {
    return *found->second.meter;
  }
  if (found == meters_.end() && meters_.size() >= kMaxRuns) meters_.clear();
  Meter& m = meters_[run];
  m = Meter{prices, reported, std::make_unique<hooks::SpendMeter>(prices, reported)};
  return *m.meter;
}

}  // namespace cli
