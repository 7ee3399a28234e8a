"""The man page and the shell completions, generated from the CLI's own help at build time.

    gen_cli_docs.py MLPROF OUT_DIR

Runs `MLPROF --help` and `MLPROF CMD --help` for every command it lists and writes
OUT_DIR/mlprof.1 (roff), OUT_DIR/mlprof.bash (bash-completion) and OUT_DIR/_mlprof (zsh). A new
command or option therefore reaches the man page and the completions with no edit here.
"""
import os
import re
import subprocess
import sys


def run_help(mlprof, *args):
    out = subprocess.run([mlprof, *args, "--help"], capture_output=True, text=True, check=True)
    # CLI11 prints argv[0] in its usage line: the reader types `mlprof`.
    return out.stdout.replace(mlprof, "mlprof")


def parse_commands(text):
    """[(name, description)] from the Subcommands: section of `mlprof --help`."""
    cmds, inside = [], False
    for line in text.splitlines():
        if line.startswith("Subcommands:"):
            inside = True
            continue
        if inside:
            m = re.match(r"^  ([a-z][a-z0-9-]*)\s+(.*)$", line)
            if m:
                cmds.append((m.group(1), m.group(2).strip()))
            elif line and not line.startswith(" "):
                inside = False
    return cmds


def parse_options(text):
    """[(flags, takes_value, description)] from a command's Options: section."""
    opts, inside, last = [], False, None
    for line in text.splitlines():
        if re.match(r"^[A-Za-z].*:$", line):
            inside = line.startswith("Options:")
            continue
        if not inside:
            continue
        m = re.match(r"^  (-\S+)(.*)$", line)
        if m:
            flags = [f for f in m.group(1).split(",") if f.startswith("-")]
            rest = m.group(2).strip()
            # A value's type (TEXT, UINT, TEXT:{a,b}, ...), then CLI11's notes, then the text.
            t = re.match(r"^([A-Z]+(?::\S+)?)(?=\s|$)\s*(.*)$", rest)
            takes_value = bool(t) and not t.group(1).endswith(":")
            if takes_value:
                rest = t.group(2)
            rest = re.sub(r"^in \[[^\]]*\]\s*", "", rest)  # a range: UINT:INT in [1 - 64]
            rest = re.sub(r"^((Excludes|Needs): (-\S+\s*)+)+", "", rest).strip()
            last = [flags, takes_value, rest]
            opts.append(last)
        elif last is not None and line.startswith("    ") and not last[2]:
            last[2] = line.strip()  # the description on the next line (a long type)
    return [tuple(o) for o in opts]


def roff_escape(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + l if l.startswith((".", "'")) else l for l in s.split("\n"))


def man_page(version, top, cmds, helps):
    about = top.splitlines()[0].split(": ", 1)[-1]
    out = [
        f'.TH MLPROF 1 "" "{version}" "User Commands"',
        ".SH NAME",
        "mlprof \\- " + roff_escape(about),
        ".SH SYNOPSIS",
        ".B mlprof",
        ".I COMMAND",
        "[\\fIOPTIONS\\fR] [\\fIARGS\\fR...]",
        ".br",
        ".B mlprof",
        "\\-\\-help | \\-\\-version",
        ".SH DESCRIPTION",
        roff_escape(about) + ".",
        "Every command takes \\fB\\-\\-help\\fR; the commands that print a report take "
        "\\fB\\-\\-json\\fR. Bad input gets one line naming the file and exit status 2.",
        ".SH COMMANDS",
    ]
    for name, desc in cmds:
        text = helps[name].rstrip("\n")
        if text.startswith(desc):  # CLI11 repeats the description as the help's first line
            text = text[len(desc):].lstrip("\n")
        out += [f'.SS "mlprof {name}"', roff_escape(desc), ".PP", ".nf", roff_escape(text), ".fi"]
    out += [
        ".SH ENVIRONMENT",
        ".TP",
        ".B MLPROF_OUTPUT",
        "a program linked with the recorder writes its trace there at exit",
        ".TP",
        ".B MLPROF_NO_PROGRESS",
        "1: no progress bar on stderr",
        ".SH EXIT STATUS",
        "0 success, 1 failure, 2 bad input, 3 a significant regression "
        "(\\fBcompare \\-\\-fail\\-on\\-regression\\fR).",
        ".SH SEE ALSO",
        "The user guide: docs/ in the source tree (docs/install.md, docs/analysis.md, ...).",
        "",
    ]
    return "\n".join(out)


def bash_completion(cmds, options):
    cases = []
    for name, _ in cmds:
        flags = " ".join(f for flags, _, _ in options[name] for f in flags)
        cases.append(f'    {name}) opts="{flags}" ;;')
    names = " ".join(n for n, _ in cmds)
    return f"""# bash completion for mlprof (generated from `mlprof --help` by cmake/gen_cli_docs.py)
_mlprof() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" opts=""
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur"))
    return
  fi
  case "${{COMP_WORDS[1]}}" in
{chr(10).join(cases)}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=()  # files: -o default
  fi
}}
complete -o default -F _mlprof mlprof
"""


def zsh_text(s):
    return re.sub(r"[\[\]':\\`$]", " ", s).strip()


def zsh_completion(cmds, options):
    lines = ["#compdef mlprof",
             "# zsh completion for mlprof (generated from `mlprof --help` by cmake/gen_cli_docs.py)",
             "_mlprof() {", "  local -a cmds", "  cmds=("]
    lines += [f"    '{n}:{zsh_text(d)[:100]}'" for n, d in cmds]
    lines += ["  )", "  if (( CURRENT == 2 )); then", "    _describe 'command' cmds", "    return",
              "  fi", "  case $words[2] in"]
    for name, _ in cmds:
        specs = []
        for flags, takes_value, desc in options[name]:
            for f in flags:
                specs.append(f"'{f}[{zsh_text(desc)[:80]}]" + (":value:_files'" if takes_value else "'"))
        specs.append("'*:file:_files'")
        lines.append(f"    {name}) _arguments {' '.join(specs)} ;;")
    lines += ["  esac", "}", '_mlprof "$@"', ""]
    return "\n".join(lines)


def main():
    mlprof, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    top = run_help(mlprof)
    version = subprocess.run([mlprof, "--version"], capture_output=True, text=True,
                             check=True).stdout.split(" (")[0].strip()
    cmds = parse_commands(top)
    if not cmds:
        sys.exit("gen_cli_docs: no commands in `mlprof --help`")
    helps = {n: run_help(mlprof, n) for n, _ in cmds}
    options = {n: parse_options(helps[n]) for n, _ in cmds}
    for name, text in (("mlprof.1", man_page(version, top, cmds, helps)),
                       ("mlprof.bash", bash_completion(cmds, options)),
                       ("_mlprof", zsh_completion(cmds, options))):
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
