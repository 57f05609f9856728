"""W2 and W5 samples/s for 1, 2, 4, 8 and 16 workers: Stoker (`stoker bench shards`, train224,
float32, as the peer) against the DataLoader (the peers' torch_peer.py), one run of each. Needs
STOKER_JAVA and STOKER_JAR (run.sh sets them)."""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/stoker-bench")
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--workloads", default="W2,W5")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = open(args.out, "a") if args.out else sys.stdout
    java = [os.environ["STOKER_JAVA"], "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
            "-jar", os.environ["STOKER_JAR"]]
    for w in args.workloads.split(","):
        d = os.path.join(args.data, "images" if w == "W2" else "large-images")
        shards = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar"))
        for n in args.workers.split(","):
            r = subprocess.run(java + ["bench", "shards", *shards, "--transform", "train224", "--batch", "64",
                                       "--workers", n, "--json"], capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"stoker bench failed: {r.stderr}")
            s = json.loads(r.stdout.strip().splitlines()[-1])
            print(json.dumps({"workload": w, "loader": "stoker", "workers": int(n),
                              "samplesPerSec": s.get("samplesPerSecAfterFirst", s["samplesPerSec"])}), file=out, flush=True)
            r = subprocess.run([sys.executable, os.path.join(HERE, "..", "peers", "torch_peer.py"), args.data,
                                "--workloads", w, "--workers", n, "--repeats", "1"], capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"torch_peer failed: {r.stderr}")
            for line in r.stdout.splitlines():
                if line.startswith("{"):
                    p = json.loads(line)
                    print(json.dumps({"workload": w, "loader": "torch", "workers": int(n), "peer": p}), file=out, flush=True)


if __name__ == "__main__":
    main()
