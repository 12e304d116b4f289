// shadowbox — make every step of a coding agent atomic, reversible and inspectable.
//
// Exit status: 0 on success, 1 on an error (one line on stderr), 2 on a usage error.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "arguments.hpp"
#include "commands.hpp"
#include "context.hpp"
#include "fsnap/error.hpp"
#include "hooks/claude_code_state.hpp"

namespace cli {

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      {"init", "init", "create or open the workspace's store; print its path", cmd_init},
      {"snapshot",
       "snapshot [--tag T] [--phase pre_tool|post_tool|checkpoint|manual] [--tool-call-id ID] "
       "[--tool-name NAME] [--run RUN] [--input TEXT] [--result TEXT]",
       "checkpoint the whole workspace (pre_tool/post_tool: a boundary of an external tool call)",
       cmd_snapshot},
      {"restore", "restore REF [--dry-run] [--run RUN]",
       "make the workspace (and the run's STATE slices) exactly REF, after a safety checkpoint",
       cmd_restore},
      {"rollback", "rollback CALL_ID [--result TEXT] [--run RUN]",
       "the failure of an external tool call: roll it back to its pre_tool checkpoint (unless "
       "the config keeps it, or a later change would be undone) and record the failure",
       cmd_rollback},
      {"log", "log [--run RUN] [-n N]", "list checkpoints, newest first", cmd_log},
      {"show", "show REF", "metadata, changed paths and ledger record of a checkpoint", cmd_show},
      {"diff", "diff REF [REF2] [--name-status]",
       "unified diff from REF to REF2 (default: the live workspace)", cmd_diff},
      {"path", "path", "print the shadow repository's git directory", cmd_path},
      {"gc", "gc", "apply the config's retention limits and prune unreferenced objects", cmd_gc},
      {"hook", "hook claude-code [--run RUN]",
       "handle one Claude Code hook event (JSON on stdin); the workspace is --workspace, "
       "else $CLAUDE_PROJECT_DIR",
       cmd_hook},
      {"hooks", "hooks install|uninstall [--scope project|user]",
       "add shadowbox's hooks to Claude Code's settings, or remove only those", cmd_hooks},
      {"run",
       "run [--run-id ID] [--max-cost-usd USD] [--max-steps N] [--max-retries N] "
       "[--timeout DUR] -- CMD [ARGS...]",
       "run an agent under shadowbox with an ephemeral HOME whose session data is preserved, "
       "within the given limits (exit status 3 when one stops it)",
       cmd_run},
      {"runs", "runs",
       "runs with status, halt reason, cost, steps, agent session id, resumable, checkpoints",
       cmd_runs},
      {"resume",
       "resume RUN [--continue] [--validation strict|relaxed|none] [--max-cost-usd USD] "
       "[--max-steps N] [--max-retries N] [--timeout DUR] [-- ARGS...]",
       "start the agent of a run again from its preserved session (forked by default), with "
       "the run's limits unless given again; what it spent so far counts",
       cmd_resume},
      {"abort", "abort RUN [--reason TEXT]",
       "stop a running agent run: recorded in its ledger, its agent's processes ended", cmd_abort},
  };
  return commands;
}

std::string synopsis_of(const std::string& command) {
  for (const Command& c : all_commands()) {
    if (command == c.name) return c.synopsis;
  }
  return command;
}

namespace {

constexpr const char* kVersion = "0.1.0";

void print_help(std::ostream& out) {
  out << "usage: shadowbox [--workspace DIR] [--store DIR] [--config FILE] [--json] COMMAND "
         "[ARGS]\n\n"
         "Checkpoints a workspace into a shadow git repository outside it, so every step\n"
         "can be inspected with plain git and undone exactly.\n\ncommands:\n";
  for (const Command& c : all_commands()) {
    out << "  " << c.synopsis << "\n      " << c.summary << '\n';
  }
  out << "\nREF: a checkpoint id or commit id (or a unique prefix of 4+ hex digits), a tag,\n"
         "pre:<tool_call_id>, post:<tool_call_id>, or run:<run> for a run's newest.\n"
         "`restore REF` always makes the workspace exactly REF; the failure of a tool call\n"
         "is `rollback CALL_ID`.\n\n"
         "global options:\n"
         "  --workspace DIR  the workspace (default: the current directory)\n"
         "  --store DIR      the store (default: $SHADOWBOX_STORE, else\n"
         "                   $XDG_DATA_HOME/shadowbox/<name>-<hash>)\n"
         "  --config FILE    settings (default: $SHADOWBOX_CONFIG, else\n"
         "                   <workspace>/.shadowbox.yaml)\n"
         "  --json           machine-readable output\n\n"
         "exit status: 0 success, 1 error, 2 usage error; run and resume: the agent's\n"
         "status, or 3 when a limit (or abort) stopped it\n";
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
  hooks::register_claude_code_slice_types();  // so ledger sessions of agent runs decode
  GlobalOptions options = parse_global_options(argv);
  if (options.help || options.command == "help") {
    print_help(std::cout);
    return 0;
  }
  if (options.version) {
    std::cout << "shadowbox " << kVersion << '\n';
    return 0;
  }
  if (options.command.empty()) throw UsageError("no command given");
  for (const Command& command : all_commands()) {
    if (options.command != command.name) continue;
    for (const std::string& arg : options.args) {
      if (arg == "--help" || arg == "-h") {
        std::cout << "usage: shadowbox " << command.synopsis << "\n  " << command.summary << '\n';
        return 0;
      }
      if (arg == "--") break;
    }
    if (options.command == "hook" && !options.workspace) {
      // Claude Code runs hooks with the project directory in $CLAUDE_PROJECT_DIR.
      const char* project = std::getenv("CLAUDE_PROJECT_DIR");
      if (project != nullptr && *project != '\0') options.workspace = project;
    }
    Context context = make_context(options);
    return command.run(context, options.args);
  }
  throw UsageError("unknown command " + fsnap::quote_input(options.command));
}

}  // namespace

}  // namespace cli

// Every failure ends here, and here only is it turned into an exit status: 2 for a
// command line that does not follow the syntax, 1 for any other error.
int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    int status = cli::run(args);
    std::cout.flush();
    if (!std::cout) return cli::error("cannot write the output");
    return status;
  } catch (const cli::UsageError& e) {
    return cli::usage_error(e.what());
  } catch (const fsnap::Error& e) {
    return cli::error(e.what());
  } catch (const std::exception& e) {
    return cli::error(e.what());
  }
}
