"""What each rank of a DP-Hype run over MPI held of the data (tests/mpi/mpi_test.sh, dp_hype_shards).

Reads the rank_<r>.txt files that $DPTUNE_MPI_HELD_ROWS made each rank write (its scopes with their
train and scored rows and a checksum of their values and labels, then the rows of every storage it
keeps), once from a run whose ranks keep only their scopes' rows (KEPT) and once from a run whose
ranks keep every row ($DPTUNE_MPI_KEEP_ROWS=1, ALL), and checks:
  * worker rank r lists exactly the clients j with r = 1 + j mod (ranks - 1), each with the iid
    shard's size (client j of n holds floor((j+1) T/n) - floor(j T/n) of the T training rows, of
    which round(0.2 s), at least 1 and at most s - 1, are its validation part);
  * a worker stores exactly its clients' rows and nothing else, the workers together the T
    training rows, rank 0 none (without baselines);
  * with every row kept, each rank stores the whole data file, and each client's rows, their order
    and labels are the same (checksums) as where only its shard was kept.
Usage: held_rows_check.py KEPT ALL SUMMARY RANKS CLIENTS
"""
import json
import math
import os
import re
import sys


def read(folder, ranks):
    out = {}
    for r in range(ranks):
        path = os.path.join(folder, f"rank_{r}.txt")
        if not os.path.exists(path):
            return None, f"{path}: missing"
        lines = open(path).read().splitlines()
        scopes = {}
        stored = None
        for line in lines[1:]:
            m = re.fullmatch(r"scope client (\d+)/(\d+) train (\d+) scored (\d+) checksum (\w+)", line)
            if m:
                scopes[int(m.group(1))] = (int(m.group(3)), int(m.group(4)), m.group(5))
            elif line.startswith("stored_rows "):
                stored = int(line.split()[1])
            else:
                return None, f"{path}: unexpected line {line!r}"
        if lines[0] != f"rank {r} of {ranks}" or stored is None:
            return None, f"{path}: not a report of rank {r} of {ranks}"
        out[r] = (scopes, stored)
    return out, ""


def main():
    kept_dir, all_dir, summary, ranks, clients = sys.argv[1:6]
    ranks, clients = int(ranks), int(clients)
    data = json.load(open(summary))["data"]
    total = int(re.search(r"; (\d+) rows x", data).group(1))
    train = int(re.search(r"train (\d+),", data).group(1))
    errors = []
    kept, why = read(kept_dir, ranks)
    every, why_all = read(all_dir, ranks)
    if kept is None or every is None:
        print("FAIL:", why or why_all)
        sys.exit(1)

    def expected(j):
        s = (j + 1) * train // clients - j * train // clients
        val = min(max(math.floor(0.2 * s + 0.5), 1), s - 1)
        return s - val, val

    held_by_workers = 0
    for r in range(ranks):
        scopes, stored = kept[r]
        mine = [j for j in range(clients) if r > 0 and 1 + j % (ranks - 1) == r]
        if sorted(scopes) != mine:
            errors.append(f"rank {r} holds clients {sorted(scopes)}, not {mine}")
            continue
        rows = 0
        for j in mine:
            t, v, _ = scopes[j]
            if (t, v) != expected(j):
                errors.append(f"rank {r}: client {j} holds {t} + {v} rows, not {expected(j)}")
            rows += t + v
        if stored != rows:
            errors.append(f"rank {r} stores {stored} rows, its clients' shards {rows}")
        held_by_workers += stored if r > 0 else 0
        if r == 0 and stored != 0:
            errors.append(f"rank 0 (the server) stores {stored} rows")
        all_scopes, all_stored = every[r]
        if all_stored != total:
            errors.append(f"rank {r} keeping every row stores {all_stored}, not the file's {total}")
        if all_scopes != scopes:
            errors.append(f"rank {r}: its clients' data differ when every row is kept: "
                          f"{all_scopes} != {scopes}")
    if held_by_workers != train:
        errors.append(f"the workers store {held_by_workers} rows, not the {train} training rows")
    for e in errors:
        print("FAIL:", e)
    print(f"checked {ranks} ranks' held rows: {clients} clients on {ranks - 1} worker ranks, "
          f"{train} training rows of {total}")
    sys.exit(1 if errors else 0)


main()
