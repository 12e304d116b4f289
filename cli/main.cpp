// shadowbox — make every step of a coding agent atomic, reversible and inspectable.
//
// Exit status: 0 on success, 1 on an error (one line on stderr), 2 on a usage error.
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "build_commit.hpp"
#include "commands.hpp"
#include "context.hpp"
#include "embed/agent_slices.hpp"
#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "fsnap/user_umask.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "man_page.hpp"
#include "overview.hpp"
#include "runs/run_meta.hpp"
#include "version.hpp"

namespace cli {

namespace {

// What --agent and hook's AGENT take (hooks::parse_agent_kind reads them).
constexpr const char* kAgentKinds = "claude-code|claude-sdk|codex|gemini";

// The limits of `run` and `resume` (each overrides its policy.* key).
const OptionSpec kMaxCost{"--max-cost-usd", nullptr, "USD",
                          "stop the agent once it has spent this much"};
const OptionSpec kMaxSteps{"--max-steps", nullptr, "N",
                           "let N tool calls run (steps), then stop; a call refused at a limit "
                           "is no step (docs/figures.md)"};
// resume and recover continue the run's count.
const OptionSpec kMaxStepsInAll{"--max-steps", nullptr, "N",
                                "N steps in all, those the run made before included (a run "
                                "halted at 3 and resumed with 6 runs 3 more calls)"};
const OptionSpec kMaxRetries{"--max-retries", nullptr, "N", "stop after N failed tool calls"};
const OptionSpec kTimeout{"--timeout", nullptr, "DUR", "stop after this long (90s, 10m, 2h)"};
// resume and recover: going on with a conversation that was over.
const OptionSpec kReopen{"--reopen", nullptr, nullptr,
                         "resume even though the agent session ended or the run is complete "
                         "(the other checks still apply)"};

}  // namespace

// `help [COMMAND]`: the overview, or one command's help (`COMMAND --help`); `help --man`:
// the manual page.
int cmd_help(const GlobalOptions& /*options*/, const CommandArgs& args) {
  if (args.has("--man")) {
    if (!args.operands().empty()) {
      throw args.usage_error("--man prints the whole manual page: name no COMMAND");
    }
    std::cout << man_page();
    return 0;
  }
  if (args.operands().empty()) {
    print_overview(std::cout);
    return 0;
  }
  for (const Command& c : all_commands()) {
    if (args.operands()[0] == c.syntax.name) {
      std::cout << command_help(c.syntax);
      return 0;
    }
  }
  throw UsageError("no command named " + fsnap::quote_input(args.operands()[0]));
}

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      {{"init", "create or open the workspace's store; print its path"}, cmd_init},
      {{"snapshot",
        "checkpoint the whole workspace (pre_tool/post_tool: a boundary of an external tool call)",
        {{"--tag", nullptr, "T", "name the checkpoint (an existing tag is refused)"},
         {"--force", nullptr, nullptr, "move an existing --tag to this checkpoint"},
         {"--label", nullptr, "TEXT",
          "checkpoint or manual: free text kept with it (any characters, repeats allowed; "
          "not a ref)"},
         {"--phase", nullptr, "PHASE", "pre_tool, post_tool, checkpoint or manual (default)",
          ValueKind::kChoice, "pre_tool|post_tool|checkpoint|manual"},
         {"--tool-call-id", nullptr, "ID", "the tool call (needed by pre_tool and post_tool)"},
         {"--tool-name", nullptr, "NAME", "the tool's name"},
         {"--parent-call-id", nullptr, "ID",
          "pre_tool: the call this one runs inside of (its failure puts this one's "
          "changes back too)",
          ValueKind::kCallId},
         {"--run", nullptr, "RUN", "the run (default: default)", ValueKind::kRun},
         {"--input", nullptr, "TEXT", "pre_tool: the call's input, kept in the ledger"},
         {"--result", nullptr, "TEXT", "post_tool, checkpoint: its result, kept in the ledger"}}},
       cmd_snapshot},
      {{"restore",
        "make the workspace (and the run's STATE slices) exactly REF, after a safety "
        "checkpoint; with -- PATH..., only those paths",
        {{"--dry-run", nullptr, nullptr, "print what would change; change nothing"},
         {"--run", nullptr, "RUN", "the run whose session is restored (default: REF's)",
          ValueKind::kRun},
         {"--slices", nullptr, "TYPE,...",
          "restore only these session slices (LOG ones too), not the files nor other slices"}},
        {{"REF", true, false, "the checkpoint to restore (see REF below --help)", ValueKind::kRef},
         {"PATH", false, true,
          "only these files or directories (relative to the workspace, or absolute inside "
          "it), as git restore --source=REF does: each becomes exactly REF's, what REF "
          "lacks below it is removed, every other path and the session slices stay as they "
          "are",
          ValueKind::kPath}}},
       cmd_restore},
      {{"rollback",
        "the failure of an external tool call: roll it back to its pre_tool checkpoint (unless "
        "the config keeps it, or a later change would be undone) and record the failure",
        {{"--result", nullptr, "TEXT", "the failure, kept in the ledger (default: failed)"},
         {"--run", nullptr, "RUN", "the run of the call (default: default)", ValueKind::kRun}},
        {{"CALL_ID", true, false, "the tool call id given to snapshot --phase pre_tool",
          ValueKind::kCallId}}},
       cmd_rollback},
      {{"undo",
        "reverse one ended tool call's file changes and keep every later change (a three-way "
        "merge, text files line by line); refused, changing nothing, where a later change is in "
        "the way; recorded as tool call undo-CALL_ID, which undo reverses in turn. Files only: "
        "the run's session slices stay as they are",
        {{"--run", nullptr, "RUN", "the run of the call (default: the run of pre:CALL_ID)",
          ValueKind::kRun}},
        {{"CALL_ID", true, false, "the tool call whose changes are reversed", ValueKind::kCallId}}},
       cmd_undo},
      {{"export",
        "write a run into the git repository the workspace is in, as a new branch on top of "
        "HEAD: one commit per tool call that changed files, with its tool, input, call id, "
        "outcome and cost; HEAD, the index, the work tree and ignored files are left alone",
        {{"--branch", nullptr, "NAME", "the branch to make (needed)"},
         {"--force", nullptr, nullptr, "replace an existing branch of that name"}},
        {{"RUN", true, false, "the run (runs lists them; the CLI's own is default)",
          ValueKind::kRun}}},
       cmd_export},
      {{"log",
        "what the runs did, newest first: a row per tool call (its checkpoints paired) with "
        "its tool, input and outcome (ok, failed, rolled back, refused by a shadowbox limit, "
        "denied by the agent's permissions, no outcome, not ended), a row per checkpoint of no "
        "call; CALL/CHECKPOINT is what undo ID, restore pre:ID, show post:ID, rewind --to "
        "pre:ID and restore CHECKPOINT take",
        {{"--run", nullptr, "RUN", "only this run's", ValueKind::kRun},
         {"--max-count", "-n", "N", "at most N rows (with --checkpoints or --json: checkpoints)"},
         {"--checkpoints", nullptr, nullptr,
          "one line per checkpoint, with its commit, phase and the call's outcome (what --json "
          "lists)"}}},
       cmd_log},
      {{"show",
        "metadata, changed paths and ledger record of a checkpoint",
        {},
        {{"REF", true, false, "the checkpoint", ValueKind::kRef}}},
       cmd_show},
      {{"diff",
        "unified diff from REF to REF2 (default: the live workspace)",
        {{"--name-status", nullptr, nullptr, "one line per changed path instead of the patch"},
         {"--session", nullptr, nullptr,
          "the slices of the session snapshots added (A), removed (D) and modified (M) "
          "from REF to REF2"}},
        {{"REF", true, false, "from this checkpoint", ValueKind::kRef},
         {"REF2", false, false, "to this checkpoint (default: the live workspace)",
          ValueKind::kRef}}},
       cmd_diff},
      {{"report",
        "write one self-contained HTML page of RUN that opens from disk with no network: its "
        "summary and the commands to resume, rewind or inspect it, a timeline of its tool calls "
        "(tool, input, duration, outcome) with files changed between calls, resumes and halts, "
        "each call's diff (cut at 8 KiB, 1 MiB in all) and ledger record collapsed, its steps and "
        "cost over time against its limits, and its lifecycle moves (docs/report.md); prints "
        "the file's path; --json prints the same data",
        {{"--output", "-o", "FILE",
          "write the page to FILE (- for stdout; default shadowbox-report-RUN.html in the "
          "current directory); a file that exists is left alone",
          ValueKind::kFile},
         {"--force", nullptr, nullptr, "replace FILE if it exists"}},
        {{"RUN", true, false, "the run (runs lists them)", ValueKind::kRun}}},
       cmd_report},
      {{"path", "print the shadow repository's git directory"}, cmd_path},
      {{"gc", "apply the config's retention limits, prune unreferenced objects and pack the rest"},
       cmd_gc},
      {{"maintenance",
        "pack the store's loose objects into a new pack, merge the small packs "
        "geometrically (never a large one to take in a few objects) and apply the "
        "retention limits (commands start it by themselves, detached: when due, and when "
        "an agent's run or session ends)",
        {{"--auto", nullptr, nullptr,
          "only if due (maintenance.loose_objects, .max_packs), and no retention"},
         {"--background", nullptr, nullptr,
          "at the lowest CPU and I/O priority, as the commands start it, so that the "
          "boundaries of a run beside it do not wait for it"}}},
       cmd_maintenance},
      {{"daemon",
        "the store's watch daemon, which the commands that capture start and ask (see watch.* "
        "in the config)",
        {},
        {{"status|stop|serve", true, false,
          "show it (memory, directories watched); end it; or run one in the foreground",
          ValueKind::kChoice}}},
       cmd_daemon},
      {{"hook",
        "handle one agent hook event (JSON on stdin); the workspace is --workspace, else "
        "found (as without --workspace) from $CLAUDE_PROJECT_DIR, else from the event's cwd",
        {{"--run", nullptr, "RUN",
          "record into this run (default: $SHADOWBOX_RUN, else each agent session its own run, "
          "session-<session id>)",
          ValueKind::kRun},
         {"--shared", nullptr, nullptr,
          "the hook of a project's shared settings (hooks install --scope shared): it "
          "stands aside only for the project's local shadowbox hooks"}},
        {{"AGENT", true, false, "claude-code, claude-sdk, codex or gemini", ValueKind::kChoice,
          kAgentKinds}}},
       nullptr,
       cmd_hook},
      {{"hooks",
        "add shadowbox's hooks to Claude Code's settings, or remove only those (and a "
        "settings file install created, once nothing else is in it)",
        {{"--scope", nullptr, "SCOPE",
          "project (default): the workspace's .claude/settings.local.json, this machine's "
          "own (the hooks name this program and the store); shared: its "
          ".claude/settings.json, which a team commits (`shadowbox` from each one's PATH, "
          "each clone its own store); user: ~/.claude/settings.json, every project its own "
          "store",
          ValueKind::kChoice, "project|shared|user"}},
        {{"install|uninstall", true, false, "add or remove the hooks", ValueKind::kChoice}}},
       cmd_hooks},
      {{"run",
        "run an agent under shadowbox with an ephemeral HOME whose session data is preserved, "
        "within the given limits and the repeat guard (config policy.repeat: the same tool "
        "call with the same input is denied the 3rd time in a row and stops the run, `loop`, "
        "the 4th); exit status 3 when one stops it",
        {{"--run-id", nullptr, "ID", "name the run (default: a new id)", ValueKind::kNewRun},
         {"--agent", nullptr, "KIND",
          "claude-code, claude-sdk (an application embedding Claude Code, or a script "
          "starting an agent), codex or gemini (default: from CMD's name: claude, codex, "
          "gemini)",
          ValueKind::kChoice, kAgentKinds},
         kMaxCost,
         kMaxSteps,
         kMaxRetries,
         kTimeout},
        {{"CMD", true, false, "the agent (claude, codex, gemini)", ValueKind::kProgram},
         {"ARGS", false, true, "its arguments, passed as they are"}},
        true},
       cmd_run},
      {{"runs",
        "the runs of the store, newest last: when each started, its status (and the limit "
        "that halted it), its tool calls, failed calls, cost (~: an estimate, a model has no "
        "price) and name; docs/figures.md defines each figure",
        {{"--wide", nullptr, nullptr,
          "every column: also halt reason, steps (calls allowed to run, failed ones included: "
          "what --max-steps counts), rolled back, refused and denied by the agent "
          "calls, agent session id, resumable, checkpoints, gaps, last activity (times in "
          "full)"}}},
       cmd_runs},
      {{"states",
        "the moves RUN made through the run lifecycle and when, the state it is in now (its "
        "status as runs shows it) and its figures; without RUN, the lifecycle state machine "
        "itself",
        {{"--machine", nullptr, nullptr, "with RUN: print the state machine before its moves"},
         {"--mermaid", nullptr, nullptr, "print a Mermaid stateDiagram-v2 (RUN's states marked)"}},
        {{"RUN", false, false, "the run", ValueKind::kRun}}},
       cmd_states},
      {{"resume",
        "start the agent of a run again from its preserved session (forked by default), with "
        "the run's agent options and limits unless given again; what it spent so far counts",
        {{"--continue", nullptr, nullptr, "continue the agent's session instead of forking it"},
         {"--session", nullptr, "ID",
          "the agent session to resume (default: the newest that did not end; runs --json "
          "lists them)"},
         {"--only-args", nullptr, nullptr,
          "give the agent only ARGS, not the options of the run's earlier command line"},
         {"--validation", nullptr, "MODE",
          "strict, relaxed or none: how the session must match the workspace and the run "
          "(default: run.resume_validation, strict)",
          ValueKind::kChoice, "strict|relaxed|none"},
         kReopen,
         kMaxCost,
         kMaxStepsInAll,
         kMaxRetries,
         kTimeout},
        {{"RUN", true, false, "the run", ValueKind::kRun},
         {"ARGS", false, true,
          "claude: its new arguments (a prompt replaces the old one); an application "
          "(claude-sdk): the command to run instead of the run's own"}}},
       cmd_resume},
      {{"rewind",
        "start a new run forked from a pre_tool checkpoint of RUN: the workspace and the "
        "session's slices as at REF, and the agent resuming its conversation cut just before "
        "that call (RUN is left as it was)",
        {{"--to", nullptr, "REF",
          "(needed) the pre_tool checkpoint to go back to (pre:<tool call id>)", ValueKind::kRef},
         {"--run-id", nullptr, "ID", "name the new run (default: a new id)", ValueKind::kNewRun},
         {"--only-args", nullptr, nullptr,
          "give the agent only ARGS, not the options of the run's command line"},
         kMaxCost,
         kMaxSteps,
         kMaxRetries,
         kTimeout},
        {{"RUN", true, false, "the run", ValueKind::kRun},
         {"ARGS", false, true,
          "as for resume: claude's new arguments (a prompt replaces the old one), an "
          "application's command"}}},
       cmd_rewind},
      {{"abort",
        "stop a running agent run: recorded in its ledger, its agent's processes ended",
        {{"--reason", nullptr, "TEXT", "why, kept in the ledger"}},
        {{"RUN", true, false, "the run", ValueKind::kRun}}},
       cmd_abort},
      {{"preserve",
        "preserve a run's agent session data (its HOME's transcripts) now: what run.preserve "
        "on_demand waits for, and at any time for the others",
        {},
        {{"RUN", true, false, "the run", ValueKind::kRun}}},
       cmd_preserve},
      {{"fleet",
        "the fleet's runs (config fleet.*): owner, lease, status, cost, steps, checkpoints "
        "not pushed yet; or push this worker's",
        {},
        {{"runs|push", true, false,
          "list them, most recently updated first; or push what this worker's runs have not "
          "pushed yet",
          ValueKind::kChoice},
         {"RUN", false, false, "push: only this run", ValueKind::kRun}}},
       cmd_fleet},
      {{"recover",
        "take over a run of another worker of the fleet: its lease (once expired), its "
        "checkpoints from the remote, the workspace (empty, or at the run's last "
        "checkpoint) made exactly that, and its agent resumed with its session",
        {{"--force", nullptr, nullptr,
          "take the lease while the owner's lives (the owner is fenced: it writes nothing "
          "more and stops its agent)"},
         {"--continue", nullptr, nullptr, "continue the agent's session instead of forking it"},
         {"--session", nullptr, "ID", "the agent session to resume (default: as resume)"},
         {"--only-args", nullptr, nullptr,
          "give the agent only ARGS, not the options of the run's earlier command line"},
         {"--validation", nullptr, "MODE",
          "relaxed (default, or none if run.resume_validation says so: the workspace path may "
          "differ), strict or none",
          ValueKind::kChoice, "relaxed|strict|none"},
         kReopen,
         kMaxCost,
         kMaxStepsInAll,
         kMaxRetries,
         kTimeout},
        {{"RUN", true, false, "the run", ValueKind::kRun}, {"ARGS", false, true, "as for resume"}}},
       cmd_recover},
      {{"trust",
        "trust the workspace's .shadowbox.yaml as it is now: until then it may only tighten "
        "protection (never loosen it or send data anywhere); a change to it ends the trust",
        {{"--revoke", nullptr, nullptr, "take the trust back"}}},
       cmd_trust},
      {{"completion",
        "print the completion script of a shell (commands, options, their values, run ids "
        "and checkpoints): eval \"$(shadowbox completion bash)\"",
        {{"--words", nullptr, "KIND",
          "instead, print what the scripts offer for a RUN (runs), a REF (refs) or a CALL_ID "
          "(calls), one per line: every run; pre:, post:, tags of the newest 300 checkpoints "
          "and run:<run>; their calls (from the store found as usual; nothing when there is "
          "none)",
          ValueKind::kChoice, "runs|refs|calls"}},
        {{"bash|zsh|fish", false, false,
          "bash: eval \"$(shadowbox completion bash)\" in ~/.bashrc; zsh (after compinit): "
          "source <(shadowbox completion zsh) in ~/.zshrc; fish: shadowbox completion fish | "
          "source in ~/.config/fish/config.fish. Installed by cmake --install or the package, "
          "they load by themselves",
          ValueKind::kChoice}}},
       nullptr,
       cmd_completion},
      {{"help",
        "this overview, or the help of one command",
        {{"--man", nullptr, nullptr,
          "print the manual page shadowbox(1) instead, as roff (man -l <(shadowbox help --man))"}},
        {{"COMMAND", false, false, "the command", ValueKind::kCommand}}},
       nullptr,
       cmd_help},
  };
  return commands;
}

// Whether standard output is a pipe or socket whose reading end is closed.
bool stdout_reader_gone() {
  struct pollfd out = {STDOUT_FILENO, 0, 0};
  return ::poll(&out, 1, 0) == 1 && (out.revents & POLLERR) != 0;
}

namespace {

// A run's name becomes a folder of the store and a ref: every run the command line
// names (the table says which: ValueKind::kRun, kNewRun) is checked before anything is
// opened or written. An option's as a ref's name; a RUN operand and a new run's id also
// as a folder's (runs::check_run_id).
void check_runs(const CommandSyntax& syntax, const CommandArgs& args) {
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < syntax.operands.size() && i < args.operands().size(); ++i) {
    if (syntax.operands[i].kind == ValueKind::kRun) ids.push_back(args.operands()[i]);
  }
  for (const OptionSpec& option : syntax.options) {
    std::optional<std::string> run = args.value(option.name);
    if (!run || (option.kind != ValueKind::kRun && option.kind != ValueKind::kNewRun)) continue;
    try {
      fsnap::layout::check_run_name(*run);
    } catch (const fsnap::Error& e) {
      throw args.usage_error(std::string(option.name) + ": " + e.what());
    }
    if (option.kind == ValueKind::kNewRun) ids.push_back(*run);
  }
  for (const std::string& id : ids) {
    try {
      runs::check_run_id(id);
    } catch (const fsnap::Error& e) {
      throw UsageError(e.what());
    }
  }
}

int usage_error(const std::string& message) {
  std::cerr << "shadowbox: " << message << "\nTry 'shadowbox --help'.\n";
  return 2;
}

int error(const std::string& message) {
  std::cerr << "shadowbox: error: " << message << '\n';
  return 1;
}

int run(const std::vector<std::string>& argv) {
  hooks::register_agent_run_slice_types();  // so ledger sessions of agent runs decode
  embed::register_agent_slice_types();      // and those of programs that embed the core
  std::vector<const CommandSyntax*> syntaxes;
  for (const Command& c : all_commands()) syntaxes.push_back(&c.syntax);
  CommandLine line = parse_command_line(argv, syntaxes);
  const Command* command = nullptr;
  for (const Command& c : all_commands()) {
    if (line.command == &c.syntax) command = &c;
  }
  if (line.help) {
    if (command != nullptr) {
      std::cout << command_help(command->syntax);
    } else {
      print_overview(std::cout);
    }
    return 0;
  }
  if (line.version) {
    std::cout << "shadowbox " << kVersion << " (commit " << build_commit() << ")\n";
    return 0;
  }
  if (command == nullptr) throw UsageError("no command given");
  // (`hook` answers a bad run in the agent's protocol itself: a usage error would block
  // even a Stop.)
  if (command->run_unresolved != nullptr) return command->run_unresolved(line.options, *line.args);
  check_runs(command->syntax, *line.args);
  Context context = make_context(line.options);
  // Found above the current directory: said, so that nobody wonders what is protected
  // (one line on stderr; --json readers are programs, which name --workspace).
  if (!context.workspace_found.empty() && !context.options.json) {
    std::cerr << "shadowbox: workspace " << context.workspace.string() << " ("
              << context.workspace_found << ")\n";
  }
  for (const std::string& key : context.config.embedding_only_settings()) {
    std::cerr << "shadowbox: warning: " << context.config.source.string() << " sets " << key
              << ", which only programs that embed shadowbox read; shadowbox keeps every "
                 "checkpoint in its store, so it changes nothing here\n";
  }
  if (!context.config.left_out.empty() && command->run != cmd_trust) {
    std::string lines;
    for (const std::string& l : context.config.left_out) lines += "\n  " + l;
    std::cerr << "shadowbox: warning: " << context.config.source.string()
              << " is not trusted, so only what tightens protection applies; left out:" << lines
              << "\nreview it, then apply it whole with: shadowbox trust\n";
  }
  return command->run(context, *line.args);
}

}  // namespace

}  // namespace cli

// Every failure ends here, and here only is it turned into an exit status: 2 for a
// command line that does not follow the syntax, 1 for any other error.
int main(int argc, char** argv) {
  // Before any thread: nothing created in a store is group/other-accessible, whatever
  // the user's umask (restores and the agent get the user's back).
  fsnap::keep_created_files_private();
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    int status = cli::run(args);
    std::cout.flush();
    if (!std::cout) {
      // A reader that stopped reading (`shadowbox log | head`) is no error: quiet, with
      // the status a death by SIGPIPE gives, as git does (libgit2 ignores SIGPIPE).
      if (cli::stdout_reader_gone()) return 128 + SIGPIPE;
      return cli::error("cannot write the output");
    }
    return status;
  } catch (const cli::UsageError& e) {
    return cli::usage_error(e.what());
  } catch (const fsnap::Error& e) {
    return cli::error(e.what());
  } catch (const std::exception& e) {
    return cli::error(e.what());
  }
}
