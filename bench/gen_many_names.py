"""Writes a Chrome trace JSON of EVENTS complete ("X") events whose names cycle through NAMES
distinct op names: the scale trap of a trace where nearly every event has its own name (1e6
names in a 70 MB file). Same event count for any NAMES, so a run with NAMES=1000 is the
baseline a run with NAMES=1000000 compares against.

    python3 bench/gen_many_names.py OUT.json EVENTS NAMES

Events lie on one thread of one process, one after another (1 to 5 us each, 1 us apart), with the
category "cpu_op"; every tenth event has a nested child, so self time differs from total."""
import sys


def main():
    out, events, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(out, "w") as f:
        f.write('{"traceEvents":[\n')
        buf = []
        ts = 0
        for i in range(events):
            name = "op_%07d" % (i % names)
            sep = "," if i + 1 < events else ""
            if i % 10 == 9 and i + 1 < events:
                # a parent and its child: two events
                buf.append('{"ph":"X","cat":"cpu_op","name":"%s","ts":%d,"dur":3,"pid":1,"tid":1},\n'
                           % (name, ts))
                buf.append('{"ph":"X","cat":"cpu_op","name":"child","ts":%d,"dur":1,"pid":1,"tid":1}%s\n'
                           % (ts + 1, sep))
                ts += 4
            else:
                dur = 1 + (i * 7) % 5
                buf.append('{"ph":"X","cat":"cpu_op","name":"%s","ts":%d,"dur":%d,"pid":1,"tid":1}%s\n'
                           % (name, ts, dur, sep))
                ts += dur + 1
            if len(buf) >= 65536:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
        f.write("]}\n")


if __name__ == "__main__":
    main()
