"""The data model and the maths: imports nothing above it and no click."""
