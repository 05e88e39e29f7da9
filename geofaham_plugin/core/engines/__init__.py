"""Engines: deterministic computation behind the agents\x27 typed tools."""
