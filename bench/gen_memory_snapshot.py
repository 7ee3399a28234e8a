"""Writes a synthetic CUDA memory snapshot of any size, in the pickle layout
torch.cuda.memory._dump_snapshot produces (protocol 4: every dict/list/str memoized, dict keys
and repeated frames as BINGET/LONG_BINGET references, a fresh "N/A" compile_context string per
trace entry), streamed opcode by opcode so that a multi-GB file costs this script no memory.

    python3 bench/gen_memory_snapshot.py OUT.pickle ENTRIES [--frames 12] [--seed 1]

ENTRIES trace entries on GPU 0 (alloc / free_requested / free_completed, about a third each,
with a bounded live set), each with a stack of --frames frames drawn from a pool of 64 stacks.
Python's pickle.load reads the result (the test checks a small one against its replay).
bench/memory_snapshot_rss.sh measures mlprof's peak RSS on these files."""
import argparse
import random
import struct


class Writer:
    def __init__(self, f):
        self.f = f
        self.memo = {}  # key -> memo index
        self.n = 0
        self.buf = bytearray()

    def flush(self, force=False):
        if force or len(self.buf) > 1 << 20:
            self.f.write(self.buf)
            self.buf = bytearray()

    def memoize(self, key=None):
        self.buf += b"\x94"
        if key is not None:
            self.memo[key] = self.n
        self.n += 1

    def get(self, key):
        i = self.memo[key]
        self.buf += b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)

    def str(self, s, shared=True):
        """A string; shared ones are written once and referenced after (dict keys, actions)."""
        if shared and ("s", s) in self.memo:
            return self.get(("s", s))
        b = s.encode()
        self.buf += (b"\x8c" + bytes([len(b)]) if len(b) < 256 else b"X" + struct.pack("<I", len(b))) + b
        self.memoize(("s", s) if shared else None)

    def int(self, v):
        if 0 <= v < 256:
            self.buf += b"K" + bytes([v])
        elif 0 <= v < 65536:
            self.buf += b"M" + struct.pack("<H", v)
        elif -(1 << 31) <= v < (1 << 31):
            self.buf += b"J" + struct.pack("<i", v)
        else:
            n = (v.bit_length() + 8) // 8
            self.buf += b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)

    def dict(self, items):
        """items: [(key, writer-callable)]: EMPTY_DICT MEMOIZE MARK k v ... SETITEMS."""
        self.buf += b"}"
        self.memoize()
        self.buf += b"("
        for k, write in items:
            self.str(k)
            write()
        self.buf += b"u"

    def list(self, writers):
        self.buf += b"]"
        self.memoize()
        for i in range(0, len(writers), 1000):
            chunk = writers[i:i + 1000]
            if not chunk:
                break
            self.buf += b"("
            for w in chunk:
                w()
            self.buf += b"e"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("entries", type=int)
    ap.add_argument("--frames", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    files = [f"/opt/venv/lib/python3.11/site-packages/torch/nn/modules/mod{k}.py" for k in range(40)]
    frame_pool = [(rng.choice(files), rng.randrange(1, 3000), f"fn_{k}") for k in range(600)]
    stacks = [[rng.randrange(len(frame_pool)) for _ in range(a.frames)] for _ in range(64)]
    seg_base, seg_size = 0x7F0000000000, 1 << 30
    with open(a.out, "wb") as f:
        w = Writer(f)
        w.buf += b"\x80\x04"

        def frame(i):
            if ("f", i) in w.memo:
                return w.get(("f", i))
            fn, line, name = frame_pool[i]
            idx = w.n  # the EMPTY_DICT's memo slot
            w.dict([("name", lambda: w.str(name)), ("filename", lambda: w.str(fn)),
                    ("line", lambda: w.int(line))])
            w.memo[("f", i)] = idx

        def frames(stack):
            return lambda: w.list([lambda i=i: frame(i) for i in stacks[stack]])

        # Top level: {'segments': [...], 'device_traces': [[...]], 'allocator_settings': {},
        # 'external_annotations': []}
        w.buf += b"}"
        w.memoize()
        w.buf += b"("
        w.str("segments")
        # One 1 GiB segment: an allocated block and the rest free.
        live_end = 1 << 20
        block = lambda addr, size, state: lambda: w.dict([
            ("address", lambda: w.int(addr)), ("size", lambda: w.int(size)),
            ("requested_size", lambda: w.int(size)), ("state", lambda: w.str(state)),
            ("frames", frames(0) if state != "inactive" else lambda: w.list([]))])
        w.list([lambda: w.dict([
            ("device", lambda: w.int(0)), ("address", lambda: w.int(seg_base)),
            ("total_size", lambda: w.int(seg_size)), ("allocated_size", lambda: w.int(live_end)),
            ("active_size", lambda: w.int(live_end)), ("requested_size", lambda: w.int(live_end)),
            ("stream", lambda: w.int(0)), ("segment_type", lambda: w.str("large")),
            ("segment_pool_id", lambda: (w.int(0), w.int(0), w.buf.extend(b"\x86"), w.memoize())),
            ("is_expandable", lambda: w.buf.extend(b"\x89")), ("frames", lambda: w.list([])),
            ("blocks", lambda: w.list([block(seg_base, live_end, "active_allocated"),
                                       block(seg_base + live_end, seg_size - live_end, "inactive")]))])])
        w.flush()
        w.str("device_traces")
        w.buf += b"]"
        w.memoize()
        w.buf += b"("  # the list of devices
        w.buf += b"]"  # device 0's entries
        w.memoize()
        def entries():
            """alloc, or a free as free_requested + free_completed; live set under ~2000."""
            live = []  # (addr, size, stack)
            next_addr = seg_base + live_end
            while True:
                if live and (len(live) > 2000 or rng.random() < 0.5):
                    addr, size, st = live.pop(rng.randrange(len(live)))
                    yield "free_requested", addr, size, st
                    yield "free_completed", addr, size, st
                else:
                    size = 512 * rng.randrange(1, 4096)
                    st = rng.randrange(len(stacks))
                    live.append((next_addr, size, st))
                    yield "alloc", next_addr, size, st
                    next_addr += size

        gen = entries()
        t = 1_700_000_000_000_000
        done = 0
        while done < a.entries:
            w.buf += b"("
            for _ in range(min(1000, a.entries - done)):
                t += rng.randrange(1, 50)
                action, addr, size, st = next(gen)
                w.dict([("action", lambda: w.str(action)), ("addr", lambda: w.int(addr)),
                        ("size", lambda: w.int(size)), ("stream", lambda: w.int(0)),
                        ("time_us", lambda: w.int(t)),
                        ("compile_context", lambda: w.str("N/A", shared=False)),
                        ("frames", frames(st))])
                done += 1
            w.buf += b"e"
            w.flush()
        w.buf += b"e"  # devices
        w.str("allocator_settings")
        w.dict([("expandable_segments", lambda: w.buf.extend(b"\x89"))])
        w.str("external_annotations")
        w.list([])
        w.buf += b"u."
        w.flush(True)


if __name__ == "__main__":
    main()
