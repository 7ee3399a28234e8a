"""Issue 25, the advice evaluation set: on each generated trace (advice_eval_traces.py: one
planted problem and its true saving, computed there from the trace's plan), `mlprof bottlenecks`
names the planted cause first, prices it within 20% of the truth, no other finding claims the
planted time, and the findings' savings and the combined replay stay within the step.
On every shared trace: the savings add up to at most 100% of the step and equal the combined
replay (skipped when the shared data is absent).
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import advice_eval_traces as gen  # noqa: E402
import shared_data  # noqa: E402
from checks import check, finish, mlprof_json  # noqa: E402

MLPROF = sys.argv[1]


def savings_add_up(doc, name):
    basis = doc["basis_ns"]
    total = sum(f["est_savings_ns"] for f in doc["findings"])
    check(total <= basis, f"{name}: savings add up to {total} <= the step {basis}")
    comb = doc["combined"]
    priced = sum(f["est_savings_ns"] for f in doc["findings"] if f["priced_by"] == "replay")
    check(priced <= comb["saving_ns"] + 1,
          f"{name}: the priced findings' sum {priced} <= the combined replay {comb['saving_ns']}")
    check(comb["saving_ns"] <= basis, f"{name}: combined {comb['saving_ns']} <= step {basis}")
    for f in doc["findings"]:
        if f["priced_by"] == "replay":
            check(f["est_savings_ns"] <= f["saving_alone_ns"] + 1,
                  f"{name}: {f['kind']} claims {f['est_savings_ns']} <= its own replay "
                  f"{f['saving_alone_ns']}")


with tempfile.TemporaryDirectory() as tmp:
    for t in gen.write_all(tmp):
        if t["kind"] == "compare":
            continue
        doc = mlprof_json(MLPROF, "bottlenecks", t["file"])
        name = t["name"]
        fs = doc["findings"]
        check(doc["combined"]["replayed"], f"{name}: the step graph was replayed")
        # The replay's steps run completion to completion: the host's steps plus the loop's
        # 20 us between them.
        check(abs(doc["basis_ns"] - t["step_total_us"] * 1000) <= 0.01 * t["step_total_us"] * 1000,
              f"{name}: basis {doc['basis_ns']} is the steps' {t['step_total_us']} us")
        savings_add_up(doc, name)
        if "max_saving_us" in t:  # nothing to save: no finding may claim more than the bound
            for f in fs:
                check(f["est_savings_ns"] <= t["max_saving_us"] * 1000,
                      f"{name}: {f['kind']} claims {f['est_savings_ns']} ns <= "
                      f"{t['max_saving_us']} us")
            sync = next((f for f in fs if f["kind"] == t["kind"]), None)
            check(sync is not None, f"{name}: the {t['kind']} finding is still shown")
            if sync:
                check(sync["saving_alone_ns"] <= t["max_saving_us"] * 1000,
                      f"{name}: removing the sync alone saves {sync['saving_alone_ns']} ns <= "
                      f"{t['max_saving_us']} us")
                check(sync["severity"] == "low", f"{name}: a sync behind a busy GPU is low "
                      f"severity, got {sync['severity']}")
                check("busy" in sync["replay_note"], f"{name}: the note says the GPU is busy: "
                      f"{sync['replay_note']!r}")
            continue
        check(bool(fs) and fs[0]["kind"] == t["kind"],
              f"{name}: top finding {fs[0]['kind'] if fs else None} is {t['kind']}")
        top = next((f for f in fs if f["kind"] == t["kind"]), None)
        if not top:
            continue
        truth = t["true_saving_us"] * 1000
        check(abs(top["est_savings_ns"] - truth) <= 0.2 * truth,
              f"{name}: saving {top['est_savings_ns']} ns within 20% of the truth {truth} ns")
        others = sum(f["est_savings_ns"] for f in fs if f is not top)
        check(others <= 0.2 * truth,
              f"{name}: the other findings claim {others} ns, under 20% of the planted {truth}")
        # (max: a serving finding changes only the iterations it names)
        check(top["step_saving_ns"]["max"] > 0, f"{name}: per-step spread given")

# Every shared trace: savings add up to at most the step.
root = shared_data.shared_path("traces")
if root:
    files = sorted(p for p in glob.glob(os.path.join(root, "**", "*.json*"), recursive=True)
                   if "memory-snapshot" not in p and "/reference/" not in p
                   and not p.endswith(("EXPECTED.json", "execution_details.json"))
                   and "/roofline/" not in p)
    for p in files:
        try:
            doc = mlprof_json(MLPROF, "bottlenecks", p)
        except Exception as e:  # noqa: BLE001 (a file bottlenecks refuses is another test's)
            print("skip", p, e)
            continue
        savings_add_up(doc, os.path.relpath(p, root))
finish()
