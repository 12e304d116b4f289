// `shadowbox report RUN` of a run made through the library (fast, no agent): one file
// that loads nothing and runs no script, a large diff cut with the full size stated; a
// tool input and a file name holding markup come out as text; files changed between two
// calls are an entry of their own; --json holds the entries and the chart's points; -o
// never replaces a file unless --force; an unknown run is an error naming it. (The pages
// of real agents' runs, rendered in Chromium: tests/e2e/run_report_test.cpp; the size of
// a run of 1,000 calls: tests/bench/report_bench.cpp.)
#include <sys/stat.h>

#include <sstream>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "runs/ledger_run.hpp"
#include "runs/run_meta.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

std::string dump(const Poco::JSON::Object::Ptr& e) {
  std::ostringstream out;
  e->stringify(out);
  return out.str();
}

constexpr const char* kHostile = "<script>alert(1)</script>";
constexpr const char* kHostileFile = "<img src=x onerror=alert(1)>.txt";

class RunReportTest : public ::testing::Test {
 protected:
  RunReportTest() {
    fs::create_directories(ws_);
    ws_ = fs::canonical(ws_);
  }
  fsnap::Store store() const { return fsnap::Store::open(store_, ws_, true); }

  // A run of calls: each writes a file and succeeds; the first writes a file of 200 KB,
  // the second one whose name is markup, the third fails and is rolled back; a file
  // changes between the fourth and the fifth; the fifth changes nothing itself and fails
  // after a call nested in it changed a file (its rollback refused: nothing changed is
  // its alone); the sixth never reports an outcome.
  void make_run(const std::string& name, std::size_t calls) {
    runs::LedgerRun run(store(), {.run = name});
    sandbox::ToolTransactions& t = run.transactions();
    for (std::size_t i = 0; i < calls; ++i) {
      std::string id = "call_" + std::to_string(i);
      std::string input = "{\"command\":\"step " + std::to_string(i) +
                          (i == 1 ? std::string(" ") + kHostile : "") + "\"}";
      t.begin({id, "Bash", input});
      if (i == 0) {
        std::string big;
        for (int line = 0; line < 5000; ++line)
          big += "line " + std::to_string(line) + " of a big file\n";
        testing_support::write_file(ws_ / "big.txt", big);
      } else if (i == 1) {
        testing_support::write_file(ws_ / kHostileFile, "x\n");
      } else if (i != 4) {
        testing_support::write_file(ws_ / ("f" + std::to_string(i % 50) + ".txt"),
                                    "written by call " + std::to_string(i) + "\n");
      }
      if (i == 4) {
        // A call nested in it changes a file meanwhile: its rollback is refused.
        t.begin({"nested", "Write", "{\"file_path\":\"nested.txt\"}"});
        testing_support::write_file(ws_ / "nested.txt", "nested\n");
        t.succeed("nested", "ok");
      }
      if (i == 2 || i == 4) {
        t.fail(id, "exit 3");
      } else if (i == 5) {
        t.close_unexecuted(id, "the agent ended first");
      } else {
        t.succeed(id, "ok");
      }
      if (i == 3) testing_support::write_file(ws_ / "edited-by-hand.txt", "between\n");
    }
  }
  CommandResult shadowbox(std::vector<std::string> args, const fs::path& cwd) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, cwd, {"SHADOWBOX_CONFIG="});
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path out_ = temp_.path();
};

TEST_F(RunReportTest, ThePageIsOneFileThatLoadsNothingAndRunsNoScript) {
  make_run("r1", 6);
  CommandResult r = shadowbox({"report", "r1"}, out_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "shadowbox-report-r1.html\n");
  std::string html = testing_support::read_file(out_ / "shadowbox-report-r1.html");
  std::size_t calls = 0;
  for (std::size_t at = html.find("data-kind=\"call\""); at != std::string::npos;
       at = html.find("data-kind=\"call\"", at + 1)) {
    ++calls;
  }
  EXPECT_EQ(calls, 7u);
  // The big file's diff is cut, and says how big it was.
  EXPECT_NE(html.find("Diff cut at 8"), std::string::npos);
  // Nothing that loads from elsewhere, and no script: the policy forbids both.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src=\""), std::string::npos);
  EXPECT_EQ(html.find("href=\""), std::string::npos);
  EXPECT_EQ(html.find("url(h"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

// A run `rewind` forked from another and then resumed says both: where it was taken from
// and when it was resumed, in --json and on the page.
TEST_F(RunReportTest, AForkedAndResumedRunSaysWhereItCameFromAndWhenItWasResumed) {
  make_run("r3", 2);
  runs::RunMeta meta;
  meta.run = "r3";
  meta.workspace = ws_.string();
  meta.command = {"claude", "-p", "go"};
  meta.started_at = "2026-11-27T01:00:00Z";
  meta.resumes.push_back({"2026-11-27T02:00:00Z", {"claude", "--resume", "s1"}});
  meta.exit_code = 0;
  meta.ended_at = "2026-11-27T02:30:00Z";
  meta.forked_from = runs::RunFork{"r0", "0123456789abcdef0123456789abcdef01234567", "toolu_origin",
                                   "2026-11-27T00:59:00Z"};
  meta.save(store());

  CommandResult j = shadowbox({"--json", "report", "r3"}, out_);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  Poco::JSON::Parser parser;
  auto json = parser.parse(j.out).extract<Poco::JSON::Object::Ptr>();
  auto resumes = json->getArray("resumes");
  ASSERT_TRUE(resumes);
  ASSERT_EQ(resumes->size(), 1u) << j.out;
  EXPECT_EQ(resumes->getElement<std::string>(0), "2026-11-27T02:00:00Z");
  auto fork = json->getObject("forked_from");
  ASSERT_TRUE(fork) << j.out;
  EXPECT_EQ(fork->getValue<std::string>("run"), "r0");
  EXPECT_EQ(fork->getValue<std::string>("tool_call_id"), "toolu_origin");

  CommandResult r = shadowbox({"report", "r3"}, out_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = testing_support::read_file(out_ / "shadowbox-report-r3.html");
  std::size_t fork_at = html.find("id=\"forked-from\"");
  ASSERT_NE(fork_at, std::string::npos);
  EXPECT_NE(html.find("r0", fork_at), std::string::npos);
  EXPECT_NE(html.find("2026-11-27T02:00:00Z"), std::string::npos) << "the resume is on the page";
}

TEST_F(RunReportTest, TheJsonHoldsEveryEntryPointAndCutAndMarkupIsText) {
  make_run("r1", 6);
  CommandResult r = shadowbox({"--json", "report", "r1"}, out_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out_ / "shadowbox-report-r1.html")) << "--json writes no page";
  Poco::JSON::Parser parser;
  auto json = parser.parse(r.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(json->getValue<std::string>("run"), "r1");
  EXPECT_EQ(json->getValue<std::size_t>("steps"), 7u) << "six calls and the nested one";
  auto entries = json->getArray("entries");
  std::vector<std::string> calls;
  std::size_t between = 0;
  std::size_t points_expected = 0;  // one per call and per checkpoint of no call
  for (std::size_t i = 0; i < entries->size(); ++i) {
    auto e = entries->getObject(static_cast<unsigned>(i));
    std::string kind = e->getValue<std::string>("kind");
    points_expected += kind == "call" || kind == "checkpoint" ? 1 : 0;
    if (kind == "call") {
      calls.push_back(e->getValue<std::string>("ref") + " " + e->getValue<std::string>("outcome"));
    }
    if (e->getValue<std::string>("kind") == "between") {
      ++between;
      auto changes = e->getArray("changes");
      ASSERT_EQ(changes->size(), 1u) << dump(e);
      EXPECT_EQ(changes->getObject(0)->getValue<std::string>("path"), "edited-by-hand.txt");
    }
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"call_0 ok", "call_1 ok", "call_2 rolled back",
                                             "call_3 ok", "call_4 rollback refused", "nested ok",
                                             "call_5 not executed"}));
  EXPECT_EQ(between, 1u) << "the file changed between call_3 and call_4";
  auto first = entries->getObject(0);
  auto diff = first->getObject("diff");
  EXPECT_TRUE(diff->getValue<bool>("cut"));
  EXPECT_GT(diff->getValue<std::size_t>("bytes"), 100000u);
  EXPECT_EQ(json->getArray("points")->size(), points_expected);
  EXPECT_EQ(json->getObject("cuts")->getValue<std::size_t>("diff_bytes"), 8192u);

  // The page: the hostile input and file name as text, never as markup.
  CommandResult page = shadowbox({"report", "r1", "-o", "-"}, out_);
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_EQ(page.out.find(kHostile), std::string::npos);
  EXPECT_EQ(page.out.find(kHostileFile), std::string::npos);
  EXPECT_NE(page.out.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.out.find("&lt;img src=x onerror=alert(1)&gt;.txt"), std::string::npos);
}

TEST_F(RunReportTest, AFileThatExistsIsLeftAloneUnlessForced) {
  make_run("r1", 1);
  testing_support::write_file(out_ / "mine.html", "my own page\n");
  CommandResult r = shadowbox({"report", "r1", "-o", "mine.html"}, out_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("mine.html exists"), std::string::npos) << r.err;
  EXPECT_EQ(testing_support::read_file(out_ / "mine.html"), "my own page\n");
  r = shadowbox({"report", "r1", "-o", "mine.html", "--force"}, out_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "mine.html\n");
  EXPECT_NE(testing_support::read_file(out_ / "mine.html").find("<!DOCTYPE html>"),
            std::string::npos);
  // A file of the user's, made as their umask says (not the store's private mode).
  mode_t mask = ::umask(022);
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat((out_ / "mine.html").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  // The default name is not replaced either.
  ASSERT_EQ(shadowbox({"report", "r1"}, out_).exit_code, 0);
  r = shadowbox({"report", "r1"}, out_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("shadowbox-report-r1.html exists"), std::string::npos) << r.err;
}

TEST_F(RunReportTest, AnUnknownRunIsAnErrorNamingIt) {
  make_run("r1", 1);
  CommandResult r = shadowbox({"report", "nope"}, out_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no run named 'nope'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_ / "shadowbox-report-nope.html"));
}

}  // namespace
