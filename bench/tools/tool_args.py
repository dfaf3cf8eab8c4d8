"""Positional arguments for the measurement scripts beside this file that take them as their
docstring's usage line shows (`    name.py BINARY CATALOG [N]`): a missing one or a number that
is not one is a usage error (exit 2) naming it, not a traceback."""
import sys


def positional(doc, names, optional=(), numbers=None):
    """The script's arguments after its name: `names` required, then `optional` (None when
    absent), then any further ones as one list. `--help` prints `doc` (exit 0). `numbers` maps
    an argument's name to int or float, which converts it."""
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        try:
            print(doc.strip())
        except BrokenPipeError:  # `| head`
            pass
        sys.exit(0)
    usage = next((line.strip() for line in doc.splitlines() if line.startswith("    ") and ".py" in line),
                 " ".join(names))

    def fail(message):
        sys.stderr.write(f"usage: {usage}\n{sys.argv[0].rsplit('/', 1)[-1]}: error: {message}\n")
        sys.exit(2)

    if len(args) < len(names):
        fail("the following arguments are required: " + ", ".join(names[len(args):]))
    out = []
    for i, name in enumerate(list(names) + list(optional)):
        value = args[i] if i < len(args) else None
        convert = (numbers or {}).get(name)
        if value is not None and convert:
            try:
                value = convert(value)
            except ValueError:
                fail(f"argument {name}: invalid {convert.__name__} value: '{value}'")
        out.append(value)
    out.append(args[len(names) + len(optional):])
    return out
