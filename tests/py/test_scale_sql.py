"""Issue 32 item 8b: `mlprof sql`'s table output streams. It held the whole result before printing
(a cross join reached 1.98 GB in 8 s with nothing printed); now the column widths come from the
first 1,000 rows and later rows stream in them, a longer later text cell cut in the middle and
counted in the closing line. A 1,000,000-row result must cost about what a 10-row one does (peak
RSS of the child), every row must be there with the same columns as the first ones, and results
of up to 1,000 rows keep their layout over all rows (a long cell in row 500 widens its column).
Usage: test_scale_sql.py MLPROF TESTS_DATA"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

MLPROF = os.path.abspath(sys.argv[1])
TRACE = os.path.join(sys.argv[2], "mlp_bs64.json.gz")
ROWS = 1000000
LONG = 5000  # the row whose text cell is 300 characters


def query(n, long_at):
    return ("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
            "SELECT i, CASE WHEN i = %d THEN printf('%%0300d', 7) ELSE 'r' || (i %% 1000) END AS label, "
            "i * 2 AS twice FROM c" % (n, long_at))


def run(sql):
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([MLPROF, "sql", TRACE, sql], stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.stderr.close()
        out.seek(0)
        return os.waitstatus_to_exitcode(status), out.read().decode(), usage.ru_maxrss / 1024


def main():
    rc, small, few = run(query(10, 0))
    check(rc == 0 and small.endswith("(10 rows)\n"), f"10 rows: {small[-40:]!r}")
    rc, text, many = run(query(ROWS, LONG))
    lines = text.split("\n")
    print(f"peak RSS: 10 rows {few:.1f} MiB, {ROWS:,} rows {many:.1f} MiB")
    # Before: ~200 MiB more for the million rows (every cell held as a string).
    check(rc == 0 and many < few + 40,
          f"{ROWS:,} rows take {many:.1f} MiB, within 40 MiB of 10 rows ({few:.1f} MiB)")
    check(len(lines) == ROWS + 4 and lines[-1] == "",
          f"header, rule, {ROWS:,} rows and the count: {len(lines)} lines")
    check(lines[-2] == f"({ROWS} rows; column widths from the first 1000 rows, 1 longer cell cut)",
          f"the closing line says the rows and the cut cell: {lines[-2]!r}")
    header, rule = lines[0], lines[1]
    widths = [len(w) for w in rule.split()]
    # The first 1,000 rows' widest cells: i up to 1000 (4 digits), 'r999' (4 < 'label'), 2000.
    check(widths == [4, 5, 5], f"widths {widths} from the header and the first 1,000 rows")
    check(header.split() == ["i", "label", "twice"], f"header {header!r}")
    row = lines[2 + LONG - 1]
    cells = row.split()
    check(cells[0] == str(LONG) and cells[1] == "0...7" and cells[2] == str(2 * LONG),
          f"row {LONG}'s 300-character cell is cut to its column: {row!r}")
    last = lines[-3].split()
    check(last == [str(ROWS), "r0", str(2 * ROWS)],
          f"the last row is whole, numbers wider than their column printed whole: {lines[-3]!r}")
    # Up to 1,000 rows the layout covers every row: the long cell widens its column.
    rc, text, _ = run(query(1000, 500))
    lines = text.split("\n")
    check(rc == 0 and len(lines[1].split()[1]) == 300 and lines[-2] == "(1000 rows)",
          f"1,000 rows: the 300-character cell is whole ({len(lines[1].split()[1])} wide)")
    finish()


if __name__ == "__main__":
    main()
