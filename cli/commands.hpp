// The commands of the shadowbox executable (docs/architecture.md, "CLI contract"). Each
// takes the resolved global options and its own arguments, writes its result to
// stdout (JSON with --json), and returns the exit status; errors are thrown
// (fsnap::Error from the libraries — policy's std::invalid_argument aside — or
// UsageError) and main maps them to exit statuses in one place.
#pragma once

#include <string>
#include <vector>

#include "context.hpp"

namespace cli {

using Args = CommandArgs;

int cmd_init(const Context& context, const Args& args);
int cmd_path(const Context& context, const Args& args);
int cmd_snapshot(const Context& context, const Args& args);
int cmd_restore(const Context& context, const Args& args);
int cmd_rollback(const Context& context, const Args& args);
int cmd_undo(const Context& context, const Args& args);
int cmd_export(const Context& context, const Args& args);
int cmd_log(const Context& context, const Args& args);
int cmd_show(const Context& context, const Args& args);
int cmd_diff(const Context& context, const Args& args);
int cmd_report(const Context& context, const Args& args);
int cmd_gc(const Context& context, const Args& args);
int cmd_maintenance(const Context& context, const Args& args);
int cmd_daemon(const Context& context, const Args& args);
int cmd_hook(const GlobalOptions& options, const Args& args);
int cmd_hooks(const Context& context, const Args& args);
int cmd_run(const Context& context, const Args& args);
int cmd_runs(const Context& context, const Args& args);
int cmd_states(const Context& context, const Args& args);
int cmd_resume(const Context& context, const Args& args);
int cmd_rewind(const Context& context, const Args& args);
int cmd_abort(const Context& context, const Args& args);
int cmd_preserve(const Context& context, const Args& args);
int cmd_fleet(const Context& context, const Args& args);
int cmd_recover(const Context& context, const Args& args);
int cmd_trust(const Context& context, const Args& args);
int cmd_completion(const GlobalOptions& options, const Args& args);
int cmd_help(const GlobalOptions& options, const Args& args);

// One command: its syntax (declared once; parsing, --help and usage errors come from
// it) and what runs it.
struct Command {
  CommandSyntax syntax;
  int (*run)(const Context&, const Args&);
  // Instead of run, for a command that finds its workspace itself (`hook`: in the event).
  int (*run_unresolved)(const GlobalOptions&, const Args&) = nullptr;
};

// Every command, in the order --help lists them.
const std::vector<Command>& all_commands();

}  // namespace cli
