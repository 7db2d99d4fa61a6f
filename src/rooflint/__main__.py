"""`python -m rooflint`."""

from rooflint.cli import main

main(prog_name="rooflint")
