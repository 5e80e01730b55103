"""Command line: ``python -m symplectic {reproduce,methods,systems}``."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="symplectic",
                                     description="Symplectic variational integrators.")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="reproduce the papers' tables on the built-in systems")
    rep.add_argument("--out", default=None, help="directory for CSV files")
    rep.add_argument("--quick", action="store_true", help="short-horizon subset only")
    sub.add_parser("methods", help="list the integration methods")
    sub.add_parser("systems", help="list the built-in systems")
    args = parser.parse_args(argv)

    import symplectic as sp
    if args.command == "reproduce":
        from . import reproduce
        try:
            reproduce.run(out=args.out, quick=args.quick)
        except ImportError as exc:
            print(f"symplectic: error: {exc}", file=sys.stderr)
            return 2
    elif args.command == "methods":
        for name, info in sp.methods(details=True).items():
            print(f"{name:<10} order {info['order']}  {info['doc']}")
    elif args.command == "systems":
        for name, doc in sp.systems.available().items():
            print(f"{name:<16} {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
