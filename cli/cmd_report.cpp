// `shadowbox report RUN`: one self-contained HTML page of a run (or its model as JSON).
#include <iostream>

#include <boost/filesystem/operations.hpp>

#include "commands.hpp"
#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "fsnap/user_umask.hpp"
#include "output.hpp"
#include "run_report_html.hpp"
#include "run_report_model.hpp"

namespace cli {

int cmd_report(const Context& context, const Args& parsed) {
  const std::string& run = parsed.operands()[0];
  // Without -o, a file of the run's name in the current directory.
  std::string output = parsed.value_or("--output", "shadowbox-report-" + run + ".html");
  if (output.empty()) throw parsed.usage_error("-o needs a file name (- for stdout)");
  bool force = parsed.has("--force");
  RunReport report = build_run_report(context, run);
  if (context.options.json) {
    print_json(std::cout, run_report_json(report));
    return 0;
  }
  std::string page = run_report_html(report);
  if (output == "-") {
    std::cout << page;
    return 0;
  }
  boost::filesystem::path file(output);
  // Never over a file that is there unless asked: it may be anyone's.
  if (force) {
    if (boost::filesystem::is_directory(file)) {
      throw fsnap::Error(fsnap::ErrorCode::kConflict,
                         fsnap::quote_path(output) + " is a directory: name a file with -o");
    }
    fsnap::write_file_atomically(file, page);
  } else if (!fsnap::create_file_atomically(file, page)) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       fsnap::quote_path(output) +
                           " exists: left as it is (--force replaces it, -o names another file)");
  }
  // A file of the user's, as their umask makes one (shadowbox's own is narrower: the store's).
  boost::system::error_code ec;
  boost::filesystem::permissions(
      file, static_cast<boost::filesystem::perms>(0666 & ~fsnap::user_umask()), ec);
  std::cout << output << '\n';
  return 0;
}

}  // namespace cli
