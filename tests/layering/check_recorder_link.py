"""Linking the recorder library alone pulls in no importer, analysis, renderer, SQL, serve or web
bundle code (ctest: layering_recorder_link).

recorder_only (tests/layering/recorder_only.cpp) includes only mlprof/mlprof.h and links only
mlprof_record. This script
  1. runs it with MLPROF_OUTPUT set, twice (.mlprof and .json), and checks the trace it writes at
     exit is there (the recorder still saves, through the export stage);
  2. lists the strong global symbols each forbidden library's archive defines (nm) and fails if
     the binary defines any of them: one object file of those stages linked in shows up here;
  3. as a check of the check, requires the binary to define symbols of mlprof_record and
     mlprof_export (so an empty or stripped symbol table cannot pass).

Usage: check_recorder_link.py RECORDER_ONLY_BINARY RECORD_ARCHIVE EXPORT_ARCHIVE
                              FORBIDDEN_ARCHIVE...
"""
import os
import subprocess
import sys
import tempfile

STRONG = set("TDBR")  # text, initialized data, bss, read-only data; not weak (W/V) or undefined


def defined(path):
    """Strong global symbols defined in an archive or a binary."""
    out = subprocess.run(["nm", "--defined-only", "-g", path], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in STRONG:
            names.add(parts[2])
    return names


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    binary, record_archive, export_archive, forbidden = (sys.argv[1], sys.argv[2], sys.argv[3],
                                                         sys.argv[4:])
    failures = 0

    with tempfile.TemporaryDirectory() as tmp:
        for name, magic in (("trace.mlprof", b"MLPROF\x01\n"), ("trace.json", b"{")):
            out = os.path.join(tmp, name)
            run = subprocess.run([binary], env={**os.environ, "MLPROF_OUTPUT": out},
                                 capture_output=True, text=True)
            if run.returncode != 0 or "recording: yes" not in run.stdout:
                print(f"FAIL {binary} with MLPROF_OUTPUT={name}: exit {run.returncode}, "
                      f"{run.stdout.strip()} {run.stderr.strip()}")
                failures += 1
                continue
            with open(out, "rb") as f:
                head = f.read(len(magic))
            if head != magic:
                print(f"FAIL {name} written by the recorder starts with {head!r}, not {magic!r}")
                failures += 1

    in_binary = defined(binary)
    for archive in (record_archive, export_archive):
        if not defined(archive) & in_binary:
            print(f"FAIL the binary defines no symbol of {os.path.basename(archive)}: "
                  "the symbol check below would prove nothing")
            failures += 1
    for archive in forbidden:
        pulled = sorted(defined(archive) & in_binary)
        if pulled:
            failures += 1
            print(f"FAIL linking mlprof_record pulled in {len(pulled)} symbols of "
                  f"{os.path.basename(archive)}, e.g. {', '.join(pulled[:5])}")
        else:
            print(f"ok: nothing of {os.path.basename(archive)}")
    size = os.path.getsize(binary)
    print(f"recorder_only: {size} bytes with debug info; {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
