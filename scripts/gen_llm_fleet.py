#!/usr/bin/env python3
"""Writes scenarios/llm/llm-fleet-jobs.csv: a month of mixed LLM training jobs for scenarios/llm-fleet.toml.

Seeded and deterministic. Poisson arrivals over 30 days; a job is a fine-tune or continued pretraining
of one of four public model shapes (configs in scenarios/llm/), with the Megatron-style layout its owner
picked (TP inside a server, PP for the large models) and a token budget. The mix (many small jobs, a
few large ones holding most GPU-hours) is an assumption in the spirit of published fleet studies
(e.g. Hu et al., "Characterization of Large Language Model Development in the Datacenter", NSDI'24:
most jobs are small, a few pretraining jobs use most of the GPU time); it is not fitted to them.
"""
import random
import sys
from pathlib import Path

# model, weight, GPU choices, tp, pp, seq, global batch, token range (billions)
KINDS = [
    ("llama3-8b", 55, [8, 16, 32, 64], 2, 1, 8192, 256, (1, 8)),
    ("llama2-13b", 25, [16, 32, 64], 4, 1, 4096, 256, (1, 10)),
    ("llama3-70b", 17, [128, 256], 8, 4, 8192, 512, (3, 20)),
    ("llama3.1-405b", 3, [512], 8, 16, 4096, 1024, (5, 15)),
]
DAYS = 30
JOBS = 260


def main(out: Path) -> None:
    rng = random.Random(18)
    weights = [k[1] for k in KINDS]
    rows = ["id,submit,model,tp,pp,gpus,seq,global_batch,tokens"]
    t = 0.0
    rate = JOBS / (DAYS * 86400.0)
    for i in range(JOBS):
        t += rng.expovariate(rate)
        if t > DAYS * 86400:
            break
        model, _, gpus, tp, pp, seq, batch, (lo, hi) = rng.choices(KINDS, weights)[0]
        g = rng.choice(gpus)
        tokens = round(rng.uniform(lo, hi), 1)
        rows.append(f"j{i:03d},{t:.0f},{model},{tp},{pp},{g},{seq},{batch},{tokens}e9")
    out.write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "scenarios/llm/llm-fleet-jobs.csv")
