// The manual page shadowbox(1), as roff: made from the command table, the global options
// and the overview's fixed text (overview.hpp), so that it says what --help says.
#pragma once

#include <string>

namespace cli {

// The whole page: NAME, SYNOPSIS, DESCRIPTION, COMMANDS (each with its synopsis, summary,
// operands and options), REF, GLOBAL OPTIONS, ENVIRONMENT, FILES, EXIT STATUS, SEE ALSO.
std::string man_page();

}  // namespace cli
