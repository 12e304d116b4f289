// embed_example WORKSPACE STORE: two tool calls of an agent loop of your own, each a
// transaction on the workspace (snapshotted into the shadow repository in STORE) and
// on the session's slices. The first writes a file and succeeds; the second rewrites
// it, adds another and fails, so both files are put back as the first call left them.
// Exits 0 when they are, 1 otherwise.
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "embed/tool_runner.hpp"
#include "fsnap/host_filesystem.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/execution_state.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: embed_example WORKSPACE STORE\n";
    return 2;
  }
  try {
    auto files = std::make_shared<fsnap::HostFilesystem>(
        fsnap::Store::open(argv[2], argv[1], /*create=*/true), fsnap::CaptureOptions{});
    sandbox::ResourceRegistry resources;
    resources.put<fsnap::Filesystem>(files, "filesystem");
    sandbox::ExecutionState state(std::make_shared<sandbox::Session>(), std::move(resources));

    // A tool writes through the filesystem resource; a failed result (or an exception)
    // rolls back everything it changed.
    std::map<std::string, embed::Tool> tools;
    tools["write"] = {nullptr, [](const sandbox::ToolCall&, embed::ToolContext& context) {
                        auto fs = context.state.resources().get<fsnap::Filesystem>();
                        fs->write("notes.txt", "kept\n");
                        return embed::ToolResult{true, "wrote notes.txt"};
                      }};
    tools["break"] = {nullptr, [](const sandbox::ToolCall&, embed::ToolContext& context) {
                        auto fs = context.state.resources().get<fsnap::Filesystem>();
                        fs->write("notes.txt", "broken\n");
                        fs->write("stray.txt", "left behind?\n");
                        return embed::ToolResult{false, "the build failed"};
                      }};
    embed::ToolRunner runner(state, tools, "example");

    embed::ToolResult first = runner.execute({"call_1", "write", "{}"});
    embed::ToolResult second = runner.execute({"call_2", "break", "{}"});
    std::cout << "call_1: " << (first.success ? "ok" : "failed") << '\n'
              << "call_2: " << (second.success ? "ok" : "failed")
              << (runner.last_decision()
                      ? ", " + std::string(sandbox::to_string(runner.last_decision()->kind))
                      : std::string())
              << '\n';
    bool exact = files->read("notes.txt") == "kept\n" && !files->exists("stray.txt");
    std::cout << (exact ? "the workspace is as call_1 left it\n"
                        : "the workspace is NOT as call_1 left it\n");
    return exact ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "embed_example: " << e.what() << '\n';
    return 1;
  }
}
