#!/usr/bin/env python3
"""Writes scenarios/profiles/gavel.toml: training profiles (per-iteration forward kernels, gradient
bytes) for the job types of Gavel's Philly-derived traces, from the published architectures.

Convolutions are expressed as the implicit GEMM cuDNN runs (M = batch x output pixels, N = output
channels, K = input channels x kernel area); batch-norm as a `mul` pass and activations as `relu`.
These are approximations of the real models (they ignore pooling, data loading and optimizer
kernels); `fleetsim` reports how far their predicted iteration times are from Gavel's measured
throughputs. Run: scripts/make_gavel_profiles.py > scenarios/profiles/gavel.toml

host_ops is the number of framework operators PyTorch dispatches per iteration: each listed forward
kernel is one operator (conv, batch-norm, ReLU, add, ...), and autograd runs about two per forward
operator (data and weight gradients), so 3 x the forward operators. The LM's recurrent kernels are
listed per time step, but PyTorch runs nn.LSTM as one fused cuDNN call: its forward operators are
counted as the model's modules instead (embedding, dropout, LSTM, dropout, decoder, loss).
"""
from collections import OrderedDict


class Profile:
    def __init__(self, name, grad_params, overlap=0.5, other_ms=0.0, forward_ops=None):
        self.name = name
        self.forward_ops = forward_ops  # None: one operator per listed forward kernel
        self.grad_bytes = 4 * grad_params
        self.overlap = overlap
        self.other_ms = other_ms
        self.kernels = OrderedDict()

    def add(self, op, count=1, **shape):
        key = (op,) + tuple(shape.items())
        self.kernels[key] = self.kernels.get(key, 0) + count

    def conv(self, batch, cin, cout, k, out_hw, count=1, bn=True, act=True):
        m = batch * out_hw * out_hw
        self.add("linear", count, m=m, n=cout, k=cin * k * k)
        if bn:
            self.add("mul", count, b=batch * cout, h=out_hw * out_hw)
        if act:
            self.add("relu", count, b=batch * cout, h=out_hw * out_hw)

    def toml(self):
        out = ["[[profile]]", f'name = "{self.name}"', f'match = ["{self.name}"]',
               f"grad_mb = {self.grad_bytes / 1e6:.3f}", f"overlap = {self.overlap}"]
        if self.other_ms:
            out.append(f"other_ms = {self.other_ms}")
        forward_ops = self.forward_ops or sum(self.kernels.values())
        out.append(f"host_ops = {3 * forward_ops}")
        out.append("kernels = [")
        for key, count in self.kernels.items():
            op, shape = key[0], dict(key[1:])
            fields = ", ".join(f"{k} = {v}" for k, v in shape.items())
            out.append(f'  {{ op = "{op}", {fields}, count = {count} }},')
        out.append("]")
        return "\n".join(out)


def resnet50(batch):
    p = Profile(f"ResNet-50 (batch size {batch})", 25.6e6, overlap=0.7)
    p.conv(batch, 3, 64, 7, 112)
    cin = 64
    for blocks, width, hw in [(3, 64, 56), (4, 128, 28), (6, 256, 14), (3, 512, 7)]:
        out = 4 * width
        p.conv(batch, cin, out, 1, hw, act=False)  # projection shortcut
        p.conv(batch, cin, width, 1, hw)
        p.conv(batch, width, width, 3, hw, count=blocks)
        p.conv(batch, width, out, 1, hw, count=blocks)
        p.conv(batch, out, width, 1, hw, count=blocks - 1)
        p.add("add", blocks, b=batch * out, h=hw * hw)
        cin = out
    p.add("linear", m=batch, n=1000, k=2048)
    p.add("softmax", b=batch, h=1000)
    return p


def resnet18_cifar(batch):
    p = Profile(f"ResNet-18 (batch size {batch})", 11.2e6, overlap=0.6)
    p.conv(batch, 3, 64, 3, 32)
    cin = 64
    for width, hw in [(64, 32), (128, 16), (256, 8), (512, 4)]:
        if cin != width:
            p.conv(batch, cin, width, 1, hw, act=False)
        p.conv(batch, cin, width, 3, hw)
        p.conv(batch, width, width, 3, hw, count=3)
        p.add("add", 2, b=batch * width, h=hw * hw)
        cin = width
    p.add("linear", m=batch, n=10, k=512)
    return p


def transformer(batch, seq=32, d=512, heads=8, ff=2048, vocab=10000, layers=6):
    p = Profile(f"Transformer (batch size {batch})", 54e6, overlap=0.5)
    t = batch * seq

    def attention(count):
        p.add("linear", count, m=t, n=3 * d, k=d)
        p.add("bmm", count, b=batch * heads, m=seq, n=seq, k=d // heads)
        p.add("softmax", count, b=batch * heads * seq, h=seq)
        p.add("bmm", count, b=batch * heads, m=seq, n=d // heads, k=seq)
        p.add("linear", count, m=t, n=d, k=d)
        p.add("add", count, b=t, h=d)
        p.add("ln", count, b=t, h=d)

    attention(2 * layers)  # encoder self, decoder self
    attention(layers)      # decoder cross
    p.add("linear", 2 * layers, m=t, n=ff, k=d)
    p.add("relu", 2 * layers, b=t, h=ff)
    p.add("linear", 2 * layers, m=t, n=d, k=ff)
    p.add("add", 2 * layers, b=t, h=d)
    p.add("ln", 2 * layers, b=t, h=d)
    p.add("linear", m=t, n=vocab, k=d)
    p.add("softmax", b=t, h=vocab)
    return p


def lm(batch, bptt=35, emb=200, hidden=200, layers=2, vocab=33278):
    p = Profile(f"LM (batch size {batch})", vocab * emb * 2 + layers * 4 * hidden * (emb + hidden),
                overlap=0.3, forward_ops=6)
    steps = bptt * layers
    p.add("linear", steps, m=batch, n=4 * hidden, k=emb + hidden)
    p.add("add", steps, b=batch, h=4 * hidden)
    p.add("tanh", 2 * steps, b=batch, h=hidden)
    p.add("mul", 3 * steps, b=batch, h=hidden)
    p.add("relu", 3 * steps, b=batch, h=hidden)  # the three sigmoid gates: same memory traffic
    p.add("linear", m=batch * bptt, n=vocab, k=hidden)
    p.add("softmax", b=batch * bptt, h=vocab)
    return p


def recommendation(batch, items=27278, hidden=512):
    p = Profile(f"Recommendation (batch size {batch})", 2 * items * hidden, overlap=0.3)
    p.add("linear", m=batch, n=hidden, k=items)
    p.add("relu", b=batch, h=hidden)
    p.add("linear", m=batch, n=items, k=hidden)
    p.add("relu", b=batch, h=items)
    p.add("mul", 2, b=batch, h=items)  # masked MSE loss
    return p


def a3c(workers=16):
    # Gavel's A3C is dominated by environment steps on the CPU: other_ms carries that host time.
    p = Profile("A3C", 1.7e6, overlap=0.0, other_ms=120.0)
    p.conv(workers, 4, 32, 8, 20, count=20, bn=False)
    p.conv(workers, 32, 64, 4, 9, count=20, bn=False)
    p.conv(workers, 64, 64, 3, 7, count=20, bn=False)
    p.add("linear", 20, m=workers, n=512, k=3136)
    return p


def cyclegan(batch=1):
    p = Profile("CycleGAN", 28.3e6, overlap=0.3)
    # Two ResNet-9 generators run twice each (translation and cycle), discriminators three times.
    g = 4
    p.conv(batch, 3, 64, 7, 256, count=g)
    p.conv(batch, 64, 128, 3, 128, count=g)
    p.conv(batch, 128, 256, 3, 64, count=g)
    p.conv(batch, 256, 256, 3, 64, count=18 * g)
    p.add("add", 9 * g, b=batch * 256, h=64 * 64)
    p.conv(batch, 256, 128, 3, 128, count=g)
    p.conv(batch, 128, 64, 3, 256, count=g)
    p.conv(batch, 64, 3, 7, 256, count=g, bn=False)
    d = 6
    p.conv(batch, 3, 64, 4, 128, count=d, bn=False)
    p.conv(batch, 64, 128, 4, 64, count=d)
    p.conv(batch, 128, 256, 4, 32, count=d)
    p.conv(batch, 256, 512, 4, 31, count=d)
    p.conv(batch, 512, 1, 4, 30, count=d, bn=False, act=False)
    return p


def main():
    profiles = [resnet50(b) for b in (16, 32, 64, 128)]
    profiles += [resnet18_cifar(b) for b in (16, 32, 64, 128, 256)]
    profiles += [transformer(b) for b in (16, 32, 64, 128, 256)]
    profiles += [lm(b) for b in (5, 10, 20, 40, 80)]
    profiles += [recommendation(b) for b in (512, 1024, 2048, 4096, 8192)]
    profiles += [a3c(), cyclegan()]
    print("# Training profiles of the job types in Gavel's Philly-derived traces (fp32, data-parallel).")
    print("# Generated by scripts/make_gavel_profiles.py from the published architectures; see that")
    print("# script for the approximations. One [[profile]] per job type; `kernels` = one forward pass.")
    for p in profiles:
        print()
        print(p.toml())


if __name__ == "__main__":
    main()
