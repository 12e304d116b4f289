// The shadowbox executable end to end (docs/architecture.md, "CLI contract"): every command in
// human and JSON form, references, exit codes and one-line errors, quoting of unusual names, and
// the result browsed with plain git.
#include <unistd.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <random>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/maintenance.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "git_objects.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::Manifest;
using testing_support::run_command;
using testing_support::take_manifest;
using testing_support::TempDir;
using testing_support::write_file;

Poco::Dynamic::Var parse_json(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text);
}

Poco::JSON::Object::Ptr object_of(const std::string& text) {
  return parse_json(text).extract<Poco::JSON::Object::Ptr>();
}

// A workspace and store in a temporary directory, and a way to run shadowbox on them.
class CliTest : public ::testing::Test {
 protected:
  CliTest() : ws_(temp_ / "ws"), store_(temp_ / "store") { fs::create_directories(ws_); }

  CommandResult shadowbox(std::vector<std::string> args, const std::string& config = "") {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    if (!config.empty()) {
      write_file(temp_ / "config.yaml", config);
      argv.push_back("--config");
      argv.push_back((temp_ / "config.yaml").string());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }

  // Runs a command that must succeed and returns its stdout.
  std::string ok(std::vector<std::string> args, const std::string& config = "") {
    CommandResult r = shadowbox(args, config);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }

  // Tool calls c1 and c2 through the CLI, each writing a and ending with "done <id>".
  void two_calls() {
    write("a", "1");
    for (const std::string call : {"c1", "c2"}) {
      ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", call, "--tool-name", "Bash"});
      write("a", call);
      ok({"snapshot", "--phase", "post_tool", "--tool-call-id", call, "--result", "done " + call});
    }
  }

  Poco::JSON::Object::Ptr snapshot_json(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json", "snapshot"};
    args.insert(args.end(), extra.begin(), extra.end());
    return object_of(ok(args));
  }

  void write(const std::string& rel, const std::string& data) { write_file(ws_ / rel, data); }
  Manifest manifest() const { return take_manifest(ws_); }

  TempDir temp_;
  fs::path ws_;
  fs::path store_;
};

// Expects a one-line "shadowbox: error: ..." on stderr containing text, and exit 1.
void expect_error(const CommandResult& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("shadowbox: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
}

void expect_usage_error(const CommandResult& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Try 'shadowbox --help'"), std::string::npos) << r.err;
}

TEST_F(CliTest, InitAndPath) {
  std::string out = ok({"init"});
  EXPECT_EQ(out, store_.string() + "\n");
  EXPECT_TRUE(fs::is_directory(store_ / "repo.git"));
  Poco::JSON::Object::Ptr json = object_of(ok({"--json", "init"}));
  EXPECT_EQ(json->getValue<std::string>("store"), store_.string());
  EXPECT_EQ(json->getValue<std::string>("repo"), (store_ / "repo.git").string());
  EXPECT_EQ(json->getValue<std::string>("workspace"), fs::canonical(ws_).string());
  EXPECT_EQ(ok({"path"}), (store_ / "repo.git").string() + "\n");
}

TEST_F(CliTest, SnapshotJsonHasTheDocumentedShape) {
  write("a.txt", "a");
  Poco::JSON::Object::Ptr s = snapshot_json({"--tag", "t1", "--phase", "pre_tool", "--tool-call-id",
                                             "toolu_1", "--tool-name", "Bash", "--run", "r1"});
  for (const char* key : {"id", "commit", "tag", "label", "phase", "tool_call_id", "tool_name",
                          "run", "created_at", "skipped"}) {
    EXPECT_TRUE(s->has(key)) << key;
  }
  EXPECT_EQ(s->getValue<std::string>("id").size(), 16u);
  EXPECT_EQ(s->getValue<std::string>("commit").size(), 40u);
  EXPECT_EQ(s->getValue<std::string>("tag"), "t1");
  EXPECT_EQ(s->getValue<std::string>("phase"), "pre_tool");
  EXPECT_EQ(s->getValue<std::string>("tool_call_id"), "toolu_1");
  EXPECT_EQ(s->getValue<std::string>("tool_name"), "Bash");
  EXPECT_EQ(s->getValue<std::string>("run"), "r1");
  EXPECT_EQ(s->getArray("skipped")->size(), 0u);
  // Human form: one line naming the id, phase, tool and tag.
  std::string line = ok({"snapshot", "--tag", "t2"});
  EXPECT_NE(line.find("manual"), std::string::npos) << line;
  EXPECT_NE(line.find("tag:t2"), std::string::npos) << line;
}

TEST_F(CliTest, OversizeFilesAreReportedSkippedAndComeBackFromTheStoresCopies) {
  const std::string config = "capture:\n  max_file_size: 10\n";
  write("small", "s");
  write("big.bin", std::string(64, 'b'));
  Poco::JSON::Object::Ptr s = object_of(ok({"--json", "snapshot", "--tag", "t"}, config));
  Poco::JSON::Array::Ptr skipped = s->getArray("skipped");
  ASSERT_EQ(skipped->size(), 1u);
  Poco::JSON::Object::Ptr item = skipped->getObject(0);
  EXPECT_EQ(item->getValue<std::string>("path"), "big.bin");
  EXPECT_EQ(item->getValue<std::uint64_t>("size"), 64u);
  EXPECT_FALSE(item->getValue<std::string>("reason").empty());
  EXPECT_EQ(item->getValue<std::string>("copy").size(), 40u) << "the store keeps a copy";
  std::string human = ok({"snapshot"}, config);
  EXPECT_NE(human.find("skipped: big.bin (over-max-file-size; a copy is kept)"), std::string::npos)
      << human;

  fs::remove(ws_ / "big.bin");
  write("big.bin", std::string(80, 'c'));  // another file in its place
  write("small", "changed");
  std::string restored = ok({"restore", "t"}, config);
  EXPECT_NE(restored.find(" (2 changes)\n"), std::string::npos)
      << "small and big.bin: " << restored;
  EXPECT_NE(restored.find("M  big.bin (over capture.max_file_size: from its copy)"),
            std::string::npos)
      << restored;
  EXPECT_EQ(testing_support::read_file(ws_ / "big.bin"), std::string(64, 'b'));
  EXPECT_EQ(testing_support::read_file(ws_ / "small"), "s");
}

TEST_F(CliTest, ARollbackNamesWhatItCouldNotPutBackAndLogShowsIt) {
  const std::string config = "capture:\n  max_file_size: 10\n";
  write("big.bin", std::string(64, 'b'));
  ASSERT_EQ(::mkfifo((ws_ / "pipe").c_str(), 0600), 0);  // no capture holds a FIFO
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "A", "--tool-name", "Bash"}, config);
  fs::remove(ws_ / "big.bin");
  fs::remove(ws_ / "pipe");
  std::string out = ok({"rollback", "A", "--result", "exit 1"}, config);
  EXPECT_EQ(testing_support::read_file(ws_ / "big.bin"), std::string(64, 'b'));
  EXPECT_NE(out.find("NOT restored pipe: it is not captured"), std::string::npos) << out;

  Poco::JSON::Object::Ptr json = object_of(ok({"--json", "show", "run:default"}, config));
  Poco::JSON::Array::Ptr unrestored =
      json->getObject("ledger")->getObject("rollback")->getArray("unrestored");
  ASSERT_TRUE(unrestored);
  ASSERT_EQ(unrestored->size(), 1u);
  EXPECT_EQ(unrestored->getObject(0)->getValue<std::string>("path"), "pipe");

  std::string log = ok({"log", "--checkpoints"}, config);
  EXPECT_NE(log.find("\n    NOT restored: pipe (it is not captured"), std::string::npos) << log;
  log = ok({"log"}, config);  // under the call's row
  EXPECT_NE(log.find("  A                Bash  rolled back\n"
                     "                exit 1\n"
                     "                NOT restored: pipe (it is not captured"),
            std::string::npos)
      << log;
}

TEST_F(CliTest, LogShowDiffRestore) {
  write("a.txt", "one\n");
  write("dir/b.txt", "b\n");
  Manifest first = manifest();
  std::string first_id = snapshot_json({"--tag", "first"})->getValue<std::string>("id");
  write("a.txt", "two\n");
  fs::remove_all(ws_ / "dir");
  write("new.txt", "new\n");
  Manifest second = manifest();
  std::string second_id =
      snapshot_json({"--tag", "second", "--run", "other"})->getValue<std::string>("id");

  // log: newest first, -n, --run, --json.
  std::string log = ok({"log"});
  ASSERT_NE(log.find(second_id), std::string::npos);
  EXPECT_LT(log.find(second_id), log.find(first_id));
  std::string newest = ok({"log", "-n", "1"});  // the run, the header, the row
  EXPECT_EQ(std::count(newest.begin(), newest.end(), '\n'), 3) << newest;
  EXPECT_NE(newest.find(second_id), std::string::npos) << newest;
  newest = ok({"log", "--checkpoints", "-n", "1"});
  EXPECT_EQ(std::count(newest.begin(), newest.end(), '\n'), 1) << newest;
  Poco::JSON::Array::Ptr runs =
      parse_json(ok({"--json", "log", "--run", "other"})).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->getObject(0)->getValue<std::string>("id"), second_id);

  // show: changes against the previous checkpoint of the run (none: whole tree).
  Poco::JSON::Object::Ptr shown = object_of(ok({"--json", "show", "first"}));
  EXPECT_EQ(shown->getValue<std::string>("id"), first_id);
  Poco::JSON::Array::Ptr changes = shown->getArray("changes");
  ASSERT_EQ(changes->size(), 3u);  // a.txt, dir, dir/b.txt
  EXPECT_EQ(changes->getObject(0)->getValue<std::string>("status"), "A");
  EXPECT_EQ(changes->getObject(0)->getValue<std::string>("path"), "a.txt");
  EXPECT_TRUE(changes->getObject(0)->isNull("before"));
  EXPECT_EQ(changes->getObject(0)->getObject("after")->getValue<std::string>("type"), "file");
  EXPECT_NE(ok({"show", "first"}).find("A  dir/b.txt"), std::string::npos);

  // diff between checkpoints, and against the live workspace.
  std::string patch = ok({"diff", "first", "second"});
  EXPECT_NE(patch.find("-one"), std::string::npos) << patch;
  EXPECT_NE(patch.find("+two"), std::string::npos) << patch;
  std::string names = ok({"diff", "first", "second", "--name-status"});
  EXPECT_NE(names.find("M  a.txt"), std::string::npos) << names;
  EXPECT_NE(names.find("D  dir/b.txt"), std::string::npos) << names;
  EXPECT_NE(names.find("A  new.txt"), std::string::npos) << names;
  write("a.txt", "live\n");
  EXPECT_NE(ok({"diff", "second"}).find("+live"), std::string::npos);

  // restore --dry-run changes nothing; restore makes the workspace exact.
  Manifest live = manifest();
  std::string dry = ok({"restore", "first", "--dry-run"});
  EXPECT_NE(dry.find("would restore " + first_id), std::string::npos) << dry;
  EXPECT_EQ(testing_support::describe_difference(live, manifest()), "");
  Poco::JSON::Object::Ptr restored = object_of(ok({"--json", "restore", "first"}));
  EXPECT_EQ(testing_support::describe_difference(first, manifest()), "");
  EXPECT_FALSE(restored->getValue<bool>("dry_run"));
  std::string safety = restored->getObject("safety")->getValue<std::string>("id");
  EXPECT_EQ(restored->getObject("safety")->getValue<std::string>("phase"), "safety");
  // The safety checkpoint undoes the restore exactly.
  ok({"restore", safety});
  EXPECT_EQ(testing_support::describe_difference(live, manifest()), "");
  ok({"restore", "second"});
  EXPECT_EQ(testing_support::describe_difference(second, manifest()), "");
}

TEST_F(CliTest, EveryKindOfReferenceResolves) {
  write("f", "1");
  Poco::JSON::Object::Ptr pre = snapshot_json(
      {"--phase", "pre_tool", "--tool-call-id", "toolu_9", "--run", "agent", "--tag", "tagged"});
  write("f", "2");
  Poco::JSON::Object::Ptr post =
      snapshot_json({"--phase", "post_tool", "--tool-call-id", "toolu_9", "--run", "agent"});
  std::string pre_id = pre->getValue<std::string>("id");
  std::string post_id = post->getValue<std::string>("id");
  std::string pre_commit = pre->getValue<std::string>("commit");
  auto resolves_to = [&](const std::string& ref) {
    return object_of(ok({"--json", "show", ref}))->getValue<std::string>("id");
  };
  EXPECT_EQ(resolves_to(pre_id), pre_id);
  EXPECT_EQ(resolves_to(pre_id.substr(0, 10)), pre_id);
  EXPECT_EQ(resolves_to(pre_commit), pre_id);
  EXPECT_EQ(resolves_to(pre_commit.substr(0, 12)), pre_id);
  EXPECT_EQ(resolves_to("tagged"), pre_id);
  EXPECT_EQ(resolves_to("pre:toolu_9"), pre_id);
  EXPECT_EQ(resolves_to("post:toolu_9"), post_id);
  EXPECT_EQ(resolves_to("run:agent"), post_id);
  ok({"restore", "pre:toolu_9"});
  EXPECT_EQ(testing_support::read_file(ws_ / "f"), "1");
}

TEST_F(CliTest, UnusualNamesAreQuotedAndRoundTrip) {
  const std::string newline = "new\nline.txt";
  const std::string latin1 = "caf\xe9.txt";
  write(newline, "n");
  write(latin1, "l");
  Manifest before = manifest();
  ok({"snapshot", "--tag", "names"});
  std::string human = ok({"show", "names"});
  EXPECT_NE(human.find("A  \"new\\nline.txt\""), std::string::npos) << human;
  EXPECT_NE(human.find("A  \"caf\\351.txt\""), std::string::npos) << human;

  Poco::JSON::Array::Ptr changes = object_of(ok({"--json", "show", "names"}))->getArray("changes");
  bool saw_hex = false;
  for (std::size_t i = 0; i < changes->size(); ++i) {
    Poco::JSON::Object::Ptr c = changes->getObject(i);
    if (c->has("path_hex")) {
      saw_hex = true;
      EXPECT_EQ(c->getValue<std::string>("path_hex"), "636166e92e747874");  // caf\xe9.txt
      EXPECT_EQ(c->getValue<std::string>("path"), "caf\xef\xbf\xbd.txt");
    }
  }
  EXPECT_TRUE(saw_hex);

  fs::remove(ws_ / newline);
  write(latin1, "changed");
  ok({"restore", "names"});
  EXPECT_EQ(testing_support::describe_difference(before, manifest()), "");
}

TEST_F(CliTest, UsageErrorsExitWithTwo) {
  expect_usage_error(shadowbox({"frobnicate"}), "unknown command 'frobnicate'");
  expect_usage_error(shadowbox({"snapshot", "--bogus"}), "--bogus");
  expect_usage_error(shadowbox({"restore"}), "restore REF");
  expect_usage_error(shadowbox({"show", "a", "b"}), "unexpected argument 'b'");
  expect_usage_error(shadowbox({"snapshot", "--phase", "sometimes"}), "--phase");
  expect_usage_error(shadowbox({"log", "-n", "many"}), "-n");
  expect_usage_error(shadowbox({}), "no command");
  // Limits of a run are checked before anything starts.
  expect_usage_error(shadowbox({"run", "--max-steps", "0", "--", "true"}), "--max-steps");
  expect_usage_error(shadowbox({"run", "--max-retries", "x", "--", "true"}), "--max-retries");
  expect_usage_error(shadowbox({"run", "--max-cost-usd", "ten", "--", "true"}),
                     "--max-cost-usd: expected an amount of USD");
  expect_usage_error(shadowbox({"run", "--max-cost-usd", "0", "--", "true"}), "more than $0");
  expect_usage_error(shadowbox({"run", "--timeout", "soon", "--", "true"}), "--timeout");
  expect_usage_error(shadowbox({"run", "--timeout", "0s", "--", "true"}), "longer than 0 s");
  expect_usage_error(shadowbox({"resume", "r1", "--max-steps", "-1"}), "--max-steps");
  expect_usage_error(shadowbox({"abort"}), "abort RUN");
  EXPECT_FALSE(boost::filesystem::exists(store_ / "runs")) << "no run was started";
  CommandResult help = shadowbox({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("restore REF"), std::string::npos);
}

TEST_F(CliTest, OptionsParseAsAUserExpects) {
  write("a.txt", "a");
  std::string id = snapshot_json({"--tag", "first"})->getValue<std::string>("id");
  // Global options after the command's name, as the README writes them.
  Poco::JSON::Object::Ptr shown = object_of(ok({"show", id, "--json"}));
  EXPECT_EQ(shown->getValue<std::string>("id"), id);
  CommandResult after = run_command(
      {SHADOWBOX_BIN, "log", "--workspace", ws_.string(), "--store", store_.string(), "--json"},
      ws_, {"SHADOWBOX_CONFIG="});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(parse_json(after.out).extract<Poco::JSON::Array::Ptr>()->size(), 1u);
  write("a.txt", "b");
  ok({"snapshot"});
  // Short options with their value attached, long ones with =, the last one wins.
  EXPECT_EQ(object_of("{\"l\":" + ok({"--json", "log", "-n1"}) + "}")->getArray("l")->size(), 1u);
  EXPECT_EQ(
      object_of("{\"l\":" + ok({"log", "--max-count=1", "--json"}) + "}")->getArray("l")->size(),
      1u);
  EXPECT_EQ(object_of("{\"l\":" + ok({"log", "-n", "5", "-n", "1", "--json"}) + "}")
                ->getArray("l")
                ->size(),
            1u);
  // `hooks install` speaks JSON too.
  Poco::JSON::Object::Ptr installed = object_of(ok({"--json", "hooks", "install"}));
  EXPECT_EQ(installed->getValue<std::string>("outcome"), "installed");
  EXPECT_EQ(installed->getValue<std::string>("settings"),
            (fs::canonical(ws_) / ".claude" / "settings.local.json").string());
  EXPECT_EQ(object_of(ok({"hooks", "uninstall", "--json"}))->getValue<std::string>("outcome"),
            "removed");
  // Every declared option is in the command's help, and in the overview.
  CommandResult help = shadowbox({"snapshot", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"--tag", "--force", "--phase", "--tool-call-id", "--tool-name",
                             "--run", "--input", "--result"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option << '\n' << help.out;
    EXPECT_NE(ok({"--help"}).find(option), std::string::npos) << option;
  }
  EXPECT_NE(ok({"help", "log"}).find("-n, --max-count N"), std::string::npos);
  // What follows `--` (or the agent's name) is the agent's, --json and --help included.
  CommandResult passed = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "echo1", "--", "sh",
                                    "-c", "echo \"$0 $1\" > args.txt", "--json", "--help"});
  EXPECT_EQ(passed.exit_code, 0) << passed.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "args.txt"), "--json --help\n");
  CommandResult no_dashes = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "echo2", "sh",
                                       "-c", "echo \"$0\" > args.txt", "--max-steps"});
  EXPECT_EQ(no_dashes.exit_code, 0) << no_dashes.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "args.txt"), "--max-steps\n");
  // A value that starts with '-' is a value (a tool call's input may).
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "dash", "--input", "-rf /tmp/x"});
  EXPECT_EQ(object_of(ok({"show", "pre:dash", "--json"}))
                ->getObject("ledger")
                ->getValue<std::string>("input_summary"),
            "-rf /tmp/x");
  // A misspelt option of run is not taken for the agent's name.
  expect_usage_error(shadowbox({"run", "--max-step", "3", "--", "true"}),
                     "unknown option '--max-step'");
}

TEST_F(CliTest, AnExistingTagIsRefusedUnlessForcedAndShownOnlyWhereItPoints) {
  write("a", "1");
  std::string first = snapshot_json({"--tag", "v1"})->getValue<std::string>("id");
  write("a", "2");
  CommandResult again = shadowbox({"snapshot", "--tag", "v1"});
  expect_error(again, "tag 'v1' exists already (on checkpoint " + first + ")");
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(parse_json(ok({"--json", "log"})).extract<Poco::JSON::Array::Ptr>()->size(), 1u)
      << "nothing recorded";
  EXPECT_EQ(object_of(ok({"show", "v1", "--json"}))->getValue<std::string>("id"), first);
  std::string moved = snapshot_json({"--tag", "v1", "--force"})->getValue<std::string>("id");
  EXPECT_EQ(object_of(ok({"show", "v1", "--json"}))->getValue<std::string>("id"), moved);
  // The tag is shown where it points, not on the checkpoint it left.
  EXPECT_EQ(object_of(ok({"show", first, "--json"}))->getValue<std::string>("tag"), "");
  std::string log = ok({"log"});
  EXPECT_EQ(log.find("tag:v1"), log.rfind("tag:v1")) << log;
  EXPECT_NE(log.find(moved), std::string::npos);
  EXPECT_LT(log.find("tag:v1"), log.find(first)) << "on the newest line only\n" << log;
  expect_usage_error(shadowbox({"snapshot", "--force"}), "--force");
}

TEST_F(CliTest, ALabelIsFreeTextKeptWithTheCheckpointAndNeverARef) {
  write("a", "1");
  // What a ref name could not hold: a colon, spaces, non-ASCII, the same text twice.
  const std::string label =
      "pre:toolu_01 before the r\xc3\xa9"
      "factor";
  std::string first = snapshot_json({"--label", label})->getValue<std::string>("id");
  write("a", "2");
  Poco::JSON::Object::Ptr second = snapshot_json({"--label", label, "--phase", "checkpoint"});
  EXPECT_EQ(second->getValue<std::string>("label"), label);
  EXPECT_EQ(object_of(ok({"show", first, "--json"}))->getValue<std::string>("label"), label);
  std::string log = ok({"log"});
  std::size_t at = log.find("label:");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("label:", at + 1), std::string::npos) << "both carry it\n" << log;
  // A label is no name to find a checkpoint by, and makes no ref.
  EXPECT_NE(shadowbox({"show", label}).exit_code, 0);
  CommandResult refs = testing_support::run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "for-each-ref", "--format=%(refname)"});
  EXPECT_EQ(refs.out.find("toolu_01"), std::string::npos) << refs.out;
  // A tool boundary is named by its call; a label longer than a line is refused.
  expect_usage_error(
      shadowbox({"snapshot", "--label", "x", "--phase", "pre_tool", "--tool-call-id", "toolu_9"}),
      "--label names a checkpoint or manual snapshot");
  expect_usage_error(shadowbox({"snapshot", "--label", std::string(1025, 'x')}), "at most 1024");
}

TEST_F(CliTest, SmallerMessagesSayWhatIsTrue) {
  // A file kept by a restore is named as a file.
  write(".env", "SECRET=1");
  write("a", "1");
  std::string with_env = snapshot_json()->getValue<std::string>("id");
  fs::remove(ws_ / ".env");
  write(".env", "SECRET=2");
  std::string out = ok({"restore", with_env}, "capture:\n  excludes: [.env]\n");
  EXPECT_NE(out.find("kept .env (it is not captured)"), std::string::npos) << out;
  EXPECT_EQ(testing_support::read_file(ws_ / ".env"), "SECRET=2") << "not touched";
  // A run with no agent session is not offered to resume.
  ok({"snapshot", "--run", "plain"});
  CommandResult taken =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "plain", "--", "true"});
  expect_error(taken, "no agent session to resume; choose another --run-id");
  EXPECT_EQ(taken.err.find("shadowbox resume"), std::string::npos) << taken.err;
  // runs' column headers are single words, as the docs show them.
  std::string wide = ok({"runs", "--wide"});
  std::string header = wide.substr(0, wide.find('\n'));
  for (const char* column :
       {"RUN", "STATUS", "HALT-REASON", "COST-USD", "STEPS", "CALLS", "FAILED", "AGENT-SESSION",
        "RESUMABLE", "CHECKPOINTS", "GAPS", "STARTED", "LAST-ACTIVITY"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column;
  }
}

TEST_F(CliTest, LedgerRecordsHoldNoSecret) {
  write("a", "1");
  std::string input =
      "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123' "
      "AKIAIOSFODNN7EXAMPLE";
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--input", input});
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c1", "--result",
      "printed sk-proj-AbCdEf0123456789_-xyzXYZ"});
  std::string shown = ok({"show", "pre:c1", "--json"}) + ok({"show", "post:c1", "--json"});
  EXPECT_EQ(shown.find("abcdefghijklmnopqrstuvwxyz0123"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("AKIAIOSFODNN7EXAMPLE"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("sk-proj-"), std::string::npos) << shown;
  EXPECT_NE(shown.find("[REDACTED]"), std::string::npos) << shown;
}

TEST_F(CliTest, AConfigThatIsNotARegularFileIsRefusedAtOnce) {
  fs::path fifo = temp_ / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directories(temp_ / "dir.yaml");
  for (const fs::path& config : {fs::path("/dev/zero"), fifo, temp_ / "dir.yaml"}) {
    for (bool named : {true, false}) {
      std::vector<std::string> argv = {
          "sh",         "-c",          "ulimit -v 1000000; exec \"$@\"",
          "sh",         SHADOWBOX_BIN, "--workspace",
          ws_.string(), "--store",     store_.string()};
      if (named) argv.insert(argv.end(), {"--config", config.string()});
      argv.push_back("log");
      // Bounded: a command that waits is killed after 20 s, and one reading /dev/zero
      // for ever stops at 1 GB.
      CommandResult r =
          run_command(argv, ws_, {"SHADOWBOX_CONFIG=" + (named ? "" : config.string())}, "",
                      std::chrono::seconds(20));
      EXPECT_FALSE(r.timed_out) << config;
      expect_error(r, "config file " + config.string());
    }
  }
}

TEST_F(CliTest, ARunsCommandLineIsRedactedBeforeItsSummaryIsCut) {
  // The opening record says "run started: <command line>", cut to 200 bytes: here the
  // cut falls inside a key.
  const std::string key = "sk-ant-api03-" + std::string(40, 'K');
  std::string pad(200 - std::string("sh -c true ").size() - 15 - 1, 'p');
  CommandResult r = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "r1", "--", "sh", "-c",
                               "true", pad + " " + key});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing_support::objects_containing(store_ / "repo.git", {key.substr(0, 8)}),
            std::vector<std::string>{});
  std::string shown = ok({"log", "--run", "r1"});
  EXPECT_NE(shown.find("run started: sh -c true ppp"), std::string::npos) << shown;
}

TEST_F(CliTest, MaintenancePacksByItselfAndLosesNothingToKill9) {
  std::vector<std::pair<std::string, Manifest>> states;
  std::mt19937 random(12345);
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 4; ++i) {
      for (int f = 0; f < 40; ++f)
        write("d" + std::to_string(f % 5) + "/f" + std::to_string(f),
              std::to_string(round * 100 + i * 10 + f));
      states.emplace_back(snapshot_json()->getValue<std::string>("id"), manifest());
    }
    // kill -9 at a random moment of a maintenance.
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(SHADOWBOX_BIN, SHADOWBOX_BIN, "--workspace", ws_.c_str(), "--store", store_.c_str(),
              "maintenance", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 20000));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    // The snapshots above may have started a detached maintenance of their own: fsck
    // runs while no maintenance can (one packing a loose object fsck has listed would
    // make it report the object missing).
    std::optional<fsnap::MaintenanceLock> held =
        fsnap::MaintenanceLock::acquire(fsnap::Store::open(store_, ws_, false), /*wait=*/true);
    CommandResult fsck = run_command(
        {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict"}, temp_.path());
    held.reset();
    EXPECT_EQ(fsck.exit_code, 0) << fsck.err;
  }
  for (const auto& [id, expected] : states) {
    ok({"restore", id});
    EXPECT_EQ(testing_support::describe_difference(expected, manifest()), "") << id;
  }
  // With maintenance due at once, a snapshot leaves the packing to a detached process.
  write("last", "x");
  ok({"snapshot"}, "maintenance:\n  loose_objects: 0\n");
  auto loose = [&] {
    std::size_t n = 0;
    boost::system::error_code ec;
    fs::directory_iterator end;
    for (fs::directory_iterator dir(store_ / "repo.git" / "objects", ec); !ec && dir != end;
         dir.increment(ec)) {
      if (dir->path().filename().string().size() != 2) continue;
      // A fan-out directory the maintenance removes (emptied) holds none.
      boost::system::error_code inner;
      for (fs::directory_iterator it(dir->path(), inner); !inner && it != end;
           it.increment(inner)) {
        ++n;
      }
    }
    return n;
  };
  bool packed = false;
  for (int i = 0; i < 100 && !packed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    packed = loose() == 0;
  }
  EXPECT_TRUE(packed) << loose() << " loose objects: no maintenance packed them";
  // The detached maintenance is done before the store goes with the test.
  int fd = ::open((store_ / "maintenance.lock").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ::flock(fd, LOCK_EX);
  ::close(fd);
}

// A maintenance the commands start is run at the lowest CPU priority and the lowest
// best-effort I/O priority, so that a run's boundaries beside it get the cores and the
// disk first (issue 37's p99 with maintenance running).
TEST_F(CliTest, ABackgroundMaintenanceRunsAtTheLowestCpuAndIoPriority) {
  write("a.txt", "one");
  ok({"snapshot"});
  // Held by the test, the maintenance lock keeps the maintenance waiting, to be looked at.
  int lock = ::open((store_ / "maintenance.lock").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(SHADOWBOX_BIN, SHADOWBOX_BIN, "--workspace", ws_.c_str(), "--store", store_.c_str(),
            "maintenance", "--background", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  constexpr long kBestEffortLowest = (2 << 13) | 7;  // IOPRIO_CLASS_BE, level 7
  int nice = 0;
  long io = -1;
  for (int i = 0; i < 500 && (nice != 19 || io != kBestEffortLowest); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    errno = 0;
    nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(pid));
    io = ::syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid);
  }
  EXPECT_EQ(nice, 19);
  EXPECT_EQ(io, kBestEffortLowest);
  ::flock(lock, LOCK_UN);
  ::close(lock);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(CliTest, LargeFilesComeBackInBoundedMemoryAndStaySparse) {
  const std::string config = "capture:\n  max_file_size: 0\n";
  constexpr off_t kSize = off_t{96} << 20;
  constexpr off_t kDataAt = off_t{40} << 20;
  std::string data(std::size_t{2} << 20, '\0');
  std::mt19937 random(7);
  for (char& c : data) c = static_cast<char>(1 + random() % 255);  // no block of zeros
  fs::path big = ws_ / "big.img";
  {
    int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, kSize), 0);
    ASSERT_EQ(::pwrite(fd, data.data(), data.size(), kDataAt), static_cast<ssize_t>(data.size()));
    ::close(fd);
  }
  std::string id = object_of(ok({"--json", "snapshot"}, config))->getValue<std::string>("id");
  ok({"maintenance"}, config);  // the large blob stays where it can be streamed from
  fs::remove(big);
  // restore in a child whose peak memory is measured.
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string config_file = (temp_ / "config.yaml").string();
    ::execl(SHADOWBOX_BIN, SHADOWBOX_BIN, "--workspace", ws_.c_str(), "--store", store_.c_str(),
            "--config", config_file.c_str(), "restore", id.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_LT(usage.ru_maxrss, 48L << 10) << "KiB at peak, for a " << (kSize >> 20) << " MiB file";
  struct stat st {};
  ASSERT_EQ(::stat(big.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, kSize);
  EXPECT_LT(st.st_blocks * 512, off_t{16} << 20) << "holes are kept";
  std::string back(data.size(), 'x');
  int fd = ::open(big.c_str(), O_RDONLY);
  ASSERT_EQ(::pread(fd, back.data(), back.size(), kDataAt), static_cast<ssize_t>(back.size()));
  std::string zeros(1 << 20, 'x');
  ASSERT_EQ(::pread(fd, zeros.data(), zeros.size(), kDataAt - (1 << 20)), 1 << 20);
  ::close(fd);
  EXPECT_TRUE(back == data);
  EXPECT_EQ(zeros, std::string(1 << 20, '\0'));
}

TEST_F(CliTest, ErrorsExitWithOneAndChangeNothing) {
  write("a", "a");
  expect_error(shadowbox({"log"}), "shadowbox init");  // no store yet
  EXPECT_FALSE(fs::exists(store_));
  ok({"snapshot", "--tag", "t"});
  Manifest before = manifest();
  expect_error(shadowbox({"restore", "no-such-ref"}), "no-such-ref");
  expect_error(shadowbox({"show", "pre:missing"}), "missing");
  expect_error(shadowbox({"snapshot", "--tag", "bad tag with spaces/.."}), "tag");
  EXPECT_EQ(testing_support::describe_difference(before, manifest()), "");

  CommandResult missing_ws =
      run_command({SHADOWBOX_BIN, "--workspace", (temp_ / "nowhere").string(), "log"});
  expect_error(missing_ws, "nowhere");

  // A store that cannot be created (below a regular file, which fails even for root).
  write_file(temp_ / "plain-file", "x");
  CommandResult bad_store = run_command({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                         (temp_ / "plain-file" / "store").string(), "snapshot"},
                                        ws_, {"SHADOWBOX_CONFIG="});
  expect_error(bad_store, "plain-file/store");
  EXPECT_EQ(testing_support::describe_difference(before, manifest()), "");

  expect_error(shadowbox({"snapshot"}, "capture:\n  exclude: [x]\n"), "capture.exclude");
  expect_error(shadowbox({"snapshot"}, "retention:\n  max_age: forever\n"), "retention.max_age");
}

TEST_F(CliTest, PlainGitCanBrowseTheStoreAndTheUsersRepositoryIsUntouched) {
  auto git = [&](const fs::path& dir, std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "-c", "user.name=t", "-c", "user.email=t@localhost"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = run_command(argv, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  write("src.c", "int x;\n");
  git(ws_, {"init", "-q", "-b", "main"});
  git(ws_, {"add", "-A"});
  git(ws_, {"commit", "-q", "-m", "user's own commit"});
  Manifest user_git = take_manifest(ws_ / ".git", true);
  std::string user_head = git(ws_, {"rev-parse", "HEAD"});

  ok({"snapshot", "--phase", "pre_tool", "--tool-name", "Edit", "--tool-call-id", "toolu_a",
      "--tag", "before-edit"});
  write("src.c", "int y;\n");
  ok({"snapshot", "--phase", "post_tool", "--tool-name", "Edit", "--tool-call-id", "toolu_a"});
  ok({"restore", "before-edit"});

  std::string repo = ok({"path"});
  repo.pop_back();
  std::string log =
      git(temp_.path(), {"--git-dir", repo, "log", "--all", "--format=%s%n%(trailers)"});
  EXPECT_NE(log.find("pre_tool Edit toolu_a"), std::string::npos) << log;
  EXPECT_NE(log.find("post_tool Edit toolu_a"), std::string::npos) << log;
  for (const char* trailer : {"Checkpoint-Id: ", "Phase: post_tool", "Run-Id: default",
                              "Tool-Name: Edit", "Tool-Call-Id: toolu_a", "Tag: before-edit"}) {
    EXPECT_NE(log.find(trailer), std::string::npos) << trailer << "\n" << log;
  }
  std::string refs = git(temp_.path(), {"--git-dir", repo, "for-each-ref", "--format=%(refname)"});
  EXPECT_NE(refs.find("refs/shadowbox/runs/default"), std::string::npos) << refs;
  EXPECT_NE(refs.find("refs/shadowbox/tags/before-edit"), std::string::npos) << refs;
  EXPECT_NE(git(temp_.path(), {"--git-dir", repo, "show", "refs/shadowbox/tags/before-edit:src.c"})
                .find("int x;"),
            std::string::npos);
  git(temp_.path(), {"--git-dir", repo, "fsck", "--strict", "--no-dangling"});

  EXPECT_EQ(testing_support::describe_difference(user_git, take_manifest(ws_ / ".git", true)), "");
  EXPECT_EQ(git(ws_, {"rev-parse", "HEAD"}), user_head);
}

TEST_F(CliTest, GcKeepsTheNewestCheckpointsOfEachRun) {
  const std::string config = "retention:\n  keep_last: 2\n";
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    write("f", std::to_string(i));
    ids.push_back(snapshot_json()->getValue<std::string>("id"));
  }
  write("dropped-only", "only in dropped checkpoints");
  std::string out = ok({"gc"}, config);
  EXPECT_NE(out.find("dropped 3 checkpoints and 0 runs"), std::string::npos) << out;
  Poco::JSON::Array::Ptr log = parse_json(ok({"--json", "log"})).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(log->size(), 2u);
  EXPECT_EQ(log->getObject(0)->getValue<std::string>("id"), ids[4]);
  EXPECT_EQ(log->getObject(1)->getValue<std::string>("id"), ids[3]);
  expect_error(shadowbox({"show", ids[0]}), ids[0]);
  // The kept checkpoints' ledger records name the commits they sit on now.
  for (const std::string& id : {ids[3], ids[4]}) {
    Poco::JSON::Object::Ptr shown = object_of(ok({"show", id, "--json"}));
    EXPECT_EQ(shown->getObject("ledger")->getValue<std::string>("commit"),
              shown->getValue<std::string>("commit"));
  }
  ok({"restore", ids[3]});
  EXPECT_EQ(testing_support::read_file(ws_ / "f"), "3");
  Poco::JSON::Object::Ptr json = object_of(ok({"--json", "gc"}, config));
  EXPECT_EQ(json->getValue<std::size_t>("keep_last"), 2u);
}

TEST_F(CliTest, GcRemovesARunLeftWithNoCheckpointEverywhere) {
  const std::string config = "retention:\n  max_age: 1s\n";
  write("f", "old");
  // An agent run: checkpoints, run.json, its HOME folder and preserved home ref.
  CommandResult old_run =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "old", "--", "true"});
  ASSERT_EQ(old_run.exit_code, 0) << old_run.err;
  fs::path repo = store_ / "repo.git";
  ASSERT_TRUE(fs::is_directory(store_ / "runs" / "old"));
  ASSERT_TRUE(fsnap::ShadowRepo::open(repo, false).ref_tree("refs/shadowbox/home/old"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  write("f", "new");
  ok({"snapshot", "--run", "new"});
  Poco::JSON::Object::Ptr report = object_of(ok({"--json", "gc"}, config));
  EXPECT_EQ(report->getArray("dropped_runs")->size(), 1u);
  EXPECT_EQ(report->getArray("dropped_runs")->getElement<std::string>(0), "old");
  Poco::JSON::Array::Ptr runs =
      parse_json(ok({"--json", "runs"})).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->getObject(0)->getValue<std::string>("run"), "new");
  EXPECT_FALSE(fs::exists(store_ / "runs" / "old"));
  fsnap::ShadowRepo shadow = fsnap::ShadowRepo::open(repo, false);
  EXPECT_FALSE(shadow.has_run("old"));
  EXPECT_FALSE(shadow.ref_tree("refs/shadowbox/home/old").has_value());
}

TEST_F(CliTest, RetentionRunsItselfWhenARunEnds) {
  const std::string config = "retention:\n  keep_last: 2\n  prune_grace: 0s\n";
  for (int i = 0; i < 4; ++i) {
    write("f", std::to_string(i));
    ok({"snapshot", "--run", "earlier"});
  }
  fsnap::ShadowRepo before = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  ASSERT_EQ(before.log("earlier", 0).size(), 4u);
  // No command about retention: the end of an agent's run applies it, to the run that
  // ended as well as to the others — by a maintenance of its own, which the run does not
  // wait for.
  write("f", "agent");
  CommandResult r =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "agent", "--", "true"}, config);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto earlier = [&] {
    return fsnap::ShadowRepo::open(store_ / "repo.git", false).log("earlier", 0).size();
  };
  for (int i = 0; i < 600 && earlier() > 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Read once the maintenance has let go of the store.
  { fsnap::StoreLock settled = fsnap::Store::open(store_, ws_, false).lock(); }
  fsnap::ShadowRepo after = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  EXPECT_EQ(after.log("earlier", 0).size(), 2u);
  EXPECT_LE(after.log("agent", 0).size(), 2u);
  ok({"restore", "earlier"});
  EXPECT_EQ(testing_support::read_file(ws_ / "f"), "3");
  CommandResult fsck = run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

TEST_F(CliTest, RetentionDurationsOfCenturiesKeepWhatTheySay) {
  const std::string first = std::string(4000, 'x') + " only in the first checkpoint";
  write("f", first);
  ok({"snapshot"});
  write("f", "second");
  ok({"snapshot"});
  write("f", "third");
  ok({"snapshot"});
  // 106753d (~292 years) wrapped max_age's nanoseconds: gc dropped every checkpoint.
  Poco::JSON::Object::Ptr aged =
      object_of(ok({"--json", "gc"}, "retention:\n  max_age: 106753d\n"));
  EXPECT_EQ(aged->getValue<std::size_t>("checkpoints_dropped"), 0u);
  EXPECT_EQ(parse_json(ok({"--json", "log"})).extract<Poco::JSON::Array::Ptr>()->size(), 3u);
  // 200000d wrapped prune_grace into the past: what dropped checkpoints alone held went
  // at once, young as it was.
  std::string blob =
      run_command({"git", "hash-object", "--stdin"}, ws_, {}, first).out.substr(0, 40);
  Poco::JSON::Object::Ptr young =
      object_of(ok({"--json", "gc"}, "retention:\n  keep_last: 1\n  prune_grace: 200000d\n"));
  EXPECT_EQ(young->getValue<std::size_t>("checkpoints_dropped"), 2u);
  EXPECT_EQ(young->getValue<std::size_t>("objects_pruned"), 0u);
  EXPECT_EQ(young->getValue<std::size_t>("packed_objects_dropped"), 0u);
  EXPECT_TRUE(fsnap::ShadowRepo::open(store_ / "repo.git", false).has_object(blob));
}

TEST_F(CliTest, GcDropsThePackedObjectsOfDroppedCheckpointsAfterTheGracePeriod) {
  write("f", std::string(4000, 'x') + " only in the first checkpoint");
  ok({"snapshot"});
  write("f", "later");
  ok({"snapshot"});
  ok({"maintenance"});  // everything packed
  std::string blob = run_command({"git", "hash-object", "--stdin"}, ws_, {},
                                 std::string(4000, 'x') + " only in the first checkpoint")
                         .out.substr(0, 40);
  auto has_blob = [&] {
    return fsnap::ShadowRepo::open(store_ / "repo.git", false).has_object(blob);
  };
  ASSERT_TRUE(has_blob());
  // Dropped, but in a pack younger than the grace period: kept.
  Poco::JSON::Object::Ptr young =
      object_of(ok({"--json", "gc"}, "retention:\n  keep_last: 1\n  prune_grace: 1h\n"));
  EXPECT_EQ(young->getValue<std::size_t>("checkpoints_dropped"), 1u);
  EXPECT_EQ(young->getValue<std::size_t>("packed_objects_dropped"), 0u);
  EXPECT_TRUE(has_blob());
  // Past it: gone, and what is kept still restores.
  for (fs::directory_iterator it(store_ / "repo.git" / "objects" / "pack"), end; it != end; ++it) {
    fs::last_write_time(it->path(), std::time(nullptr) - 7200);
  }
  Poco::JSON::Object::Ptr old =
      object_of(ok({"--json", "gc"}, "retention:\n  keep_last: 1\n  prune_grace: 1h\n"));
  EXPECT_GT(old->getValue<std::size_t>("packed_objects_dropped"), 0u);
  EXPECT_FALSE(has_blob());
  write("f", "changed again");
  ok({"restore", "default"});
  EXPECT_EQ(testing_support::read_file(ws_ / "f"), "later");
  ok({"snapshot"});  // the stat cache does not name what is gone
  CommandResult fsck = run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

// Bytes that do not compress.
std::string noise(unsigned seed) {
  std::mt19937 gen(seed);
  std::string out(300 * 1024, '\0');
  for (char& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

TEST_F(CliTest, GcSizesTheStoreOnlyOnceAMaintenanceRunningHasEnded) {
  const std::string manual = "maintenance:\n  auto: false\n";
  write("small.txt", "small\n");
  write("big1", noise(1));
  ok({"snapshot", "--run", "old1"}, manual);
  fs::remove(ws_ / "big1");
  write("big2", noise(2));
  ok({"snapshot", "--run", "old2"}, manual);
  fs::remove(ws_ / "big2");
  ok({"snapshot", "--run", "new"}, manual);
  // A maintenance part-way: its pack written, the loose objects it holds not yet gone
  // (on disk, every object twice).
  fs::path objects = store_ / "repo.git" / "objects";
  fs::path copies = temp_ / "loose";
  std::vector<fs::path> loose;
  for (fs::recursive_directory_iterator it(objects), end; it != end; ++it) {
    std::string fanout = it->path().parent_path().filename().string();
    if (!fs::is_regular_file(it->path()) || fanout.size() != 2) continue;
    loose.push_back(fs::relative(it->path(), objects));
    fs::create_directories((copies / loose.back()).parent_path());
    fs::copy_file(it->path(), copies / loose.back());
  }
  ASSERT_FALSE(loose.empty());
  ok({"maintenance"}, manual);
  for (const fs::path& rel : loose) {
    if (fs::exists(objects / rel)) continue;
    fs::create_directories((objects / rel).parent_path());  // the maintenance removed it
    fs::copy_file(copies / rel, objects / rel);
  }
  int lock = ::open(fsnap::layout::maintenance_lock_file(store_).c_str(),
                    O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);

  std::string out;
  std::thread gc([&] {
    out = ok({"--json", "gc"}, manual + "retention:\n  max_size: 450KiB\n  prune_grace: 0s\n");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The maintenance ends: the loose objects go, then its lock.
  for (const fs::path& rel : loose) fs::remove(objects / rel);
  ::close(lock);
  gc.join();
  Poco::JSON::Array::Ptr dropped = object_of(out)->getArray("dropped_runs");
  ASSERT_EQ(dropped->size(), 1u) << "sized with each object once: " << out;
  EXPECT_EQ(dropped->getElement<std::string>(0), "old1");
}

TEST_F(CliTest, AStoreOverMaxSizeDropsItsOldestRunsWhole) {
  // Files that do not compress, one per run, gone again before the next run.
  write("small.txt", "small\n");
  write("big1", noise(1));
  ok({"snapshot", "--run", "old1"});
  fs::remove(ws_ / "big1");
  write("big2", noise(2));
  ok({"snapshot", "--run", "old2"});
  fs::remove(ws_ / "big2");
  ok({"snapshot", "--run", "new"});
  const std::string config = "retention:\n  max_size: 450KiB\n  prune_grace: 0s\n";
  Poco::JSON::Object::Ptr report = object_of(ok({"--json", "gc"}, config));
  Poco::JSON::Array::Ptr dropped = report->getArray("dropped_runs");
  ASSERT_EQ(dropped->size(), 1u);
  EXPECT_EQ(dropped->getElement<std::string>(0), "old1") << "the oldest run, and it is enough";
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  EXPECT_EQ(repo.runs(), (std::vector<std::string>{"new", "old2"}));
  // Under the limit now: the next gc drops nothing.
  EXPECT_EQ(object_of(ok({"--json", "gc"}, config))->getArray("dropped_runs")->size(), 0u);
  ok({"restore", "old2"});
  EXPECT_EQ(testing_support::read_file(ws_ / "big2"), noise(2));
  // However small the limit, the run of the newest checkpoint (the restore's safety
  // checkpoint) stays.
  std::string newest =
      fsnap::ShadowRepo::open(store_ / "repo.git", false).log("", 1).front().meta.run;
  ok({"--json", "gc"}, "retention:\n  max_size: 1\n  prune_grace: 0s\n");
  EXPECT_EQ(fsnap::ShadowRepo::open(store_ / "repo.git", false).runs(),
            (std::vector<std::string>{newest}));
}

TEST_F(CliTest, RunsCountEachRunsCallsAndFailures) {
  write("a", "1");
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Bash"});
  write("a", "2");
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c1", "--result", "ok"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
  write("a", "3");
  ok({"rollback", "c2", "--result", "exit 1"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c3", "--tool-name", "Bash"});
  Poco::JSON::Array::Ptr runs =
      parse_json(ok({"--json", "runs"})).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(runs->size(), 1u);
  Poco::JSON::Object::Ptr run = runs->getObject(0);
  // c3 has not ended: a step all the same (it was allowed to run).
  EXPECT_EQ(run->getValue<std::size_t>("calls"), 3u);
  EXPECT_EQ(run->getValue<std::size_t>("steps"), 3u);
  EXPECT_EQ(run->getValue<std::size_t>("failed_calls"), 1u);
  EXPECT_EQ(run->getValue<std::size_t>("rolled_back_calls"), 1u);
  EXPECT_EQ(run->getValue<std::size_t>("refused_calls"), 0u);
  EXPECT_TRUE(run->getValue<bool>("cost_exact"));
  // `states RUN` shows the same figures, and the status `runs` shows.
  std::string states = ok({"states", "default"});
  EXPECT_NE(states.find("3 calls: 3 steps (1 failed, 1 rolled back), 0 refused, 0 denied by the "
                        "agent; cost $0.0000"),
            std::string::npos)
      << states;
  Poco::JSON::Object::Ptr json =
      parse_json(ok({"--json", "states", "default"})).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(json->getValue<std::size_t>("steps"), 3u);
  EXPECT_EQ(json->getValue<std::string>("status"), run->getValue<std::string>("status"));
}

TEST_F(CliTest, DiffSessionShowsTheSlicesThatChangedBetweenTwoCheckpoints) {
  two_calls();
  // The first call's end adds the log of calls; the second appends to it.
  EXPECT_EQ(ok({"diff", "--session", "pre:c1", "post:c1"}), "A tool_invoked (1 item)\n");
  Poco::JSON::Object::Ptr d = object_of(ok({"--json", "diff", "--session", "post:c1", "post:c2"}));
  EXPECT_EQ(d->getObject("added")->size(), 0u);
  EXPECT_EQ(d->getObject("removed")->size(), 0u);
  Poco::JSON::Object::Ptr log = d->getObject("modified")->getObject("tool_invoked");
  ASSERT_TRUE(log);
  EXPECT_EQ(log->getValue<std::size_t>("before"), 1u);
  EXPECT_EQ(log->getValue<std::size_t>("after"), 2u);
  Poco::JSON::Array::Ptr changed = log->getArray("changed");
  ASSERT_EQ(changed->size(), 1u) << "only the appended call";
  EXPECT_EQ(changed->getObject(0)->getValue<std::size_t>("index"), 1u);
  EXPECT_TRUE(changed->getObject(0)->isNull("before"));
  EXPECT_EQ(changed->getObject(0)->getObject("after")->getValue<std::string>("result_summary"),
            "done c2");
  EXPECT_EQ(ok({"diff", "--session", "post:c2", "post:c2"}), "") << "nothing changed";
  CommandResult one = shadowbox({"diff", "--session", "post:c2"});
  EXPECT_EQ(one.exit_code, 2) << "a usage error";
  EXPECT_NE(one.err.find("give REF and REF2"), std::string::npos) << one.err;
}

TEST_F(CliTest, RestoreSlicesPutsBackTheNamedSessionSlicesOnly) {
  two_calls();
  Poco::JSON::Object::Ptr restored =
      object_of(ok({"--json", "restore", "pre:c2", "--slices", "tool_invoked"}));
  std::string recorded = restored->getObject("recorded")->getValue<std::string>("id");
  EXPECT_EQ(testing_support::read_file(ws_ / "a"), "c2") << "the files stay as they are";
  // The log of calls is back to what it was before c2; nothing else of the session moved.
  EXPECT_EQ(ok({"diff", "--session", "pre:c2", recorded}), "");
  EXPECT_EQ(ok({"diff", "--session", "post:c2", recorded}),
            "M tool_invoked (2 -> 1 item, 1 changed)\n");
  expect_error(shadowbox({"restore", "pre:c2", "--slices", "no_such_slice"}),
               "no slice type 'no_such_slice'");
}

TEST_F(CliTest, ACheckpointRingInTheConfigIsSaidToChangeNothingHere) {
  write("a", "1");
  CommandResult ring = shadowbox({"snapshot"}, "session:\n  checkpoint_ring: 7\n");
  EXPECT_EQ(ring.exit_code, 0) << ring.err;
  EXPECT_NE(ring.err.find("sets session.checkpoint_ring, which only programs that embed "
                          "shadowbox read"),
            std::string::npos)
      << ring.err;
  CommandResult plain = shadowbox({"snapshot"}, "session:\n  checkpoint_ring: 100\n");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find("checkpoint_ring"), std::string::npos) << plain.err;
}

TEST_F(CliTest, ASessionDiffComparesAWindowedSliceByPositionAndCountsWhatItsWindowDropped) {
  const std::string config = "session:\n  windows: {tool_invoked: 3}\n";
  write("a", "0");
  for (int i = 1; i <= 4; ++i) {
    std::string call = "c" + std::to_string(i);
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", call, "--tool-name", "Bash"}, config);
    write("a", call);
    ok({"snapshot", "--phase", "post_tool", "--tool-call-id", call}, config);
  }
  // post:c3 holds c1 c2 c3 at positions 0-2; post:c4 holds c2 c3 c4 at 1-3. Compared
  // index by index all three would differ; by position only c4 is new, c1 was dropped.
  Poco::JSON::Object::Ptr diff =
      object_of(ok({"diff", "--session", "post:c3", "post:c4", "--json"}, config));
  Poco::JSON::Object::Ptr slice = diff->getObject("modified")->getObject("tool_invoked");
  ASSERT_TRUE(slice) << "tool_invoked changed";
  EXPECT_EQ(slice->getValue<std::size_t>("before"), 3u);
  EXPECT_EQ(slice->getValue<std::size_t>("after"), 3u);
  EXPECT_EQ(slice->getValue<std::size_t>("dropped"), 1u);
  Poco::JSON::Array::Ptr changed = slice->getArray("changed");
  ASSERT_EQ(changed->size(), 1u);
  Poco::JSON::Object::Ptr change = changed->getObject(0);
  EXPECT_EQ(change->getValue<std::size_t>("index"), 3u);
  EXPECT_TRUE(change->get("before").isEmpty());
  EXPECT_EQ(change->getObject("after")->getValue<std::string>("tool_call_id"), "c4");
  std::string text = ok({"diff", "--session", "post:c3", "post:c4"}, config);
  EXPECT_NE(text.find("M tool_invoked (3 -> 3 items, 1 changed, 1 dropped by its window)"),
            std::string::npos)
      << text;
  // Without a window nothing is dropped and positions are indexes.
  Poco::JSON::Object::Ptr early =
      object_of(ok({"diff", "--session", "post:c1", "post:c2", "--json"}, config));
  EXPECT_EQ(
      early->getObject("modified")->getObject("tool_invoked")->getValue<std::size_t>("dropped"),
      0u);
}

TEST_F(CliTest, ASessionWindowKeepsTheNewestCallsAndRunsStillCountsThemAll) {
  const std::string config = "session:\n  windows: {tool_invoked: 10}\n";
  write("a", "0");
  for (int i = 1; i <= 11; ++i) {
    std::string call = "c" + std::to_string(i);
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", call, "--tool-name", "Bash"}, config);
    write("a", call);
    ok({"snapshot", "--phase", "post_tool", "--tool-call-id", call}, config);
  }
  auto logged = [&](const std::string& ref) {
    std::vector<std::string> ids;
    Poco::JSON::Array::Ptr slices = object_of(ok({"show", ref, "--json"}))
                                        ->getObject("ledger")
                                        ->getObject("session")
                                        ->getArray("slices");
    for (std::size_t i = 0; i < slices->size(); ++i) {
      Poco::JSON::Object::Ptr slice = slices->getObject(static_cast<unsigned>(i));
      if (slice->getValue<std::string>("type") != "tool_invoked") continue;
      Poco::JSON::Array::Ptr items = slice->getArray("items");
      for (std::size_t j = 0; j < items->size(); ++j) {
        ids.push_back(
            items->getObject(static_cast<unsigned>(j))->getValue<std::string>("tool_call_id"));
      }
    }
    return ids;
  };
  // Every process read the run's session back from its tree and slid the window on.
  EXPECT_EQ(logged("post:c10").size(), 10u);
  std::vector<std::string> newest;
  for (int i = 2; i <= 11; ++i) newest.push_back("c" + std::to_string(i));
  EXPECT_EQ(logged("post:c11"), newest) << "exactly the newest 10, oldest first";
  // The run's figures come from its tally, not from what the window kept.
  Poco::JSON::Array::Ptr runs =
      parse_json(ok({"--json", "runs"}, config)).extract<Poco::JSON::Array::Ptr>();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->getObject(0)->getValue<std::size_t>("calls"), 11u);
  EXPECT_EQ(runs->getObject(0)->getValue<std::size_t>("steps"), 11u);
  expect_error(shadowbox({"snapshot"}, "session:\n  windows: {no_such_slice: 3}\n"),
               "no_such_slice");
}

}  // namespace

TEST_F(CliTest, StatesShowsTheLifecycleAndTheMovesOfARun) {
  // The machine alone, as text and as a Mermaid diagram.
  std::string machine = ok({"states"});
  EXPECT_NE(machine.find("    running (initial)\n"), std::string::npos) << machine;
  EXPECT_NE(machine.find("agent_ended [outcome == complete]"), std::string::npos) << machine;
  std::string mermaid = ok({"states", "--mermaid"});
  EXPECT_EQ(mermaid.rfind("stateDiagram-v2\n    [*] --> created\n", 0), 0u) << mermaid;
  EXPECT_NE(mermaid.find("    state ended {\n"), std::string::npos) << mermaid;
  EXPECT_NE(mermaid.find("    active --> halted: halt\n"), std::string::npos) << mermaid;

  // A run that ended with status 3: started, then failed.
  CommandResult run =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "life", "--", "sh", "-c", "exit 3"});
  ASSERT_EQ(run.exit_code, 3) << run.err;
  Poco::JSON::Object::Ptr states = object_of(ok({"--json", "states", "life"}));
  EXPECT_EQ(states->getValue<std::string>("current"), "failed");
  Poco::JSON::Array::Ptr moves = states->getArray("moves");
  ASSERT_EQ(moves->size(), 2u);
  EXPECT_EQ(moves->getObject(0)->getValue<std::string>("from"), "created");
  EXPECT_EQ(moves->getObject(0)->getValue<std::string>("to"), "running");
  EXPECT_EQ(moves->getObject(0)->getValue<std::string>("event"), "agent_started");
  EXPECT_EQ(moves->getObject(1)->getValue<std::string>("to"), "failed");
  EXPECT_EQ(moves->getObject(1)->getValue<std::string>("event"), "agent_ended");
  EXPECT_NE(moves->getObject(1)->getValue<std::string>("reason").find("3"), std::string::npos);
  EXPECT_FALSE(moves->getObject(1)->getValue<std::string>("at").empty());
  // The run's moves alone, one a line within 100 columns; the machine when asked for.
  std::string text = ok({"states", "life"});
  EXPECT_EQ(
      text.rfind("run life, now failed:\n  0 calls: 0 steps (0 failed, 0 rolled back), 0 refused, "
                 "0 denied by the agent; cost $0.0000\nAT (UTC)             FROM         TO       "
                 "EVENT  ",
                 0),
      0u)
      << text;
  EXPECT_NE(text.find("  created  ->  running  agent_started  run started: sh -c exit 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  running  ->  failed   agent_ended    the agent exited with status 3\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("transitions:"), std::string::npos) << text;
  std::string both = ok({"states", "life", "--machine"});
  EXPECT_EQ(both.rfind("states of the run lifecycle:\n", 0), 0u) << both;
  EXPECT_NE(both.find("agent_ended [outcome == complete]"), std::string::npos) << both;
  EXPECT_NE(both.find("\n\nrun life, now failed:\n"), std::string::npos) << both;
  std::string styled = ok({"states", "life", "--mermaid"});
  EXPECT_NE(styled.find("    class running,failed visited\n    class failed current\n"),
            std::string::npos)
      << styled;

  expect_error(shadowbox({"states", "nosuchrun"}), "run nosuchrun has no record");
  expect_usage_error(shadowbox({"states", "../bad"}), "");
}

namespace {

// `shadowbox diff | head`: a reader that stops reading is no error. shadowbox ends
// quietly with the status a death by SIGPIPE gives (libgit2 ignores the signal, so the
// write fails instead), as git does.
TEST_F(CliTest, AReaderThatStopsReadingEndsTheOutputQuietly) {
  for (int i = 0; i < 200; ++i) write("f" + std::to_string(i), std::string(100, 'x'));
  ok({"snapshot", "--tag", "empty-before"});
  for (int i = 0; i < 200; ++i) write("f" + std::to_string(i), std::string(100, 'y'));
  fs::path err = temp_ / "stderr";
  int status =
      testing_support::run_with_reader_gone({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                             store_.string(), "diff", "empty-before"},
                                            err);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGPIPE);
  EXPECT_EQ(testing_support::read_file(err), "");
}

}  // namespace
