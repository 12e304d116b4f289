// File modes of what shadowbox creates: private in a store, the user's in a workspace.
//
// A store holds a copy of every file the workspace ever had, the agent's session data
// and, while a run lasts, its login: nothing in it may be readable or writable by group
// or others, whatever umask the user runs with. libgit2 creates the repository's files
// and directories (objects, packs, refs, logs, locks) with the modes of git less the
// process's umask, and so do the store's other writers; so the shadowbox program narrows
// its umask once, at its start (keep_created_files_private), and remembers the user's.
// What shadowbox writes into the workspace — a restore's files and directories — is
// created as user_umask() says, exactly as under the user's own umask, and every
// program shadowbox starts (the agent, a detached maintenance or watch daemon) gets
// user_umask() back. A program that embeds fsnap without calling
// keep_created_files_private keeps its own umask for both.
//
// Thread-safety: keep_created_files_private() is called before any other thread starts;
// user_umask() may be called from any thread.
#pragma once

#include <sys/types.h>

namespace fsnap {

// Remembers the process's umask as the user's, then sets the process's to it | 077.
void keep_created_files_private();

// The user's umask: the one keep_created_files_private() remembered, else the process's.
mode_t user_umask();

}  // namespace fsnap
