"""The two-ledger orchestrator (outer loop: task ledger + plan; inner loop: progress ledger + checks)."""
