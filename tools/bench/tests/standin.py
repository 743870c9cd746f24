"""Stand-in programs for the bench-script tests: shell scripts written where the scripts under test
look for the real ones (a bundle, or a folder put first on PATH)."""
import stat


def executable(path, text):
    """Writes `text` to `path` and makes it executable."""
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def options(*names, **defaults):
    """Shell lines that set $NAME from `--NAME VALUE` for each name (empty, or its default, where
    absent) and pass over every other word."""
    setters = "\n".join(f'  [ "$1" = --{name} ] && {name}=$2' for name in names)
    initial = " ".join(f"{name}={defaults.get(name, '')}" for name in names)
    return f"{initial}\nwhile [ $# -gt 0 ]; do\n{setters}\n  shift\ndone\n"


# Shell lines that set $out from `-o FILE` and $rest to every other word (a compiler's or linker's).
OUT_AND_REST = """out= rest=
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then out=$2; shift; else rest="$rest $1"; fi
  shift
done
"""
