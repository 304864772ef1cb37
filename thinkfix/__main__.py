"""`python -m thinkfix`: the same command line as the `thinkfix` script, for an environment
whose scripts folder is not on PATH."""

from thinkfix.cli import main

main(prog_name="thinkfix")
