// Nothing written over an interactive agent's screen. An agent started on the person's
// terminal (Claude Code's, Codex's or Gemini's full-screen interface) owns it until it
// exits: a line shadowbox writes to its stderr meanwhile (a warning, a containment
// decision, the supervisor stopping the agent) lands in the middle of the agent's
// drawing and is lost when it redraws. So while such an agent runs, what this process
// writes to its stderr — whoever writes it, through std::cerr or stdio — is held in an
// unnamed file, and written to the terminal, in order, once the agent has exited. (The
// warnings are in the run's log as they happen, and what the agent must know it is told
// in its hooks' answers.)
//
//   if (agent_may_own_terminal(STDIN_FILENO, STDERR_FILENO)) held = HeldStderr::start(dir);
//   ...                        // the agent runs; std::cerr goes to the file
//   held.reset();              // the terminal again, and what was held written to it
//
// Thread-safety: start and release swap the process's file descriptor 2 (atomically:
// a writer on another thread writes either to the terminal or to the file, whole).
#pragma once

#include <memory>

#include <boost/filesystem/path.hpp>

namespace hooks {

// Whether an agent started with these as its stdin and stderr may draw on the terminal
// the stderr is: both are terminals. (An agent reading a pipe or a file runs in its
// print mode, and a stderr that is not a terminal has no screen to spoil.)
bool agent_may_own_terminal(int stdin_fd, int stderr_fd);

// This process's stderr, held while an agent owns the terminal.
class HeldStderr {
 public:
  // Points file descriptor 2 at an unnamed file in dir (it vanishes with the process);
  // nullptr, nothing held, when that file cannot be made.
  static std::unique_ptr<HeldStderr> start(const boost::filesystem::path& dir);
  HeldStderr(const HeldStderr&) = delete;
  HeldStderr& operator=(const HeldStderr&) = delete;
  // release().
  ~HeldStderr();

  // Points file descriptor 2 back where it was and writes to it what was held. Once.
  void release();

 private:
  HeldStderr(int saved, int file) : saved_(saved), file_(file) {}
  int saved_;  // the stderr before start
  int file_;   // the unnamed file
};

}  // namespace hooks
