"""Tools that run beside the site and are not installed with it: `make bench` and its data."""
