"""Issue 32 item 8c: a CUDA memory snapshot with many devices. Per-device work walked every
device's trace part and every segment (100k devices: 32 s); now each device's range and segments
come from one pass. Checked on 20,000 devices (bench/gen_snapshot_devices.py: one segment per
device with a pre-trace allocated block, a 3-entry trace per device): every device is listed
with its own numbers (entries, start/peak/end active and reserved bytes, blocks not in the
trace) as the generator made them, and the Trace the snapshot loads as has one process per
device. The linearity itself is measured by bench/scale_traps.sh (10k vs 100k devices).
Usage: test_scale_snapshot.py MLPROF TESTS_DATA"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

MLPROF = os.path.abspath(sys.argv[1])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVICES = 20000
MiB, GiB = 1 << 20, 1 << 30


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "devices.pickle")
        subprocess.run([sys.executable, os.path.join(REPO, "bench", "gen_snapshot_devices.py"),
                        path, str(DEVICES)], check=True)
        p = subprocess.run([MLPROF, "memory", path, "--json"], capture_output=True, text=True)
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        devices = r.get("devices", [])
        check(len(devices) == DEVICES and r.get("segments") == DEVICES,
              f"{len(devices)} devices, {r.get('segments')} segments (want {DEVICES})")
        want = {"entries": 3, "start_active_bytes": MiB, "peak_active_bytes": MiB + 4096,
                "end_active_bytes": MiB, "start_reserved_bytes": GiB, "end_reserved_bytes": GiB,
                "blocks_not_in_trace": 1, "frees_without_alloc": 0}
        bad = [d for k, d in enumerate(devices)
               if d.get("device") != k or any(d.get(f) != v for f, v in want.items())]
        check(not bad, f"every device has its own segment and trace: {len(bad)} differ "
              f"(first: {bad[:1]})")
        p = subprocess.run([MLPROF, "summary", path, "--json"], capture_output=True, text=True)
        s = json.loads(p.stdout) if p.returncode == 0 else {}
        memory = s.get("events", {}).get("memory")
        check(s.get("processes") == DEVICES and memory == 2 * DEVICES,
              f"the snapshot's Trace: {s.get('processes')} processes, {memory} memory events "
              f"(want {DEVICES}, {2 * DEVICES})")
    finish()


if __name__ == "__main__":
    main()
