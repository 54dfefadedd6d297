#!/usr/bin/env python3
"""The time model of an extshuffle-mpi run on N nodes (docs/mpi.md, "Scale").

A run over D bytes on n nodes, each with local scratch, a network interface
and a share of a shared file system, takes two passes when a root bucket
(D / F bytes, F = 1024) fits one node's -S, and a third through local disk
per level more:

  pass 1 (scatter): each node reads D/n from the shared file system, shuffles
    its chunks, sends (n-1)/n of them to the other nodes, receives as much,
    and writes D/n of buckets to its local scratch;
  pass 2 (buckets): each node reads its D/n back, shuffles each bucket in
    memory and writes its D/n range of the output to the shared file system.

Within a pass reading, exchanging and writing overlap (write-behind, rounds),
so a pass takes as long as its busiest resource: the local disk, the
network interface in either direction (the shared file system's traffic
crosses it too), the cores, or the shared file system's aggregate rate.
Prints the table of docs/mpi.md; every rate is an argument.
"""
import argparse

F = 1024  # root buckets at most (core::PlanConstants)


def pass_seconds(D, n, node):
    share = D / n
    sent = share * (n - 1) / n
    cpu = share / node["cpu_Bps"]
    # pass 1: shared FS in + exchange in over the NIC; exchange out; disk write
    p1 = {
        "disk write": share / node["disk_write_Bps"],
        "network in": (share + sent) / node["nic_Bps"],
        "network out": sent / node["nic_Bps"],
        "cores": cpu,
        "shared FS read": D / node["fs_read_Bps"],
    }
    # pass 2: disk read; output out over the NIC to the shared FS
    p2 = {
        "disk read": share / node["disk_read_Bps"],
        "network out": share / node["nic_Bps"],
        "cores": cpu,
        "shared FS write": D / node["fs_write_Bps"],
    }
    extra = 0.0
    if D / F > node["memory_B"]:  # a root bucket does not fit: one more pass through local disk
        extra = share / node["disk_read_Bps"] + share / node["disk_write_Bps"]
    b1 = max(p1, key=p1.get)
    b2 = max(p2, key=p2.get)
    return p1[b1] + p2[b2] + extra, b1, b2, extra > 0


def main():
    GB = 1e9
    ap = argparse.ArgumentParser()
    ap.add_argument("--disk-write", type=float, default=2.0, help="local scratch write, GB/s")
    ap.add_argument("--disk-read", type=float, default=3.0, help="local scratch read, GB/s")
    ap.add_argument("--nic", type=float, default=25 / 8, help="network interface, GB/s each way")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--core-rate", type=float, default=0.8,
                    help="GB/s one core shuffles (chunk or leaf: evaluation and gather)")
    ap.add_argument("--memory", type=float, default=100, help="-S per node, GB")
    ap.add_argument("--fs-read", type=float, default=1e9, help="shared file system aggregate read, GB/s")
    ap.add_argument("--fs-write", type=float, default=1e9, help="shared file system aggregate write, GB/s")
    ap.add_argument("--sizes", default="1e12,1e14", help="dataset sizes, bytes")
    ap.add_argument("--nodes", default="8,16,32,40,64")
    a = ap.parse_args()
    node = {
        "disk_write_Bps": a.disk_write * GB, "disk_read_Bps": a.disk_read * GB, "nic_Bps": a.nic * GB,
        "cpu_Bps": a.cores * a.core_rate * GB, "memory_B": a.memory * GB,
        "fs_read_Bps": a.fs_read * GB, "fs_write_Bps": a.fs_write * GB,
    }
    print("| data | nodes | scratch per node | time | per node | pass 1 bound | pass 2 bound | passes |")
    print("|---|---|---|---|---|---|---|---|")
    for D in (float(s) for s in a.sizes.split(",")):
        for n in (int(s) for s in a.nodes.split(",")):
            t, b1, b2, third = pass_seconds(D, n, node)
            print(f"| {D / 1e12:g} TB | {n} | {D / n / 1e12:.2f} TB | {t:,.0f} s | {D / n / t / 1e6:,.0f} MB/s "
                  f"| {b1} | {b2} | {3 if third else 2} |")


if __name__ == "__main__":
    main()
