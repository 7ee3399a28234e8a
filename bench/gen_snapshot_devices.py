"""Writes a CUDA memory snapshot pickle with DEVICES devices: one segment per device (a block
allocated before the trace and a free rest) and, for the first min(DEVICES, 32768) devices, a
device trace of a few entries (alloc, free_requested, free_completed, and a free of the
pre-trace block). The scale trap of per-device work that walks every other device's segments or
trace parts (100k devices took 32 s); the cost must grow linearly with DEVICES.

    python3 bench/gen_snapshot_devices.py OUT.pickle DEVICES

Small enough for Python's own pickle (about 1 KB a device)."""
import pickle
import sys

SEG = 0x7F0000000000
GiB = 1 << 30


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    frames = [{"filename": "train.py", "line": 10, "name": "step"}]
    segments, traces = [], []
    for d in range(n):
        base = SEG + d * 4 * GiB
        segments.append({
            "device": d, "address": base, "total_size": GiB, "allocated_size": 1 << 20,
            "active_size": 1 << 20, "requested_size": 1 << 20, "stream": 0,
            "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
            "frames": [],
            "blocks": [
                {"address": base, "size": 1 << 20, "requested_size": 1 << 20,
                 "state": "active_allocated", "frames": frames},
                {"address": base + (1 << 20), "size": GiB - (1 << 20), "requested_size": 0,
                 "state": "inactive", "frames": []},
            ]})
    # device_traces indices above 32767 are not devices the reader keeps (int16 device ids)
    for d in range(min(n, 32768)):
        base = SEG + d * 4 * GiB
        t = 1_700_000_000_000_000 + d * 10
        traces.append([
            {"action": "alloc", "addr": base + (2 << 20), "size": 4096, "stream": 0,
             "time_us": t, "frames": frames},
            {"action": "free_requested", "addr": base + (2 << 20), "size": 4096, "stream": 0,
             "time_us": t + 1, "frames": frames},
            {"action": "free_completed", "addr": base + (2 << 20), "size": 4096, "stream": 0,
             "time_us": t + 2, "frames": frames},
        ])
    snap = {"segments": segments, "device_traces": traces,
            "allocator_settings": {"expandable_segments": False}, "external_annotations": []}
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main()
