# Writes OUTPUT, a C++ source defining cli::build_commit(): the commit the sources were
# built from. Run by the build at every build (cmake -P), so `shadowbox --version` names
# the commit of the last build, not of the last configure; the file is rewritten only
# when its content changes, so an unchanged commit relinks nothing.
#
#   SOURCE_DIR  the source tree
#   OUTPUT      the file to write
#   COMMIT      given by whoever builds from a tree without git (a release tarball, a
#               distribution's package): used as it is
if(COMMIT)
  set(commit "${COMMIT}")
else()
  set(commit "unknown")
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE status ERROR_QUIET)
    if(status EQUAL 0 AND head)
      set(commit "${head}")
      # Tracked files changed since that commit: the build is not that commit's.
      execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" status --porcelain
                              --untracked-files=no
                      OUTPUT_VARIABLE changes RESULT_VARIABLE status ERROR_QUIET)
      if(status EQUAL 0 AND changes)
        string(APPEND commit "-dirty")
      endif()
    endif()
  endif()
endif()
# A commit name is hex digits, maybe "-dirty"; anything else a builder gives is kept
# out of the C++ string literal's way.
string(REGEX REPLACE "[^A-Za-z0-9._+-]" "" commit "${commit}")

set(content "// Generated at build time by cmake/write_build_commit.cmake: do not edit.
#include \"build_commit.hpp\"

namespace cli {

const char* build_commit() { return \"${commit}\"; }

}  // namespace cli
")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
