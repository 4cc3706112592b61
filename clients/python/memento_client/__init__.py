"""Clients for a Memento server: nothing here imports Django; everything speaks HTTP with a user's API token."""

__version__ = "0.1.0"
