"""`python -m neurondoctor` runs the same CLI as the `neurondoctor` console script."""

from neurondoctor.cli.main import main

main()
