// Claude Code hook events as Claude Code sends them, for the tests of the hook path.
#pragma once

#include <string>

namespace hook_events {

// The JSON of event name of session sess-1 in cwd, with extra fields (",\"k\":v...").
inline std::string event(const std::string& name, const std::string& cwd,
                         const std::string& extra = "") {
  return "{\"hook_event_name\":\"" + name +
         "\",\"session_id\":\"sess-1\",\"transcript_path\":\"/nowhere/t.jsonl\",\"cwd\":\"" + cwd +
         "\"" + extra + "}";
}

// The fields of a call of tool name with id (input {"command":"x"}), and more.
inline std::string tool(const std::string& name, const std::string& id,
                        const std::string& more = "") {
  return ",\"tool_name\":\"" + name + "\",\"tool_use_id\":\"" + id +
         "\",\"tool_input\":{\"command\":\"x\"}" + more;
}

}  // namespace hook_events
