"""Planning: the deterministic pre-pass, workflow templates, the planner (guided and free) and plan validation."""
