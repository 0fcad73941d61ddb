#!/usr/bin/env python3
"""Writes a SimAI workload file of a given shape, for load-time and memory
measurements of large jobs (SimAI's largest published example: 9,216 GPUs, TP 8,
1,789 layers). Every layer has a forward, input-grad and weight-grad compute of the
given time, an ALLREDUCE in each phase (TP, TP, then DP in the hybrid policies) and an
update time.
Usage: simai-gen.py [--gpus N] [--tp N] [--layers N] [--policy P] OUTPUT"""
import argparse

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--gpus", type=int, default=9216)
ap.add_argument("--tp", type=int, default=8)
ap.add_argument("--layers", type=int, default=1789)
ap.add_argument("--policy", default="HYBRID_TRANSFORMER_FWD_IN_BCKWD")
ap.add_argument("output")
a = ap.parse_args()
with open(a.output, "w") as out:
    out.write("%s model_parallel_NPU_group: %d ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: %d "
              "checkpoints: 0 checkpoint_initiates: 0\n" % (a.policy, a.tp, a.gpus))
    out.write("%d\n" % a.layers)
    for i in range(a.layers):
        out.write("layer%d\t-1\t20000\tALLREDUCE\t8388608\t20000\tALLREDUCE\t8388608\t"
                  "40000\tALLREDUCE\t26214400\t100\n" % i)
