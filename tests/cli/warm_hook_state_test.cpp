// What the watch daemon keeps between relayed hook events (cli/warm_hook_state.hpp): the
// same run's preserver and spend meter come back while what they were made with stays
// the same, and new ones are made when it changes.
#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "sandbox/session.hpp"
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
  // Kept, it has read what it read; another one (other secrets, another run) has not.
  testing_support::write_file(temp / "home/.codex/sessions/s.jsonl", "{\"a\":1}\n");
  a.preserve_now();
  EXPECT_EQ(warm.preserver(store, repo, "r1", temp / "home", parts, {"secret-1"}).files_read(), 1u);
  EXPECT_EQ(warm.preserver(store, repo, "r1", temp / "home", parts, {"secret-2"}).files_read(), 0u);
  EXPECT_EQ(warm.preserver(store, repo, "r2", temp / "home", parts, {"secret-1"}).files_read(), 0u);
  // Secrets that read the same joined are other secrets all the same.
  warm.preserver(store, repo, "r3", temp / "home", parts, {"ab\ncd"}).preserve_now();
  EXPECT_EQ(warm.preserver(store, repo, "r3", temp / "home", parts, {"ab", "cd"}).files_read(), 0u);

  // A meter kept has read what it read; one made anew (other prices, another file of
  // reported cost) has read nothing yet.
  fs::path transcript = temp / "t.jsonl";
  testing_support::write_file(
      transcript,
      "{\"type\":\"assistant\",\"requestId\":\"req_1\",\"message\":{\"id\":\"msg_1\","
      "\"model\":\"claude-sonnet-4-5\",\"role\":\"assistant\",\"content\":[],"
      "\"usage\":{\"input_tokens\":10,\"output_tokens\":20}}}\n");
  sandbox::Session session;
  runs::PriceTable prices = runs::PriceTable::defaults();
  warm.meter("r1", prices, temp / "cost").update(session, nullptr, {transcript});
  EXPECT_EQ(warm.meter("r1", prices, temp / "cost").usage().requests().size(), 1u);
  runs::PriceTable dearer = prices;
  dearer.set("claude-", runs::ModelPrice{100, 100, 100, 100, 100});
  EXPECT_TRUE(warm.meter("r1", dearer, temp / "cost").usage().requests().empty());
  warm.meter("r1", dearer, temp / "cost").update(session, nullptr, {transcript});
  EXPECT_EQ(warm.meter("r1", dearer, temp / "cost").usage().requests().size(), 1u);
  EXPECT_TRUE(warm.meter("r1", dearer, temp / "other-cost").usage().requests().empty());
}

TEST(WarmHookStateTest, TheRunUsedLongestAgoIsLetGoFirst) {
  testing_support::TempDir temp;
  fs::create_directories(temp / "ws");
  fsnap::Store store = fsnap::Store::open(temp / "store", temp / "ws", true);
  cli::WarmHookState warm;
  auto repo = warm.repo([&] {
    return std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store.repo_dir(), false));
  });
  testing_support::write_file(temp / "home/.codex/sessions/s.jsonl", "{\"a\":1}\n");
  // A preserver that has preserved once read one file: a new one has read none.
  auto preserver = [&](const std::string& run) -> runs::HomePreserver& {
    return warm.preserver(store, repo, run, temp / "home", {".codex/sessions"}, {});
  };
  for (std::size_t i = 0; i < cli::WarmHookState::kMaxKept; ++i) {
    preserver("r" + std::to_string(i)).preserve_now();
  }
  EXPECT_EQ(warm.preservers_kept(), cli::WarmHookState::kMaxKept);
  preserver("r0");  // used again: r1 is now the one used longest ago
  preserver("new");
  EXPECT_EQ(warm.preservers_kept(), cli::WarmHookState::kMaxKept);
  EXPECT_EQ(preserver("r0").files_read(), 1u) << "r0 was kept";
  EXPECT_EQ(preserver("r2").files_read(), 1u) << "r2 was kept";
  EXPECT_EQ(preserver("r1").files_read(), 0u) << "r1 was let go: its preserver is a new one";

  runs::PriceTable prices = runs::PriceTable::defaults();
  for (std::size_t i = 0; i <= cli::WarmHookState::kMaxKept; ++i) {
    warm.meter("m" + std::to_string(i), prices, "cost");
  }
  EXPECT_EQ(warm.meters_kept(), cli::WarmHookState::kMaxKept);
}

TEST(WarmHookStateTest, AHookCommandLineIsParsedOnce) {
  cli::WarmHookState warm;
  std::vector<std::string> argv = {"--store", "/s", "hook", "claude-code"};
  EXPECT_EQ(warm.command_line(argv), nullptr);
  cli::CommandLine line;
  line.options.store = "/s";
  warm.keep_command_line(argv, line);
  ASSERT_NE(warm.command_line(argv), nullptr);
  EXPECT_EQ(warm.command_line(argv)->options.store, std::optional<std::string>("/s"));
  EXPECT_EQ(warm.command_line({"--store", "/t", "hook", "claude-code"}), nullptr);
}

}  // namespace
