"""`python -m hlo_interp ...` is the `hlo` command."""
from .cli import main

if __name__ == "__main__":
    main()
