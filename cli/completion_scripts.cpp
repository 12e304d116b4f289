#include "completion_scripts.hpp"

#include <sstream>
#include <vector>

#include "arguments.hpp"
#include "commands.hpp"

namespace cli {

namespace {

// What a script offers for a value of kind, in the words the scripts' helpers take:
// "choice:a b c", "runs", "refs", "calls", "path", "dir", "file", "program", "command",
// or "" for nothing.
std::string offer(ValueKind kind, const std::vector<std::string>& choices) {
  switch (kind) {
    case ValueKind::kChoice: {
      std::string text = "choice:";
      for (std::size_t i = 0; i < choices.size(); ++i) text += (i > 0 ? " " : "") + choices[i];
      return text;
    }
    case ValueKind::kRun:
      return "runs";
    case ValueKind::kRef:
      return "refs";
    case ValueKind::kCallId:
      return "calls";
    case ValueKind::kPath:
      return "path";
    case ValueKind::kDir:
      return "dir";
    case ValueKind::kFile:
      return "file";
    case ValueKind::kProgram:
      return "program";
    case ValueKind::kCommand:
      return "command";
    case ValueKind::kText:
    case ValueKind::kNewRun:
      break;
  }
  return "";
}

std::string offer(const OptionSpec& option) {
  return offer(option.kind, choices_of(option));
}

std::string offer(const OperandSpec& operand) {
  return offer(operand.kind, choices_of(operand));
}

std::string command_names() {
  std::string names;
  for (const Command& c : all_commands())
    names += (names.empty() ? "" : " ") + std::string(c.syntax.name);
  return names;
}

// The gist of help, for a menu: without what it says in parentheses, up to its first
// "; " or ": " past a few words, at most about 70 characters.
std::string short_help(const std::string& help) {
  std::string text;
  int depth = 0;
  for (char c : help) {
    depth += c == '(' ? 1 : 0;
    if (depth == 0) text += c;
    depth -= c == ')' && depth > 0 ? 1 : 0;
  }
  for (std::size_t at; (at = text.find("  ")) != std::string::npos;) text.erase(at, 1);
  for (std::size_t at; (at = text.find(" ,")) != std::string::npos;) text.erase(at, 1);
  for (const char* stop : {"; ", ": "}) {
    std::size_t at = text.find(stop, 12);
    if (at != std::string::npos) text.resize(at);
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > 72) {
    text.resize(text.rfind(' ', 69));
    text += "...";
  }
  return text;
}

// text inside '...' of a POSIX shell.
std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// ---- bash ---------------------------------------------------------------------------

constexpr const char* kBashMain = R"BASH(
# _shadowbox_offer KIND: COMPREPLY for the word being completed ($cur) as KIND says.
_shadowbox_offer() {
  local IFS=$' \t\n' list=
  case $1 in
    choice:* | words:*) list=${1#*:} ;;
    command) list=$_shadowbox_commands ;;
    runs | refs | calls)
      list=$("${words[0]}" "${globals[@]}" completion --words "$1" 2>/dev/null) ;;
    path | file | dir)
      compopt -o filenames 2>/dev/null
      IFS=$'\n'
      if [[ $1 == dir ]]; then COMPREPLY=($(compgen -d -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
      return ;;
    program)
      IFS=$'\n'
      COMPREPLY=($(compgen -c -- "$cur"))
      return ;;
    *)
      COMPREPLY=()
      return ;;
  esac
  IFS=$'\n'
  COMPREPLY=($(IFS=$' \t\n' && compgen -W "$list" -- "$cur"))
  # bash replaces only what follows the word's last ':' (a break in COMP_WORDBREAKS).
  if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
    local colon=${cur%"${cur##*:}"}
    COMPREPLY=("${COMPREPLY[@]#"$colon"}")
  fi
}

_shadowbox() {
  # The words up to the cursor, with what bash split at ':' joined again (pre:ID).
  local -a words=() globals=() operands=()
  local w i glue=0
  for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
    w=${COMP_WORDS[i]}
    if ((i > 0)) && [[ $w == :* || ($glue == 1 && -n $w) ]]; then
      words[${#words[@]} - 1]+=$w
    else
      words+=("$w")
    fi
    [[ $w == :* ]] && glue=1 || glue=0
  done
  local cword=$((${#words[@]} - 1))
  local cur=${words[cword]} prev=
  ((cword > 0)) && prev=${words[cword - 1]}
  if [[ $cur == = ]]; then cur=; elif [[ $prev == = ]] && ((cword > 1)); then prev=${words[cword - 2]}; fi
  # The command, its operands before the cursor (n), the global options to ask --words with.
  local cmd= kind= opts= valued=' ' variadic=0 passthrough=0 dashes=0 n=0 eq
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if ((dashes || (passthrough && n > 0))); then
      n=$((n + 1))
      continue
    fi
    eq=0
    [[ ${words[i + 1]} == = ]] && eq=1
    case $w in
      --workspace | --store | --config)
        globals+=("$w" "${words[i + 1 + eq]}")
        i=$((i + 1 + eq))
        continue ;;
      --workspace=* | --store=* | --config=*)
        globals+=("$w")
        continue ;;
      --)
        [[ -n $cmd ]] && dashes=1
        continue ;;
      -*)
        [[ $valued == *" $w "* ]] && i=$((i + 1 + eq))
        continue ;;
    esac
    if [[ -z $cmd ]]; then
      cmd=$w
      _shadowbox_spec "$cmd" || return 0
    else
      n=$((n + 1))
    fi
  done
  local free=$((dashes == 0 && !(passthrough && n > 0)))
  if ((free)) && [[ $prev == --workspace || $prev == --store || $prev == --config || $valued == *" $prev "* ]]; then
    _shadowbox_option_kind "$cmd:$prev"
    _shadowbox_offer "$kind"
  elif [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then _shadowbox_offer "words:$_shadowbox_global_options --help"; else _shadowbox_offer command; fi
  elif ((free)) && [[ $cur == -* ]]; then
    _shadowbox_offer "words:$opts $_shadowbox_global_options --help"
  elif ((passthrough)); then
    if ((n == 0)); then _shadowbox_offer program; else _shadowbox_offer path; fi
  else
    if ((n < ${#operands[@]})); then
      kind=${operands[n]}
    elif ((variadic && ${#operands[@]} > 0)); then
      kind=${operands[${#operands[@]} - 1]}
    fi
    _shadowbox_offer "$kind"
  fi
  return 0
}

complete -F _shadowbox shadowbox
)BASH";

std::string bash_script() {
  std::ostringstream out;
  out << "# bash completion for shadowbox, made by `shadowbox completion bash` from its command\n"
         "# table. Use: eval \"$(shadowbox completion bash)\" in ~/.bashrc, or install it as\n"
         "# share/bash-completion/completions/shadowbox (cmake --install does).\n\n"
      << "_shadowbox_commands=" << single_quoted(command_names()) << '\n';
  std::string globals;
  for (const OptionSpec& o : global_option_specs())
    globals += (globals.empty() ? "" : " ") + std::string(o.name);
  out << "_shadowbox_global_options=" << single_quoted(globals) << "\n\n"
      << "# _shadowbox_spec COMMAND: its options (opts), those that take a value (valued), what\n"
         "# its operands are (operands; the last repeats when variadic), whether they are\n"
         "# another program's command line (passthrough).\n"
         "_shadowbox_spec() {\n"
         "  case $1 in\n";
  for (const Command& c : all_commands()) {
    const CommandSyntax& s = c.syntax;
    std::string opts, valued = " ", operands;
    bool variadic = false;
    for (const OptionSpec& o : s.options) {
      for (const char* name : {o.alias, o.name}) {
        if (name == nullptr) continue;
        opts += (opts.empty() ? "" : " ") + std::string(name);
        if (o.value != nullptr) valued += std::string(name) + " ";
      }
    }
    for (const OperandSpec& operand : s.operands) {
      operands += (operands.empty() ? "" : " ") + single_quoted(offer(operand));
      variadic = variadic || operand.variadic;
    }
    out << "    " << s.name << ")\n"
        << "      opts=" << single_quoted(opts) << "\n"
        << "      valued=" << single_quoted(valued) << "\n"
        << "      operands=(" << operands << ")\n"
        << "      variadic=" << variadic << " passthrough=" << s.passes_through << " ;;\n";
  }
  out << "    *) return 1 ;;\n"
         "  esac\n"
         "}\n\n"
         "# _shadowbox_option_kind COMMAND:OPTION: what the option's value is (kind).\n"
         "_shadowbox_option_kind() {\n"
         "  case $1 in\n";
  for (const Command& c : all_commands()) {
    for (const OptionSpec& o : c.syntax.options) {
      std::string kind = offer(o);
      if (o.value == nullptr || kind.empty()) continue;
      out << "    " << c.syntax.name << ":" << o.name;
      if (o.alias != nullptr) out << " | " << c.syntax.name << ":" << o.alias;
      out << ") kind=" << single_quoted(kind) << " ;;\n";
    }
  }
  for (const OptionSpec& o : global_option_specs()) {
    std::string kind = offer(o);
    if (o.value != nullptr && !kind.empty()) {
      out << "    *:" << o.name << ") kind=" << single_quoted(kind) << " ;;\n";
    }
  }
  out << "    *) kind= ;;\n"
         "  esac\n"
         "}\n"
      << kBashMain;
  return out.str();
}

// ---- zsh ----------------------------------------------------------------------------

// help inside the [...] of an _arguments spec, itself inside '...'.
std::string zsh_help(const std::string& help) {
  std::string out;
  for (char c : short_help(help)) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    if (c == '\'') {
      out += "'\\''";
      continue;
    }
    out += c;
  }
  return out;
}

std::string zsh_action(const std::string& kind) {
  if (kind.rfind("choice:", 0) == 0) return "(" + kind.substr(7) + ")";
  if (kind == "runs" || kind == "refs" || kind == "calls") return "_shadowbox_words " + kind;
  if (kind == "path" || kind == "file") return "_files";
  if (kind == "dir") return "_files -/";
  if (kind == "program") return "_command_names -e";
  if (kind == "command") return "(" + command_names() + ")";
  return " ";
}

std::string zsh_option(const OptionSpec& o) {
  std::string spec;
  if (o.alias != nullptr) {
    spec = "'(" + std::string(o.alias) + " " + o.name + ")'{" + o.alias + "," + o.name + "}'";
  } else {
    spec = std::string("'") + o.name + (o.value != nullptr ? "=" : "");
  }
  spec += "[" + zsh_help(o.help) + "]";
  if (o.value != nullptr) spec += ":" + std::string(o.value) + ":" + zsh_action(offer(o));
  return spec + "'";
}

// The global options' specs, each on a line of its own indented by indent.
std::string zsh_globals(const std::string& indent) {
  std::string specs;
  for (const OptionSpec& o : global_option_specs()) specs += " \\\n" + indent + zsh_option(o);
  return specs;
}

std::string zsh_script() {
  std::ostringstream out;
  out << "#compdef shadowbox\n"
         "# zsh completion for shadowbox, made by `shadowbox completion zsh` from its command\n"
         "# table. Use: source <(shadowbox completion zsh) in ~/.zshrc (after compinit), or\n"
         "# install it as _shadowbox in a directory of $fpath (cmake --install does).\n\n"
         "# The run ids, checkpoints or call ids (KIND, the last argument) of the store the\n"
         "# line names; _arguments puts compadd's options before it.\n"
         "_shadowbox_words() {\n"
         "  local kind=${@[-1]}\n"
         "  local -a args found\n"
         "  local i\n"
         "  for ((i = 2; i <= $#_shadowbox_line; i++)); do\n"
         "    case $_shadowbox_line[i] in\n"
         "      --workspace | --store | --config)\n"
         "        args+=($_shadowbox_line[i] ${(Q)_shadowbox_line[i+1]})\n"
         "        ((i++)) ;;\n"
         "      --workspace=* | --store=* | --config=*) args+=(${(Q)_shadowbox_line[i]}) ;;\n"
         "    esac\n"
         "  done\n"
         "  found=(${(f)\"$(${(Q)_shadowbox_line[1]} $args completion --words $kind "
         "2>/dev/null)\"})\n"
         "  compadd \"${@[1,-2]}\" -a found\n"
         "}\n\n"
         "_shadowbox() {\n"
         "  local -a _shadowbox_line\n"
         "  _shadowbox_line=(\"${words[@]}\")\n"
         "  local curcontext=$curcontext state state_descr line ret=1\n"
         "  typeset -A opt_args\n"
         "  _arguments -C"
      << zsh_globals("      ")
      << " \\\n      '(- *)'{-h,--help}'[this help]' \\\n"
         "      ': :->command' \\\n"
         "      '*:: :->argument' && ret=0\n"
         "  case $state in\n"
         "    command)\n"
         "      local -a commands\n"
         "      commands=(\n";
  for (const Command& c : all_commands()) {
    std::string entry = std::string(c.syntax.name) + ":" + short_help(c.syntax.summary);
    out << "        " << single_quoted(entry) << "\n";
  }
  out << "      )\n"
         "      _describe -t commands 'shadowbox command' commands && ret=0 ;;\n"
         "    argument)\n"
         "      curcontext=${curcontext%:*:*}:shadowbox-$words[1]:\n"
         "      case $words[1] in\n";
  for (const Command& c : all_commands()) {
    const CommandSyntax& s = c.syntax;
    out << "        " << s.name << ")\n          _arguments" << zsh_globals("            ");
    for (const OptionSpec& o : s.options) out << " \\\n            " << zsh_option(o);
    int position = 1;
    for (const OperandSpec& operand : s.operands) {
      std::string action = zsh_action(offer(operand));
      if (s.passes_through && operand.variadic) action = "_normal";
      std::string name = operand.name;
      for (char& ch : name) ch = ch == '|' ? ' ' : ch;
      std::string spec = operand.variadic
                             ? std::string(s.passes_through ? "*::" : "*:")
                             : std::to_string(position++) + (operand.required ? ":" : "::");
      out << " \\\n            " << single_quoted(spec + name + ":" + action);
    }
    out << " && ret=0 ;;\n";
  }
  out << "      esac ;;\n"
         "  esac\n"
         "  return ret\n"
         "}\n\n"
         "if [[ $funcstack[1] == _shadowbox ]]; then\n"
         "  _shadowbox \"$@\"\n"
         "else\n"
         "  compdef _shadowbox shadowbox\n"
         "fi\n";
  return out.str();
}

// ---- fish ---------------------------------------------------------------------------

// text inside '...' of fish, where \ and ' are escaped.
std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_values(const std::string& kind) {
  if (kind.rfind("choice:", 0) == 0) return " -x -a " + fish_quoted(kind.substr(7));
  if (kind == "runs" || kind == "refs" || kind == "calls") {
    return " -x -a " + fish_quoted("(__shadowbox_words " + kind + ")");
  }
  if (kind == "path" || kind == "file") return " -r -F";
  if (kind == "dir") return " -x -a '(__fish_complete_directories)'";
  if (kind == "program") return " -x -a '(__fish_complete_command)'";
  if (kind == "command") return " -x -a " + fish_quoted(command_names());
  return " -x";
}

std::string fish_option(const std::string& condition, const OptionSpec& o) {
  std::string line = "complete -c shadowbox" + condition;
  std::string alias = o.alias != nullptr ? o.alias : "";
  if (alias.size() == 2) line += " -s " + alias.substr(1);
  line += " -l " + std::string(o.name).substr(2);
  if (o.value != nullptr) line += fish_values(offer(o));
  return line + " -d " + fish_quoted(short_help(o.help)) + "\n";
}

constexpr const char* kFishHelpers = R"FISH(
# The command on the line (the first word that is no option nor a global option's value).
function __shadowbox_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case --workspace --store --config
                set -e tokens[1]
            case '-*'
            case '*'
                echo $tokens[1]
                return 0
        end
        set -e tokens[1]
    end
    return 1
end

function __shadowbox_using --argument-names name
    set -l command (__shadowbox_command)
    test "$command" = "$name"
end

# The run ids, checkpoints or call ids (KIND) of the store the line names.
function __shadowbox_words --argument-names kind
    set -l tokens (commandline -opc)
    set -l args
    set -l i 2
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case --workspace --store --config
                set -a args $tokens[$i]
                set i (math $i + 1)
                if test $i -le (count $tokens)
                    set -a args $tokens[$i]
                end
            case '--workspace=*' '--store=*' '--config=*'
                set -a args $tokens[$i]
        end
        set i (math $i + 1)
    end
    $tokens[1] $args completion --words $kind 2>/dev/null
end

complete -c shadowbox -f
complete -c shadowbox -s h -l help -d 'this help'
)FISH";

std::string fish_script() {
  std::ostringstream out;
  out << "# fish completion for shadowbox, made by `shadowbox completion fish` from its command\n"
         "# table. Use: shadowbox completion fish | source in ~/.config/fish/config.fish, or\n"
         "# install it as vendor_completions.d/shadowbox.fish (cmake --install does).\n"
      << kFishHelpers;
  for (const OptionSpec& o : global_option_specs()) out << fish_option("", o);
  for (const Command& c : all_commands()) {
    out << "complete -c shadowbox -n 'not __shadowbox_command' -a " << c.syntax.name << " -d "
        << fish_quoted(short_help(c.syntax.summary)) << '\n';
  }
  for (const Command& c : all_commands()) {
    std::string condition = " -n " + fish_quoted("__shadowbox_using " + std::string(c.syntax.name));
    for (const OptionSpec& o : c.syntax.options) out << fish_option(condition, o);
    for (const OperandSpec& operand : c.syntax.operands) {
      std::string kind = offer(operand);
      if (kind.empty()) continue;
      std::string values = fish_values(kind);
      // An operand is no option's value: -x/-r say nothing here.
      if (values.rfind(" -x", 0) == 0) values.erase(0, 3);
      if (values.rfind(" -r", 0) == 0) values.erase(0, 3);
      out << "complete -c shadowbox" << condition << values << " -d " << fish_quoted(operand.name)
          << '\n';
    }
  }
  return out.str();
}

}  // namespace

std::string completion_script(const std::string& shell) {
  if (shell == "bash") return bash_script();
  if (shell == "zsh") return zsh_script();
  if (shell == "fish") return fish_script();
  return "";
}

}  // namespace cli
