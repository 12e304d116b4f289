#include "hooks/claude_code_settings.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "json_object.hpp"
#include "sandbox/errors.hpp"
#include "shell_words.hpp"

namespace hooks {

using sandbox::Error;
using sandbox::ErrorCode;

namespace {

using Poco::JSON::Array;
using Poco::JSON::Object;

Object::Ptr parse_settings(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  }
  return json_object::parse(text, "the settings file");
}

std::string render(const Object::Ptr& settings) {
  return json_object::file_text(settings);
}

// Whether hook is one of shadowbox's entries, in any form it was ever installed in (for
// uninstall and install to replace: it trusts nothing, see project_hook_commands).
bool is_ours(const Poco::Dynamic::Var& hook) {
  if (hook.type() != typeid(Object::Ptr)) return false;
  Object::Ptr h = hook.extract<Object::Ptr>();
  if (h->has("url") && h->get("url").isString()) {
    std::string url = h->getValue<std::string>("url");
    return url.rfind(kHookUrlPrefix, 0) == 0 && url.find("/hook/") != std::string::npos;
  }
  if (!h->has("command") || !h->get("command").isString()) return false;
  std::string command = h->getValue<std::string>("command");
  const std::string marker = " hook claude-code";
  return command.find(marker) != std::string::npos;
}

// Removes our hooks from one event's matcher groups; returns the groups left.
Array::Ptr without_ours(const Array::Ptr& groups) {
  Array::Ptr kept = new Array;
  for (std::size_t i = 0; i < groups->size(); ++i) {
    Poco::Dynamic::Var group = groups->get(static_cast<unsigned>(i));
    if (group.type() != typeid(Object::Ptr)) {
      kept->add(group);
      continue;
    }
    Object::Ptr g = group.extract<Object::Ptr>();
    Array::Ptr list = g->getArray("hooks");
    if (list.isNull()) {
      kept->add(group);
      continue;
    }
    Array::Ptr remaining = new Array;
    for (std::size_t k = 0; k < list->size(); ++k) {
      Poco::Dynamic::Var hook = list->get(static_cast<unsigned>(k));
      if (!is_ours(hook)) remaining->add(hook);
    }
    if (remaining->size() == 0) continue;  // the group held only ours
    g->set("hooks", remaining);
    kept->add(g);
  }
  return kept;
}

std::string read_file(const boost::filesystem::path& file) {
  std::ifstream in(file.string(), std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "cannot read " + file.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool http_unsupported(const std::string& event) {
  for (const char* e : kCommandOnlyEvents) {
    if (event == e) return true;
  }
  return false;
}

Object::Ptr command_hook(const std::string& command) {
  Object::Ptr hook = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  hook->set("type", "command");
  hook->set("command", command);
  hook->set("timeout", 600);
  return hook;
}

// The settings with one hook entry per event, ours replaced: a copy of hook, or of
// fallback (if set) for the events hook's type cannot serve.
std::string install_hook_entries(const std::string& settings_text, const Object::Ptr& hook,
                                 const Object::Ptr& fallback) {
  Object::Ptr settings = parse_settings(settings_text);
  Object::Ptr hooks_object = settings->getObject("hooks");
  if (settings->has("hooks") && hooks_object.isNull()) {
    throw Error(ErrorCode::kInvalidArgument, "\"hooks\" in the settings is not an object");
  }
  if (hooks_object.isNull()) {
    hooks_object = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    settings->set("hooks", hooks_object);
  }
  for (const char* event : kHookEvents) {
    Array::Ptr groups = hooks_object->getArray(event);
    groups = groups.isNull() ? Array::Ptr(new Array) : without_ours(groups);
    Array::Ptr list = new Array;
    const Object::Ptr& chosen = !fallback.isNull() && http_unsupported(event) ? fallback : hook;
    list->add(Object::Ptr(new Object(*chosen)));
    Object::Ptr group = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    group->set("matcher", "*");
    group->set("hooks", list);
    groups->add(group);
    hooks_object->set(event, groups);
  }
  return render(settings);
}

}  // namespace

std::string install_hooks(const std::string& settings_text, const std::string& command) {
  return install_hook_entries(settings_text, command_hook(command), nullptr);
}

std::string install_http_hooks(const std::string& settings_text, const std::string& url,
                               const std::string& command) {
  if (url.rfind(kHookUrlPrefix, 0) != 0) {
    throw Error(ErrorCode::kInvalidArgument, "hook URL " + url + " is not on " + kHookUrlPrefix);
  }
  Object::Ptr hook = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  hook->set("type", "http");
  hook->set("url", url);
  hook->set("timeout", 600);
  return install_hook_entries(settings_text, hook, command_hook(command));
}

std::string uninstall_hooks(const std::string& settings_text) {
  Object::Ptr settings = parse_settings(settings_text);
  Object::Ptr hooks_object = settings->getObject("hooks");
  if (hooks_object.isNull()) return render(settings);
  std::vector<std::string> names;
  hooks_object->getNames(names);
  for (const std::string& event : names) {
    Array::Ptr groups = hooks_object->getArray(event);
    if (groups.isNull()) continue;
    Array::Ptr kept = without_ours(groups);
    if (kept->size() == 0) {
      hooks_object->remove(event);
    } else {
      hooks_object->set(event, kept);
    }
  }
  if (hooks_object->size() == 0) settings->remove("hooks");
  return render(settings);
}

bool has_shadowbox_hooks(const std::string& settings_text) {
  Object::Ptr settings;
  try {
    settings = parse_settings(settings_text);
  } catch (const Error&) {
    return false;
  }
  Object::Ptr hooks_object = settings->getObject("hooks");
  if (hooks_object.isNull()) return false;
  std::vector<std::string> names;
  hooks_object->getNames(names);
  for (const std::string& event : names) {
    Array::Ptr groups = hooks_object->getArray(event);
    for (std::size_t i = 0; !groups.isNull() && i < groups->size(); ++i) {
      Object::Ptr group = groups->getObject(static_cast<unsigned>(i));
      Array::Ptr list = group.isNull() ? nullptr : group->getArray("hooks");
      for (std::size_t k = 0; !list.isNull() && k < list->size(); ++k) {
        if (is_ours(list->get(static_cast<unsigned>(k)))) return true;
      }
    }
  }
  return false;
}

bool file_has_shadowbox_hooks(const boost::filesystem::path& file) {
  boost::system::error_code ec;
  if (!boost::filesystem::is_regular_file(file, ec)) return false;
  try {
    return has_shadowbox_hooks(read_file(file));
  } catch (const Error&) {
    return false;
  }
}

namespace {

// The hook timeout `hooks install` writes, in seconds: a project hook Claude Code would
// end sooner may not finish recording.
constexpr int kInstalledTimeout = 600;

// Whether a matcher group's matcher selects every tool (Claude Code: "*", "" or none).
bool matches_everything(const Object::Ptr& group) {
  if (!group->has("matcher")) return true;
  if (!group->get("matcher").isString()) return false;
  std::string matcher = group->getValue<std::string>("matcher");
  return matcher.empty() || matcher == "*";
}

// Whether o has no key but those named.
bool only_keys(const Object::Ptr& o, std::initializer_list<const char*> allowed) {
  std::vector<std::string> names;
  o->getNames(names);
  for (const std::string& name : names) {
    bool known = false;
    for (const char* a : allowed) known = known || name == a;
    if (!known) return false;
  }
  return true;
}

// The program and store of hook if it is exactly an entry `hooks install --scope project`
// writes: {"type": "command", "command": "<program> --store <store> hook claude-code",
// "timeout": 600 (or more)}, the paths absolute, nothing the shell would expand; or one
// `hooks install --scope shared` writes (kSharedHookCommand, no store).
std::optional<ProjectHookCommand> installed_project_hook(const Poco::Dynamic::Var& hook) {
  if (hook.type() != typeid(Object::Ptr)) return std::nullopt;
  Object::Ptr h = hook.extract<Object::Ptr>();
  if (!only_keys(h, {"type", "command", "timeout"}) || !h->has("type") ||
      !h->get("type").isString() || h->getValue<std::string>("type") != "command" ||
      !h->has("command") || !h->get("command").isString() || !h->has("timeout")) {
    return std::nullopt;
  }
  Poco::Dynamic::Var timeout = h->get("timeout");
  if (!timeout.isNumeric() || timeout.isBoolean() ||
      timeout.convert<double>() < kInstalledTimeout) {
    return std::nullopt;
  }
  std::optional<std::vector<std::string>> words =
      plain_shell_words(h->getValue<std::string>("command"));
  if (words && words == plain_shell_words(kSharedHookCommand)) {
    return ProjectHookCommand{words->front(), ""};
  }
  if (!words || words->size() != 5 || (*words)[1] != "--store" || (*words)[3] != "hook" ||
      (*words)[4] != "claude-code") {
    return std::nullopt;
  }
  const std::string& program = (*words)[0];
  const std::string& store = (*words)[2];
  if (program.empty() || program[0] != '/' || store.empty() || store[0] != '/') {
    return std::nullopt;
  }
  return ProjectHookCommand{program, store};
}

// Whether settings set disableAllHooks (to anything but false).
bool switches_hooks_off(const Object::Ptr& settings) {
  if (!settings->has("disableAllHooks")) return false;
  Poco::Dynamic::Var value = settings->get("disableAllHooks");
  return !(value.isBoolean() && !value.convert<bool>());
}

}  // namespace

bool disables_all_hooks(const std::string& settings_text) {
  try {
    return switches_hooks_off(parse_settings(settings_text));
  } catch (const Error&) {
    return false;
  }
}

std::vector<ProjectHookCommand> project_hook_commands(const std::string& settings_text,
                                                      const std::string& event) {
  std::vector<ProjectHookCommand> found;
  Object::Ptr settings;
  try {
    settings = parse_settings(settings_text);
  } catch (const Error&) {
    return found;
  }
  if (switches_hooks_off(settings)) return found;
  Object::Ptr hooks_object = settings->getObject("hooks");
  Array::Ptr groups = hooks_object.isNull() ? nullptr : hooks_object->getArray(event);
  for (std::size_t i = 0; !groups.isNull() && i < groups->size(); ++i) {
    Object::Ptr group = groups->getObject(static_cast<unsigned>(i));
    if (group.isNull() || !only_keys(group, {"matcher", "hooks"}) || !matches_everything(group)) {
      continue;
    }
    Array::Ptr list = group->getArray("hooks");
    for (std::size_t k = 0; !list.isNull() && k < list->size(); ++k) {
      std::optional<ProjectHookCommand> hook =
          installed_project_hook(list->get(static_cast<unsigned>(k)));
      if (hook) found.push_back(*hook);
    }
  }
  return found;
}

std::optional<std::string> read_project_settings(const boost::filesystem::path& file) {
  // Non-blocking: a FIFO in the project's place is not waited on; only a regular file
  // is read, and only as much as a settings file holds.
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::size_t>(st.st_size) <= kMaxSettingsSize) {
    text.emplace();
    char buffer[8192];
    for (;;) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || text->size() + static_cast<std::size_t>(n) > kMaxSettingsSize) {
        text.reset();
        break;
      }
      if (n == 0) break;
      text->append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return text;
}

namespace {

// Rewrites file (created with its directory if missing) with change applied to it.
void change_settings_file(const boost::filesystem::path& file,
                          const std::function<std::string(const std::string&)>& change) {
  boost::system::error_code ec;
  boost::filesystem::create_directories(file.parent_path(), ec);
  if (ec)
    throw Error(ErrorCode::kIo,
                "cannot create " + file.parent_path().string() + ": " + ec.message());
  std::string text = boost::filesystem::exists(file) ? read_file(file) : "";
  std::string updated;
  try {
    updated = change(text);
  } catch (const Error& e) {
    throw Error(e.code(), file.string() + ": " + e.what() + " (left unchanged)");
  }
  fsnap::write_file_atomically(file, updated);
}

}  // namespace

void install_hooks_in_file(const boost::filesystem::path& file, const std::string& command) {
  change_settings_file(file, [&](const std::string& text) { return install_hooks(text, command); });
}

void install_http_hooks_in_file(const boost::filesystem::path& file, const std::string& url,
                                const std::string& command) {
  change_settings_file(
      file, [&](const std::string& text) { return install_http_hooks(text, url, command); });
}

bool uninstall_hooks_in_file(const boost::filesystem::path& file) {
  if (!boost::filesystem::exists(file)) return false;
  change_settings_file(file, uninstall_hooks);
  return true;
}

}  // namespace hooks
