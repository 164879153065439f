"""What rank 0 received in a DP-Hype vote over MPI ranks (tests/mpi/mpi_test.sh).

Reads DPTUNE_MPI_CAPTURE's file (every peer message rank 0 received: source u32, length u64,
payload) and DPTUNE_DP_HYPE_CAPTURE's client_<j>.bin (client j's plaintext input encoding, then its
0/1 vote encoding, p u64 words each), and checks:
  * no payload rank 0 received contains any client's input or vote encoding (at any offset);
  * the released noisy vote vector (summary.json) is the decoded sum of the survivors' inputs
    mod 2^64, survivors being every client except those held by --dropped-rank.
Usage: dp_hype_check.py CAPTURE CLIENT_DIR SUMMARY RANKS [--dropped-rank R]
"""
import glob
import json
import os
import re
import struct
import sys


def main():
    capture, client_dir, summary, ranks = sys.argv[1:5]
    ranks = int(ranks)
    dropped = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == "--dropped-rank" else 0
    payloads = []
    with open(capture, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        source, length = struct.unpack_from("<IQ", data, at)
        at += 12
        payloads.append((source, data[at:at + length]))
        at += length
    clients = {}
    for path in glob.glob(os.path.join(client_dir, "client_*.bin")):
        j = int(re.search(r"client_(\d+)\.bin", path).group(1))
        with open(path, "rb") as f:
            blob = f.read()
        half = len(blob) // 2
        clients[j] = (blob[:half], blob[half:])
    errors = []
    if not payloads:
        errors.append("rank 0 received no peer message")
    n = len(clients)
    if n == 0:
        errors.append("no client capture")
    for j, (inp, vote) in sorted(clients.items()):
        for source, p in payloads:
            if inp in p:
                errors.append(f"rank 0 received client {j}'s input in the clear (from rank {source})")
            if vote in p:
                errors.append(f"rank 0 received client {j}'s vote in the clear (from rank {source})")
    notes = json.load(open(summary))
    text = json.dumps(notes)
    m = re.search(r"noisy vote vector[^\[]*\[([^\]]*)\]", text)
    if not m:
        errors.append("summary.json has no noisy vote vector")
    else:
        released = [float(x) for x in m.group(1).split(",")]
        survivors = [j for j in clients if 1 + j % (ranks - 1) != dropped]
        words = len(clients[0][0]) // 8
        total = [0] * words
        for j in survivors:
            values = struct.unpack(f"<{words}Q", clients[j][0])
            total = [(t + v) % 2**64 for t, v in zip(total, values)]
        decoded = [(t - 2**64 if t >= 2**63 else t) / 2.0**32 for t in total]
        if len(decoded) != len(released):
            errors.append(f"{len(released)} released votes for {len(decoded)} candidates")
        for a, b in zip(decoded, released):
            # The summary prints 5 significant digits.
            if abs(a - b) > 1e-4 * max(1.0, abs(a)):
                errors.append(f"released noisy votes {released} != sum of the survivors' inputs {decoded}")
                break
        if f"{len(survivors)} of {n} clients in the sum" not in text:
            errors.append(f"summary.json does not say {len(survivors)} of {n} clients are in the sum")
    for e in errors:
        print("FAIL:", e)
    print(f"checked {len(payloads)} payloads rank 0 received against {n} clients' plaintexts")
    sys.exit(1 if errors else 0)


main()
