"""Run every benchmarks/bench_*.py module's main() in name order and print what it reports."""

import importlib
from pathlib import Path


def main() -> None:
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if not names:
        print("no benchmarks yet")
        return
    for name in names:
        print(f"== {name}")
        lines = importlib.import_module(f"benchmarks.{name}").main()
        for line in lines or ():
            print(line)


if __name__ == "__main__":
    main()
