// What the watch daemon keeps between relayed hook events (cli/warm_hook_state.hpp): the
// same run's preserver and spend meter come back while what they were made with stays
// the same, and new ones are made when it changes.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "test_support.hpp"
#include "warm_hook_state.hpp"

namespace {

namespace fs = boost::filesystem;

TEST(WarmHookStateTest, ARunsPreserverAndMeterAreKeptWhileTheirSettingsStay) {
  testing_support::TempDir temp;
  fs::create_directories(temp / "ws");
  fsnap::Store store = fsnap::Store::open(temp / "store", temp / "ws", true);
  cli::WarmHookState warm;
  int opened = 0;
  auto open = [&] {
    ++opened;
    return std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store.repo_dir(), false));
  };
  std::shared_ptr<fsnap::ShadowRepo> repo = warm.repo(open);
  EXPECT_EQ(warm.repo(open), repo);
  EXPECT_EQ(opened, 1) << "the repository is opened once";

  std::vector<std::string> parts = {".codex/sessions"};
  runs::HomePreserver& a = warm.preserver(store, repo, "r1", temp / "home", parts, {"secret-1"});
  EXPECT_EQ(&warm.preserver(store, repo, "r1", temp / "home", parts, {"secret-1"}), &a);
  EXPECT_NE(&warm.preserver(store, repo, "r1", temp / "home", parts, {"secret-2"}), &a)
      << "other secrets: another preserver";
  EXPECT_NE(&warm.preserver(store, repo, "r2", temp / "home", parts, {"secret-1"}), &a);

  runs::PriceTable prices = runs::PriceTable::defaults();
  hooks::SpendMeter& m = warm.meter("r1", prices, temp / "cost");
  EXPECT_EQ(&warm.meter("r1", prices, temp / "cost"), &m);
  runs::PriceTable dearer = prices;
  dearer.set("claude-", runs::ModelPrice{100, 100, 100, 100, 100});
  hooks::SpendMeter& n = warm.meter("r1", dearer, temp / "cost");
  EXPECT_EQ(&warm.meter("r1", dearer, temp / "cost"), &n) << "the new prices' meter is kept";
  EXPECT_NE(&warm.meter("r1", dearer, temp / "other-cost"), &n);
}

TEST(WarmHookStateTest, NoMoreThanSoManyRunsAreKept) {
  cli::WarmHookState warm;
  runs::PriceTable prices = runs::PriceTable::defaults();
  hooks::SpendMeter& first = warm.meter("r0", prices, "cost");
  EXPECT_EQ(&warm.meter("r0", prices, "cost"), &first);
  for (std::size_t i = 1; i <= cli::WarmHookState::kMaxRuns; ++i) {
    warm.meter("r" + std::to_string(i), prices, "cost");
  }
  EXPECT_EQ(warm.meters_kept(), 1u) << "past the limit, the others were let go";
}

}  // namespace
