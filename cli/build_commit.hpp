// The commit the `shadowbox` executable was built from (`shadowbox --version`): 12 hex
// digits, followed by "-dirty" when tracked files differed from it; "unknown" for a
// build outside a git checkout, unless the builder named it (-DSHADOWBOX_COMMIT=...).
// Defined in a file the build writes (cmake/write_build_commit.cmake).
#pragma once

namespace cli {

const char* build_commit();

}  // namespace cli
