"""loops.py OBJDUMP_TEXT FUNC... — the innermost loops of compiled functions.

Reads `objdump -d --no-show-raw-insn` output and, for each function named
(a prefix: `fast_f32` matches the hand-written kernels and the compiler's
clones), prints one line per loop (a backward branch within the function
that contains no other backward branch):

    FUNCTION INSTRUCTIONS VECTOR_INSTRUCTIONS WIDEST_REGISTER

VECTOR_INSTRUCTIONS counts instructions naming an xmm/ymm/zmm register;
a loop whose body is almost all vector instructions was vectorized.
Used by bench/run.sh to say whether the compare kernel's inner loop is
vector code, and how long it is.
"""
import re
import sys

text = open(sys.argv[1]).read().splitlines()
wanted = sys.argv[2:]
func, insns = None, []
funcs = {}
for line in text:
    m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
    if m:
        func = m.group(1)
        funcs[func] = insns = []
        continue
    m = re.match(r"^\s+([0-9a-f]+):\s+(\S.*)$", line)
    if m and func:
        insns.append((int(m.group(1), 16), m.group(2)))

for name, body in sorted(funcs.items()):
    if not any(name.startswith(w) for w in wanted):
        continue
    addrs = [a for a, _ in body]
    loops = []
    for k, (a, ins) in enumerate(body):
        m = re.match(r"^j\w+\s+([0-9a-f]+)\b", ins)
        if not m:
            continue
        tgt = int(m.group(1), 16)
        if tgt <= a and tgt in addrs:
            loops.append((addrs.index(tgt), k))
    inner = [(s, e) for s, e in loops
             if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in loops)]
    for s, e in inner:
        seg = [ins for _, ins in body[s:e + 1]]
        vec = [i for i in seg if re.search(r"%[xyz]mm", i)]
        if not vec:
            continue
        widest = "zmm" if any("zmm" in i for i in vec) else "ymm" if any("ymm" in i for i in vec) else "xmm"
        print(name, len(seg), len(vec), widest)
