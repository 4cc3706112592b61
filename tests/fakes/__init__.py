"""Stand-ins for outside services that tests talk to over real connections."""
