// The shell completions of `shadowbox completion bash|zsh|fish`: the generated bash
// script sourced in a real bash and asked, as bash asks a completion function
// (COMP_WORDS, COMP_CWORD), what it offers after `shadowbox `, for a REF, a RUN and the
// closed values of an option or operand; the run ids and checkpoints a real store holds
// (`completion --words`); the zsh and fish scripts parsed by their shells, and fish's
// asked too (each where that shell is installed).
#include <algorithm>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::TempDir;
using testing_support::write_file;
using Words = std::set<std::string>;

Words lines_of(const std::string& text) {
  Words out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// The commands `shadowbox --help` lists: the first word of each line of "commands:".
Words help_commands() {
  CommandResult help = run_command({SHADOWBOX_BIN, "--help"}, std::nullopt, {"SHADOWBOX_CONFIG="});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  Words out;
  std::istringstream in(help.out.substr(help.out.find("\ncommands:\n") + 11));
  for (std::string line; std::getline(in, line) && !line.empty();) {
    if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ') {
      out.insert(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return out;
}

bool installed(const std::string& shell) {
  return run_command({"sh", "-c", "command -v " + shell}).exit_code == 0;
}

// A workspace and store, and the completion scripts of this build.
class CompletionTest : public ::testing::Test {
 protected:
  CompletionTest() : ws_(temp_ / "ws"), store_(temp_ / "store") {
    fs::create_directories(ws_);
    for (const char* shell : {"bash", "zsh", "fish"}) {
      CommandResult script = shadowbox({"completion", shell});
      EXPECT_EQ(script.exit_code, 0) << script.err;
      EXPECT_EQ(script.err, "");
      write_file(temp_ / (std::string("completion.") + shell), script.out);
    }
  }

  CommandResult shadowbox(std::vector<std::string> args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }

  void ok(std::vector<std::string> args) {
    CommandResult r = shadowbox(args);
    ASSERT_EQ(r.exit_code, 0) << args.at(0) << ": " << r.err;
  }

  // What bash's completion offers for the last of words (the line as bash splits it, the
  // program first), asked in the workspace as bash asks it: _shadowbox with COMP_WORDS and
  // COMP_CWORD set, COMPREPLY printed.
  // With first, a script sourced before it (Debian's bash-completion).
  Words bash_offers(const std::vector<std::string>& words, const std::string& first = "") {
    std::vector<std::string> argv = {
        "bash",
        "--norc",
        "-c",
        (first.empty() ? "" : "source " + first + " || exit 7; ") +
            "source \"$1\" || exit 9; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
            "COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; _shadowbox || exit 8; "
            "printf '%s\\n' \"${COMPREPLY[@]}\"",
        "bash",
        (temp_ / "completion.bash").string()};
    argv.insert(argv.end(), words.begin(), words.end());
    CommandResult r = run_command(argv, ws_, {"SHADOWBOX_CONFIG="}, "", std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return lines_of(r.out);
  }

  // The same, on this test's workspace and store: shadowbox --workspace W --store S words...
  Words bash_offers_here(const std::vector<std::string>& words) {
    std::vector<std::string> line = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    line.insert(line.end(), words.begin(), words.end());
    return bash_offers(line);
  }

  // A store with calls c1 (pre and post) and c2 (pre only) in run default, a checkpoint
  // tagged first, and run r2.
  void some_checkpoints() {
    write_file(ws_ / "a.txt", "a");
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--tool-name", "Write"});
    ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c1"});
    ok({"snapshot", "--tag", "first"});
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
    ok({"snapshot", "--run", "r2"});
  }

  TempDir temp_;
  fs::path ws_;
  fs::path store_;
};

TEST_F(CompletionTest, BashOffersEveryCommandOfHelpAndNoMore) {
  Words commands = help_commands();
  ASSERT_GT(commands.size(), 20u);
  EXPECT_TRUE(commands.count("completion"));
  EXPECT_EQ(bash_offers({"shadowbox", ""}), commands);
  // After the global options too, and only those that begin with what is typed.
  EXPECT_EQ(bash_offers({"shadowbox", "--json", "--store", "/tmp", "re"}),
            (Words{"recover", "report", "restore", "resume", "rewind"}));
  EXPECT_EQ(bash_offers({"shadowbox", "--"}),
            (Words{"--workspace", "--store", "--config", "--json", "--version", "--help"}));
  EXPECT_EQ(bash_offers({"shadowbox", "help", ""}), commands);
}

TEST_F(CompletionTest, BashOffersTheCheckpointsOfTheStoreForARef) {
  some_checkpoints();
  Words refs{"pre:c1", "post:c1", "pre:c2", "first", "run:default", "run:r2"};
  EXPECT_EQ(bash_offers_here({"restore", ""}), refs);
  EXPECT_EQ(bash_offers_here({"show", "p"}), (Words{"pre:c1", "post:c1", "pre:c2"}));
  EXPECT_EQ(bash_offers_here({"diff", "first", ""}), refs) << "REF2 is a checkpoint too";
  EXPECT_EQ(bash_offers_here({"rewind", "default", "--to", ""}), refs);
  // bash splits pre:c1 at ':' (COMP_WORDBREAKS): the words are joined again, and what is
  // offered replaces the part after the ':'.
  EXPECT_EQ(bash_offers_here({"restore", "pre", ":"}), (Words{"c1", "c2"}));
  EXPECT_EQ(bash_offers_here({"restore", "post", ":", "c"}), (Words{"c1"}));
  // The paths after REF are the workspace's files.
  EXPECT_EQ(bash_offers_here({"restore", "first", "--", "a"}), (Words{"a.txt"}));
  EXPECT_EQ(bash_offers_here({"undo", ""}), (Words{"c1", "c2"})) << "a CALL_ID";
}

TEST_F(CompletionTest, BashOffersTheRunsOfTheStoreForARun) {
  some_checkpoints();
  fs::create_directories(store_ / "runs" / "started-only");  // a run with no checkpoint yet
  Words runs{"default", "r2", "started-only"};
  EXPECT_EQ(bash_offers_here({"log", "--run", ""}), runs);
  EXPECT_EQ(bash_offers_here({"log", "--run", "=", "r"}), (Words{"r2"}));
  EXPECT_EQ(bash_offers_here({"export", ""}), runs);
  EXPECT_EQ(bash_offers_here({"resume", "r"}), (Words{"r2"}));
  EXPECT_EQ(bash_offers_here({"fleet", "push", ""}), runs);
  // The store named on the line is the one asked: another has no runs.
  EXPECT_EQ(bash_offers({SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                         (temp_ / "none").string(), "abort", ""}),
            Words{});
}

TEST_F(CompletionTest, BashOffersTheSameWithBashCompletionLoaded) {
  const std::string bash_completion = "/usr/share/bash-completion/bash_completion";
  if (!fs::exists(bash_completion)) {
    GTEST_SKIP() << "bash-completion is not installed: only plain bash is checked";
  }
  some_checkpoints();
  std::vector<std::string> line = {SHADOWBOX_BIN,   "--workspace", ws_.string(), "--store",
                                   store_.string(), "restore",     "pre",        ":"};
  EXPECT_EQ(bash_offers(line, bash_completion), (Words{"c1", "c2"}));
  EXPECT_EQ(bash_offers({"shadowbox", ""}, bash_completion), help_commands());
  EXPECT_EQ(bash_offers({"shadowbox", "daemon", ""}, bash_completion),
            (Words{"status", "stop", "serve"}));
}

TEST_F(CompletionTest, BashOffersTheClosedValuesOfAnOptionOrOperand) {
  EXPECT_EQ(bash_offers({"shadowbox", "snapshot", "--phase", ""}),
            (Words{"pre_tool", "post_tool", "checkpoint", "manual"}));
  EXPECT_EQ(bash_offers({"shadowbox", "snapshot", "--phase", "=", "p"}),
            (Words{"pre_tool", "post_tool"}));
  EXPECT_EQ(bash_offers({"shadowbox", "run", "--agent", ""}),
            (Words{"claude-code", "claude-sdk", "codex", "gemini"}));
  EXPECT_EQ(bash_offers({"shadowbox", "hook", ""}),
            (Words{"claude-code", "claude-sdk", "codex", "gemini"}));
  EXPECT_EQ(bash_offers({"shadowbox", "hooks", "--scope", ""}),
            (Words{"project", "shared", "user"}));
  EXPECT_EQ(bash_offers({"shadowbox", "hooks", ""}), (Words{"install", "uninstall"}));
  EXPECT_EQ(bash_offers({"shadowbox", "resume", "r1", "--validation", ""}),
            (Words{"strict", "relaxed", "none"}));
  EXPECT_EQ(bash_offers({"shadowbox", "daemon", ""}), (Words{"status", "stop", "serve"}));
  EXPECT_EQ(bash_offers({"shadowbox", "fleet", ""}), (Words{"runs", "push"}));
  EXPECT_EQ(bash_offers({"shadowbox", "completion", ""}), (Words{"bash", "zsh", "fish"}));
  EXPECT_EQ(bash_offers({"shadowbox", "completion", "--words", ""}),
            (Words{"runs", "refs", "calls"}));
  // A free value offers nothing; a command's options are its own and the global ones.
  EXPECT_EQ(bash_offers({"shadowbox", "snapshot", "--tag", ""}), Words{});
  Words log_options = bash_offers({"shadowbox", "log", "-"});
  EXPECT_EQ(log_options, (Words{"--run", "-n", "--max-count", "--checkpoints", "--workspace",
                                "--store", "--config", "--json", "--version", "--help"}));
}

TEST_F(CompletionTest, BashOffersFilesDirectoriesAndPrograms) {
  write_file(ws_ / "notes.txt", "n");
  fs::create_directories(ws_ / "nested");
  EXPECT_EQ(bash_offers({"shadowbox", "--config", "n"}), (Words{"notes.txt", "nested"}));
  EXPECT_EQ(bash_offers({"shadowbox", "--workspace", "n"}), (Words{"nested"}));
  EXPECT_EQ(bash_offers({"shadowbox", "log", "--store", "n"}), (Words{"nested"}));
  // run: the agent is a program, what follows it is the agent's (files).
  EXPECT_TRUE(bash_offers({"shadowbox", "run", "--", "bas"}).count("bash"));
  EXPECT_TRUE(bash_offers({"shadowbox", "run", "ba"}).count("bash"));
  EXPECT_EQ(bash_offers({"shadowbox", "run", "--", "claude", "-p", "no"}), (Words{"notes.txt"}));
}

TEST_F(CompletionTest, WordsAreQuietAndEmptyWithoutAStore) {
  for (const char* kind : {"runs", "refs", "calls"}) {
    CommandResult r = shadowbox({"completion", "--words", kind});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
  }
  // Nor with a workspace that is no directory, or a config that does not parse.
  CommandResult nowhere = run_command(
      {SHADOWBOX_BIN, "--workspace", (temp_ / "missing").string(), "completion", "--words", "runs"},
      ws_, {"SHADOWBOX_CONFIG="});
  EXPECT_EQ(nowhere.exit_code, 0);
  EXPECT_EQ(nowhere.out + nowhere.err, "");
  some_checkpoints();
  write_file(ws_ / ".shadowbox.yaml", "capture: [unclosed\n");
  CommandResult broken = shadowbox({"completion", "--words", "runs"});
  EXPECT_EQ(broken.exit_code, 0);
  EXPECT_EQ(broken.out, "default\nr2\n");
  EXPECT_EQ(broken.err, "");
  CommandResult json = shadowbox({"--json", "completion", "--words", "calls"});
  EXPECT_EQ(json.out, "[\"c2\",\"c1\"]\n") << "newest first";
}

TEST_F(CompletionTest, WordsLeaveOutWhatAShellWouldExpand) {
  some_checkpoints();
  // A tag a store written by someone else may hold: git takes it as a ref name.
  ok({"snapshot", "--tag", "$(touch${IFS}pwned)"});
  CommandResult refs = shadowbox({"completion", "--words", "refs"});
  EXPECT_EQ(refs.out.find("$("), std::string::npos) << refs.out;
  EXPECT_NE(refs.out.find("first\n"), std::string::npos) << refs.out;
  bash_offers_here({"show", ""});
  EXPECT_FALSE(fs::exists(ws_ / "pwned"));
}

TEST_F(CompletionTest, UsageErrors) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"completion"},
                                             {"completion", "tcsh"},
                                             {"completion", "--words", "tags"},
                                             {"completion", "bash", "--words", "runs"}}) {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_NE(r.err.find("usage: shadowbox completion"), std::string::npos) << r.err;
  }
  EXPECT_NE(shadowbox({"completion", "tcsh"}).err.find("'tcsh'"), std::string::npos);
}

TEST_F(CompletionTest, ZshScriptParsesAndAsksTheStoreForWords) {
  if (!installed("zsh")) GTEST_SKIP() << "zsh is not installed: its script is not checked";
  fs::path script = temp_ / "completion.zsh";
  CommandResult r = run_command({"zsh", "-n", script.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // What an _arguments action of the script offers, asked as _arguments asks it (compadd's
  // options first, then the kind), with compadd and compdef, which only a completion
  // widget has, standing in as functions: compadd prints the words it is given.
  some_checkpoints();
  auto zsh_words = [&](const std::string& kind) {
    CommandResult words =
        run_command({"zsh", "-f", "-c",
                     "compdef() { :; }; compadd() { print -rl -- \"${(@P)${@[-1]}}\"; }; "
                     "source $1 || exit 9; _shadowbox_line=($2 --workspace $3 --store $4 show ''); "
                     "_shadowbox_words -J group -X explanation $5",
                     "zsh", script.string(), SHADOWBOX_BIN, ws_.string(), store_.string(), kind},
                    ws_, {"SHADOWBOX_CONFIG="});
    EXPECT_EQ(words.exit_code, 0) << words.err;
    EXPECT_EQ(words.err, "");
    return lines_of(words.out);
  };
  EXPECT_EQ(zsh_words("refs"),
            (Words{"pre:c1", "post:c1", "pre:c2", "first", "run:default", "run:r2"}));
  EXPECT_EQ(zsh_words("runs"), (Words{"default", "r2"}));
}

TEST_F(CompletionTest, FishScriptParsesAndOffersCommandsAndRefs) {
  if (!installed("fish")) GTEST_SKIP() << "fish is not installed: its script is not checked";
  fs::path script = temp_ / "completion.fish";
  CommandResult parsed = run_command({"fish", "--no-config", "-n", script.string()});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
  EXPECT_EQ(parsed.err, "");
  some_checkpoints();
  // fish completes a command by its name: shadowbox, found on the PATH as this build's.
  fs::path bin = temp_ / "bin";
  fs::create_directories(bin);
  fs::create_symlink(SHADOWBOX_BIN, bin / "shadowbox");
  auto fish_offers = [&](const std::string& line) {
    CommandResult r =
        run_command({"fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]",
                     script.string(), line},
                    ws_, {"SHADOWBOX_CONFIG=", "PATH=" + bin.string() + ":/usr/bin:/bin"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Words words;
    for (const std::string& l : lines_of(r.out)) words.insert(l.substr(0, l.find('\t')));
    return words;
  };
  EXPECT_EQ(fish_offers("shadowbox "), help_commands());
  std::string here = "shadowbox --workspace " + ws_.string() + " --store " + store_.string();
  EXPECT_EQ(fish_offers(here + " show "),
            (Words{"pre:c1", "post:c1", "pre:c2", "first", "run:default", "run:r2"}));
  EXPECT_EQ(fish_offers(here + " log --run "), (Words{"default", "r2"}));
  EXPECT_EQ(fish_offers("shadowbox snapshot --phase "),
            (Words{"pre_tool", "post_tool", "checkpoint", "manual"}));
}

}  // namespace
