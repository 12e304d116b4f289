#include "warm_hook_state.hpp"

#include <algorithm>

namespace cli {

namespace fs = boost::filesystem;

namespace {

// Makes room for one more in kept (a map of entries with a `used` count) by letting go
// of the entry used longest ago, once it holds max.
template <typename Map>
void make_room(Map& kept, std::size_t max) {
  if (kept.size() < max) return;
  auto oldest = std::min_element(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second.used < b.second.used;
  });
  kept.erase(oldest);
}

}  // namespace

runs::HomePreserver& WarmHookState::preserver(const fsnap::Store& store,
                                              const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                              const std::string& run, const fs::path& home,
                                              const std::vector<std::string>& parts,
                                              const std::vector<std::string>& secrets) {
  // Each item with its length before it: no two lists make the same key.
  std::string key;
  auto add = [&key](const std::string& item) { key += std::to_string(item.size()) + ':' + item; };
  for (const std::string& item : {store.dir().string(), run, home.string()}) add(item);
  for (const std::vector<std::string>* list : {&parts, &secrets}) {
    key += '|';
    for (const std::string& item : *list) add(item);
  }
  auto found = preservers_.find(key);
  if (found == preservers_.end()) {
    make_room(preservers_, kMaxKept);
    auto made = std::make_unique<runs::HomePreserver>(store, repo, run, home, parts, secrets);
    found = preservers_.emplace(key, Preserver{0, std::move(made)}).first;
  }
  found->second.used = ++uses_;
  return *found->second.preserver;
}

hooks::SpendMeter& WarmHookState::meter(const std::string& run, const runs::PriceTable& prices,
                                        const fs::path& reported) {
  auto found = meters_.find(run);
  if (found != meters_.end() &&
      (found->second.prices.entries() != prices.entries() || found->second.reported != reported)) {
    meters_.erase(found);
    found = meters_.end();
  }
  if (found == meters_.end()) {
    make_room(meters_, kMaxKept);
    found = meters_
                .emplace(run, Meter{0, prices, reported,
                                    std::make_unique<hooks::SpendMeter>(prices, reported)})
                .first;
  }
  found->second.used = ++uses_;
  return *found->second.meter;
}

}  // namespace cli
